// The communication thread of --armi-progress=thread: one per process, for
// the locations of that process.  It sleeps an interval, then claims each
// location that has made no armi call since its last look and is outside
// armi now (progress_claim.hpp), and polls it as the location itself would:
// takes in what arrived, runs the requests, sends the answers, then (as
// rmi_poll does when nothing more came) the partly filled buffers.  It lets
// a location go as soon as the location's own thread wants to enter armi,
// after the request it is running (or, where a request of it waits further
// up the stack, once that one returns: until then it keeps serving it).
// A request it runs that waits (a nested sync_rmi) serves the process's
// other locations meanwhile, since they may owe the answer; a send that
// waits on its receiver (sp2) moves the networks of the other locations it
// holds.  It never spins:
// between looks it sleeps on a condition variable, in a waiting request it
// naps.
#pragma once

#include <armi/core/asymmetric_fence.hpp>
#include <armi/core/error.hpp>
#include <armi/core/send_stall.hpp>
#include <armi/runtime/location.hpp>
#include <armi/runtime/progress_claim.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace armi::detail {

class progress_thread {
 public:
  // What the thread calls around serving location i (its index in
  // `locations`), and with no_location after: a backend's per-thread state
  // (the sp2 node whose clock the location reads).
  using bind_hook = std::function<void(std::size_t)>;
  static constexpr std::size_t no_location = static_cast<std::size_t>(-1);

  // interval_ns: the time between looks (--armi-progress-interval, or
  // --armi-max-delay where shorter).
  progress_thread(std::vector<location*> locations, std::int64_t interval_ns, bind_hook bind = {})
      : m_locations(std::move(locations)), m_interval(interval_ns), m_bind(std::move(bind)) {
    asymmetric_fence::choose();  // before the locations' threads start
    m_thread = std::thread([this] { run(); });
  }
  progress_thread(progress_thread const&) = delete;
  progress_thread& operator=(progress_thread const&) = delete;
  ~progress_thread() { stop(); }

  // After every location's body has ended (each then holds its claim for
  // good, so none is being served).
  void stop() {
    {
      std::lock_guard const lock(m_mutex);
      m_stop = true;
    }
    m_wake.notify_one();
    if (m_thread.joinable()) m_thread.join();
  }

  // The interval a configuration asks for.
  static std::int64_t interval_of(std::int64_t progress_interval_ns, std::int64_t max_delay_ns) {
    return max_delay_ns > 0 ? std::clamp<std::int64_t>(max_delay_ns, 10'000, progress_interval_ns)
                            : progress_interval_ns;
  }

 private:
  void run() {
    m_seen.assign(m_locations.size(), ~std::uint64_t{0});
    m_state.assign(m_locations.size(), state::free);
    nested_wait_hook const hook{this, [](void* self) { static_cast<progress_thread*>(self)->idle_in_request(); }};
    send_stall_hook const stall{this, [](void* self) { static_cast<progress_thread*>(self)->serve_networks(); }};
    t_nested_wait = &hook;
    t_send_stall = &stall;
    while (sleep()) look();
    t_send_stall = nullptr;
    t_nested_wait = nullptr;
  }

  // A send of the location being served waits on its receiver: moves the
  // networks of the other locations this thread holds (whose own threads
  // wait for it), one of which may be that receiver (core/send_stall.hpp).
  void serve_networks() {
    std::size_t const current = m_current;
    for (std::size_t i = 0; i < m_locations.size(); ++i) {
      if (i == current || m_state[i] == state::free) continue;
      if (m_bind) m_bind(i);
      m_locations[i]->transport_of().serve_network(m_locations[i]->id());
    }
    if (m_bind) m_bind(current);
  }

  // One look: claims the locations idle since the last look that no look
  // on this thread's stack holds (one heavy fence for all of them), serves
  // every location it holds, then lets go of the ones it claimed.  A nested
  // look (in a waiting request) also serves those an outer look holds, and
  // those whose requests wait further up the stack, as their own wait loops
  // would: the request waiting here may need any of them (to answer, or, under
  // --armi-routing, to pass its request on).  True if it served any.
  bool look() {
    // A location held by a look up the stack whose thread wants it back
    // goes now, not when that look unwinds: no request of it is on the
    // stack (it would be serving), and the request waiting here may need
    // its thread (a sync_rmi to it, which serve() would leave unanswered
    // for the thread that wants it).
    for (std::size_t i = 0; i < m_locations.size(); ++i)
      if (m_state[i] == state::held && m_locations[i]->claim().wanted()) {
        m_locations[i]->claim().let_go();
        m_state[i] = state::free;
      }
    std::vector<std::size_t> mine;
    for (std::size_t i = 0; i < m_locations.size(); ++i) {
      if (m_state[i] == state::free && m_locations[i]->claim().idle_since(m_seen[i])) {
        m_locations[i]->claim().raise();
        mine.push_back(i);
      }
    }
    if (!mine.empty()) asymmetric_fence::heavy();  // one for all: the locations' side has none
    for (std::size_t i : mine)
      if (m_locations[i]->claim().confirm()) m_state[i] = state::held;
    bool served = false;
    for (std::size_t i = 0; i < m_locations.size(); ++i) {
      state const was = m_state[i];
      if (was == state::free) continue;
      m_state[i] = state::serving;
      served |= serve(i, was == state::serving);
      m_state[i] = was;
    }
    for (std::size_t i : mine) {
      if (m_state[i] != state::held) continue;
      m_locations[i]->claim().let_go();
      m_state[i] = state::free;
    }
    return served;
  }

  // Polls location i as its own thread would, until nothing is left to do
  // or its thread wants it back.  A request it runs may wait (a nested
  // sync_rmi); that wait comes back here through idle_in_request, so the
  // location that was being served before is restored after.  pinned: a
  // request of i waits further up this stack, so its thread cannot have it
  // back before that request returns, and the wait here may need i's
  // answer: it is served whether its thread wants it or not.
  bool serve(std::size_t i, bool pinned) {
    location& l = *m_locations[i];
    location* const outer = t_location;
    std::size_t const outer_index = m_current;
    m_current = i;
    t_location = &l;
    if (m_bind) m_bind(i);
    bool served = false;
    try {
      for (int round = 0; round < max_rounds && (pinned || !l.claim().wanted()); ++round) {
        if (!l.poll_once()) break;
        served = true;
      }
      // Nothing more came: send the partly filled buffers, as rmi_poll does,
      // so that what the location passes on under --armi-routing (or sent
      // itself) does not wait out its computation.
      if (pinned || !l.claim().wanted()) l.poll();
    } catch (std::exception const& e) {
      fatal_exit("location " + std::to_string(l.id()) + ": the communication thread, serving it: " + e.what());
    }
    if (m_bind) m_bind(outer_index);
    t_location = outer;
    m_current = outer_index;
    return served;
  }

  // A request this thread runs waits and has nothing to do: serve the other
  // locations, and sleep a little (longer each time, up to the interval)
  // when none had anything.
  void idle_in_request() {
    if (look()) {
      m_nap = std::chrono::nanoseconds{0};
      return;
    }
    m_nap = std::clamp(m_nap * 2, std::chrono::nanoseconds{10'000}, m_interval);
    std::this_thread::sleep_for(m_nap);
  }

  // Sleeps one interval; false once stop() was called.
  bool sleep() {
    std::unique_lock lock(m_mutex);
    m_wake.wait_for(lock, m_interval, [this] { return m_stop; });
    return !m_stop;
  }

  static constexpr int max_rounds = 64;  // polls per look at a location that keeps getting requests

  std::vector<location*> m_locations;
  std::chrono::nanoseconds m_interval;
  bind_hook m_bind;
  std::vector<std::uint64_t> m_seen;  // each location's entries at the last look
  enum class state : std::uint8_t { free, held, serving };  // serving: a request of it is on the stack
  std::vector<state> m_state;  // by a look on this thread's stack
  std::size_t m_current = no_location;
  std::chrono::nanoseconds m_nap{0};  // idle_in_request's last sleep
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stop = false;
  std::thread m_thread;
};

}  // namespace armi::detail
