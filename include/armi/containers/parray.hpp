// armi::parray<T, Dist>: a fixed-size distributed array (the ARMI paper's
// pArray).  Element i lives on location distribution().owner(i); each
// location keeps its elements contiguously, reachable through local().
//
//   armi::parray<std::uint64_t> a(1 << 20);      // collective, zeros
//   a.set(i, 7);                                 // async_rmi to the owner
//   a.update(i, armi::xor_op{}, x);              // one async_rmi: a[i] ^= x there
//   std::uint64_t v = a.get(i);                  // sync_rmi to the owner
//   armi::future<std::uint64_t> f = a.get_async(i);
//   armi::rmi_fence();                           // every set/update applied
//
// Element access (get, get_async, set, apply, update) is the shared piece
// detail::element_access: a local element is touched directly (get_async
// then returns a ready future); a remote one costs one RMI to its owner
// (get: sync_rmi; get_async: opaque_rmi; set/apply/update: one aggregated
// async_rmi, applied atomically by the owner).  Requests from one location
// to one owner run in the order issued, so a get after a set of the same
// element from the same location sees the set.  Sets and updates from
// different locations are unordered; rmi_fence() makes them all visible.
// An index >= size() throws std::out_of_range naming the index and the
// size, on the caller, before anything is sent.
//
// Construction and destruction are collective: construction ends with an
// rmi_fence() (every representative exists before the first request reaches
// one), destruction starts with one (requests in flight run first).
//
// Thread safety: a parray representative belongs to its location's thread;
// use it only from there (RMIs reach the others).  Distinct parrays: safe.
//
// Complexity: size(), owner(), local() are O(1) and local.  gather() is
// collective and moves the whole array to every location: for small arrays
// and tests.
#pragma once

#include <armi/containers/detail/element_access.hpp>
#include <armi/containers/detail/gather.hpp>
#include <armi/containers/distribution.hpp>
#include <armi/containers/operations.hpp>
#include <armi/rmi.hpp>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace armi {

namespace detail {

// The distribution a parray of n elements gets when none is given.
template <class Dist>
Dist default_distribution(std::size_t n, location_id p) {
  if constexpr (std::is_constructible_v<Dist, std::size_t, location_id>) {
    return Dist(n, p);
  } else {
    static_assert(std::is_constructible_v<Dist, std::size_t, location_id>,
                  "armi::parray: this distribution needs more than (size, locations) to build; "
                  "construct the parray from a distribution object instead");
    return Dist{};
  }
}

}  // namespace detail

/// A fixed-size distributed array: element i lives on distribution().owner(i).
///
/// Construction and destruction are Collective (each includes an rmi_fence).
/// get / get_async / set / apply / update come from detail::element_access:
/// local elements directly, remote ones by one RMI to the owner.
template <class T, distribution Dist = block_distribution>
class parray : public detail::element_access<parray<T, Dist>, T, std::size_t, std::size_t> {
  static_assert(std::is_copy_constructible_v<T>, "armi::parray: the element type must be copyable");
  static_assert(!std::is_same_v<T, bool>,
                "armi::parray<bool> has no contiguous local part (std::vector<bool>); use std::uint8_t");
  friend class detail::element_access<parray, T, std::size_t, std::size_t>;

 public:
  using value_type = T;            ///< The element type.
  using distribution_type = Dist;  ///< The distribution type.

  /// Collective: n elements, all equal to init, spread by Dist(n, locations).
  explicit parray(std::size_t n, T const& init = T{})
      : parray(detail::default_distribution<Dist>(n, get_num_locations()), init) {}

  /// Collective: the given distribution (the same on every location), which
  /// must cover exactly the current locations (std::invalid_argument if not).
  explicit parray(Dist dist, T const& init = T{}) : m_dist(std::move(dist)) {
    if (m_dist.num_locations() != get_num_locations())
      throw std::invalid_argument("armi::parray: the distribution is for " + std::to_string(m_dist.num_locations()) +
                                  " locations, the program runs " + std::to_string(get_num_locations()));
    m_local.assign(m_dist.local_size(this->here()), init);
    rmi_fence();  // registered everywhere before anyone sends to it
  }

  /// Collective: fences first, so every RMI to this container has run before
  /// any representative goes away (not while an exception unwinds through
  /// it: the other locations may never get here).
  ~parray() override {
    if (std::uncaught_exceptions() == m_uncaught) rmi_fence();
  }

  /// The number of elements.  Local only.
  std::size_t size() const noexcept { return m_dist.size(); }
  /// True when size() is 0.  Local only.
  bool empty() const noexcept { return size() == 0; }
  /// The distribution (the same on every location).  Local only.
  Dist const& distribution() const noexcept { return m_dist; }
  /// The location that owns element i (std::out_of_range if i >= size()).  Local only.
  location_id owner(std::size_t i) const { return this->locate_element("owner", i).location; }

  /// This location's elements, in local order (global index:
  /// distribution().global_index(get_location_id(), k)).  Local only.
  std::span<T> local() noexcept { return m_local; }
  /// This location's elements, read-only.  Local only.
  std::span<T const> local() const noexcept { return m_local; }

  /// Collective: the whole array, in index order, on every location.
  /// Moves size() elements to every location; for small arrays and checks.
  std::vector<T> gather() const { return detail::gather_indexed(m_dist, std::span<T const>(m_local)); }

 private:
  detail::element_location<std::size_t> locate_element(char const* method, std::size_t i) const {
    return detail::locate_index(m_dist, "armi::parray", method, i);
  }
  T& local_element(char const* method, std::size_t k) { return detail::local_slot(m_local, "armi::parray", method, k); }
  T const& local_element(char const* method, std::size_t k) const {
    return detail::local_slot(m_local, "armi::parray", method, k);
  }

  int m_uncaught = std::uncaught_exceptions();  // at construction: is the destructor part of an unwinding?
  Dist m_dist;
  std::vector<T> m_local;
};

}  // namespace armi
