// What one emulated SP2 node counts (--armi-stats): packets and bytes on the
// wire, the reliability layer's repairs, injected faults, its emulated clock.
#pragma once

#include <algorithm>
#include <cstdint>

namespace armi::detail::sp2 {

struct node_stats {
  std::uint64_t packets_sent = 0;  // transmissions, data and control, retransmissions included
  std::uint64_t bytes_sent = 0;    // wire bytes of those, headers included
  std::uint64_t data_packets = 0;  // first transmissions of data packets
  std::uint64_t retransmissions = 0;
  std::uint64_t duplicates = 0;  // arrivals discarded as already received
  std::uint64_t overflows = 0;   // arrivals lost to a full receive queue
  std::uint64_t stalls = 0;      // sends that waited for a send-queue entry
  std::uint64_t timeouts = 0;    // re-sends by the real-time backstop timer
  std::uint64_t messages_sent = 0;
  std::uint64_t messages_received = 0;
  std::uint64_t dropped = 0;     // injected faults
  std::uint64_t duplicated = 0;
  std::uint64_t delayed = 0;
  std::uint64_t peers = 0;       // the nodes it has sent to or heard from (the links it keeps)
  std::int64_t emulated_ns = 0;  // the node's emulated clock

  node_stats& operator+=(node_stats const& o) {
    packets_sent += o.packets_sent;
    bytes_sent += o.bytes_sent;
    data_packets += o.data_packets;
    retransmissions += o.retransmissions;
    duplicates += o.duplicates;
    overflows += o.overflows;
    stalls += o.stalls;
    timeouts += o.timeouts;
    messages_sent += o.messages_sent;
    messages_received += o.messages_received;
    dropped += o.dropped;
    duplicated += o.duplicated;
    delayed += o.delayed;
    peers += o.peers;
    emulated_ns = std::max(emulated_ns, o.emulated_ns);
    return *this;
  }
};

}  // namespace armi::detail::sp2
