// The handshake between a location that goes to sleep and one that hands it
// work, with its costs moved to the side that sleeps.
//
// The handshake: the sender stores its message's word (a ring slot's
// sequence, an answer cell's number), then loads the receiver's `sleeping`
// flag and wakes it if set; the receiver stores `sleeping`, then looks for
// messages once more before it sleeps.  Each side's store must be ordered
// before its load (StoreLoad), or both may miss the other: the receiver
// sleeps on a message whose sender saw no sleeper.  The symmetric way, a
// seq_cst store on both sides, costs the sender a locked instruction per
// message, which on x86 stalls until the message's cache line is its own:
// in a sync_rmi round trip on threads, about 40 ns of the caller's and of
// the callee's time (perf, table2_latency).  Without it, sync_rmi took
// 1.36x the explicit ping-pong instead of 1.51x (10 alternating pairs)
// when this VM's cores were far apart (a line crossing in 0.2 us), and
// 0-5% less time when they were close (0.05 us).
//
// Asymmetric (Linux membarrier, as in folly's asymmetric barriers and in
// userspace RCU): the sender stores with release and needs only a compiler
// barrier before its load; the receiver, before its last look, has the
// kernel run a full barrier on every running thread of the process
// (MEMBARRIER_CMD_PRIVATE_EXPEDITED).  A thread either ran that barrier
// between its store and its load (so its store is seen by the last look, or
// its load sees `sleeping`), or was not running (a context switch is a full
// barrier).  The barrier is an interrupt to each other CPU running the
// process: 1-15 us here on an idle machine, 400-700 us while compilers kept
// both CPUs busy.  It is paid once per sleep, after ~100 us of spinning and
// dozens of yields, next to a futex wake that takes ~200 us on this VM (a
// sync_rmi to a location that had slept: 219-228 us before, 235-242 us
// with it); but where locations outnumber cores they sleep all the time, so
// there the transports keep the symmetric way (asymmetric = false).  The
// registration is inherited by fork() (checked) and dropped by exec(),
// which also starts process_barrier_available() afresh.  Where membarrier
// is missing (not Linux, an old kernel, a seccomp filter) it is the
// symmetric way always.
//
// Thread safety: wake_fence is a value, set once at the transport's
// construction and read by every location of it.
#pragma once

#include <armi/core/asymmetric_fence.hpp>

#include <atomic>
#include <cstdint>

namespace armi::detail {

struct wake_fence {
  bool asymmetric = false;

  // The asymmetric way where the process has it and `wanted`.
  static wake_fence choose(bool wanted) { return {wanted && process_barrier_available()}; }

  // The sender's side: stores value into word, ordered before the sender's
  // next load (of the receiver's `sleeping`).
  void publish(std::atomic<std::uint32_t>& word, std::uint32_t value) const {
    if (asymmetric) {
      word.store(value, std::memory_order_release);
      std::atomic_signal_fence(std::memory_order_seq_cst);
    } else {
      word.store(value, std::memory_order_seq_cst);
    }
  }

  // The receiver's side, between its store of `sleeping` (seq_cst) and its
  // last look for messages (seq_cst loads).  Symmetric: nothing more is
  // needed.  (The call cannot fail once the process is registered.)
  void before_sleep() const {
    if (asymmetric) process_barrier();
  }
};

}  // namespace armi::detail
