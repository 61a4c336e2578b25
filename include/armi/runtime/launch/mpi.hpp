// The mpi backend's launch (one location per rank) and what the mixed
// backend's shares with it: the end of a run across ranks (finish_mpi_run)
// and the watchdog's exchange between ranks.
#pragma once

#include <armi/core/config.hpp>

#if ARMI_HAS_MPI
#include <armi/backend/mpi/diagnosis.hpp>
#include <armi/backend/mpi/heartbeat.hpp>
#include <armi/backend/mpi/session.hpp>
#include <armi/backend/mpi/transport.hpp>
#include <armi/core/watchdog.hpp>
#include <armi/runtime/launch/common.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace armi::detail {

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

// The end of an MPI run, on the thread that called execute, after the rank's
// locations have finished: rank 0 prints every location's statistics, and
// every rank returns the first non-zero exit code in location order (as the
// threads backend does).
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

// The thread level the mpi backend needs: the communication thread of
// --armi-progress=thread calls MPI for the location, one at a time.
inline int mpi_thread_level_needed(config const& cfg) {
  return cfg.progress == "thread" ? MPI_THREAD_SERIALIZED : MPI_THREAD_FUNNELED;
}

// One location per rank.
inline int run_mpi(config const& cfg, body_ref fn, int argc, char** argv) {
  if (cfg.locations > 1)
    throw std::invalid_argument("armi::execute: the mpi backend runs one location per rank; start more ranks "
                                "with mpiexec -n N, or use --armi-backend=mixed for " +
                                std::to_string(cfg.locations) + " threads per rank");
  mpi_ensure_initialized(mpi_thread_level_needed(cfg), "mpi", mpi_thread_level_wanted(cfg));
  auto* const previous_hook = fatal_hook.exchange(&mpi_abort);
  int code = 0;
  {
    mpi_transport tr(MPI_COMM_WORLD, cfg.mpi_shm, cfg.mpi_rma);
    host_heartbeat const heartbeat(tr.comm(), tr.rank_on_node() == 0, cfg.heartbeat);  // collective; ends after the run's last exchange
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
      auto progress = start_progress_thread(cfg, {&self});
      code = run_location(self, fn, argc, argv);
      progress.reset();
      mine.push_back(self.stats());
      mine_by_method.push_back(self.executed_by_method());
      if (self.trace() != nullptr) {
        trace_events = trace_json_events(*self.trace(), tr.rank(), me);
        trace_dropped = self.trace()->dropped();
      }
    }
    code = finish_mpi_run(cfg, "mpi", tr.comm(), mine, mine_by_method, trace_events, trace_dropped, code);
  }
  fatal_hook.store(previous_hook);
  return code;
}

}  // namespace armi::detail

#endif  // ARMI_HAS_MPI
