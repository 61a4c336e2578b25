// armi::random_updates: the HPCC RandomAccess kernel on a parray — the ARMI
// paper's pArray bandwidth test.
//
// The table has 2^k 64-bit words, table[i] = i to begin with
// (random_updates_init).  The updates are the standard HPCC stream: a 64-bit
// LFSR over GF(2) with the polynomial x^64 + x^2 + x + 1 (POLY = 7), started
// at 1; the j-th update (j = 1, 2, ...) uses the stream value a_j and does
//
//     table[a_j & (size - 1)] ^= a_j.
//
// random_updates(t, n) performs updates 1..n once, split like HPCC: location r
// takes a contiguous part of the stream and jumps straight to its first value
// (random_updates_stream::at, x^j mod the polynomial by square-and-multiply),
// so the whole run applies exactly the sequential stream, cut in parts.  Each
// update to another location's word is ONE t.update(i, xor_op{}, a_j): an
// async_rmi to its owner; aggregation (--armi-aggregation) coarsens them, and
// there is no bucketing by destination.  Updates to this location's own words
// are applied in batches of 64 (their cache misses overlap).
//
// Verification (random_updates_verify): apply the same n updates again; XOR
// undoes them, so every word must be back to table[i] = i.  It counts the
// words that are not.
//
// Which HPCC rule: HPCC allows up to 1% of the table to be wrong after
// verification, because its optimized implementations may update racily
// (unlocked read-modify-write, look-ahead buffers that drop conflicts).  armi
// applies every update exactly: a location runs one request at a time, so
// each update is an atomic read-modify-write at the owner.  The count must
// therefore be 0, and the tests and the example require 0 — the 1% allowance
// is not used.
//
// Collective: every location calls each of these functions, in the same
// order, with the same arguments.  Each returns after an rmi_fence, so the
// table is final (or the count agreed) on return.
//
// Complexity: n updates in all, n/p per location; each is one async_rmi with
// 16 bytes of arguments (local index + value) to a uniformly random owner, so
// a fraction (p-1)/p of them travel; about n(p-1)/p/A buffers with
// aggregation A.  Memory: O(1) beyond the table and the runtime's buffers.
#pragma once

#include <armi/containers/distribution.hpp>
#include <armi/containers/parray.hpp>
#include <armi/hold_requests.hpp>
#include <armi/rmi.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace armi {

/// The HPCC RandomAccess random stream: powers of x modulo x^64 + x^2 + x + 1.
struct random_updates_stream {
  static constexpr std::uint64_t poly = 0x7;  ///< x^64 = x^2 + x + 1

  /// The next value: multiply by x modulo x^64 + x^2 + x + 1.
  static constexpr std::uint64_t step(std::uint64_t v) noexcept {
    return (v << 1) ^ ((v >> 63) != 0 ? poly : 0);
  }

  /// a * b modulo the polynomial (carry-less, Horner over b's bits).
  static constexpr std::uint64_t multiply(std::uint64_t a, std::uint64_t b) noexcept {
    std::uint64_t r = 0;
    for (int bit = 63; bit >= 0; --bit) {
      r = step(r);
      if (((b >> bit) & 1) != 0) r ^= a;
    }
    return r;
  }

  /// The value after n steps from the start value 1: x^n.  at(0) == 1, and
  /// at(n + 1) == step(at(n)).  O(log n) multiplications.
  static constexpr std::uint64_t at(std::uint64_t n) noexcept {
    std::uint64_t result = 1;
    std::uint64_t power = 2;  // x
    while (n != 0) {
      if ((n & 1) != 0) result = multiply(result, power);
      power = multiply(power, power);
      n >>= 1;
    }
    return result;
  }
};

namespace detail {

template <class Dist>
std::uint64_t random_updates_mask(parray<std::uint64_t, Dist> const& t, char const* who) {
  std::size_t const n = t.size();
  if (n == 0 || (n & (n - 1)) != 0)
    throw std::invalid_argument(std::string(who) + ": the table size must be a power of two, not " +
                                std::to_string(n));
  return static_cast<std::uint64_t>(n - 1);
}

class random_updates_counter : public p_object {
 public:
  std::uint64_t errors = 0;
  // Collective: the errors of all locations.
  std::uint64_t total() const {
    return allreduce_rmi(get_rmi_handle(), &random_updates_counter::serve_errors, std::plus<>{});
  }

 private:
  std::uint64_t serve_errors() const { return errors; }  // RMI target
};

}  // namespace detail

/// Collective: table[i] = i for every i (each location writes its own part);
/// the size must be a power of two (std::invalid_argument otherwise).
template <class Dist>
void random_updates_init(parray<std::uint64_t, Dist>& table) {
  hold_requests const hold;
  (void)detail::random_updates_mask(table, "armi::random_updates_init");
  auto const me = get_location_id();
  auto const mine = table.local();
  for (std::size_t k = 0; k < mine.size(); ++k) mine[k] = table.distribution().global_index(me, k);
  rmi_fence();  // nobody updates a word before its owner initialized it
}

/// Collective: updates 1..n_updates of the stream, table[a & (size-1)] ^= a,
/// spread over the locations in contiguous parts of the stream; returns
/// after an rmi_fence().
template <class Dist>
void random_updates(parray<std::uint64_t, Dist>& table, std::uint64_t n_updates) {
  hold_requests const hold;
  std::uint64_t const mask = detail::random_updates_mask(table, "armi::random_updates");
  location_id const me = get_location_id();
  block_distribution const parts(n_updates, get_num_locations());
  std::uint64_t const count = parts.local_size(me);
  std::uint64_t v = random_updates_stream::at(parts.first(me));
  // This location's own words are applied in batches, the others' sent at
  // once: a word is a cache miss, and a batch of independent XORs lets the
  // processor overlap the misses that one call per update serializes.  XOR
  // commutes, so the table ends the same as update by update.
  constexpr std::size_t batch = 64;
  std::array<std::uint64_t, batch> values;
  std::array<std::size_t, batch> slots;  // local indices
  std::size_t held = 0;
  std::span<std::uint64_t> const mine = table.local();
  // This location's words: a range test where they are one block, else
  // the distribution's locate.
  std::size_t const first = mine.empty() ? 0 : table.distribution().global_index(me, 0);
  auto const local_slot = [&](std::size_t i, std::size_t& slot) {
    if constexpr (std::is_same_v<Dist, block_distribution>) {
      slot = i - first;
      return slot < mine.size();
    } else {
      index_location const at = table.distribution().locate(i);
      slot = at.local;
      return at.location == me;
    }
  };
  auto const apply_held = [&] {
    for (std::size_t k = 0; k < held; ++k) mine[slots[k]] ^= values[k];
    held = 0;
  };
  for (std::uint64_t j = 0; j < count; ++j) {
    v = random_updates_stream::step(v);
    std::size_t const i = static_cast<std::size_t>(v & mask);
    if (std::size_t slot; local_slot(i, slot)) {
      values[held] = v;
      slots[held] = slot;
      if (++held == batch) apply_held();
    } else {
      table.update(i, xor_op{}, v);
    }
    if ((j & 4095) == 4095) rmi_poll();  // serve incoming updates, so queues stay short
  }
  apply_held();
  rmi_fence();
}

/// Collective: applies the same n_updates again and returns the number of
/// words that are not back to table[i] == i (the same on every location).
/// With armi's exact updates it is 0.
template <class Dist>
std::uint64_t random_updates_verify(parray<std::uint64_t, Dist>& table, std::uint64_t n_updates) {
  hold_requests const hold;
  random_updates(table, n_updates);
  detail::random_updates_counter counter;
  auto const me = get_location_id();
  auto const mine = table.local();
  for (std::size_t k = 0; k < mine.size(); ++k)
    if (mine[k] != table.distribution().global_index(me, k)) ++counter.errors;
  return counter.total();
}

}  // namespace armi
