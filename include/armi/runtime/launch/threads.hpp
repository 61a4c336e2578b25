// The threads backend's launch: one location per thread of this process,
// all sharing one threads_transport.
#pragma once

#include <armi/backend/threads/launch.hpp>
#include <armi/backend/threads/transport.hpp>
#include <armi/core/watchdog.hpp>
#include <armi/runtime/launch/common.hpp>

#include <cstdint>
#include <memory>
#include <vector>

namespace armi::detail {

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

}  // namespace armi::detail
