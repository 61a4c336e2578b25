// Distributions: how a container's global index space [0, n) is spread over
// the locations.  Every distribution answers the same questions (the
// armi::distribution concept below):
//
//   owner(i)               the location that stores global index i
//   local_index(i)         where i sits in its owner's local part
//   locate(i)              both at once
//   global_index(loc, k)   the inverse: the global index of loc's k-th element
//   local_size(loc)        how many indices loc owns
//
// A distribution is a small value, the same on every location (containers
// build it collectively from the same arguments), so any location maps any
// index without communicating.  An index outside [0, size()) is a
// std::out_of_range that names the index and the size.
//
//   block_distribution          contiguous runs, sizes differing by at most
//                               one (the first n % p locations get one more),
//                               or any per-location counts (from_counts)
//   cyclic_distribution         i goes to i % p
//   block_cyclic_distribution   blocks of b indices dealt round-robin
//                               (the 1-D building block of pmatrix's 2-D layout)
#pragma once

#include <armi/core/handle.hpp>

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace armi {

/// Where a global index lives: its owner and its position in the owner's part.
struct index_location {
  location_id location = 0;  ///< The owner.
  std::size_t local = 0;     ///< The position in the owner's local part.
  /// Same owner and position.
  friend bool operator==(index_location const&, index_location const&) = default;
};

/// A map of the global indices [0, size()) onto locations (see the header
/// comment); every member answers without communicating.
template <class D>
concept distribution = requires(D const& d, std::size_t i, location_id loc) {
  { d.size() } -> std::convertible_to<std::size_t>;
  { d.num_locations() } -> std::convertible_to<location_id>;
  { d.owner(i) } -> std::convertible_to<location_id>;
  { d.local_index(i) } -> std::convertible_to<std::size_t>;
  { d.locate(i) } -> std::convertible_to<index_location>;
  { d.global_index(loc, i) } -> std::convertible_to<std::size_t>;
  { d.local_size(loc) } -> std::convertible_to<std::size_t>;
};

namespace detail {

[[noreturn]] inline void index_out_of_range(char const* who, std::size_t i, std::size_t n) {
  throw std::out_of_range(std::string(who) + ": index " + std::to_string(i) +
                          " is out of range for size " + std::to_string(n));
}

[[noreturn]] inline void location_out_of_range(char const* who, location_id loc, location_id p) {
  throw std::out_of_range(std::string(who) + ": location " + std::to_string(loc) +
                          " is out of range for " + std::to_string(p) + " locations");
}

inline void check_locations(char const* who, location_id p) {
  if (p == 0) throw std::invalid_argument(std::string(who) + ": needs at least one location");
}

}  // namespace detail

/// Contiguous runs: location loc owns [first(loc), first(loc) + local_size(loc)).
class block_distribution {
 public:
  /// No indices, one location.
  block_distribution() : m_offsets{0, 0} {}

  /// n indices over p locations, as even as possible (the first n % p get one
  /// more); std::invalid_argument for p == 0.
  block_distribution(std::size_t n, location_id p) {
    detail::check_locations("block_distribution", p);
    std::size_t const q = n / p;
    std::size_t const r = n % p;
    m_offsets.resize(std::size_t{p} + 1);
    for (location_id loc = 0; loc <= p; ++loc)
      m_offsets[loc] = loc * q + std::min<std::size_t>(loc, r);
    m_even = true;
    m_quotient = q;
    m_remainder = r;
    if (r == 0 && std::has_single_bit(q)) m_shift = std::countr_zero(q);
  }

  /// Location k owns counts[k] indices (any, including zero), in order.
  static block_distribution from_counts(std::vector<std::size_t> const& counts) {
    detail::check_locations("block_distribution::from_counts", static_cast<location_id>(counts.size()));
    block_distribution d;
    d.m_offsets.assign(counts.size() + 1, 0);
    for (std::size_t k = 0; k < counts.size(); ++k) d.m_offsets[k + 1] = d.m_offsets[k] + counts[k];
    // Recognize the even layout, so owner() stays arithmetic.
    block_distribution const even(d.size(), static_cast<location_id>(counts.size()));
    if (even.m_offsets == d.m_offsets) return even;
    return d;
  }

  /// The number of indices.
  std::size_t size() const noexcept { return m_offsets.back(); }
  /// The number of locations.
  location_id num_locations() const noexcept { return static_cast<location_id>(m_offsets.size() - 1); }

  /// The location that owns i (std::out_of_range if i >= size()).
  location_id owner(std::size_t i) const {
    check(i);
    if (m_shift >= 0) return static_cast<location_id>(i >> m_shift);  // no division: runs of 2^k
    if (m_even) {
      std::size_t const big = m_remainder * (m_quotient + 1);  // indices in the longer runs
      if (i < big) return static_cast<location_id>(i / (m_quotient + 1));
      return static_cast<location_id>(m_remainder + (i - big) / m_quotient);
    }
    // Last offset <= i whose run is not empty.
    auto const it = std::upper_bound(m_offsets.begin(), m_offsets.end(), i);
    return static_cast<location_id>(it - m_offsets.begin() - 1);
  }
  /// Where i sits in its owner's part.
  std::size_t local_index(std::size_t i) const { return i - m_offsets[owner(i)]; }
  /// owner(i) and local_index(i) at once.
  index_location locate(std::size_t i) const {
    location_id const loc = owner(i);
    return {loc, i - m_offsets[loc]};
  }
  /// The global index of loc's k-th element (std::out_of_range past its part).
  std::size_t global_index(location_id loc, std::size_t k) const {
    check_location(loc);
    if (k >= local_size(loc)) detail::index_out_of_range("block_distribution::global_index", k, local_size(loc));
    return m_offsets[loc] + k;
  }
  /// How many indices loc owns.
  std::size_t local_size(location_id loc) const {
    check_location(loc);
    return m_offsets[loc + 1] - m_offsets[loc];
  }
  /// The first global index loc owns (== the end of the previous run).
  std::size_t first(location_id loc) const {
    check_location(loc);
    return m_offsets[loc];
  }
  /// local_size of every location, in order.
  std::vector<std::size_t> counts() const {
    std::vector<std::size_t> c(num_locations());
    for (location_id loc = 0; loc < num_locations(); ++loc) c[loc] = local_size(loc);
    return c;
  }

  /// Same runs.
  friend bool operator==(block_distribution const& a, block_distribution const& b) {
    return a.m_offsets == b.m_offsets;
  }

 private:
  void check(std::size_t i) const {
    if (i >= size()) detail::index_out_of_range("block_distribution", i, size());
  }
  void check_location(location_id loc) const {
    if (loc >= num_locations()) detail::location_out_of_range("block_distribution", loc, num_locations());
  }

  std::vector<std::size_t> m_offsets;  // p + 1 entries; run k is [m_offsets[k], m_offsets[k+1])
  bool m_even = false;
  std::size_t m_quotient = 0;
  std::size_t m_remainder = 0;
  int m_shift = -1;  // log2 of the runs' length when all are one power of two long
};

/// Round-robin: index i lives on location i % p, at local position i / p.
class cyclic_distribution {
 public:
  /// No indices, one location.
  cyclic_distribution() = default;
  /// n indices over p locations (std::invalid_argument for p == 0).
  cyclic_distribution(std::size_t n, location_id p) : m_size(n), m_locations(p) {
    detail::check_locations("cyclic_distribution", p);
  }

  /// The number of indices.
  std::size_t size() const noexcept { return m_size; }
  /// The number of locations.
  location_id num_locations() const noexcept { return m_locations; }
  /// The location that owns i (std::out_of_range if i >= size()).
  location_id owner(std::size_t i) const {
    check(i);
    return static_cast<location_id>(i % m_locations);
  }
  /// Where i sits in its owner's part.
  std::size_t local_index(std::size_t i) const {
    check(i);
    return i / m_locations;
  }
  /// owner(i) and local_index(i) at once.
  index_location locate(std::size_t i) const {
    check(i);
    return {static_cast<location_id>(i % m_locations), i / m_locations};
  }
  /// The global index of loc's k-th element (std::out_of_range past its part).
  std::size_t global_index(location_id loc, std::size_t k) const {
    if (k >= local_size(loc)) detail::index_out_of_range("cyclic_distribution::global_index", k, local_size(loc));
    return k * m_locations + loc;
  }
  /// How many indices loc owns.
  std::size_t local_size(location_id loc) const {
    if (loc >= m_locations) detail::location_out_of_range("cyclic_distribution", loc, m_locations);
    return m_size / m_locations + (loc < m_size % m_locations ? 1 : 0);
  }

  /// Same size and locations.
  friend bool operator==(cyclic_distribution const&, cyclic_distribution const&) = default;

 private:
  void check(std::size_t i) const {
    if (i >= m_size) detail::index_out_of_range("cyclic_distribution", i, m_size);
  }

  std::size_t m_size = 0;
  location_id m_locations = 1;
};

/// Blocks of `block` consecutive indices dealt round-robin: block j (indices
/// [j*b, (j+1)*b)) lives on location j % p, after that location's earlier blocks.
class block_cyclic_distribution {
 public:
  /// No indices, one location, blocks of 1.
  block_cyclic_distribution() = default;
  /// n indices over p locations in blocks of `block` (std::invalid_argument
  /// for p == 0 or block == 0).
  block_cyclic_distribution(std::size_t n, location_id p, std::size_t block)
      : m_size(n), m_locations(p), m_block(block) {
    detail::check_locations("block_cyclic_distribution", p);
    if (block == 0) throw std::invalid_argument("block_cyclic_distribution: the block size must be at least 1");
  }

  /// The number of indices.
  std::size_t size() const noexcept { return m_size; }
  /// The number of locations.
  location_id num_locations() const noexcept { return m_locations; }
  /// The block length b.
  std::size_t block_size() const noexcept { return m_block; }

  /// The location that owns i (std::out_of_range if i >= size()).
  location_id owner(std::size_t i) const {
    check(i);
    return static_cast<location_id>((i / m_block) % m_locations);
  }
  /// Where i sits in its owner's part.
  std::size_t local_index(std::size_t i) const {
    check(i);
    std::size_t const j = i / m_block;  // global block
    return (j / m_locations) * m_block + i % m_block;
  }
  /// owner(i) and local_index(i) at once.
  index_location locate(std::size_t i) const { return {owner(i), local_index(i)}; }
  /// The global index of loc's k-th element (std::out_of_range past its part).
  std::size_t global_index(location_id loc, std::size_t k) const {
    if (k >= local_size(loc))
      detail::index_out_of_range("block_cyclic_distribution::global_index", k, local_size(loc));
    std::size_t const local_block = k / m_block;
    return (local_block * m_locations + loc) * m_block + k % m_block;
  }
  /// How many indices loc owns.
  std::size_t local_size(location_id loc) const {
    if (loc >= m_locations) detail::location_out_of_range("block_cyclic_distribution", loc, m_locations);
    std::size_t const full_blocks = m_size / m_block;
    std::size_t const tail = m_size % m_block;  // a last, partial block
    std::size_t n = (full_blocks / m_locations) * m_block;
    std::size_t const extra = full_blocks % m_locations;  // locations with one more full block
    if (loc < extra) n += m_block;
    if (tail != 0 && loc == extra) n += tail;  // the partial block is block number full_blocks
    return n;
  }

  /// Same size, locations and block length.
  friend bool operator==(block_cyclic_distribution const&, block_cyclic_distribution const&) = default;

 private:
  void check(std::size_t i) const {
    if (i >= m_size) detail::index_out_of_range("block_cyclic_distribution", i, m_size);
  }

  std::size_t m_size = 0;
  location_id m_locations = 1;
  std::size_t m_block = 1;
};

static_assert(distribution<block_distribution>);
static_assert(distribution<cyclic_distribution>);
static_assert(distribution<block_cyclic_distribution>);

}  // namespace armi
