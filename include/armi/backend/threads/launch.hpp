// Starting the threads backend's locations: N std::threads (location 0 on
// the calling thread), or an OpenMP parallel region when armi is built with
// ARMI_THREADS_OPENMP.
#pragma once

#include <armi/core/config.hpp>
#include <armi/core/error.hpp>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#if ARMI_HAS_OPENMP
#include <omp.h>
#endif

namespace armi::detail {

// The threads of a run could not all be started (the system refused one:
// too many threads or too little address space for their stacks).  what()
// says which location and why, in one line.
struct thread_start_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs body(i) for i in [0, n) concurrently, one thread each; returns when all have.
//
// Every thread is started before any runs its body: a location that began
// while a later one could not be started would wait in its first collective
// for a partner that never comes.  So the threads wait at a gate; if
// starting one fails, the gate tells the started ones to return without
// running, they are joined, and thread_start_error is thrown.  (Without the
// gate, the std::threads left joinable ended the program in
// std::terminate: 2000 locations under `ulimit -v 4000000` died with
// "terminate called after throwing an instance of 'std::system_error'".)
template <class Body>
void launch_threads(std::uint32_t n, Body&& body) {
#if ARMI_HAS_OPENMP
  int const previous_dynamic = omp_get_dynamic();
  omp_set_dynamic(0);
#pragma omp parallel num_threads(static_cast<int>(n))
  {
#pragma omp single
    {
      if (static_cast<std::uint32_t>(omp_get_num_threads()) != n)
        fatal_exit("the OpenMP runtime gave " + std::to_string(omp_get_num_threads()) + " threads instead of " +
                   std::to_string(n) + " locations (check OMP_THREAD_LIMIT)");
    }
    body(static_cast<std::uint32_t>(omp_get_thread_num()));
  }
  omp_set_dynamic(previous_dynamic);
#else
  enum : int { wait = 0, go = 1, stop = 2 };
  std::atomic<int> gate{wait};
  auto const started = [&gate, &body](std::uint32_t i) {
    gate.wait(wait, std::memory_order_acquire);
    if (gate.load(std::memory_order_acquire) == go) body(i);
  };
  std::vector<std::thread> threads;
  threads.reserve(n - 1);
  for (std::uint32_t i = 1; i < n; ++i) {
    try {
      threads.emplace_back(started, i);
    } catch (std::system_error const& e) {
      gate.store(stop, std::memory_order_release);
      gate.notify_all();
      for (auto& t : threads) t.join();
      throw thread_start_error("could not start thread " + std::to_string(i) + " of " + std::to_string(n) +
                               " (one per location): " + e.what() +
                               "; run fewer locations (--armi-locations) or raise the process's limits on "
                               "threads and memory (ulimit -u, ulimit -v)");
    }
  }
  gate.store(go, std::memory_order_release);
  gate.notify_all();
  body(0);
  for (auto& t : threads) t.join();
#endif
}

}  // namespace armi::detail
