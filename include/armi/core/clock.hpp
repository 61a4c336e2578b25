// The runtime's clock: nanoseconds of CLOCK_MONOTONIC, the clock behind
// std::chrono::steady_clock on Linux.  Read directly because libstdc++'s
// <chrono> brings <sstream> with it in C++20, about half a second of parsing
// in every translation unit that includes armi.
#pragma once

#include <cstdint>
#include <ctime>

namespace armi::detail {

inline std::int64_t steady_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

}  // namespace armi::detail
