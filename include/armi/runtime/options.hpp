// Run-time options: --armi-* flags, ARMI_* environment variables, defaults.
// A flag wins over the environment; parse_options() removes the flags it
// consumed from argv so the user's program never sees them.
#pragma once

#include <armi/config.hpp>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

namespace armi {

// An unknown --armi- flag or a malformed value.  what() is one line.
struct option_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct config {
  std::string backend = "threads";   // --armi-backend
  bool backend_given = false;        // set by a flag or ARMI_BACKEND (else: mpi under mpiexec)
  std::uint32_t locations = 0;       // --armi-locations: per process; 0 = hardware threads (shared by a node's ranks)
  std::size_t aggregation = 64;      // --armi-aggregation: requests per buffer, 1 = none
  std::size_t aggregation_local = 0;   // --armi-aggregation-local: to this process's locations; 0 = aggregation
  std::size_t aggregation_remote = 0;  // --armi-aggregation-remote: to other processes'; 0 = aggregation
  std::size_t buffer_bytes = 32768;  // --armi-buffer-bytes: byte cap of one buffer
  bool stats = false;                // --armi-stats: collect statistics, report them at exit
  std::string stats_json;            // --armi-stats=json:FILE: ... as JSON into FILE (else text on stderr)
  std::string trace;                 // --armi-trace=FILE: Chrome trace-event JSON of the run; empty = off
  double watchdog = 0;               // --armi-watchdog: seconds without progress before a report; 0 = off
  bool help = false;                 // --armi-help: print the options and exit

  // The number of locations a run with this configuration gets.
  std::uint32_t effective_locations() const {
    if (locations != 0) return locations;
    unsigned const hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : hw;
  }
};

namespace detail {

struct option_spec {
  std::string_view flag;  // without the leading "--armi-"
  std::string_view env;
  std::string_view value_name;  // empty: a switch
  std::string_view default_text;
  std::string_view help;
};

inline constexpr option_spec option_specs[] = {
    {"backend", "ARMI_BACKEND", "NAME", "threads; mpi under mpiexec -n >1",
     "backend to run on: threads, or mpi and mixed (ranks x threads) in programs linked with armi::mpi"},
    {"locations", "ARMI_LOCATIONS", "N", "hardware threads",
     "locations (threads) per process, 1..4096 (mixed: per rank; default: the node's hardware threads / its ranks)"},
    {"aggregation", "ARMI_AGGREGATION", "N", "64",
     "most requests per aggregation buffer, 1 = no aggregation (sets both of the next two)"},
    {"aggregation-local", "ARMI_AGGREGATION_LOCAL", "N", "--armi-aggregation",
     "the same, for destinations in this process (threads of a rank)"},
    {"aggregation-remote", "ARMI_AGGREGATION_REMOTE", "N", "--armi-aggregation",
     "the same, for destinations in other processes (mpi, mixed)"},
    {"buffer-bytes", "ARMI_BUFFER_BYTES", "N", "32768", "byte cap of one aggregation buffer, 64..2^30"},
    {"stats", "ARMI_STATS", "[json:FILE]", "off",
     "per-location statistics at exit: a table on stderr, or JSON written to FILE"},
    {"trace", "ARMI_TRACE", "FILE", "off",
     "write a Chrome trace-event JSON (fences, waits, flushes, sampled executions; one track per location)"},
    {"watchdog", "ARMI_WATCHDOG", "SECONDS", "0 (off)",
     "a location blocked this long without progress prints what every location waits on, then ends the run"},
    {"help", "", "", "", "print this list and exit"},
};

inline std::uint64_t parse_unsigned(std::string_view name, std::string_view text, std::uint64_t lo,
                                    std::uint64_t hi) {
  std::string const s(text);
  auto bad = [&](char const* why) {
    return option_error(std::string("--armi-") + std::string(name) + "=" + s + ": " + why);
  };
  if (s.empty()) throw bad("missing value");
  for (char c : s)
    if (c < '0' || c > '9') throw bad("not a non-negative integer");
  errno = 0;
  unsigned long long const v = std::strtoull(s.c_str(), nullptr, 10);
  if (errno == ERANGE || v < lo || v > hi)
    throw bad(("out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]").c_str());
  return v;
}

// A non-negative decimal number of seconds (0.5, 30), at most a day.
inline double parse_seconds(std::string_view name, std::string_view text) {
  std::string const s(text);
  auto bad = [&](char const* why) {
    return option_error(std::string("--armi-") + std::string(name) + "=" + s + ": " + why);
  };
  bool digits = false, point = false;
  for (char c : s) {
    if (c >= '0' && c <= '9')
      digits = true;
    else if (c == '.' && !point)
      point = true;
    else
      throw bad("not a number of seconds");
  }
  if (!digits) throw bad("not a number of seconds");
  double const v = std::strtod(s.c_str(), nullptr);
  if (v > 86400) throw bad("more than a day");
  return v;
}

inline bool parse_switch(std::string_view name, std::string_view text) {
  if (text.empty() || text == "1" || text == "on" || text == "yes" || text == "true") return true;
  if (text == "0" || text == "off" || text == "no" || text == "false") return false;
  throw option_error("--armi-" + std::string(name) + "=" + std::string(text) + ": expected on or off");
}

// Applies one option (from a flag or the environment) to cfg.
inline void apply_option(config& cfg, std::string_view name, std::string_view value, bool has_value) {
  auto need_value = [&] {
    if (!has_value || value.empty())
      throw option_error("--armi-" + std::string(name) + " needs a value: --armi-" + std::string(name) + "=VALUE");
  };
  if (name == "backend") {
    need_value();
    bool const compiled = value == "threads" || (has_mpi_backend && (value == "mpi" || value == "mixed"));
    if (!compiled) {
      std::string const available = std::string(" (available: ") + compiled_backends + ")";
      if (value == "mpi" || value == "mixed")
        throw option_error("--armi-backend=" + std::string(value) +
                           ": this program was not built with MPI (link armi::mpi)" + available);
      if (value == "sp2")
        throw option_error("--armi-backend=" + std::string(value) + ": this backend is not built yet" + available);
      throw option_error("--armi-backend=" + std::string(value) + ": unknown backend" + available);
    }
    cfg.backend = std::string(value);
    cfg.backend_given = true;
  } else if (name == "locations") {
    need_value();
    cfg.locations = static_cast<std::uint32_t>(parse_unsigned(name, value, 1, 4096));
  } else if (name == "aggregation") {
    need_value();
    cfg.aggregation = parse_unsigned(name, value, 1, std::uint64_t{1} << 24);
  } else if (name == "aggregation-local") {
    need_value();
    cfg.aggregation_local = parse_unsigned(name, value, 1, std::uint64_t{1} << 24);
  } else if (name == "aggregation-remote") {
    need_value();
    cfg.aggregation_remote = parse_unsigned(name, value, 1, std::uint64_t{1} << 24);
  } else if (name == "buffer-bytes") {
    need_value();
    cfg.buffer_bytes = parse_unsigned(name, value, 64, std::uint64_t{1} << 30);
  } else if (name == "watchdog") {
    need_value();
    cfg.watchdog = parse_seconds(name, value);
  } else if (name == "trace") {
    need_value();
    cfg.trace = std::string(value);
  } else if (name == "stats") {
    if (value.starts_with("json:")) {
      if (value.size() == 5) throw option_error("--armi-stats=json: needs a file name: --armi-stats=json:FILE");
      cfg.stats = true;
      cfg.stats_json = std::string(value.substr(5));
    } else {
      cfg.stats = parse_switch(name, value);
      cfg.stats_json.clear();
    }
  } else if (name == "help") {
    if (has_value) throw option_error("--armi-help takes no value");
    cfg.help = true;
  } else {
    throw option_error("unknown option --armi-" + std::string(name) + " (see --armi-help)");
  }
}

}  // namespace detail

// Reads the ARMI_* environment, then the --armi-* flags of argv (flags win),
// and removes those flags from argv, updating argc.  Throws option_error.
inline config parse_options(int& argc, char** argv) {
  config cfg;
  for (auto const& spec : detail::option_specs) {
    if (spec.env.empty()) continue;
    if (char const* v = std::getenv(std::string(spec.env).c_str())) {
      try {
        detail::apply_option(cfg, spec.flag, v, true);
      } catch (option_error const& e) {
        throw option_error(std::string(spec.env) + "=" + v + ": " + e.what());
      }
    }
  }
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string_view const arg = argv[i] != nullptr ? argv[i] : "";
    if (arg.substr(0, 7) != "--armi-") {
      argv[out++] = argv[i];
      continue;
    }
    std::string_view body = arg.substr(7);
    auto const eq = body.find('=');
    bool const has_value = eq != std::string_view::npos;
    std::string_view const name = body.substr(0, eq);
    std::string_view const value = has_value ? body.substr(eq + 1) : std::string_view{};
    detail::apply_option(cfg, name, value, has_value);
  }
  if (argc > 0) argv[out] = nullptr;
  argc = argc > 0 ? out : argc;
  return cfg;
}

// The --armi-help text: every option, its variable and its default.
inline std::string options_help() {
  std::string s = "armi options (flag, environment variable, default); a flag wins over the environment:\n";
  for (auto const& o : detail::option_specs) {
    std::string flag = "  --armi-" + std::string(o.flag);
    if (!o.value_name.empty()) flag += "=" + std::string(o.value_name);
    if (flag.size() < 32) flag.resize(32, ' ');
    std::string env = std::string(o.env.empty() ? "-" : o.env);
    if (env.size() < 24) env.resize(24, ' ');
    s += flag + " " + env + " " + std::string(o.help);
    if (!o.default_text.empty()) s += " [default: " + std::string(o.default_text) + "]";
    s += "\n";
  }
  return s;
}

}  // namespace armi
