// The mixed backend's launch: --armi-locations threads in each MPI rank.
#pragma once

#include <armi/core/config.hpp>

#if ARMI_HAS_MPI
#include <armi/backend/mixed/transport.hpp>
#include <armi/backend/threads/launch.hpp>
#include <armi/core/watchdog.hpp>
#include <armi/runtime/launch/mpi.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace armi::detail {

// Ranks x threads: --armi-locations threads per rank.
inline int run_mixed(config const& cfg, body_ref fn, int argc, char** argv) {
  mpi_ensure_initialized(MPI_THREAD_SERIALIZED, "mixed", mpi_thread_level_wanted(cfg));
  int code = 0;
  void (*previous_hook)(int) = nullptr;
  {
    // May refuse the shape (every rank alike).
    mixed_transport tr(MPI_COMM_WORLD, cfg.locations, cfg.mpi_shm, cfg.mpi_rma);
    previous_hook = fatal_hook.exchange(&mpi_abort);
    host_heartbeat const heartbeat(tr.comm(), tr.rank_on_node() == 0, cfg.heartbeat);  // collective; ends after the run's last exchange
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
      auto const world = std::make_shared<world_members const>(world_members::of(tr.size()));
      for (std::uint32_t i = 0; i < n; ++i) {
        locations.push_back(std::make_unique<location>(tr, first + i, cfg));
        locations.back()->set_watch(watch.record_of(first + i));
        locations.back()->share_world(world);
      }
      std::vector<int> codes(n, 0);
      auto progress = start_progress_thread(cfg, pointers_to(locations));
      try {
        launch_threads(n, [&](std::uint32_t i) { codes[i] = run_location(*locations[i], fn, argc, argv); });
      } catch (thread_start_error const& e) {
        // This rank alone may have failed: the others would wait for its
        // locations forever.  The job ends (MPI_Abort) with the reason.
        fatal_exit("rank " + std::to_string(tr.rank()) + ": " + e.what());
      }
      progress.reset();
      for (auto const& l : locations) {
        mine.push_back(l->stats());
        mine_by_method.push_back(l->executed_by_method());
        if (l->trace() != nullptr) {
          trace_events += trace_json_events(*l->trace(), tr.rank(), l->id());
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

}  // namespace armi::detail

#endif  // ARMI_HAS_MPI
