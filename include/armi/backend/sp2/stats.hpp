// The sp2 backend's part of --armi-stats: per node, what the emulated
// network did, and the emulated time next to the real time of the run.
//
// Thread safety: a plain function of its arguments.
#pragma once

#include <armi/backend/sp2/am.hpp>

#include <fmt/format.h>

#include <string>
#include <vector>

namespace armi::detail::sp2 {

inline std::string format_stats(std::vector<node_stats> const& per_node, double real_seconds) {
  std::string out =
      "sp2 stats (packets and bytes sent, retransmissions, duplicates discarded, receive-queue overflows, "
      "queue-full stalls, injected drop/dup/delay; emulated time is the model's, real time this machine's):\n";
  out += fmt::format("{:>10} {:>10} {:>12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>20} {:>14}\n", "node", "packets", "bytes",
                     "retrans", "dups", "overflow", "stalls", "timeouts", "drop/dup/delay", "emulated us");
  node_stats total;
  auto row = [&](std::string const& who, node_stats const& s) {
    out += fmt::format("{:>10} {:>10} {:>12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>20} {:>14.1f}\n", who, s.packets_sent,
                       s.bytes_sent, s.retransmissions, s.duplicates, s.overflows, s.stalls, s.timeouts,
                       fmt::format("{}/{}/{}", s.dropped, s.duplicated, s.delayed), double(s.emulated_ns) / 1e3);
  };
  for (std::size_t i = 0; i < per_node.size(); ++i) {
    row(fmt::format("{}", i), per_node[i]);
    total += per_node[i];
  }
  row("total", total);
  out += fmt::format("sp2 emulated time {:.1f} us (the slowest node's clock); real time {:.1f} us\n",
                     double(total.emulated_ns) / 1e3, real_seconds * 1e6);
  return out;
}

}  // namespace armi::detail::sp2
