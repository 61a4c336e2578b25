// Per-location counters, updated without atomics by the owning location and
// printed (with fmt) at exit when --armi-stats is on.
#pragma once

#include <armi/core/handlers.hpp>
#include <armi/core/trace.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace armi::detail {

// Why a buffer left: it held the aggregation factor's requests (full) or
// reached the byte cap (bytes); it held something someone waits on (urgent);
// the location polled and found nothing (poll), blocked (wait), fenced, or
// called rmi_flush or set_aggregation (flush); its oldest request reached
// --armi-max-delay (delay).
enum class flush_cause : std::uint8_t { full, bytes, urgent, poll, wait, fence, flush, delay };
inline constexpr std::size_t num_flush_causes = 8;
inline constexpr char const* flush_cause_names[num_flush_causes] = {"full", "bytes", "urgent", "poll",
                                                                    "wait", "fence", "flush", "delay"};

struct location_stats {
  std::array<std::uint64_t, num_rmi_kinds> sent{};
  std::array<std::uint64_t, num_rmi_kinds> executed{};
  std::uint64_t buffers_sent = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t buffers_received = 0;
  std::uint64_t fences = 0;
  std::uint64_t fence_rounds = 0;
  std::uint64_t sleeps = 0;  // times the location blocked waiting for work
  // Flow control: times the location waited for its buffers to come back
  // (and nanoseconds; outside a fence also counted in ns_blocked), and
  // times it asked its partners to serve at each buffer they send (past half
  // its limit in flight, location::ask_service).
  std::uint64_t flow_control_waits = 0;
  std::uint64_t ns_flow_control = 0;
  std::uint64_t service_asks = 0;
  // Buffers sent by how many requests they held: [1], [2,3], [4,7], ...,
  // [2048,4095], [4096, ...).  The histogram of achieved aggregation.
  static constexpr std::size_t histogram_buckets = 13;
  std::array<std::uint64_t, histogram_buckets> requests_per_buffer{};
  // Nanoseconds (steady clock) spent in rmi_fence, blocked outside a fence
  // (sync_rmi, future::get, collectives, rmi_wait) and in rmi_poll.
  std::uint64_t ns_fence = 0;
  std::uint64_t ns_blocked = 0;
  std::uint64_t ns_polling = 0;
  std::array<std::uint64_t, num_flush_causes> flushes{};  // buffers sent, by flush_cause
  // --armi-aggregation=auto: its decisions (factor doubled, halved, lowered
  // to what the byte cap holds), the factor in effect summed over the
  // buffers it governed (mean = auto_factor_sum / auto_buffers), the largest
  // factor reached, and the factors in effect now summed over the
  // destinations it governs (mean final factor = auto_final_sum / auto_destinations).
  std::uint64_t auto_grows = 0;
  std::uint64_t auto_shrinks = 0;
  std::uint64_t auto_capped = 0;
  std::uint64_t auto_held = 0;  // full buffers whose k the burst length held (may_grow)
  std::uint64_t auto_buffers = 0;
  std::uint64_t auto_factor_sum = 0;
  std::uint64_t auto_factor_max = 0;
  std::uint64_t auto_final_sum = 0;
  std::uint64_t auto_destinations = 0;

  double auto_factor_mean() const { return auto_buffers == 0 ? 0.0 : double(auto_factor_sum) / double(auto_buffers); }
  double auto_final_mean() const {
    return auto_destinations == 0 ? 0.0 : double(auto_final_sum) / double(auto_destinations);
  }

  static std::size_t bucket_of(std::uint32_t requests) {
    std::size_t const b = static_cast<std::size_t>(std::bit_width(requests | 1u)) - 1;
    return b < histogram_buckets ? b : histogram_buckets - 1;
  }

  location_stats& operator+=(location_stats const& o) {
    for (std::size_t k = 0; k < num_rmi_kinds; ++k) {
      sent[k] += o.sent[k];
      executed[k] += o.executed[k];
    }
    buffers_sent += o.buffers_sent;
    bytes_sent += o.bytes_sent;
    buffers_received += o.buffers_received;
    fences += o.fences;
    fence_rounds += o.fence_rounds;
    sleeps += o.sleeps;
    flow_control_waits += o.flow_control_waits;
    ns_flow_control += o.ns_flow_control;
    service_asks += o.service_asks;
    for (std::size_t k = 0; k < histogram_buckets; ++k) requests_per_buffer[k] += o.requests_per_buffer[k];
    ns_fence += o.ns_fence;
    ns_blocked += o.ns_blocked;
    ns_polling += o.ns_polling;
    for (std::size_t k = 0; k < num_flush_causes; ++k) flushes[k] += o.flushes[k];
    auto_grows += o.auto_grows;
    auto_shrinks += o.auto_shrinks;
    auto_capped += o.auto_capped;
    auto_held += o.auto_held;
    auto_buffers += o.auto_buffers;
    auto_factor_sum += o.auto_factor_sum;
    auto_factor_max = std::max(auto_factor_max, o.auto_factor_max);
    auto_final_sum += o.auto_final_sum;
    auto_destinations += o.auto_destinations;
    return *this;
  }
  std::uint64_t total_sent() const {
    std::uint64_t s = 0;
    for (auto v : sent) s += v;
    return s;
  }
  std::uint64_t total_executed() const {
    std::uint64_t s = 0;
    for (auto v : executed) s += v;
    return s;
  }
};

// Requests a location executed per target method type, by handler title
// ("async: void (T::*)(int)": the kind and the method's type, as the trace
// names executions).  Kept apart from location_stats, which travels between
// ranks as raw bytes; these travel as text (method_counts_text).
using method_counts = std::map<std::string, std::uint64_t>;

// A location's executions per handler id (stats on), as method_counts: method
// stubs only (replies, collectives and definitions are in the kind counts).
inline method_counts method_counts_of(std::vector<std::uint64_t> const& by_handler) {
  method_counts out;
  for (std::uint32_t id = 0; id < by_handler.size(); ++id) {
    handler_entry const* e = handler_table::instance().find(id);
    if (by_handler[id] != 0 && e != nullptr && e->is_method()) out[handler_title(e->mangled_name)] += by_handler[id];
  }
  return out;
}

// Several locations' counts as text and back: per location, "count title"
// lines, then an empty line.  Titles are type names, without line breaks.
inline std::string method_counts_text(std::vector<method_counts> const& per_location) {
  std::string out;
  for (auto const& counts : per_location) {
    for (auto const& [title, n] : counts) out += fmt::format("{} {}\n", n, title);
    out += '\n';
  }
  return out;
}
inline std::vector<method_counts> method_counts_from_text(std::string_view text) {
  std::vector<method_counts> out;
  method_counts current;
  while (!text.empty()) {
    std::size_t const end = std::min(text.find('\n'), text.size());
    std::string_view const line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (line.empty()) {
      out.push_back(std::move(current));
      current.clear();
      continue;
    }
    std::size_t const space = line.find(' ');
    current[std::string(line.substr(space + 1))] += std::stoull(std::string(line.substr(0, space)));
  }
  return out;
}

// Adds the steady-clock time of its scope to `ns`, when `on`.
class stopwatch {
 public:
  stopwatch(bool on, std::uint64_t& ns) : m_ns(on ? &ns : nullptr) {
    if (m_ns != nullptr) m_start = std::chrono::steady_clock::now();
  }
  stopwatch(stopwatch const&) = delete;
  stopwatch& operator=(stopwatch const&) = delete;
  ~stopwatch() {
    if (m_ns != nullptr)
      *m_ns += static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - m_start).count());
  }

 private:
  std::uint64_t* m_ns;
  std::chrono::steady_clock::time_point m_start{};
};

// The table; then the `top` method types that executed the most requests,
// over all locations.
inline std::string format_stats(std::vector<location_stats> const& per_location,
                                std::vector<method_counts> const& methods) {
  constexpr std::size_t top = 5;
  std::string out = "armi stats (requests sent/executed by kind; buffers; bytes; requests per buffer):\n";
  std::string header = fmt::format("{:>10}", "location");
  for (auto name : rmi_kind_names) header += fmt::format(" {:>19}", name);
  header += fmt::format(" {:>10} {:>13} {:>8} {:>7} {:>7} {:>9} {:>9} {:>9}\n", "buffers", "bytes", "req/buf", "fences",
                        "sleeps", "fence s", "blocked s", "poll s");
  out += header;
  location_stats total;
  auto row = [&](std::string const& who, location_stats const& s) {
    std::string line = fmt::format("{:>10}", who);
    for (std::size_t k = 0; k < num_rmi_kinds; ++k) line += fmt::format(" {:>9}/{:<9}", s.sent[k], s.executed[k]);
    double const per = s.buffers_sent == 0 ? 0.0 : double(s.total_sent()) / double(s.buffers_sent);
    line += fmt::format(" {:>10} {:>13} {:>8.1f} {:>7} {:>7} {:>9.3f} {:>9.3f} {:>9.3f}\n", s.buffers_sent, s.bytes_sent,
                        per, s.fences, s.sleeps, double(s.ns_fence) * 1e-9, double(s.ns_blocked) * 1e-9,
                        double(s.ns_polling) * 1e-9);
    out += line;
  };
  for (std::size_t i = 0; i < per_location.size(); ++i) {
    row(fmt::format("{}", i), per_location[i]);
    total += per_location[i];
  }
  row("total", total);
  method_counts all;
  for (auto const& counts : methods)
    for (auto const& [title, n] : counts) all[title] += n;
  std::vector<std::pair<std::uint64_t, std::string const*>> ranked;
  for (auto const& [title, n] : all) ranked.emplace_back(n, &title);
  std::size_t const shown = std::min(top, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(shown), ranked.end(),
                    [](auto const& a, auto const& b) { return a.first > b.first; });
  if (shown != 0) out += fmt::format("requests executed by target method type (top {} of {}):\n", shown, all.size());
  for (std::size_t i = 0; i < shown; ++i) out += fmt::format("{:>13}  {}\n", ranked[i].first, *ranked[i].second);
  out += "buffers sent by cause; flow control (waits, seconds, asks to serve); --armi-aggregation=auto decisions "
         "and factors (mean over buffers, final mean over destinations, max):\n";
  header = fmt::format("{:>10}", "location");
  for (auto name : flush_cause_names) header += fmt::format(" {:>10}", name);
  header += fmt::format(" {:>8} {:>9} {:>8}", "fc waits", "fc s", "asks");
  header += fmt::format(" {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8}\n", "grows", "shrinks", "capped", "held", "mean k", "final k",
                        "max k");
  out += header;
  auto causes = [&](std::string const& who, location_stats const& s) {
    std::string line = fmt::format("{:>10}", who);
    for (auto v : s.flushes) line += fmt::format(" {:>10}", v);
    line += fmt::format(" {:>8} {:>9.3f} {:>8}", s.flow_control_waits, double(s.ns_flow_control) * 1e-9, s.service_asks);
    line += fmt::format(" {:>8} {:>8} {:>8} {:>8} {:>9.1f} {:>9.1f} {:>8}\n", s.auto_grows, s.auto_shrinks, s.auto_capped, s.auto_held,
                        s.auto_factor_mean(), s.auto_final_mean(), s.auto_factor_max);
    out += line;
  };
  for (std::size_t i = 0; i < per_location.size(); ++i) causes(fmt::format("{}", i), per_location[i]);
  causes("total", total);
  return out;
}

// The same as JSON: {"backend", "locations", "total", "per_location": [...]},
// then the backend's own counters as member `backend` when it gives some
// (backend_json: a JSON value, or empty).
// Each location: requests sent and executed by kind, requests executed by
// target method type (handler title -> count), buffers and bytes sent,
// buffers received, the requests-per-buffer histogram (bucket label ->
// buffers), fences, fence rounds, sleeps, seconds in fence, blocked and
// polling, buffers sent by cause, "flow_control" (waits, seconds, asks to
// serve), and "auto": the decisions and factors of --armi-aggregation=auto.
inline std::string format_stats_json(std::vector<location_stats> const& per_location,
                                     std::vector<method_counts> const& methods, std::string const& backend,
                                     std::string const& backend_json = {}) {
  auto object = [](location_stats const& s, method_counts const& by_method, std::string const& indent) {
    auto kinds = [&](std::array<std::uint64_t, num_rmi_kinds> const& v) {
      std::string o = "{";
      for (std::size_t k = 0; k < num_rmi_kinds; ++k)
        o += fmt::format("{}\"{}\": {}", k == 0 ? "" : ", ", rmi_kind_names[k], v[k]);
      return o + "}";
    };
    std::string hist = "{";
    for (std::size_t k = 0; k < location_stats::histogram_buckets; ++k) {
      std::uint64_t const lo = std::uint64_t{1} << k;
      std::string const label = k + 1 == location_stats::histogram_buckets ? fmt::format("{}+", lo)
                                : lo == 1                                ? std::string("1")
                                                                         : fmt::format("{}-{}", lo, 2 * lo - 1);
      hist += fmt::format("{}\"{}\": {}", k == 0 ? "" : ", ", label, s.requests_per_buffer[k]);
    }
    hist += "}";
    std::string by_type = "{";
    for (auto const& [title, n] : by_method)
      by_type += fmt::format("{}\"{}\": {}", by_type.size() == 1 ? "" : ", ", json_escape(title), n);
    by_type += "}";
    double const per = s.buffers_sent == 0 ? 0.0 : double(s.total_sent()) / double(s.buffers_sent);
    std::string causes = "{";
    for (std::size_t k = 0; k < num_flush_causes; ++k)
      causes += fmt::format("{}\"{}\": {}", k == 0 ? "" : ", ", flush_cause_names[k], s.flushes[k]);
    causes += "}";
    std::string const automatic = fmt::format(
        "{{\"grows\": {}, \"shrinks\": {}, \"capped\": {}, \"held\": {}, \"buffers\": {}, \"factor_mean\": {:.3f}, "
        "\"factor_final_mean\": {:.3f}, \"factor_max\": {}, \"destinations\": {}}}",
        s.auto_grows, s.auto_shrinks, s.auto_capped, s.auto_held, s.auto_buffers, s.auto_factor_mean(), s.auto_final_mean(),
        s.auto_factor_max, s.auto_destinations);
    return fmt::format(
        "{{\n{0}  \"sent\": {1},\n{0}  \"executed\": {2},\n{0}  \"executed_by_method\": {14},\n"
        "{0}  \"buffers_sent\": {3},\n"
        "{0}  \"bytes_sent\": {4},\n{0}  \"buffers_received\": {5},\n{0}  \"requests_per_buffer_mean\": {6:.3f},\n"
        "{0}  \"requests_per_buffer\": {7},\n{0}  \"fences\": {8},\n{0}  \"fence_rounds\": {9},\n"
        "{0}  \"sleeps\": {10},\n{0}  \"seconds_in_fence\": {11:.6f},\n{0}  \"seconds_blocked\": {12:.6f},\n"
        "{0}  \"seconds_polling\": {13:.6f},\n{0}  \"flushes_by_cause\": {15},\n{0}  \"flow_control\": {17},\n"
        "{0}  \"auto\": {16}\n{0}}}",
        indent, kinds(s.sent), kinds(s.executed), s.buffers_sent, s.bytes_sent, s.buffers_received, per, hist,
        s.fences, s.fence_rounds, s.sleeps, double(s.ns_fence) * 1e-9, double(s.ns_blocked) * 1e-9,
        double(s.ns_polling) * 1e-9, by_type, causes, automatic,
        fmt::format("{{\"waits\": {}, \"seconds\": {:.6f}, \"asks\": {}}}", s.flow_control_waits,
                    double(s.ns_flow_control) * 1e-9, s.service_asks));
  };
  location_stats total;
  for (auto const& s : per_location) total += s;
  method_counts total_by_method;
  for (auto const& counts : methods)
    for (auto const& [title, n] : counts) total_by_method[title] += n;
  std::string out = fmt::format("{{\n  \"backend\": \"{}\",\n  \"locations\": {},\n  \"total\": {},\n  \"per_location\": [",
                                backend, per_location.size(), object(total, total_by_method, "  "));
  for (std::size_t i = 0; i < per_location.size(); ++i)
    out += (i == 0 ? "\n    " : ",\n    ") + object(per_location[i], methods[i], "    ");
  out += "\n  ]";
  if (!backend_json.empty()) out += fmt::format(",\n  \"{}\": {}", backend, backend_json);
  return out + "\n}\n";
}

// Writes a run report (stats, trace) to path; false, after a one-line
// message naming the option, if that failed.
inline bool write_report_file(std::string const& path, std::string const& text, char const* option) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  bool ok = f != nullptr && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (f != nullptr && std::fclose(f) != 0) ok = false;
  if (!ok) std::fprintf(stderr, "armi: error: %s%s: cannot write the file\n", option, path.c_str());
  return ok;
}

// Reports the run's statistics as --armi-stats asked: a table on stderr, or
// JSON into the file, each with the backend's own counters (backend_text
// after the table, backend_json as a member of the JSON; either may be
// empty).  False (after a message on stderr) if the file could not be
// written.
inline bool report_stats(std::string const& json_path, std::vector<location_stats> const& all,
                         std::vector<method_counts> const& methods, std::string const& backend,
                         std::string const& backend_text = {}, std::string const& backend_json = {}) {
  if (json_path.empty()) {
    std::fputs((format_stats(all, methods) + backend_text).c_str(), stderr);
    return true;
  }
  return write_report_file(json_path, format_stats_json(all, methods, backend, backend_json), "--armi-stats=json:");
}

}  // namespace armi::detail
