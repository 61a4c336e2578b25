// Under --armi-progress=thread, who may run a location's armi code: its own
// thread, or the process's communication thread (progress_thread.hpp), never
// both.  The location's thread marks every armi call (armi_call) and every
// armi::hold_requests scope by a depth it alone writes; the communication
// thread claims a location whose depth is 0 by raising a flag, and backs off
// if the depth is not 0 after a fence.  That is Dekker's handshake with the
// fence split (core/asymmetric_fence.hpp): the location's side costs two
// plain stores and a load per call; the membarrier is the rare side's.  A
// location thread that enters while the communication thread serves it waits
// (spin, yield, then a futex) until it is let go.
//
// Under --armi-progress=poll t_claim stays null and armi_call does nothing
// but test it.
#pragma once

#include <armi/core/asymmetric_fence.hpp>

#include <atomic>
#include <cstdint>
#include <thread>

namespace armi::detail {

class alignas(64) progress_claim {
 public:
  // The location's thread holds it from the start: the communication thread
  // stays away until the location's body runs (release_at_start) and after
  // it ends (an enter without an exit).
  progress_claim() = default;
  progress_claim(progress_claim const&) = delete;
  progress_claim& operator=(progress_claim const&) = delete;

  // ---- the location's thread -------------------------------------------------

  // counted: an armi call, which tells the communication thread that the
  // location is active (a hold does not: a location computing between short
  // holds is still served).
  [[gnu::always_inline]] void enter(bool counted = true) {
    std::uint64_t const a = m_activity.load(std::memory_order_relaxed);
    m_activity.store(a + (counted ? entry_step : 0) + 1, std::memory_order_relaxed);
    if ((a & depth_mask) != 0) return;  // nested: the claim is ours already
    asymmetric_fence::light();
    if (m_helper.load(std::memory_order_acquire) != 0) [[unlikely]]
      contended();
  }

  [[gnu::always_inline]] void exit() {
    m_activity.store(m_activity.load(std::memory_order_relaxed) - 1, std::memory_order_release);
  }

  // Inside a call: the communication thread stays away until the location's
  // next call (p_object's constructor: a request must not run on an object
  // whose derived part is still being built).
  void hold_for_new_object() { m_helper.fetch_or(new_object, std::memory_order_relaxed); }

  void release_at_start() { m_activity.store(0, std::memory_order_release); }

  // ---- the communication thread ------------------------------------------------

  // Whether the location has made no armi call since `entries` was read and
  // is outside armi now: worth claiming.
  bool idle_since(std::uint64_t& entries) const {
    std::uint64_t const a = m_activity.load(std::memory_order_relaxed);
    bool const same = a >> 32 == entries;
    entries = a >> 32;
    return same && (a & depth_mask) == 0 && (m_helper.load(std::memory_order_relaxed) & new_object) == 0;
  }
  // A claim in two steps around one asymmetric_fence::heavy() for a batch:
  // raise the flag, then (after the fence) keep it only if the location is
  // still outside armi.
  void raise() { m_helper.fetch_or(helper_on, std::memory_order_relaxed); }
  bool confirm() {
    if ((m_activity.load(std::memory_order_acquire) & depth_mask) == 0 &&
        (m_helper.load(std::memory_order_relaxed) & new_object) == 0)
      return true;
    let_go();
    return false;
  }
  // The location's thread waits to enter: leave as soon as possible.
  bool wanted() const { return (m_helper.load(std::memory_order_relaxed) & helper_waited_on) != 0; }
  void let_go() {
    if ((m_helper.fetch_and(~(helper_on | helper_waited_on), std::memory_order_release) & helper_waited_on) != 0)
      m_helper.notify_all();
  }

 private:
  static constexpr std::uint32_t helper_on = 1, helper_waited_on = 2, new_object = 4;
  static constexpr std::uint64_t depth_mask = 0xffff'ffff, entry_step = std::uint64_t{1} << 32;

  // The helper word was not 0 at an entry: wait until the communication
  // thread lets go, then end a new object's hold (this is its next call).
  [[gnu::noinline, gnu::cold]] void contended() {
    for (unsigned spins = 0;; ++spins) {
      std::uint32_t const h = m_helper.load(std::memory_order_acquire);
      if ((h & (helper_on | helper_waited_on)) == 0) {
        if (h != 0) m_helper.fetch_and(~new_object, std::memory_order_relaxed);
        return;
      }
      if (spins < 64) continue;
      if (spins < 128) {
        std::this_thread::yield();
        continue;
      }
      std::uint32_t v = h;
      if ((h & helper_waited_on) != 0 ||
          m_helper.compare_exchange_strong(v, h | helper_waited_on, std::memory_order_acquire))
        m_helper.wait(h | helper_waited_on, std::memory_order_acquire);
    }
  }

  // Low half: armi calls and holds open on the location's thread (its depth);
  // high half: counted calls entered.  Written by the location's thread only.
  std::atomic<std::uint64_t> m_activity{1};
  std::atomic<std::uint32_t> m_helper{0};  // helper_on | helper_waited_on | new_object
};

// The claim of the calling thread's location, on a location's own thread
// under --armi-progress=thread; null otherwise (the communication thread,
// poll mode).
inline thread_local progress_claim* t_claim = nullptr;

// Set on the communication thread while it serves a location: a wait in a
// request it runs there (a nested sync_rmi) looks after the process's other
// locations when idle, instead of sleeping on this one's wake word: they
// may be the ones that must answer it.
struct nested_wait_hook {
  void* self;
  void (*idle)(void* self);
};
inline thread_local nested_wait_hook const* t_nested_wait = nullptr;

// One armi call (or, not counted, a hold) of the calling location, as a scope.
class armi_call {
 public:
  [[gnu::always_inline]] explicit armi_call(bool counted = true) : m_claim(t_claim) {
    if (m_claim != nullptr) [[unlikely]]
      m_claim->enter(counted);
  }
  [[gnu::always_inline]] ~armi_call() {
    if (m_claim != nullptr) [[unlikely]]
      m_claim->exit();
  }
  armi_call(armi_call const&) = delete;
  armi_call& operator=(armi_call const&) = delete;

 private:
  progress_claim* m_claim;
};

}  // namespace armi::detail
