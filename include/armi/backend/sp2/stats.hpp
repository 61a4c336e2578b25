// The sp2 backend's part of --armi-stats: per node, what the emulated
// network did, and the emulated time next to the real time of the run; as
// rows under the stats table, or as the "sp2" member of the JSON.
//
// Thread safety: a plain function of its arguments.
#pragma once

#include <armi/backend/sp2/node_stats.hpp>

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

// The same as a JSON object: {"emulated_us", "real_us", "total",
// "per_node": [...]}, each node with every counter of node_stats (the
// total's emulated time is the slowest node's clock).
inline std::string format_stats_json(std::vector<node_stats> const& per_node, double real_seconds) {
  auto object = [](node_stats const& s) {
    return fmt::format(
        "{{\"packets_sent\": {}, \"bytes_sent\": {}, \"data_packets\": {}, \"retransmissions\": {}, "
        "\"duplicates_discarded\": {}, \"overflows\": {}, \"stalls\": {}, \"timeouts\": {}, "
        "\"messages_sent\": {}, \"messages_received\": {}, \"injected_drops\": {}, \"injected_duplicates\": {}, "
        "\"injected_delays\": {}, \"peers\": {}, \"emulated_us\": {:.3f}}}",
        s.packets_sent, s.bytes_sent, s.data_packets, s.retransmissions, s.duplicates, s.overflows, s.stalls,
        s.timeouts, s.messages_sent, s.messages_received, s.dropped, s.duplicated, s.delayed, s.peers,
        double(s.emulated_ns) / 1e3);
  };
  node_stats total;
  std::string nodes;
  for (std::size_t i = 0; i < per_node.size(); ++i) {
    total += per_node[i];
    nodes += (i == 0 ? "\n    " : ",\n    ") + object(per_node[i]);
  }
  return fmt::format("{{\n    \"emulated_us\": {:.3f},\n    \"real_us\": {:.3f},\n    \"total\": {},\n"
                     "    \"per_node\": [{}\n    ]\n  }}",
                     double(total.emulated_ns) / 1e3, real_seconds * 1e6, object(total), nodes);
}

}  // namespace armi::detail::sp2
