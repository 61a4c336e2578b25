// The runtime behind armi::execute: parses the options, starts the locations
// of the chosen backend, runs the user's body on every one of them, fences,
// and reports.  Nothing here depends on the body's type (runtime/body.hpp
// erases it), so a program compiles it once: inline in every translation unit
// that includes <armi/armi.hpp> (the default), or, with
// ARMI_SEPARATE_COMPILATION=1, in the one that includes <armi/src.hpp>.
#pragma once

#include <armi/backend/sp2/am.hpp>
#include <armi/backend/sp2/process.hpp>
#include <armi/backend/sp2/stats.hpp>
#include <armi/backend/sp2/transport.hpp>
#include <armi/backend/sp2/wire.hpp>
#include <armi/backend/threads/launch.hpp>
#include <armi/backend/threads/transport.hpp>
#include <armi/config.hpp>
#include <armi/runtime/body.hpp>
#include <armi/runtime/error.hpp>
#include <armi/runtime/location.hpp>
#include <armi/runtime/options.hpp>
#include <armi/runtime/stats.hpp>
#include <armi/runtime/trace.hpp>

#if ARMI_HAS_MPI
#include <armi/backend/mixed/transport.hpp>
#include <armi/backend/mpi/diagnosis.hpp>
#include <armi/backend/mpi/session.hpp>
#include <armi/backend/mpi/transport.hpp>
#endif

#include <chrono>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

namespace armi {

namespace detail {

// Runs the body on one location, then fences so nothing is in flight when the
// locations go away.  Returns the body's exit code.
inline int run_location(location& self, body_ref fn, int argc, char** argv) {
  t_location = &self;
  int code = 0;
  try {
    code = fn(argc, argv);
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
      events += t->json_events(0, l->id());
      dropped += t->dropped();
    }
  }
  return finish_run(cfg, backend, stats, methods, events, dropped, codes, more_stats, more_stats_json);
}

inline int run_threads(config const& cfg, body_ref fn, int argc, char** argv) {
  std::uint32_t const n = cfg.effective_locations();
  threads_transport tr(n);
  watch_set watch(cfg.watchdog, 0, n);
  std::vector<std::unique_ptr<location>> locations;
  locations.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    locations.push_back(std::make_unique<location>(tr, i, cfg));
    locations.back()->set_watch(watch.record_of(i));
  }
  std::vector<int> codes(n, 0);
  launch_threads(n, [&](std::uint32_t i) { codes[i] = run_location(*locations[i], fn, argc, argv); });
  return finish_process_run(cfg, "threads", locations, codes);
}

// The emulated SP2, nodes as threads of this process: one location per node,
// each with its own transport (as if in a process of its own).  After its
// body, each node serves the network until every node's traffic is
// acknowledged.
inline int run_sp2_threads(config const& cfg, body_ref fn, int argc, char** argv) {
  std::uint32_t const n = cfg.effective_locations();
  bool const oversubscribed = outnumber_cores(n);
  sp2::memory_wire wire(n);
  std::vector<std::unique_ptr<sp2::node>> nodes;
  std::vector<std::unique_ptr<sp2_transport>> transports;
  std::vector<std::unique_ptr<location>> locations;
  watch_set watch(cfg.watchdog, 0, n);
  for (std::uint32_t i = 0; i < n; ++i) {
    nodes.push_back(std::make_unique<sp2::node>(i, wire, cfg.sp2));
    transports.push_back(std::make_unique<sp2_transport>(*nodes.back(), oversubscribed));
    locations.push_back(std::make_unique<location>(*transports.back(), i, cfg));
    locations.back()->set_watch(watch.record_of(i));
  }
  std::vector<int> codes(n, 0);
  auto const start = std::chrono::steady_clock::now();
  launch_threads(n, [&](std::uint32_t i) {
    sp2::t_node = nodes[i].get();
    codes[i] = run_location(*locations[i], fn, argc, argv);
    sp2::drain(*nodes[i]);
    sp2::t_node = nullptr;
  });
  double const real = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string net_text, net_json;
  if (cfg.stats) {
    std::vector<sp2::node_stats> net;
    for (auto const& p : nodes) net.push_back(p->stats());
    net_text = sp2::format_stats(net, real);
    net_json = sp2::format_stats_json(net, real);
  }
  return finish_process_run(cfg, "sp2", locations, codes, net_text, net_json);
}

#if ARMI_HAS_BOOST_ASIO
// The emulated SP2, one process per node (process.hpp): each child runs its
// location and drains its node as a thread of run_sp2_threads does, then
// reports to this process, which reports the run as run_sp2_threads does.
inline int run_sp2_processes(config const& cfg, body_ref fn, int argc, char** argv) {
  std::uint32_t const n = cfg.effective_locations();
  bool const oversubscribed = outnumber_cores(n);
  std::vector<sp2::node_result> results;
  std::optional<sp2::shared_wait_records> shared_records;
  if (cfg.watchdog > 0) shared_records.emplace(n);
  auto const start = std::chrono::steady_clock::now();
  int const failed = sp2::run_node_processes(
      n,
      [&](std::uint32_t i, sp2::wire& wire) {
        sp2::node node(i, wire, cfg.sp2);
        sp2_transport tr(node, oversubscribed);
        watch_set watch(cfg.watchdog, shared_records ? shared_records->data() : nullptr, n, i);
        location self(tr, i, cfg);
        self.set_watch(watch.record_of(i));
        sp2::node_result r;
        sp2::t_node = &node;
        r.code = run_location(self, fn, argc, argv);
        sp2::drain(node);
        sp2::t_node = nullptr;
        r.location = self.stats();
        r.methods = self.executed_by_method();
        r.network = node.stats();
        if (self.trace() != nullptr) {
          r.trace_events = self.trace()->json_events(0, i);
          r.trace_dropped = self.trace()->dropped();
        }
        return r;
      },
      results);
  double const real = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (failed != 0) return failed;
  std::vector<int> codes;
  std::vector<location_stats> stats;
  std::vector<method_counts> methods;
  std::vector<sp2::node_stats> net;
  std::string events;
  std::uint64_t dropped = 0;
  for (auto const& r : results) {
    codes.push_back(r.code);
    stats.push_back(r.location);
    methods.push_back(r.methods);
    net.push_back(r.network);
    events += r.trace_events;
    dropped += r.trace_dropped;
  }
  if (!cfg.stats) return finish_run(cfg, "sp2", stats, methods, events, dropped, codes);
  return finish_run(cfg, "sp2", stats, methods, events, dropped, codes, sp2::format_stats(net, real),
                    sp2::format_stats_json(net, real));
}
#endif

inline int run_sp2(config const& cfg, body_ref fn, int argc, char** argv) {
  if (cfg.effective_locations() > 65535)
    throw std::invalid_argument("armi::execute: the sp2 backend emulates at most 65535 nodes");
  if (cfg.sp2_mode == "process") {
#if ARMI_HAS_BOOST_ASIO
    return run_sp2_processes(cfg, fn, argc, argv);
#else
    throw std::invalid_argument("armi::execute: the sp2 backend's process mode needs Boost.Asio, which this program "
                                "was built without (Debian: apt-get install libboost-dev, then rebuild)");
#endif
  }
  if (cfg.sp2_mode != "threads")
    throw std::invalid_argument("armi::execute: unknown sp2 mode '" + cfg.sp2_mode + "' (available: threads, process)");
  return run_sp2_threads(cfg, fn, argc, argv);
}

#if ARMI_HAS_MPI
// The end of an MPI run, on the thread that called execute, after the rank's
// locations have finished: rank 0 prints every location's statistics, and
// every rank returns the first non-zero exit code in location order (as the
// threads backend does).
// Every rank's `mine`, concatenated in rank order, on rank 0 (empty elsewhere).
inline std::string mpi_gather_text(MPI_Comm comm, std::string const& mine) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  if (mine.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    fatal_exit("rank " + std::to_string(rank) + ": run report too large to gather (" + std::to_string(mine.size()) +
               " bytes)");
  int const length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(ranks));
  MPI_Request r;
  MPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm, &r);
  mpi_wait(r);
  std::vector<int> offsets(static_cast<std::size_t>(ranks), 0);
  std::size_t total = 0;
  for (int i = 0; i < ranks; ++i) {
    offsets[static_cast<std::size_t>(i)] = static_cast<int>(total);
    total += static_cast<std::size_t>(lengths[static_cast<std::size_t>(i)]);
  }
  if (rank == 0 && total > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    fatal_exit("run report too large to gather (" + std::to_string(total) + " bytes)");
  std::string all(rank == 0 ? total : 0, '\0');
  MPI_Igatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, comm, &r);
  mpi_wait(r);
  return all;
}

inline int finish_mpi_run(config const& cfg, char const* backend, MPI_Comm comm, std::vector<location_stats> const& mine,
                          std::vector<method_counts> const& mine_by_method, std::string const& trace_events,
                          std::uint64_t trace_dropped, int code) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  int const bytes = static_cast<int>(mine.size() * sizeof(location_stats));
  std::vector<location_stats> all(mine.size() * static_cast<std::size_t>(ranks));
  MPI_Request r;
  MPI_Igather(mine.data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, 0, comm, &r);
  mpi_wait(r);
  std::vector<int> codes(static_cast<std::size_t>(ranks));
  MPI_Iallgather(&code, 1, MPI_INT, codes.data(), 1, MPI_INT, comm, &r);
  mpi_wait(r);
  int first = 0;
  for (int c : codes)
    if (c != 0 && first == 0) first = c;
  // Rank 0 writes; every rank learns whether that worked, so all exit alike.
  int written = 1;
  if (cfg.stats) {
    std::vector<method_counts> const by_method =
        method_counts_from_text(mpi_gather_text(comm, method_counts_text(mine_by_method)));
    if (rank == 0) written = report_stats(cfg.stats_json, all, by_method, backend) ? 1 : 0;
  }
  if (!cfg.trace.empty()) {
    std::string const events = mpi_gather_text(comm, trace_events);
    std::uint64_t dropped = 0;
    MPI_Ireduce(&trace_dropped, &dropped, 1, MPI_UINT64_T, MPI_SUM, 0, comm, &r);
    mpi_wait(r);
    if (rank == 0 && !write_report_file(cfg.trace, trace_file(events, dropped), "--armi-trace=")) written = 0;
  }
  MPI_Ibcast(&written, 1, MPI_INT, 0, comm, &r);
  mpi_wait(r);
  if (first == 0 && written == 0) first = 1;
  return first;
}

// With --armi-watchdog, the watchdog's exchange of innermost waits between
// ranks (backend/mpi/diagnosis.hpp); none where MPI's thread level does not
// allow it.
inline wait_exchange wait_exchange_of(std::optional<mpi_wait_exchange>& x) {
  if (!x || !x->usable()) return {};
  return [p = &*x](wait_edges const& mine, std::int64_t budget_ns) { return (*p)(mine, budget_ns); };
}

// The thread level to ask for: the watchdog's exchange calls MPI from its
// own thread.
inline int mpi_thread_level_wanted(config const& cfg) {
  return cfg.watchdog > 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED;
}

// One location per rank.
inline int run_mpi(config const& cfg, body_ref fn, int argc, char** argv) {
  if (cfg.locations > 1)
    throw std::invalid_argument("armi::execute: the mpi backend runs one location per rank; start more ranks "
                                "with mpiexec -n N, or use --armi-backend=mixed for " +
                                std::to_string(cfg.locations) + " threads per rank");
  mpi_ensure_initialized(MPI_THREAD_FUNNELED, "mpi", mpi_thread_level_wanted(cfg));
  auto* const previous_hook = fatal_hook.exchange(&mpi_abort);
  int code = 0;
  {
    mpi_transport tr(MPI_COMM_WORLD, cfg.mpi_shm);
    location_id const me = static_cast<location_id>(tr.rank());
    std::vector<location_stats> mine;
    std::vector<method_counts> mine_by_method;
    std::string trace_events;
    std::uint64_t trace_dropped = 0;
    {
      std::optional<mpi_wait_exchange> exchange;
      if (cfg.watchdog > 0) exchange.emplace(tr.comm());  // collective
      watch_set watch(cfg.watchdog, me, 1, wait_exchange_of(exchange));
      location self(tr, me, cfg);
      self.set_watch(watch.record_of(me));
      code = run_location(self, fn, argc, argv);
      mine.push_back(self.stats());
      mine_by_method.push_back(self.executed_by_method());
      if (self.trace() != nullptr) {
        trace_events = self.trace()->json_events(tr.rank(), me);
        trace_dropped = self.trace()->dropped();
      }
    }
    code = finish_mpi_run(cfg, "mpi", tr.comm(), mine, mine_by_method, trace_events, trace_dropped, code);
  }
  fatal_hook.store(previous_hook);
  return code;
}

// Ranks x threads: --armi-locations threads per rank.
inline int run_mixed(config const& cfg, body_ref fn, int argc, char** argv) {
  mpi_ensure_initialized(MPI_THREAD_SERIALIZED, "mixed", mpi_thread_level_wanted(cfg));
  int code = 0;
  void (*previous_hook)(int) = nullptr;
  {
    mixed_transport tr(MPI_COMM_WORLD, cfg.locations);  // may refuse the shape (every rank alike)
    previous_hook = fatal_hook.exchange(&mpi_abort);
    std::uint32_t const n = tr.threads();
    std::vector<location_stats> mine;
    std::vector<method_counts> mine_by_method;
    std::string trace_events;
    std::uint64_t trace_dropped = 0;
    {
      location_id const first = tr.process_first(0);
      std::optional<mpi_wait_exchange> exchange;
      if (cfg.watchdog > 0) exchange.emplace(tr.comm());  // collective
      watch_set watch(cfg.watchdog, first, n, wait_exchange_of(exchange));
      std::vector<std::unique_ptr<location>> locations;
      locations.reserve(n);
      for (std::uint32_t i = 0; i < n; ++i) {
        locations.push_back(std::make_unique<location>(tr, first + i, cfg));
        locations.back()->set_watch(watch.record_of(first + i));
      }
      std::vector<int> codes(n, 0);
      try {
        launch_threads(n, [&](std::uint32_t i) { codes[i] = run_location(*locations[i], fn, argc, argv); });
      } catch (thread_start_error const& e) {
        // This rank alone may have failed: the others would wait for its
        // locations forever.  The job ends (MPI_Abort) with the reason.
        fatal_exit("rank " + std::to_string(tr.rank()) + ": " + e.what());
      }
      for (auto const& l : locations) {
        mine.push_back(l->stats());
        mine_by_method.push_back(l->executed_by_method());
        if (l->trace() != nullptr) {
          trace_events += l->trace()->json_events(tr.rank(), l->id());
          trace_dropped += l->trace()->dropped();
        }
      }
      for (int c : codes)
        if (c != 0 && code == 0) code = c;
    }
    code = finish_mpi_run(cfg, "mixed", tr.comm(), mine, mine_by_method, trace_events, trace_dropped, code);
  }
  fatal_hook.store(previous_hook);
  return code;
}
#endif

}  // namespace detail

ARMI_DECL std::string effective_backend(config const& cfg) {
#if ARMI_HAS_MPI
  if (!cfg.backend_given && detail::launched_by_mpiexec()) return "mpi";
#endif
  return cfg.backend;
}

namespace detail {

// armi::execute(cfg, fn) (see execute.hpp).
ARMI_DECL int execute_with(config const& cfg, body_ref fn, int argc, char** argv) {
  if (t_location != nullptr) throw std::logic_error("armi::execute called inside armi::execute");
  if (cfg.aggregation == 0) throw std::invalid_argument("armi::execute: aggregation must be at least 1");
  std::string const backend = effective_backend(cfg);
#if ARMI_HAS_MPI
  if (backend == "mpi") return run_mpi(cfg, fn, argc, argv);
  if (backend == "mixed") return run_mixed(cfg, fn, argc, argv);
#endif
  if (backend == "sp2") return run_sp2(cfg, fn, argc, argv);
  if (backend != "threads")
    throw std::invalid_argument("armi::execute: backend '" + backend +
                                "' is not compiled into this program (available: " + compiled_backends + ")");
  return run_threads(cfg, fn, argc, argv);
}

// armi::execute(argc, argv, fn) (see execute.hpp).
ARMI_DECL int execute_main(int argc, char** argv, body_ref fn) {
  config cfg;
  try {
    cfg = parse_options(argc, argv);
  } catch (option_error const& e) {
    std::fprintf(stderr, "armi: error: %s\n", e.what());
    return 2;
  }
  if (cfg.help) {
    std::fputs(options_help().c_str(), stdout);
    return 0;
  }
  // The body's own exceptions end the run inside; what arrives here is a
  // configuration the backend refused (on every rank alike), or threads the
  // system would not start (threads and sp2; before any body ran: see
  // launch_threads; the mixed backend ends its job itself).
  try {
    return execute_with(cfg, fn, argc, argv);
  } catch (std::invalid_argument const& e) {
    std::fprintf(stderr, "armi: error: %s\n", e.what());
    return 2;
  } catch (thread_start_error const& e) {
    std::fprintf(stderr, "armi: error: %s\n", e.what());
    return 2;
  }
}

}  // namespace detail

}  // namespace armi
