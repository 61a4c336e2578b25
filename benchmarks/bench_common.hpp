// Small helpers shared by armi's benchmark programs: command-line flags,
// timing, statistics, thread pinning and a minimal JSON writer.
//
// Benchmarks only; nothing here is part of armi's public API.
//
// Thread safety: flag parsing and JSON writing are for the main thread; the
// pinning helpers and the clock may be called from any thread.
#pragma once

#include <armi/armi.hpp>
#include <fmt/core.h>

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

namespace armi_bench {

// Whether the command line or the environment sets the aggregation factor
// (--armi-aggregation, -local, -remote; ARMI_AGGREGATION, _LOCAL, _REMOTE).
// Ask before take_armi_options, which takes the flags out of argv.
inline bool aggregation_given(int argc, char** argv) {
  for (char const* env : {"ARMI_AGGREGATION", "ARMI_AGGREGATION_LOCAL", "ARMI_AGGREGATION_REMOTE"})
    if (std::getenv(env) != nullptr) return true;
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]).starts_with("--armi-aggregation")) return true;
  return false;
}

// An aggregation factor as the options write it: a number, or "auto".
inline std::string aggregation_text(std::size_t factor) {
  return factor == armi::aggregation_auto ? "auto" : std::to_string(factor);
}

// Takes the --armi-* options (and ARMI_* environment) out of argv into cfg,
// as armi::execute would.  Returns -1 to go on, or the exit code to return
// at once: 2 after printing a bad option, 0 after printing --armi-help.
inline int take_armi_options(int& argc, char** argv, armi::config& cfg) {
  try {
    cfg = armi::parse_options(argc, argv);
  } catch (armi::option_error const& e) {
    std::fprintf(stderr, "armi: error: %s\n", e.what());
    return 2;
  }
  if (cfg.help) {
    std::fputs(armi::options_help().c_str(), stdout);
    return 0;
  }
  return -1;
}

// ---- command line ------------------------------------------------------------

struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// --name=value / --name flags.  Call the accessors for every known flag, then
// finish(): any flag nobody asked for is a usage error.
class flags {
 public:
  flags(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string_view a(argv[i]);
      if (a.substr(0, 2) != "--") throw usage_error(fmt::format("unexpected argument '{}'", a));
      a.remove_prefix(2);
      auto const eq = a.find('=');
      if (eq == std::string_view::npos)
        m_values.emplace(std::string(a), std::pair<std::string, bool>{"", false});
      else
        m_values.emplace(std::string(a.substr(0, eq)), std::pair<std::string, bool>{std::string(a.substr(eq + 1)), true});
    }
  }

  std::uint64_t get_uint(std::string const& name, std::uint64_t def) {
    auto it = find(name);
    if (it == m_values.end()) return def;
    std::string const& s = it->second.first;
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (!it->second.second || ec != std::errc{} || p != s.data() + s.size())
      throw usage_error(fmt::format("--{}: expected a non-negative integer, got '{}'", name, s));
    return v;
  }

  std::vector<std::uint64_t> get_uint_list(std::string const& name, std::vector<std::uint64_t> def) {
    auto it = find(name);
    if (it == m_values.end()) return def;
    std::vector<std::uint64_t> out;
    std::string_view s = it->second.first;
    while (!s.empty()) {
      auto const comma = s.find(',');
      std::string_view item = s.substr(0, comma);
      std::uint64_t v = 0;
      auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
      if (ec != std::errc{} || p != item.data() + item.size() || item.empty())
        throw usage_error(fmt::format("--{}: expected a comma-separated list of integers, got '{}'", name,
                                      it->second.first));
      out.push_back(v);
      if (comma == std::string_view::npos) break;
      s.remove_prefix(comma + 1);
    }
    if (out.empty()) throw usage_error(fmt::format("--{}: empty list", name));
    return out;
  }

  std::string get_string(std::string const& name, std::string def) {
    auto it = find(name);
    if (it == m_values.end()) return def;
    if (!it->second.second) throw usage_error(fmt::format("--{} needs a value (--{}=...)", name, name));
    return it->second.first;
  }

  bool get_switch(std::string const& name) {
    auto it = find(name);
    if (it == m_values.end()) return false;
    if (it->second.second) throw usage_error(fmt::format("--{} takes no value", name));
    return true;
  }

  void finish() const {
    for (auto const& [name, value] : m_values)
      if (!m_used.count(name)) throw usage_error(fmt::format("unknown flag --{}", name));
  }

 private:
  std::map<std::string, std::pair<std::string, bool>>::const_iterator find(std::string const& name) {
    m_used[name] = true;
    return m_values.find(name);
  }
  std::map<std::string, std::pair<std::string, bool>> m_values;
  std::map<std::string, bool> m_used;
};

// ---- time and statistics -------------------------------------------------------

// The two forms message_rate and mpi_message_rate time, as printed and in
// their JSON ("forms"): the method named as a constant (the targets are
// judged on it) and by a pointer.
inline constexpr char const* rate_form_constant = "async_rmi(d, h, armi::method<&sink::add>, v)";
inline constexpr char const* rate_form_pointer = "async_rmi(d, h, &sink::add, v)";

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  std::size_t const n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline double minimum(std::vector<double> const& v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); }

// splitmix64: a small, fast, reproducible generator for payloads and destinations.
struct splitmix64 {
  std::uint64_t state;
  std::uint64_t operator()() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) without a division (Lemire's multiply-shift on 32 bits).
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>((((*this)() >> 32) * n) >> 32); }
};

// Bytes on the wire per request, as --armi-stats counts them (bytes_sent
// over requests sent, every kind), for the calling location between its
// construction and since(): the figure of the compact wire (core/wire.hpp).
class wire_meter {
 public:
  wire_meter() { read(m_bytes, m_requests); }
  // {bytes, requests} sent since construction.
  std::pair<std::uint64_t, std::uint64_t> since() const {
    std::uint64_t bytes, requests;
    read(bytes, requests);
    return {bytes - m_bytes, requests - m_requests};
  }

 private:
  static void read(std::uint64_t& bytes, std::uint64_t& requests) {
    auto const& s = armi::detail::t_location->stats();
    bytes = s.bytes_sent;
    requests = 0;
    for (std::uint64_t k : s.sent) requests += k;
  }
  std::uint64_t m_bytes = 0, m_requests = 0;
};

// ---- pinning -------------------------------------------------------------------

// The CPUs this process may run on, read once, before any thread was pinned
// (so `taskset -c 2,3 ./bench` is respected).
inline std::vector<int> const& allowed_cpus() {
  static std::vector<int> const cpus = [] {
    std::vector<int> out;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) out.push_back(c);
    if (out.empty()) out.push_back(0);
    return out;
  }();
  return cpus;
}

// Pins the calling thread to the slot-th allowed CPU (round robin).
inline bool pin_this_thread(std::size_t slot) {
  auto const& cpus = allowed_cpus();
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpus[slot % cpus.size()], &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// Lets the calling thread run on every allowed CPU again.
inline void unpin_this_thread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : allowed_cpus()) CPU_SET(c, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// Pins while alive when `on`; the thread gets all allowed CPUs back at the end
// (threads started later from it would otherwise inherit one CPU).
class pin_guard {
 public:
  pin_guard(bool on, std::size_t slot) : m_on(on) {
    if (m_on) pin_this_thread(slot);
  }
  ~pin_guard() {
    if (m_on) unpin_this_thread();
  }
  pin_guard(pin_guard const&) = delete;
  pin_guard& operator=(pin_guard const&) = delete;

 private:
  bool m_on;
};

// Pinning is on by default when every thread can have a CPU of its own.
inline bool default_pinning(std::size_t threads) { return threads <= allowed_cpus().size(); }

// ---- JSON ----------------------------------------------------------------------

// A minimal JSON value: enough for the benchmarks' summaries.
class json {
 public:
  using array = std::vector<json>;
  using object = std::vector<std::pair<std::string, json>>;  // keeps insertion order

  json() : m_v(nullptr) {}
  json(std::nullptr_t) : m_v(nullptr) {}
  json(bool b) : m_v(b) {}
  json(double d) : m_v(d) {}
  json(int i) : m_v(static_cast<std::int64_t>(i)) {}
  json(unsigned i) : m_v(static_cast<std::int64_t>(i)) {}
  json(long i) : m_v(static_cast<std::int64_t>(i)) {}
  json(unsigned long i) : m_v(static_cast<std::int64_t>(i)) {}
  json(long long i) : m_v(static_cast<std::int64_t>(i)) {}
  json(unsigned long long i) : m_v(static_cast<std::int64_t>(i)) {}
  json(char const* s) : m_v(std::string(s)) {}
  json(std::string s) : m_v(std::move(s)) {}
  json(array a) : m_v(std::move(a)) {}
  json(object o) : m_v(std::move(o)) {}

  std::string dump(int indent = 0) const {
    std::string out;
    write(out, indent);
    return out;
  }

 private:
  static void escape(std::string& out, std::string const& s) {
    out += '"';
    for (char c : s) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20)
            out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
          else
            out += c;
      }
    }
    out += '"';
  }

  void write(std::string& out, int indent) const {
    std::string const pad(static_cast<std::size_t>(indent) + 2, ' ');
    std::string const end_pad(static_cast<std::size_t>(indent), ' ');
    if (std::holds_alternative<std::nullptr_t>(m_v)) {
      out += "null";
    } else if (auto b = std::get_if<bool>(&m_v)) {
      out += *b ? "true" : "false";
    } else if (auto d = std::get_if<double>(&m_v)) {
      out += (*d == *d && *d - *d == 0) ? fmt::format("{}", *d) : "null";  // NaN/inf are not JSON
    } else if (auto i = std::get_if<std::int64_t>(&m_v)) {
      out += fmt::format("{}", *i);
    } else if (auto s = std::get_if<std::string>(&m_v)) {
      escape(out, *s);
    } else if (auto a = std::get_if<array>(&m_v)) {
      if (a->empty()) {
        out += "[]";
        return;
      }
      out += "[\n";
      for (std::size_t k = 0; k < a->size(); ++k) {
        out += pad;
        (*a)[k].write(out, indent + 2);
        out += k + 1 < a->size() ? ",\n" : "\n";
      }
      out += end_pad + "]";
    } else if (auto o = std::get_if<object>(&m_v)) {
      if (o->empty()) {
        out += "{}";
        return;
      }
      out += "{\n";
      for (std::size_t k = 0; k < o->size(); ++k) {
        out += pad;
        escape(out, (*o)[k].first);
        out += ": ";
        (*o)[k].second.write(out, indent + 2);
        out += k + 1 < o->size() ? ",\n" : "\n";
      }
      out += end_pad + "}";
    }
  }

  std::variant<std::nullptr_t, bool, double, std::int64_t, std::string, array, object> m_v;
};

// Writes `value` to `path` (nothing when path is empty).  Returns false and
// says why on stderr when the file cannot be written.
inline bool write_json(std::string const& path, json const& value) {
  if (path.empty()) return true;
  std::ofstream f(path);
  f << value.dump() << '\n';
  f.close();
  if (!f) {
    std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
    return false;
  }
  fmt::print("wrote {}\n", path);
  return true;
}

// A short description of the machine for the JSON files.
inline json machine_context() {
  return json::object{{"allowed_cpus", static_cast<unsigned long>(allowed_cpus().size())}};
}

}  // namespace armi_bench
