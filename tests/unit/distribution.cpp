// Distributions (containers/distribution.hpp) against a brute-force layout:
// every index has exactly one owner, local indices on each location are
// 0..local_size-1 in global order, global_index inverts locate, and bad
// indices and locations are std::out_of_range.
#include <armi/containers/distribution.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <stdexcept>
#include <vector>

namespace {

template <class D>
void check_layout(D const& d) {
  std::size_t const n = d.size();
  armi::location_id const p = d.num_locations();
  std::vector<std::size_t> seen(p, 0);  // next local index expected on each location
  for (std::size_t i = 0; i < n; ++i) {
    armi::index_location const at = d.locate(i);
    REQUIRE(at.location < p);
    REQUIRE(at.location == d.owner(i));
    REQUIRE(at.local == d.local_index(i));
    REQUIRE(at.local == seen[at.location]);  // dense and increasing in global order
    ++seen[at.location];
    REQUIRE(d.global_index(at.location, at.local) == i);
  }
  std::size_t total = 0;
  for (armi::location_id loc = 0; loc < p; ++loc) {
    REQUIRE(d.local_size(loc) == seen[loc]);
    total += d.local_size(loc);
    CHECK_THROWS_AS(d.global_index(loc, d.local_size(loc)), std::out_of_range);
  }
  REQUIRE(total == n);
  CHECK_THROWS_AS(d.owner(n), std::out_of_range);
  CHECK_THROWS_AS(d.locate(n + 5), std::out_of_range);
  CHECK_THROWS_AS(d.local_size(p), std::out_of_range);
}

}  // namespace

TEST_CASE("block distribution: balanced runs, first n % p locations one longer") {
  for (armi::location_id p = 1; p <= 9; ++p)
    for (std::size_t n = 0; n <= 40; ++n) {
      armi::block_distribution const d(n, p);
      check_layout(d);
      for (armi::location_id loc = 0; loc < p; ++loc) {
        std::size_t const expect = n / p + (loc < n % p ? 1 : 0);
        REQUIRE(d.local_size(loc) == expect);
        if (loc + 1 < p) REQUIRE(d.first(loc + 1) == d.first(loc) + expect);
      }
    }
  armi::block_distribution const d(10, 4);  // 3 3 2 2
  CHECK(d.owner(0) == 0);
  CHECK(d.owner(5) == 1);
  CHECK(d.owner(6) == 2);
  CHECK(d.owner(9) == 3);
  CHECK(d.local_index(7) == 1);
  // Runs of one power of two (owner() shifts instead of dividing).
  armi::block_distribution const pow2(std::size_t{1} << 22, 8);
  for (std::size_t i = 0; i < (std::size_t{1} << 22); i += 4093) {
    REQUIRE(pow2.owner(i) == i / (std::size_t{1} << 19));
    REQUIRE(pow2.local_index(i) == i % (std::size_t{1} << 19));
  }
  CHECK(pow2.owner((std::size_t{1} << 22) - 1) == 7);
  CHECK_THROWS_AS(pow2.owner(std::size_t{1} << 22), std::out_of_range);
}

TEST_CASE("block distribution from counts: empty runs anywhere") {
  std::vector<std::vector<std::size_t>> const cases = {
      {0, 0, 3, 0, 2}, {5}, {0}, {1, 0, 0, 0}, {0, 0, 0, 7}, {2, 2, 2}, {3, 3, 2, 2}};
  for (auto const& counts : cases) {
    auto const d = armi::block_distribution::from_counts(counts);
    check_layout(d);
    CHECK(d.counts() == counts);
  }
  CHECK(armi::block_distribution::from_counts({3, 3, 2, 2}) == armi::block_distribution(10, 4));
  CHECK_THROWS_AS(armi::block_distribution::from_counts({}), std::invalid_argument);
}

TEST_CASE("cyclic distribution") {
  for (armi::location_id p = 1; p <= 9; ++p)
    for (std::size_t n = 0; n <= 40; ++n) check_layout(armi::cyclic_distribution(n, p));
  armi::cyclic_distribution const d(10, 4);
  CHECK(d.owner(6) == 2);
  CHECK(d.local_index(6) == 1);
  CHECK_THROWS_AS(armi::cyclic_distribution(5, 0), std::invalid_argument);
}

TEST_CASE("block-cyclic distribution") {
  for (armi::location_id p = 1; p <= 7; ++p)
    for (std::size_t b = 1; b <= 5; ++b)
      for (std::size_t n = 0; n <= 50; ++n) check_layout(armi::block_cyclic_distribution(n, p, b));
  armi::block_cyclic_distribution const d(10, 2, 3);  // blocks [0,3)->0 [3,6)->1 [6,9)->0 [9,10)->1
  CHECK(d.owner(7) == 0);
  CHECK(d.local_index(7) == 4);
  CHECK(d.owner(9) == 1);
  CHECK(d.local_index(9) == 3);
  CHECK(d.local_size(0) == 6);
  CHECK(d.local_size(1) == 4);
  CHECK_THROWS_WITH(d.owner(10), Catch::Contains("index 10 is out of range for size 10"));
  CHECK_THROWS_AS(armi::block_cyclic_distribution(5, 2, 0), std::invalid_argument);
}
