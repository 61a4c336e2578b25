// The node a thread runs on the sp2 backend, and what that thread does with
// it at the end of a run (drain).
#pragma once

#include <armi/backend/sp2/am.hpp>

#include <chrono>
#include <cstdint>
#include <thread>

namespace armi::detail::sp2 {

// The node of the calling thread while it runs an armi location on the sp2
// backend, else nullptr; for measurements (emulated time) only.
inline thread_local node const* t_node = nullptr;

// The emulated clock of the calling location's node in ns, or -1 when the
// caller is not an sp2 location.
inline std::int64_t current_clock_ns() { return t_node != nullptr ? t_node->clock_ns() : -1; }

// The end of a run: every node serves the network until all of them are at
// rest, so that a late acknowledgement or retransmission some peer still
// waits for is never left unsent.  Every node of the wire calls this once,
// after its location's final fence (no new messages after it).
inline void drain(node& n) {
  unsigned idle = 0;
  while (!n.quiescent()) {
    if (n.poll())
      idle = 0;
    else
      n.wait_a_little(idle);
  }
  n.declare_at_rest();
  idle = 0;
  while (!n.everyone_at_rest()) {
    if (n.poll())
      idle = 0;
    else if (++idle > 64)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    else
      std::this_thread::yield();
  }
}

}  // namespace armi::detail::sp2
