// core/location_map.hpp, the map from location ids to per-partner state:
// checked against std::map under random inserts and lookups, across its
// growth, with keys that collide in its hash (multiples of a power of two)
// and the largest location id.
#include <armi/core/location_map.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <random>

namespace d = armi::detail;

TEST_CASE("a location map finds what was inserted, and only that, as it grows", "[location_map]") {
  d::location_map<std::uint64_t> m;
  REQUIRE(m.find(0) == nullptr);
  REQUIRE(m.size() == 0);
  std::map<std::uint32_t, std::uint64_t> expected;
  std::mt19937 rng(7);
  std::uint32_t const spread = GENERATE(16u, 5000u, 1u << 20);
  for (int i = 0; i < 20000; ++i) {
    std::uint32_t const key = static_cast<std::uint32_t>(rng() % spread) * (i % 3 == 0 ? 4096 : 1);
    m[key] += key + 1;
    expected[key] += key + 1;
    std::uint32_t const probe = static_cast<std::uint32_t>(rng() % (2 * spread));
    std::uint64_t const* found = m.find(probe);
    auto const it = expected.find(probe);
    REQUIRE((found == nullptr) == (it == expected.end()));
    if (found != nullptr) REQUIRE(*found == it->second);
  }
  REQUIRE(m.size() == expected.size());
  std::size_t visited = 0;
  m.for_each([&](std::uint32_t key, std::uint64_t& value) {
    ++visited;
    REQUIRE(expected.at(key) == value);
  });
  REQUIRE(visited == expected.size());
}

TEST_CASE("a location map takes the largest location id, and values start value-initialized", "[location_map]") {
  d::location_map<std::uint32_t> m;
  std::uint32_t const largest = d::location_map<std::uint32_t>::no_key - 1;
  REQUIRE(m[largest] == 0);
  m[largest] = 5;
  REQUIRE(m[0] == 0);
  REQUIRE(*m.find(largest) == 5);
  REQUIRE(m.size() == 2);
}
