// Waiting on raw MPI in armi's benchmarks without spinning inside MPI.
//
// MPICH's blocking calls (MPI_Recv, MPI_Wait, MPI_Barrier, ...) spin a core;
// two spinning ranks that share a core cost a scheduler tick per round trip.
// The hand-written MPI baselines therefore wait the way armi's mpi backend
// does while idle: poll (MPI_Test, MPI_Improbe, ...) a number of times, yield
// a few times, then nap 20 us doubling to 1 ms.  The number of polls is
// armi's too: 2000 when every rank on the node has a core, 16 otherwise.
// Same schedule, so neither side gets a better waiting policy than the other.
//
// Benchmarks only; nothing here is part of armi's API.
// Thread safety: call from the thread that calls MPI (MPI_THREAD_FUNNELED).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <thread>
#include <vector>

namespace armi_bench {

// True when this node runs more ranks of `comm` than it has hardware threads.
inline bool mpi_oversubscribed(MPI_Comm comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int on_node = 1;
  MPI_Comm_size(node, &on_node);
  MPI_Comm_free(&node);
  unsigned const hw = std::thread::hardware_concurrency();
  return hw != 0 && static_cast<unsigned>(on_node) > hw;
}

// Call after every poll that found nothing; reset() after one that found
// something.  Spins `spins` calls, yields 4, then naps (and starts over).
class mpi_backoff {
 public:
  explicit mpi_backoff(bool oversubscribed) : m_spins(oversubscribed ? 16 : 2000) {}

  void reset() { m_idle = m_naps = 0; }
  void operator()() {
    if (++m_idle <= m_spins) return;
    if (m_idle <= m_spins + 4) {
      std::this_thread::yield();
      return;
    }
    timespec ts{0, std::min(20'000L << std::min(m_naps, 6u), 1'000'000L)};
    nanosleep(&ts, nullptr);
    ++m_naps;
    m_idle = 0;
  }

 private:
  unsigned m_spins;
  unsigned m_idle = 0;
  unsigned m_naps = 0;
};

// Completes the n requests in r (or the one request) by polling with the backoff above.
inline void mpi_wait_all(int n, MPI_Request* r, mpi_backoff& b) {
  b.reset();
  for (int done = 0;; b()) {
    MPI_Testall(n, r, &done, MPI_STATUSES_IGNORE);
    if (done) return;
  }
}

inline void mpi_wait_one(MPI_Request& r, mpi_backoff& b, MPI_Status* st = MPI_STATUS_IGNORE) {
  b.reset();
  for (int done = 0;; b()) {
    MPI_Test(&r, &done, st);
    if (done) return;
  }
}

inline void mpi_polling_barrier(MPI_Comm comm, mpi_backoff& b) {
  MPI_Request r;
  MPI_Ibarrier(comm, &r);
  mpi_wait_one(r, b);
}

// Element-wise sum of v over comm, in place.
inline void mpi_polling_sum(MPI_Comm comm, std::vector<std::uint64_t>& v, mpi_backoff& b) {
  MPI_Request r;
  MPI_Iallreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_UINT64_T, MPI_SUM, comm, &r);
  mpi_wait_one(r, b);
}

}  // namespace armi_bench
