// The mpi backend's process-wide part: MPI initialization (once per process,
// finalized at exit unless the program initialized MPI itself), the abort
// path for fatal errors, and waiting on requests without spinning inside MPI.
// MPI_Finalize's endpoint closes are bounded in ucx_close.hpp.
//
// Thread level: armi asks for MPI_THREAD_SERIALIZED when it initializes MPI.
// The mpi backend needs only MPI_THREAD_FUNNELED (one location per rank; only
// the thread that runs it, the one that called armi::execute, calls MPI); the
// mixed backend needs SERIALIZED (any of a rank's threads may drive MPI, one
// at a time, under the transport's lock).  MULTIPLE is asked for only with
// --armi-watchdog, whose thread exchanges waits between ranks when it fires
// (diagnosis.hpp); otherwise it is not needed, and in MPICH it puts a lock
// around every call.
#pragma once

#include <armi/backend/mpi/ucx_close.hpp>
#include <armi/core/error.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace armi::detail {

// True when this process was started by an MPI launcher with more than one
// process (MPICH's Hydra sets PMI_SIZE; Open MPI, OMPI_COMM_WORLD_SIZE).
inline bool launched_by_mpiexec() {
  for (char const* var : {"PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS"}) {
    if (char const* v = std::getenv(var)) return std::atoi(v) > 1;
  }
  return false;
}

// The message is already written to stderr; mpiexec forwards it through a
// pipe, and MPI_Abort makes it tear the job down, sometimes before it has
// read that pipe (1 run in 20 lost the message here).  A pause first lets the
// launcher forward it: an abort is rare, a lost reason is costly.
inline void mpi_abort(int code) {
  timespec ts{0, 200'000'000L};
  nanosleep(&ts, nullptr);
  MPI_Abort(MPI_COMM_WORLD, code);
}

inline char const* mpi_thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

// Initializes MPI, asking for the thread level `wanted`, unless the program
// did; either way checks that the level is at least `required` (`backend`
// names who needs it, for messages).
inline void mpi_ensure_initialized(int required, char const* backend, int wanted = MPI_THREAD_SERIALIZED) {
  auto too_low = [&](int provided) {
    return std::string("the ") + backend + " backend needs " + mpi_thread_level_name(required) + ", but MPI " +
           "provides " + mpi_thread_level_name(provided);
  };
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) throw std::logic_error("armi::execute: the mpi backend after MPI_Finalize");
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    if (provided < required)
      throw std::logic_error("armi::execute: " + too_low(provided) + " (the program called MPI_Init_thread itself)");
    return;
  }
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(nullptr, nullptr, std::max(wanted, required), &provided);
  if (provided < required) fatal_exit(too_low(provided));
  std::atexit([] {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  });
}

// How long a waiting rank with a core of its own keeps polling before it
// yields and naps: a time, since a count of polls is no time at all where
// a poll is cheap (docs/runtime-measurements.md, "MPI spin time").
inline constexpr std::chrono::nanoseconds mpi_spin_time{50'000};

// How long a wait polls before it yields: `polls` calls and, unless `time`
// is zero, `time`.  A rank that shares its core polls a few times only.
struct mpi_spin_budget {
  unsigned polls = 2000;
  std::chrono::nanoseconds time{0};
  static mpi_spin_budget for_rank(bool oversubscribed) {
    return oversubscribed ? mpi_spin_budget{16, std::chrono::nanoseconds{0}} : mpi_spin_budget{2000, mpi_spin_time};
  }
};

// Calls poll() until it returns true (then returns true) or until the
// budget is spent (the clock is read every 64 calls); then returns false.
template <class Poll>
bool mpi_spin(mpi_spin_budget budget, Poll&& poll) {
  using clock = std::chrono::steady_clock;
  clock::time_point const start = budget.time.count() != 0 ? clock::now() : clock::time_point{};
  for (unsigned i = 1;; ++i) {
    if (poll()) return true;
    if (i >= budget.polls && (budget.time.count() == 0 || ((i & 63) == 0 && clock::now() - start >= budget.time)))
      return false;
  }
}

// The n-th nap in a row of a rank with nothing to do: 20 us, doubling up
// to 1 ms, so an idle rank gives its core away but answers within a
// millisecond.
inline void mpi_nap(unsigned n) {
  timespec ts{0, std::min(20'000L << std::min(n, 6u), 1'000'000L)};
  nanosleep(&ts, nullptr);
}

// Completes r, polling with yields, then naps: never blocks inside MPI.
inline void mpi_wait(MPI_Request& r) {
  for (unsigned i = 0;; ++i) {
    int flag = 0;
    MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    if (flag) return;
    if (i < 64)
      std::this_thread::yield();
    else
      mpi_nap(i - 64);
  }
}

// Tests the non-blocking requests, each with what it carries at the same
// index of `with`: calls done(with[k]) for each that completed and drops it
// from both (the others keep their order).  indices is scratch.  True if
// any completed.
template <class T, class Done>
bool mpi_complete_some(std::vector<MPI_Request>& requests, std::vector<T>& with, std::vector<int>& indices,
                       Done&& done) {
  if (requests.empty()) return false;
  int n = 0;
  indices.resize(requests.size());
  MPI_Testsome(static_cast<int>(requests.size()), requests.data(), &n, indices.data(), MPI_STATUSES_IGNORE);
  if (n == MPI_UNDEFINED || n == 0) return false;
  for (int i = 0; i < n; ++i) done(with[static_cast<std::size_t>(indices[static_cast<std::size_t>(i)])]);
  std::size_t out = 0;
  for (std::size_t k = 0; k < requests.size(); ++k)
    if (requests[k] != MPI_REQUEST_NULL) {  // MPI_Testsome nulls the completed ones
      requests[out] = requests[k];
      with[out] = with[k];
      ++out;
    }
  requests.resize(out);
  with.resize(out);
  return true;
}

}  // namespace armi::detail
