// The process's count of the large byte copies the runtime makes: a
// request's arguments packed into a buffer, unpacked into fresh objects, a
// buffer regrown, moved through a ring of the node, forwarded by a routing
// location, or copied out of place for a view.  How many times a bulk
// argument is copied on its way is then a number a test or a user can read
// (tests/matrix/views.cpp: a view is copied once between thread locations,
// a std::vector twice).
//
// Copies under bulk_copy_min_bytes are not counted: the small ones are the
// aggregated requests themselves, and a counter there would cost the hot
// path; the branch below folds away where the size is a constant.  What the
// layers below copy (MPI, the kernel, sp2's emulated network) is not armi's
// and not counted.
//
// Thread safety: any thread; relaxed atomics (a total, not an order).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace armi::detail {

inline constexpr std::size_t bulk_copy_min_bytes = 4096;

struct bulk_copy_totals {
  std::uint64_t copies = 0;
  std::uint64_t bytes = 0;
};

struct alignas(64) bulk_copy_counters {
  std::atomic<std::uint64_t> copies{0};
  std::atomic<std::uint64_t> bytes{0};
};
inline bulk_copy_counters g_bulk_copies;

// Records a copy of n bytes made by the runtime.
inline void count_copy(std::size_t n) noexcept {
  if (n >= bulk_copy_min_bytes) [[unlikely]] {
    g_bulk_copies.copies.fetch_add(1, std::memory_order_relaxed);
    g_bulk_copies.bytes.fetch_add(n, std::memory_order_relaxed);
  }
}

// The copies counted in this process so far.
inline bulk_copy_totals bulk_copies() noexcept {
  return {g_bulk_copies.copies.load(std::memory_order_relaxed), g_bulk_copies.bytes.load(std::memory_order_relaxed)};
}

}  // namespace armi::detail
