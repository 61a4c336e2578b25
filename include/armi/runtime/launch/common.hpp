// What every backend's launch does around the locations it starts: run the
// body on one location and fence after it (run_location), and report the
// run at its end (finish_run: --armi-stats, --armi-trace, the exit code).
#pragma once

#include <armi/core/error.hpp>
#include <armi/core/report.hpp>
#include <armi/core/stats.hpp>
#include <armi/core/trace.hpp>
#include <armi/runtime/body.hpp>
#include <armi/runtime/location.hpp>
#include <armi/runtime/options.hpp>
#include <armi/runtime/progress_thread.hpp>

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

namespace armi::detail {

// Runs the body on one location, then fences so nothing is in flight when the
// locations go away.  Returns the body's exit code.
inline int run_location(location& self, body_ref fn, int argc, char** argv) {
  t_location = &self;
  if (self.served_by_progress_thread()) {
    t_claim = &self.claim();
    self.claim().release_at_start();
  }
  int code = 0;
  try {
    code = fn(argc, argv);
    if (t_claim != nullptr) {
      t_claim->enter();  // for good: the communication thread leaves this location alone from here on
      t_claim = nullptr;
    }
    self.fence();
  } catch (std::exception const& e) {
    fatal_exit("location " + std::to_string(self.id()) + ": uncaught exception in the location's body: " +
               demangle(typeid(e).name()) + ": " + e.what());
  } catch (...) {
    fatal_exit("location " + std::to_string(self.id()) + ": uncaught exception (not derived from std::exception)");
  }
  t_location = nullptr;
  return code;
}

// The communication thread of --armi-progress=thread over a process's
// locations (null under poll).  Start it before the locations' threads and
// destroy it after they have all ended.
inline std::unique_ptr<progress_thread> start_progress_thread(config const& cfg, std::vector<location*> locations,
                                                              progress_thread::bind_hook bind = {}) {
  if (cfg.progress != "thread") return nullptr;
  return std::make_unique<progress_thread>(std::move(locations),
                                           progress_thread::interval_of(cfg.progress_interval_ns, cfg.max_delay_ns),
                                           std::move(bind));
}

template <class Locations>
std::vector<location*> pointers_to(Locations const& owned) {
  std::vector<location*> out;
  for (auto const& l : owned) out.push_back(l.get());
  return out;
}

// The end of a run on one machine: the first non-zero exit code in location
// order, after --armi-stats and --armi-trace are reported (1 if a report
// could not be written).  `stats` and `methods` are the locations' statistics
// and executions per method type in location order, `trace_events` their
// trace events (JSON); `more_stats` and `more_stats_json` are a backend's own
// counters, as text for the table and as a JSON value for the file.
inline int finish_run(config const& cfg, char const* backend, std::vector<location_stats> const& stats,
                      std::vector<method_counts> const& methods, std::string const& trace_events,
                      std::uint64_t trace_dropped, std::vector<int> const& codes, std::string const& more_stats = {},
                      std::string const& more_stats_json = {}) {
  int code = 0;
  for (int c : codes)
    if (c != 0 && code == 0) code = c;
  if (cfg.stats && !report_stats(cfg.stats_json, stats, methods, backend, more_stats, more_stats_json) && code == 0)
    code = 1;
  if (!cfg.trace.empty() && !write_report_file(cfg.trace, trace_file(trace_events, trace_dropped), "--armi-trace=") &&
      code == 0)
    code = 1;
  return code;
}

// The same, for a run whose locations are all in this process.
inline int finish_process_run(config const& cfg, char const* backend,
                              std::vector<std::unique_ptr<location>> const& locations, std::vector<int> const& codes,
                              std::string const& more_stats = {}, std::string const& more_stats_json = {}) {
  std::vector<location_stats> stats;
  std::vector<method_counts> methods;
  std::string events;
  std::uint64_t dropped = 0;
  for (auto const& l : locations) {
    if (cfg.stats) {
      stats.push_back(l->stats());
      methods.push_back(l->executed_by_method());
    }
    if (trace_log const* t = l->trace()) {  // --armi-trace
      events += trace_json_events(*t, 0, l->id());
      dropped += t->dropped();
    }
  }
  return finish_run(cfg, backend, stats, methods, events, dropped, codes, more_stats, more_stats_json);
}

}  // namespace armi::detail
