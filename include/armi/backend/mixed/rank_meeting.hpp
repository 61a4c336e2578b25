// The threads of a mixed rank meeting for a collective step (an MPI call the
// rank makes once for all its locations, such as a window for a
// global_array): each thread calls meet(arrive, last); arrive() runs for
// each thread as it comes (to leave its part), last() for the last one to
// come (to make the call), all under one mutex; the others wait until it
// has, then every thread goes on.
//
// Thread safety: every thread of the rank calls meet for the same steps in
// the same order.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace armi::detail {

class rank_meeting {
 public:
  explicit rank_meeting(std::uint32_t threads) : m_threads(threads) {}

  template <class Arrive, class Last>
  void meet(Arrive&& arrive, Last&& last) {
    std::unique_lock<std::mutex> lock(m_mutex);
    arrive();
    std::uint64_t const round = m_round;
    if (++m_arrived == m_threads) {
      last();
      m_arrived = 0;
      ++m_round;
      m_all_here.notify_all();
      return;
    }
    m_all_here.wait(lock, [&] { return m_round != round; });
  }

 private:
  std::uint32_t const m_threads;
  std::mutex m_mutex;
  std::condition_variable m_all_here;
  std::uint32_t m_arrived = 0;
  std::uint64_t m_round = 0;
};

}  // namespace armi::detail
