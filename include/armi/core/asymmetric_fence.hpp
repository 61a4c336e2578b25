// A store-load fence split between a frequent side and a rare side, for a
// Dekker handshake where one party runs often and the other seldom: the
// frequent side only stops the compiler; the rare side has the kernel run a
// full barrier on every running thread of the process (Linux membarrier,
// private expedited; a thread not running has passed a context switch, which
// is one).  Where membarrier is missing (not Linux, an old kernel, a seccomp
// filter) both sides use a full fence.  wake_fence.hpp explains the costs
// measured here; the registration is inherited by fork() and dropped by exec().
#pragma once

#include <atomic>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace armi::detail {

// Whether this process may use the expedited private membarrier: asks the
// kernel, and registers the process, once.
inline bool process_barrier_available() {
  static bool const available = [] {
#if defined(__linux__) && defined(SYS_membarrier)
    long const commands = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (commands < 0 || (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
    return false;
#endif
  }();
  return available;
}

// A full barrier on every running thread of the process; call only where
// process_barrier_available() said yes.
inline void process_barrier() {
#if defined(__linux__) && defined(SYS_membarrier)
  syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
#endif
}

// The two sides as a pair, for the communication thread's claims
// (runtime/progress_claim.hpp).  choose() before the threads that call
// light() start.
class asymmetric_fence {
 public:
  static void choose() { s_asymmetric.store(process_barrier_available(), std::memory_order_relaxed); }

  [[gnu::always_inline]] static void light() {
    if (s_asymmetric.load(std::memory_order_relaxed)) [[likely]]
      std::atomic_signal_fence(std::memory_order_seq_cst);
    else
      std::atomic_thread_fence(std::memory_order_seq_cst);
  }

  static void heavy() {
    if (s_asymmetric.load(std::memory_order_relaxed))
      process_barrier();
    else
      std::atomic_thread_fence(std::memory_order_seq_cst);
  }

 private:
  static inline std::atomic<bool> s_asymmetric{false};
};

}  // namespace armi::detail
