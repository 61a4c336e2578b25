// Fault injection (machine::faults): each transmission of a packet is lost,
// duplicated or delayed (held back until the sender's next poll, so that it
// arrives after later packets) with the given probabilities, decided by a hash
// of (seed, link, sequence number, attempt): the same seed gives the same
// faults to the same packets.  A lost data packet is re-sent at the sender's
// next poll, charged retransmit_timeout of emulated time (the timer the real
// layer would have waited on); a lost acknowledgement or nack is sent again at
// the next poll.  A real-time retransmission timer backs all of this up.
#pragma once

#include <armi/core/mix.hpp>

#include <cstdint>

namespace armi::detail::sp2 {

// A well-mixed 64-bit function of x.
constexpr std::uint64_t fault_mix(std::uint64_t x) { return mix64(x + 0x9e3779b97f4a7c15ull); }

// The draw in [0, 1) that decides fault `what` of transmission `attempt` of
// packet `seq` from node `src` to node `dst`.
constexpr double fault_draw(std::uint64_t seed, std::uint32_t src, std::uint32_t dst, std::uint32_t seq,
                            std::uint32_t attempt, std::uint32_t what) {
  std::uint64_t x = fault_mix(seed);
  x = fault_mix(x ^ (std::uint64_t{src} << 32 | dst));
  x = fault_mix(x ^ (std::uint64_t{seq} << 32 | attempt));
  x = fault_mix(x ^ what);
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

}  // namespace armi::detail::sp2
