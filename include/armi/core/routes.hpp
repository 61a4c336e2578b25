// Routed aggregation's paths (--armi-routing).  The locations sit on a grid
// of rows and columns, and a request from (r1, c1) to (r2, c2) goes first
// along its row to (r1, c2), then along that column to (r2, c2): a location
// sends to the locations of its row and of its column only, about 2 sqrt(P)
// next hops instead of P destinations, and each hop aggregates per next
// hop.  Under `grid` the rows are runs of near-sqrt(P) consecutive
// locations; under `node` a row is a node's locations, so that the first hop
// stays in the node and one location per node pair carries the network hop
// (YGM's node-remote scheme).
//
// Rows may differ in length (the last row of `grid`; nodes of unequal
// size).  Where (r1, c2) does not exist, the request goes column first,
// through (r2, c1); where neither does, directly.  Either way a pair's path
// is fixed and at most two hops long, and a location on it is one step
// nearer: the next hop from (r1, c2) or (r2, c1) is the destination.
//
// A hop code names a segment of a routed buffer (its destination and
// origin, core/wire.hpp's hop record) in 12 bits, relative to the buffer's
// sender and receiver, for the segments a path makes: the sender's own
// requests to the receiver, or to a location of the receiver's column or
// row (a first hop); another's requests from the sender's row to the
// receiver (a row-first second hop).  Two bits say which, ten give the row
// or column, so rows and columns up to 1,024 long have codes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace armi::detail {

class route_grid {
 public:
  static constexpr std::uint32_t none = UINT32_MAX;
  static constexpr std::uint32_t no_hop_code = UINT32_MAX;
  static constexpr std::uint32_t max_hop_index = 1023;

  // Every request straight to its destination, over P locations.
  static route_grid direct(std::uint32_t p) {
    route_grid g;
    g.m_size = p;
    return g;
  }

  // `grid` over P locations: rows of ceil(sqrt(P)) consecutive locations.
  static route_grid square(std::uint32_t p) {
    std::uint32_t cols = static_cast<std::uint32_t>(std::ceil(std::sqrt(static_cast<double>(p))));
    while (std::uint64_t{cols} * cols < p) ++cols;  // exact whatever sqrt's rounding
    while (cols > 1 && std::uint64_t{cols - 1} * (cols - 1) >= p) --cols;
    route_grid g;
    g.m_size = p;
    g.m_cols = std::max<std::uint32_t>(cols, 1);
    g.m_routes = p > 2;  // up to 2 locations, a row
    return g;
  }

  // Rows given by a row number per location (node numbers, any values): a
  // row's locations are its columns 0, 1, ... in location order.
  static route_grid of_rows(std::vector<std::uint32_t> const& row_of_location) {
    route_grid g;
    g.m_size = static_cast<std::uint32_t>(row_of_location.size());
    std::vector<std::uint32_t> names;  // row numbers as given, in order of first appearance
    for (std::uint32_t l = 0; l < g.m_size; ++l) {
      std::uint32_t const name = row_of_location[l];
      auto const it = std::find(names.begin(), names.end(), name);
      std::uint32_t const row = static_cast<std::uint32_t>(it - names.begin());
      if (it == names.end()) {
        names.push_back(name);
        g.m_rows.emplace_back();
      }
      g.m_where.push_back({row, static_cast<std::uint32_t>(g.m_rows[row].size())});
      g.m_rows[row].push_back(l);
    }
    for (auto const& r : g.m_rows) g.m_routes |= g.m_rows.size() > 1 && r.size() > 1;
    return g;
  }

  // Whether requests may go through another location at all.
  bool routes() const { return m_routes; }

  // Where a request from `at` to dest goes next: dest itself, or the
  // location of at's row in dest's column (or of dest's row in at's column).
  std::uint32_t next_hop(std::uint32_t at, std::uint32_t dest) const {
    if (at == dest || !routes()) return dest;
    auto const [r1, c1] = place(at);
    auto const [r2, c2] = place(dest);
    if (r1 == r2 || c1 == c2) return dest;
    if (std::uint32_t const via = location_at(r1, c2); via != none) return via;
    if (std::uint32_t const via = location_at(r2, c1); via != none) return via;
    return dest;
  }

  // The hop code of the segment of dest's requests from origin (none: the
  // sender's own) in a buffer from sender to receiver, or no_hop_code.
  std::uint32_t hop_code(std::uint32_t sender, std::uint32_t receiver, std::uint32_t dest,
                         std::uint32_t origin) const {
    if (!routes()) return no_hop_code;
    if (origin == none) {
      if (dest == receiver) return to_receiver;
      auto const [rr, rc] = place(receiver);
      auto const [dr, dc] = place(dest);
      if (dc == rc && dr <= max_hop_index) return on_column | dr << 2;
      if (dr == rr && dc <= max_hop_index) return on_row | dc << 2;
      return no_hop_code;
    }
    if (dest != receiver) return no_hop_code;
    auto const [sr, sc] = place(sender);
    auto const [orow, ocol] = place(origin);
    return orow == sr && ocol <= max_hop_index ? from_row | ocol << 2 : no_hop_code;
  }
  // The segment a hop code names in a buffer from sender to receiver (both
  // locations of the grid): its destination, and its origin (none: the
  // sender).  False for a code that names no location, or the sender.
  bool hop_segment(std::uint32_t sender, std::uint32_t receiver, std::uint32_t code, std::uint32_t& dest,
                   std::uint32_t& origin) const {
    if (!routes() || code > (max_hop_index << 2 | 3)) return false;
    std::uint32_t const index = code >> 2;
    dest = receiver;
    origin = none;
    switch (code & 3) {
      case to_receiver:
        return index == 0;
      case on_column:
        dest = location_at(index, place(receiver).col);
        return dest != none && dest != sender;
      case on_row:
        dest = location_at(place(receiver).row, index);
        return dest != none && dest != sender;
      default:  // from_row
        origin = location_at(place(sender).row, index);
        return origin != none && origin != sender;
    }
  }

  // How many locations `at` sends buffers to: its next hops, or all.
  std::size_t partners(std::uint32_t at) const { return m_routes ? next_hops(at).size() : m_size; }

  // The next hops `at` may send to: its row and its column, itself
  // excluded, in ascending order.
  std::vector<std::uint32_t> next_hops(std::uint32_t at) const {
    std::vector<std::uint32_t> hops;
    if (!routes()) {
      for (std::uint32_t l = 0; l < m_size; ++l)
        if (l != at) hops.push_back(l);
      return hops;
    }
    for (std::uint32_t d = 0; d < m_size; ++d)
      if (std::uint32_t const h = next_hop(at, d); h != at) hops.push_back(h);
    std::sort(hops.begin(), hops.end());
    hops.erase(std::unique(hops.begin(), hops.end()), hops.end());
    hops.shrink_to_fit();  // from one entry per location: a location may keep the list
    return hops;
  }

 private:
  struct spot {
    std::uint32_t row, col;
  };

  // The hop codes' kinds, in their low two bits.
  enum : std::uint32_t { to_receiver = 0, on_column = 1, on_row = 2, from_row = 3 };

  spot place(std::uint32_t l) const { return m_cols != 0 ? spot{l / m_cols, l % m_cols} : m_where[l]; }
  // The location at (row, col), or none (also for a row or column past the grid's).
  std::uint32_t location_at(std::uint32_t row, std::uint32_t col) const {
    if (m_cols != 0) {
      std::uint64_t const l = std::uint64_t{row} * m_cols + col;
      return col < m_cols && l < m_size ? static_cast<std::uint32_t>(l) : none;
    }
    return row < m_rows.size() && col < m_rows[row].size() ? m_rows[row][col] : none;
  }

  std::uint32_t m_size = 0;
  bool m_routes = false;
  std::uint32_t m_cols = 0;                      // `grid`: row length; 0: rows as listed
  std::vector<spot> m_where;                     // rows as listed: each location's row and column
  std::vector<std::vector<std::uint32_t>> m_rows;  // ... each row's locations
};

}  // namespace armi::detail
