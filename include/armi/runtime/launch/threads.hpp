// The threads backend's launch: one location per thread of this process,
// all sharing one threads_transport.
#pragma once

#include <armi/backend/threads/launch.hpp>
#include <armi/backend/threads/transport.hpp>
#include <armi/core/routes.hpp>
#include <armi/core/watchdog.hpp>
#include <armi/runtime/launch/common.hpp>

#include <cstdint>
#include <memory>
#include <vector>

namespace armi::detail {

inline int run_threads(config const& cfg, body_ref fn, int argc, char** argv) {
  std::uint32_t const n = cfg.effective_locations();
  // Under grid routing each location talks to its row and column only:
  // the rings' slots are sized for those pairs, not n^2.
  std::uint64_t const pairs = cfg.routing == "grid" ? std::uint64_t{n} * route_grid::square(n).partners(0) : 0;
  threads_transport tr(n, 0, pairs);
  watch_set watch(cfg.watchdog, 0, n);
  std::vector<std::unique_ptr<location>> locations;
  locations.reserve(n);
  auto const world = std::make_shared<world_members const>(world_members::of(n));
  for (std::uint32_t i = 0; i < n; ++i) {
    locations.push_back(std::make_unique<location>(tr, i, cfg));
    locations.back()->set_watch(watch.record_of(i));
    locations.back()->share_world(world);
  }
  std::vector<int> codes(n, 0);
  auto progress = start_progress_thread(cfg, pointers_to(locations));
  launch_threads(n, [&](std::uint32_t i) { codes[i] = run_location(*locations[i], fn, argc, argv); });
  progress.reset();
  return finish_process_run(cfg, "threads", locations, codes);
}

}  // namespace armi::detail
