// What an SP-AM node keeps per peer: its end of a reliable link.
//
// Reliability over an unreliable wire (wire.hpp): each (source, destination)
// link numbers its data packets 1, 2, ...; a packet stays in the sender's send
// queue (send_queue entries per node, shared by all peers) until the receiver
// acknowledges it.  The receiver keeps, per peer, a receive queue of
// recv_queue entries indexed by sequence number: it takes packets out of
// order, discards duplicates, and hands messages to their handlers in
// sequence order.  A node keeps this per-peer state only for the peers it has
// sent to or heard from.  A packet beyond the receive queue's free entries is lost
// (overflow) and the receiver asks for it again (a nack); the sender re-sends
// it once the receiver's window, carried by every packet, admits it.  Every
// packet piggybacks a cumulative acknowledgement; a receiver with nothing to
// send acknowledges with a control packet at the end of each poll.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace armi::detail::sp2 {

struct tx_entry {
  std::vector<std::byte> bytes;  // the whole packet
  std::uint32_t seq = 0;
  std::uint32_t attempts = 0;
  bool lost = false;   // dropped by fault injection: re-send at the next poll
  bool nacked = false;  // the receiver asked for it again
  std::int64_t stamp = 0;
  std::chrono::steady_clock::time_point sent;
};
struct tx_link {
  std::uint32_t next_seq = 1;
  std::uint32_t window = 0;  // receiver admits seq < window
  std::uint32_t control_count = 0;
  std::deque<tx_entry> unacked;
  std::uint32_t resend_count = 0;  // entries with lost or nacked set
};
struct slot {
  std::uint32_t seq = 0;  // 0: empty
  std::vector<std::byte> bytes;
};
struct assembly {
  bool active = false;
  std::uint8_t handler = 0;
  std::uint32_t expected_bytes = 0;
  std::vector<std::byte> data;
};
struct rx_link {
  std::uint32_t expected = 1;  // every seq below it has arrived
  std::uint32_t consumed = 1;  // every seq below it has been handed on
  // Entries by sequence number modulo its size, which grows by doubling,
  // up to recv_queue, only as far as packets arrive ahead of consumption.
  std::vector<slot> ring;
  bool ack_pending = false;
  std::uint32_t advertised = 0;  // the window last told to the peer
  std::uint32_t nack_from = 0;  // 0: none
  assembly requests, replies;
};
// What a node keeps for one peer, made when it first sends to that peer or
// hears from it: a run of n nodes where each talks to a few keeps a few
// links per node, not n.
struct link {
  tx_link tx;
  rx_link rx;
};

}  // namespace armi::detail::sp2
