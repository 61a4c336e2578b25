// How a broadcast_rmi or reduce_rmi request names its receiver's subtree
// (runtime/tree_stubs.hpp): runs of members round-trip for every kind of
// member list (all, strided, random), all locations take one run, and runs
// that a damaged or hostile request could carry are rejected with
// decode_error, never expanded.
#include <armi/runtime/tree_stubs.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

using armi::location_id;
using armi::detail::member_run;
using armi::detail::member_runs;
using armi::detail::members_of_runs;
using armi::detail::runs_of;

TEST_CASE("member runs: every member list round-trips, and regular ones take one run", "[tree]") {
  std::vector<location_id> all(1000);
  for (location_id i = 0; i < all.size(); ++i) all[i] = i;
  CHECK(runs_of(all).size() == 1);
  CHECK(members_of_runs(runs_of(all), 0, 1000) == all);
  std::vector<location_id> odds;
  for (location_id i = 1; i < 1000; i += 2) odds.push_back(i);
  CHECK(runs_of(odds).size() == 1);
  CHECK(members_of_runs(runs_of(odds), 1, 1000) == odds);
  CHECK(members_of_runs(runs_of(std::vector<location_id>{7}), 7, 8) == std::vector<location_id>{7});
  std::mt19937 rng(5);
  for (int round = 0; round < 500; ++round) {
    location_id const size = 1 + rng() % 300;
    std::vector<location_id> some;
    for (location_id l = 0; l < size; ++l)
      if (rng() % 3 != 0) some.push_back(l);
    if (some.empty()) continue;
    INFO("round " << round);
    REQUIRE(members_of_runs(runs_of(some), some.front(), size) == some);
  }
}

TEST_CASE("member runs: runs a request cannot mean are a decode error", "[tree]") {
  auto rejects = [](member_runs const& runs, location_id self, location_id size) {
    CHECK_THROWS_AS(members_of_runs(runs, self, size), armi::decode_error);
  };
  rejects({}, 0, 4);                                  // no members
  rejects({{1, 1, 3}}, 0, 4);                          // not rooted at the receiver
  rejects({{0, 1, 5}}, 0, 4);                          // past the last location
  rejects({{0, 0, 2}}, 0, 4);                          // stride 0: a member twice
  rejects({{0, 1, 0}}, 0, 4);                          // an empty run
  rejects({{0, 1, 2}, {1, 1, 2}}, 0, 4);               // not ascending
  rejects({{0, 2, 3}}, 0, 4);                          // 0, 2, 4: 4 is no location
  rejects({{0, 0x40000000u, 0x7fffffffu}}, 0, 4);      // a count that would overflow
  rejects({{0, 1, 2}, {2, 1, 2}, {3, 1, 1}}, 0, 4);    // 3 twice
}
