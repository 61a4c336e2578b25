// The sp2 backend's machine description: the SP-AM packet format, queue
// sizes, the cost model that drives each node's emulated clock, and the
// fault-injection rates.
//
// The cost model (LogGP-like, all times in integer nanoseconds so that sums
// are exact):
//   sending one packet of w wire bytes   sender clock += send_overhead + w * gap
//   the packet arrives at                sender clock (after the above) + latency
//   taking it from the receive queue     receiver clock = max(own, arrival) + recv_overhead
//   running a message's handler          receiver clock += handler
//   a bulk (store/get) message           sender clock += bulk_overhead, once per message
// Acknowledgements are the adapter's business and cost no processor time.
// A packet lost on the wire is re-sent as if a retransmission timer of
// retransmit_timeout had expired; a delayed one arrives delay later.
//
// Calibration against the MRPC paper (mrpc.txt §6.1, Tables 8 and 9):
//   A packet header is 40 bytes (packet.hpp); a word is 4 bytes (the 32-bit
//   Power2: the paper's 40 words are 20 doubles = 160 bytes).
//   * gap: the SP2 switch moves 40 MB/s per link, i.e. 25 ns per byte.
//   * AM 1-word request/reply round trip = 51 us (Table 9).  One way is
//       send_overhead + (40 + 4) * gap + latency + recv_overhead + handler,
//     so 2 * (o_s + L + o_r + h) + 2 * 44 * 25 ns = 51 us, and
//     o_s + L + o_r + h = 24.4 us.  We split it 4.2 + 15.0 + 4.2 + 1.0: the
//     processor's share (cache-line flushes into the send queue, the copy out
//     of the receive queue) about a sixth each way, the adapter and switch the
//     rest.
//   * AM bulk round trip with 40 words = 70 us (Table 8's BulkWrite and
//     BulkRead 40-Word rows, AM column; the same 70 us as the 1- and 2-word
//     bulk rows, which the paper attributes to a ~15 us bulk overhead).
//     A bulk write is one 40 + 160 = 200-byte packet out and a 1-word reply:
//       bulk_overhead + (o_s + 200 * gap + L + o_r + h) + 25.5 us
//       = bulk_overhead + 29.4 us + 25.5 us = 70 us  =>  bulk_overhead = 15.1 us,
//     which agrees with the paper's "additional 15 us" for bulk transfers.
//     (A bulk read, a 1-word request and a 200-byte bulk reply, is the same
//     sum.)  Asymptotic bulk bandwidth of the model: 216 payload bytes per
//     o_s + 256 * gap = 10.6 us per packet, about 20 MB/s.
//
// It is a model: emulated time says what the SP2 would have spent in its
// messaging layer, not what this machine spends (armi's own processor time is
// not charged to the emulated clock; real time is reported separately).
//
// Thread safety: plain values, copied into each node.
#pragma once

#include <cstddef>
#include <cstdint>

namespace armi::detail::sp2 {
// Header bytes of every packet, included in the packet size.
inline constexpr std::uint32_t header_bytes = 40;
// Bytes of a short (non-bulk) AM message: SP-AM's request_4 carries 4 words.
inline constexpr std::uint32_t short_message_bytes = 16;
}  // namespace armi::detail::sp2

namespace armi {

/// What each step of a message costs on the emulated SP2, in nanoseconds of
/// a node's emulated clock (`--armi-sp2-*` flags set them; the defaults give
/// the MRPC paper's 51 us AM and 70 us bulk round trips).
struct sp2_cost_model {
  std::int64_t send_overhead_ns = 4200;   ///< sender processor time per packet
  std::int64_t recv_overhead_ns = 4200;   ///< receiver processor time per packet
  std::int64_t latency_ns = 15000;        ///< adapter and switch, per packet
  std::int64_t gap_ns_per_byte = 25;      ///< per wire byte (40 MB/s links)
  std::int64_t handler_ns = 1000;         ///< running a message's handler
  std::int64_t bulk_overhead_ns = 15100;  ///< once per bulk (store/get) message
  std::int64_t retransmit_timeout_ns = 200000;  ///< emulated time a lost packet costs
  std::int64_t delay_ns = 50000;                ///< extra emulated latency of a delayed packet

  /// One-way time of a message carrying `bytes` in a single packet.
  constexpr std::int64_t one_way_ns(std::uint32_t bytes, bool bulk) const {
    return (bulk ? bulk_overhead_ns : 0) + send_overhead_ns + (detail::sp2::header_bytes + bytes) * gap_ns_per_byte +
           latency_ns + recv_overhead_ns + handler_ns;
  }
  /// An AM request/reply round trip of one word (MRPC Table 9: 51 us).
  constexpr std::int64_t am_round_trip_ns() const { return 2 * one_way_ns(4, false); }
  /// A 40-word bulk write and its one-word reply (MRPC Table 8: 70 us).
  constexpr std::int64_t bulk40_round_trip_ns() const { return one_way_ns(160, true) + one_way_ns(4, false); }
};

static_assert(sp2_cost_model{}.am_round_trip_ns() == 51000, "the default model must give MRPC's 51 us AM round trip");
static_assert(sp2_cost_model{}.bulk40_round_trip_ns() == 70000,
              "the default model must give Table 8's 70 us bulk rows");

/// Faults the emulated SP2's wire injects into each transmission of a packet
/// (`--armi-sp2-drop`, `-dup`, `-delay`, `-seed`); the same seed gives the
/// same faults to the same packets.
struct sp2_fault_rates {
  double drop = 0;       ///< probability a transmission is lost
  double duplicate = 0;  ///< probability it arrives twice
  double delay = 0;      ///< probability it is held back (arrives after later packets)
  std::uint64_t seed = 1;  ///< seeds the hash that draws each fault
  /// Whether any fault is injected.
  bool any() const { return drop > 0 || duplicate > 0 || delay > 0; }
};

/// The emulated SP2 a run of the sp2 backend models: its packets, queues,
/// costs and faults (armi::config::sp2).
struct sp2_machine {
  std::uint32_t packet_bytes = 256;  ///< bytes of one packet, its 40-byte header included
  std::uint32_t send_queue = 128;    ///< packets a node may have unacknowledged, all peers together
  std::uint32_t recv_queue = 64;     ///< packets a node holds per peer ahead of its handlers
  sp2_cost_model cost;               ///< what each step costs
  sp2_fault_rates faults;            ///< injected faults

  /// Payload bytes of one packet.
  std::uint32_t payload_bytes() const { return packet_bytes - detail::sp2::header_bytes; }
};

}  // namespace armi

namespace armi::detail::sp2 {
using cost_model = sp2_cost_model;
using fault_rates = sp2_fault_rates;
using machine = sp2_machine;
}  // namespace armi::detail::sp2
