// Starting the threads backend's locations: N std::threads (location 0 on
// the calling thread), or an OpenMP parallel region when armi is built with
// ARMI_THREADS_OPENMP.
#pragma once

#include <armi/config.hpp>
#include <armi/runtime/error.hpp>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#if ARMI_HAS_OPENMP
#include <omp.h>
#endif

namespace armi::detail {

// Runs body(i) for i in [0, n) concurrently, one thread each; returns when all have.
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
  std::vector<std::thread> threads;
  threads.reserve(n - 1);
  for (std::uint32_t i = 1; i < n; ++i) threads.emplace_back([&body, i] { body(i); });
  body(0);
  for (auto& t : threads) t.join();
#endif
}

}  // namespace armi::detail
