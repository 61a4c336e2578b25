// The sp2 backend's launch: the emulated SP2's nodes as threads of this
// process, or (with Boost.Asio) as processes of their own; one location per
// node.
#pragma once

#include <armi/backend/sp2/node_thread.hpp>
#include <armi/backend/sp2/process.hpp>
#include <armi/backend/sp2/stats.hpp>
#include <armi/backend/sp2/transport.hpp>
#include <armi/backend/sp2/wire.hpp>
#include <armi/backend/threads/launch.hpp>
#include <armi/core/config.hpp>
#include <armi/core/watchdog.hpp>
#include <armi/runtime/launch/common.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace armi::detail {

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
  auto const world = std::make_shared<world_members const>(world_members::of(n));
  for (std::uint32_t i = 0; i < n; ++i) {
    nodes.push_back(std::make_unique<sp2::node>(i, wire, cfg.sp2));
    transports.push_back(std::make_unique<sp2_transport>(*nodes.back(), oversubscribed, cfg.tree_arity));
    locations.push_back(std::make_unique<location>(*transports.back(), i, cfg));
    locations.back()->set_watch(watch.record_of(i));
    locations.back()->share_world(world);
  }
  std::vector<int> codes(n, 0);
  auto const start = std::chrono::steady_clock::now();
  auto progress = start_progress_thread(cfg, pointers_to(locations), [&nodes](std::size_t i) {
    sp2::t_node = i == progress_thread::no_location ? nullptr : nodes[i].get();
  });
  launch_threads(n, [&](std::uint32_t i) {
    sp2::t_node = nodes[i].get();
    codes[i] = run_location(*locations[i], fn, argc, argv);
    sp2::drain(*nodes[i]);
    sp2::t_node = nullptr;
  });
  progress.reset();
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
        sp2_transport tr(node, oversubscribed, cfg.tree_arity);
        watch_set watch(cfg.watchdog, shared_records ? shared_records->data() : nullptr, n, i);
        location self(tr, i, cfg);
        self.set_watch(watch.record_of(i));
        sp2::node_result r;
        sp2::t_node = &node;
        auto progress = start_progress_thread(cfg, {&self}, [&node](std::size_t i) {
          sp2::t_node = i == progress_thread::no_location ? nullptr : &node;
        });
        r.code = run_location(self, fn, argc, argv);
        progress.reset();
        sp2::drain(node);
        sp2::t_node = nullptr;
        r.location = self.stats();
        r.methods = self.executed_by_method();
        r.network = node.stats();
        if (self.trace() != nullptr) {
          r.trace_events = trace_json_events(*self.trace(), 0, i);
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
                                "was built without (link armi::armi, or build header-only with -DARMI_HAS_BOOST_ASIO=1; Debian: "
                                "apt-get install libboost-dev)");
#endif
  }
  if (cfg.sp2_mode != "threads")
    throw std::invalid_argument("armi::execute: unknown sp2 mode '" + cfg.sp2_mode + "' (available: threads, process)");
  return run_sp2_threads(cfg, fn, argc, argv);
}

}  // namespace armi::detail
