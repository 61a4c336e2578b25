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
#include <string>
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

// Every segment a path of g makes has a hop code that reads back as that
// segment, or none; returns how many had none.  The segments: s's own
// requests to d in its buffer to the next hop, and, where there is a
// second hop, s's requests passed on from that hop to d.
std::size_t check_hop_codes(route_grid const& g, std::uint32_t p) {
  std::size_t without = 0;
  auto const reads_back = [&](std::uint32_t sender, std::uint32_t receiver, std::uint32_t dest, std::uint32_t origin) {
    std::uint32_t const code = g.hop_code(sender, receiver, dest, origin);
    if (code == route_grid::no_hop_code) return ++without, void();
    REQUIRE(code <= armi::detail::max_hop_code);
    std::uint32_t d = 0, o = 0;
    REQUIRE(g.hop_segment(sender, receiver, code, d, o));
    REQUIRE(d == dest);
    REQUIRE(o == origin);
  };
  for (std::uint32_t s = 0; s < p; ++s)
    for (std::uint32_t d = 0; d < p; ++d) {
      if (d == s) continue;
      INFO("from " << s << " to " << d);
      std::uint32_t const hop = g.next_hop(s, d);
      reads_back(s, hop, d, route_grid::none);
      if (hop != d) reads_back(hop, d, d, s);
    }
  return without;
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

TEST_CASE("routes: a path's segments have hop codes that read back, row-first ones all", "[routes][wire]") {
  for (std::uint32_t p : {3u, 7u, 16u, 17u, 64u, 70u}) {
    INFO("P = " << p);
    route_grid const g = route_grid::square(p);
    std::size_t const without = check_hop_codes(g, p);
    // Only the column-first paths of a short last row pass on without a code.
    if (p == 16 || p == 64) REQUIRE(without == 0);
  }
  std::vector<std::uint32_t> const node_of = {7, 7, 2, 9, 9, 9, 9, 7, 5, 5};
  check_hop_codes(route_grid::of_rows(node_of), 10);

  SECTION("codes that name no location, or the sender, do not read") {
    route_grid const g = route_grid::square(7);  // rows {0 1 2} {3 4 5} {6}
    std::uint32_t d = 0, o = 0;
    REQUIRE_FALSE(g.hop_segment(0, 1, 0 | 1u << 2, d, o));   // to the receiver, with an index
    REQUIRE_FALSE(g.hop_segment(0, 1, 1 | 3u << 2, d, o));   // row 3 of column 1: none
    REQUIRE_FALSE(g.hop_segment(0, 3, 1 | 0u << 2, d, o));   // row 0 of column 0: the sender
    REQUIRE_FALSE(g.hop_segment(0, 6, 2 | 1u << 2, d, o));   // row 2 has one column
    REQUIRE(g.hop_segment(0, 1, 1 | 1u << 2, d, o));         // row 1 of column 1
    REQUIRE((d == 4 && o == route_grid::none));
    REQUIRE_FALSE(g.hop_segment(1, 4, 3 | 1u << 2, d, o));   // the sender itself as origin
    REQUIRE_FALSE(g.hop_segment(1, 4, 3 | 3u << 2, d, o));   // column 3 of row 0: none
    REQUIRE_FALSE(g.hop_segment(1, 4, 1u << 12, d, o));      // past 12 bits
    REQUIRE_FALSE(route_grid::direct(7).hop_segment(0, 1, 0, d, o));
    REQUIRE(route_grid::direct(7).hop_code(0, 1, 1, route_grid::none) == route_grid::no_hop_code);
  }
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
  d::write_route(b, 5, d::route_no_origin, 0);  // this sender's requests to 5
  b.size += d::write_copied_record(b, h, payload);  // a repeat of the record before the route
  ++b.count;
  d::write_route(b, 6, 2, 0);  // location 2's requests to 6
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

TEST_CASE("routes: a route record with a hop word and the repeat after it become one hop record", "[routes][wire]") {
  namespace d = armi::detail;
  d::buffer b;
  b.reserve(256);
  d::request_header const h{3, 8, 1, 0}, other{4, 8, 1, 0};
  std::byte payload[8] = {};
  auto const put = [&](d::request_header const& hdr, int value) {
    payload[0] = std::byte(value);
    b.size += d::write_copied_record(b, hdr, payload);
    ++b.count;
  };
  std::uint32_t const hop = d::hop_word(1 | 2u << 2);
  put(h, 1);                                  // full record: 24 bytes
  d::write_route(b, 5, d::route_no_origin, hop);
  put(h, 2);                                  // the hop record: word and payload
  REQUIRE(b.size == 24 + 4 + 8);
  put(h, 3);                                  // the same segment: a repeat opens...
  put(h, 4);                                  // ...and grows
  REQUIRE(b.size == 36 + 4 + 8 + 8);
  d::write_route(b, 6, 2, hop);
  put(other, 5);                              // another header: the route record stays whole
  REQUIRE(b.size == 56 + 12 + 4 + 24);        // route, pad word, full record
  put(other, 6);                              // a repeat of it: the route record before stays
  REQUIRE(b.size == 96 + 4 + 8);

  // Read back as the dispatcher does: a hop record is a route and a repeat of one.
  d::request_header last = d::no_header, f{};
  std::uint32_t repeat_left = 0;
  std::byte const* p = nullptr;
  std::size_t next = 0, cursor = 0;
  bool repeat = false;
  std::vector<int> values;
  while (cursor < b.size || repeat_left != 0) {
    f = last;
    char const* why = d::frame_record(last, repeat_left, b.data.get(), b.size, cursor, f, p, next, repeat);
    if (why == d::route_follows) {
      std::uint32_t word;
      std::memcpy(&word, b.data.get() + cursor, sizeof word);
      if (d::is_hop_word(word)) {
        REQUIRE(d::hop_code(word) == (1 | 2u << 2));
        next = cursor + 4;
        repeat_left = 1;
      } else {
        std::uint32_t dest = 0, origin = 0;
        REQUIRE(d::read_route(b.data.get(), b.size, cursor, dest, origin, next) == nullptr);
        REQUIRE((dest == 6 && origin == 2));
      }
      cursor = next;
      continue;
    }
    REQUIRE(why == nullptr);
    values.push_back(std::to_integer<int>(p[0]));
    cursor = next;
  }
  REQUIRE(values == std::vector<int>{1, 2, 3, 4, 5, 6});

  SECTION("a repeat or hop record with no full record before it does not frame") {
    d::buffer e;
    e.reserve(64);
    d::write_route(e, 5, d::route_no_origin, 0);
    std::uint32_t const word = d::repeat_word(1);
    std::memcpy(e.data.get() + e.size, &word, sizeof word);
    e.size += 4 + 8;
    d::request_header l = d::no_header, g = d::no_header;
    std::uint32_t left = 0;
    REQUIRE(std::string(d::frame_record(l, left, e.data.get(), e.size, 8, g, p, next, repeat)) ==
            "a repeated request with no request before it");
  }
}
