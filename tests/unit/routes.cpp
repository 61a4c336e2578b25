// The paths of --armi-routing (core/routes.hpp): every pair's path is fixed,
// at most two hops long, and each hop is one step nearer; a location sends
// to its row and its column only; under `node` the first hop stays in the
// node.  And the route record of the wire (core/wire.hpp).
#include <armi/core/buffer.hpp>
#include <armi/core/routes.hpp>
#include <armi/core/wire.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <set>
#include <vector>

namespace {

using armi::detail::route_grid;

// Every path of g over p locations: at most two hops, the second the
// destination; returns the most next hops any location has.
std::size_t check_paths(route_grid const& g, std::uint32_t p) {
  std::size_t most = 0;
  for (std::uint32_t s = 0; s < p; ++s) {
    std::set<std::uint32_t> used;
    for (std::uint32_t d = 0; d < p; ++d) {
      std::uint32_t const hop = g.next_hop(s, d);
      REQUIRE(hop < p);
      if (s == d) REQUIRE(hop == d);
      if (hop != d) {
        REQUIRE(hop != s);
        REQUIRE(g.next_hop(hop, d) == d);  // the second hop is the last
      }
      if (hop != s) used.insert(hop);
    }
    auto const listed = g.next_hops(s);
    REQUIRE(std::vector<std::uint32_t>(used.begin(), used.end()) == listed);
    most = std::max(most, listed.size());
  }
  return most;
}

}  // namespace

TEST_CASE("routes: the square grid's paths are two hops at most, over its row and column", "[routes]") {
  for (std::uint32_t p = 1; p <= 70; ++p) {
    INFO("P = " << p);
    route_grid const g = route_grid::square(p);
    REQUIRE(g.routes() == (p > 2));
    std::uint32_t const cols = static_cast<std::uint32_t>(std::ceil(std::sqrt(double(p))));
    std::size_t const most = check_paths(g, p);
    if (g.routes()) REQUIRE(most <= 2 * (cols - 1));
  }
  // A location sends to about 2 sqrt(P) next hops, not P destinations.
  route_grid const g = route_grid::square(1024);
  REQUIRE(g.next_hops(0).size() == 62);
  REQUIRE(g.next_hop(0, 1023) == 31);  // along row 0 to column 31, then down
  REQUIRE(g.next_hop(31, 1023) == 1023);
  REQUIRE(g.next_hops(1000).size() <= 62);
}

TEST_CASE("routes: a short last row goes column first where the row has no such column", "[routes]") {
  route_grid const g = route_grid::square(7);  // rows {0 1 2} {3 4 5} {6}
  REQUIRE(g.next_hop(6, 2) == 0);              // (2,0) -> (0,0) -> (0,2): (2,2) does not exist
  REQUIRE(g.next_hop(0, 6) == 6);              // one column
  REQUIRE(g.next_hop(5, 6) == 3);              // (1,2) -> (1,0) -> (2,0)
  REQUIRE(g.next_hop(1, 5) == 2);              // (0,1) -> (0,2) -> (1,2)
  check_paths(g, 7);
}

TEST_CASE("routes: node rows keep the first hop within the node, whatever the node sizes", "[routes]") {
  // Nodes named out of order, of sizes 3, 1, 4 and 2; locations of one node not adjacent.
  std::vector<std::uint32_t> const node_of = {7, 7, 2, 9, 9, 9, 9, 7, 5, 5};
  route_grid const g = route_grid::of_rows(node_of);
  REQUIRE(g.routes());
  check_paths(g, 10);
  for (std::uint32_t s = 0; s < node_of.size(); ++s)
    for (std::uint32_t d = 0; d < node_of.size(); ++d) {
      std::uint32_t const hop = g.next_hop(s, d);
      // Either straight there, or first within this node, or (where this
      // node has no location in d's column) first to d's node.
      if (hop != d) REQUIRE((node_of[hop] == node_of[s] || node_of[hop] == node_of[d]));
    }
  // Node 7's locations are columns 0, 1, 2 in location order (0, 1, 7); node
  // 9's are 3, 4, 5, 6: from 3 to 7 goes through 3's column-2 partner... 5.
  REQUIRE(g.next_hop(3, 7) == 5);
  REQUIRE(g.next_hop(5, 7) == 7);

  SECTION("one node, or one location per node: nothing to route") {
    REQUIRE_FALSE(route_grid::of_rows({4, 4, 4, 4}).routes());
    REQUIRE_FALSE(route_grid::of_rows({0, 1, 2, 3}).routes());
    REQUIRE(route_grid::of_rows({0, 0, 1, 1}).routes());
  }
}

TEST_CASE("routes: a route record frames between requests and reads back", "[routes][wire]") {
  namespace d = armi::detail;
  d::buffer b;
  b.reserve(256);
  d::request_header const h{3, 8, 1, 0};
  std::byte const payload[8] = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4},
                                std::byte{5}, std::byte{6}, std::byte{7}, std::byte{8}};
  b.size += d::write_copied_record(b, h, payload);
  ++b.count;
  d::write_route(b, 5, d::route_no_origin);  // this sender's requests to 5
  b.size += d::write_copied_record(b, h, payload);  // a repeat of the record before the route
  ++b.count;
  d::write_route(b, 6, 2);  // location 2's requests to 6
  REQUIRE(b.size == 24 + 8 + 4 + 8 + 12);

  d::request_header last{}, f{};
  std::uint32_t repeat_left = 0;
  std::byte const* p = nullptr;
  std::size_t next = 0, cursor = 0;
  bool repeat = false;
  REQUIRE(d::frame_record(last, repeat_left, b.data.get(), b.size, cursor, f, p, next, repeat) == nullptr);
  REQUIRE((!repeat && f.handler == 3 && p == b.data.get() + 16));
  cursor = next;
  REQUIRE(d::frame_record(last, repeat_left, b.data.get(), b.size, cursor, f, p, next, repeat) == d::route_follows);
  std::uint32_t dest = 0, origin = 0;
  REQUIRE(d::read_route(b.data.get(), b.size, cursor, dest, origin, next) == nullptr);
  REQUIRE((dest == 5 && origin == d::route_no_origin && next == 32));
  cursor = next;
  f = last;
  REQUIRE(d::frame_record(last, repeat_left, b.data.get(), b.size, cursor, f, p, next, repeat) == nullptr);
  REQUIRE((repeat && f.handler == 3 && std::to_integer<int>(p[7]) == 8));
  cursor = next;
  REQUIRE(d::frame_record(last, repeat_left, b.data.get(), b.size, cursor, f, p, next, repeat) == d::route_follows);
  REQUIRE(d::read_route(b.data.get(), b.size, cursor, dest, origin, next) == nullptr);
  REQUIRE((dest == 6 && origin == 2 && next == b.size));

  SECTION("a truncated route record, or one with unknown flags, does not frame") {
    REQUIRE(d::read_route(b.data.get(), b.size - 4, cursor, dest, origin, next) != nullptr);
    std::uint32_t const bad = d::route_id | (1u << 31);
    std::memcpy(b.data.get() + cursor, &bad, sizeof bad);
    REQUIRE(d::read_route(b.data.get(), b.size, cursor, dest, origin, next) != nullptr);
  }
}
