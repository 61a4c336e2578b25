// The run's reports, written when its locations have finished: the
// --armi-stats table and JSON, and the --armi-trace file.  Kept apart from
// the records they read (stats.hpp, trace.hpp), which every program's
// translation units include, so that only the runtime compiles the
// formatting.
#pragma once

#include <armi/core/error.hpp>
#include <armi/core/handle.hpp>
#include <armi/core/handlers.hpp>
#include <armi/core/stats.hpp>
#include <armi/core/trace.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace armi::detail {

// s as the inside of a JSON string (control characters dropped).
inline std::string json_escape(std::string const& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

// A location's trace events as JSON objects, each followed by ",\n", on
// track (pid, tid).
inline std::string trace_json_events(trace_log const& log, int pid, location_id tid) {
  std::string out;
  out += fmt::format(
      "{{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": {}, \"tid\": {}, \"args\": {{\"name\": \"location {}\"}}}},\n",
      pid, tid, tid);
  std::map<char const*, std::string> names;  // mangled -> readable
  for (trace_log::event const& e : log.events()) {
    std::string const* name = nullptr;
    std::string plain;
    if (e.mangled) {
      auto it = names.find(e.name);
      if (it == names.end()) it = names.emplace(e.name, json_escape(handler_title(e.name))).first;
      name = &it->second;
    } else {
      plain = json_escape(e.name);
      name = &plain;
    }
    double const ts = static_cast<double>(e.ts) / 1000.0;  // µs
    if (e.ph == 'X') {
      out += fmt::format("{{\"ph\": \"X\", \"name\": \"{}\", \"pid\": {}, \"tid\": {}, \"ts\": {:.3f}, \"dur\": {:.3f}",
                         *name, pid, tid, ts, static_cast<double>(e.dur) / 1000.0);
      if (e.arg >= 0) out += fmt::format(", \"args\": {{\"value\": {}}}", e.arg);
      out += "},\n";
    } else {
      out += fmt::format(
          "{{\"ph\": \"i\", \"s\": \"t\", \"name\": \"{}\", \"pid\": {}, \"tid\": {}, \"ts\": {:.3f}, "
          "\"args\": {{\"to\": {}, \"requests\": {}, \"bytes\": {}}}}},\n",
          *name, pid, tid, ts, e.arg, e.a, e.b);
    }
  }
  return out;
}

// The whole file from every track's events (trace_json_events of each location).
inline std::string trace_file(std::string const& events, std::uint64_t dropped) {
  std::string out = "{\"traceEvents\": [\n" + events;
  out += fmt::format("{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 0, \"args\": {{\"name\": \"armi\"}}}}\n");
  out += fmt::format("],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": {{\"dropped_events\": {}}}\n}}\n", dropped);
  return out;
}

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
  out += "buffers sent by cause and by path (within the process, node shared memory, messages); requests "
         "forwarded (--armi-routing); flow control (waits, seconds, asks to serve); --armi-aggregation=auto decisions and factors (mean over buffers, final "
         "mean over destinations, max):\n";
  header = fmt::format("{:>10}", "location");
  for (auto name : flush_cause_names) header += fmt::format(" {:>10}", name);
  for (auto name : send_path_names) header += fmt::format(" {:>10}", name);
  header += fmt::format(" {:>10} {:>8} {:>9} {:>8}", "forwarded", "fc waits", "fc s", "asks");
  header += fmt::format(" {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8}\n", "grows", "shrinks", "capped", "held", "mean k", "final k",
                        "max k");
  out += header;
  auto causes = [&](std::string const& who, location_stats const& s) {
    std::string line = fmt::format("{:>10}", who);
    for (auto v : s.flushes) line += fmt::format(" {:>10}", v);
    for (auto v : s.paths) line += fmt::format(" {:>10}", v);
    line += fmt::format(" {:>10} {:>8} {:>9.3f} {:>8}", s.requests_forwarded, s.flow_control_waits, double(s.ns_flow_control) * 1e-9, s.service_asks);
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
// polling, buffers sent by cause and by path ("process", "node",
// "message": send_path), "flow_control" (waits, seconds, asks to serve), and
// "auto": the decisions and factors of --armi-aggregation=auto.
inline std::string format_stats_json(std::vector<location_stats> const& per_location,
                                     std::vector<method_counts> const& methods, std::string const& backend,
                                     std::string const& backend_json = {}) {
  auto object = [](location_stats const& s, method_counts const& by_method, std::string const& indent) {
    // {"name": count, ...} of a counter array and the names of its indices.
    auto named = [](auto const& names, auto const& counts) {
      std::string o = "{";
      for (std::size_t k = 0; k < counts.size(); ++k)
        o += fmt::format("{}\"{}\": {}", k == 0 ? "" : ", ", names[k], counts[k]);
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
    std::string const automatic = fmt::format(
        "{{\"grows\": {}, \"shrinks\": {}, \"capped\": {}, \"held\": {}, \"buffers\": {}, \"factor_mean\": {:.3f}, "
        "\"factor_final_mean\": {:.3f}, \"factor_max\": {}, \"destinations\": {}}}",
        s.auto_grows, s.auto_shrinks, s.auto_capped, s.auto_held, s.auto_buffers, s.auto_factor_mean(), s.auto_final_mean(),
        s.auto_factor_max, s.auto_destinations);
    return fmt::format(
        "{{\n{0}  \"sent\": {1},\n{0}  \"executed\": {2},\n{0}  \"executed_by_method\": {14},\n"
        "{0}  \"buffers_sent\": {3},\n"
        "{0}  \"bytes_sent\": {4},\n{0}  \"buffers_received\": {5},\n{0}  \"requests_forwarded\": {19},\n{0}  \"requests_per_buffer_mean\": {6:.3f},\n"
        "{0}  \"requests_per_buffer\": {7},\n{0}  \"fences\": {8},\n{0}  \"fence_rounds\": {9},\n"
        "{0}  \"sleeps\": {10},\n{0}  \"seconds_in_fence\": {11:.6f},\n{0}  \"seconds_blocked\": {12:.6f},\n"
        "{0}  \"seconds_polling\": {13:.6f},\n{0}  \"flushes_by_cause\": {15},\n{0}  \"buffers_by_path\": {18},\n"
        "{0}  \"flow_control\": {17},\n"
        "{0}  \"auto\": {16}\n{0}}}",
        indent, named(rmi_kind_names, s.sent), named(rmi_kind_names, s.executed), s.buffers_sent, s.bytes_sent,
        s.buffers_received, per, hist,
        s.fences, s.fence_rounds, s.sleeps, double(s.ns_fence) * 1e-9, double(s.ns_blocked) * 1e-9,
        double(s.ns_polling) * 1e-9, by_type, named(flush_cause_names, s.flushes), automatic,
        fmt::format("{{\"waits\": {}, \"seconds\": {:.6f}, \"asks\": {}}}", s.flow_control_waits,
                    double(s.ns_flow_control) * 1e-9, s.service_asks),
        named(send_path_names, s.paths), s.requests_forwarded);
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
