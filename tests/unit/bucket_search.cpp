// sample_sort's branch-free bucket search (detail::branchless_bound) against
// std::lower_bound and std::upper_bound: every splitter count from 0 to 19,
// with runs of equal splitters, every key between and around them, and a
// descending order.
#include <armi/algorithms/sample_sort.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

TEST_CASE("the branch-free bucket search agrees with lower_bound and upper_bound", "[sample_sort]") {
  for (std::size_t n = 0; n < 20; ++n) {
    std::vector<int> s(n);
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<int>(2 * (i / 3));  // 0 0 0 2 2 2 4 ...
    for (int x = -2; x <= static_cast<int>(2 * n / 3) + 2; ++x) {
      auto const lo = armi::detail::branchless_bound(s, [&](int e) { return e < x; });
      auto const hi = armi::detail::branchless_bound(s, [&](int e) { return !(x < e); });
      CHECK(lo == static_cast<std::size_t>(std::lower_bound(s.begin(), s.end(), x) - s.begin()));
      CHECK(hi == static_cast<std::size_t>(std::upper_bound(s.begin(), s.end(), x) - s.begin()));
    }
    std::vector<int> down(s.rbegin(), s.rend());
    for (int x = -2; x <= static_cast<int>(2 * n / 3) + 2; ++x) {
      auto const lo = armi::detail::branchless_bound(down, [&](int e) { return e > x; });
      CHECK(lo == static_cast<std::size_t>(std::lower_bound(down.begin(), down.end(), x, std::greater<>{}) -
                                           down.begin()));
    }
  }
}
