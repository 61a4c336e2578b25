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
// Semantics.  Construction is collective (every location constructs its
// parrays in the same order, with the same size and distribution) and ends
// with an rmi_fence(), so every representative exists before the first
// request reaches one.  Destruction is collective too and starts with an
// rmi_fence(), so requests in flight to it run first.  A
// method on an index this location owns touches local memory directly and
// sends nothing; otherwise:
//   get(i)           one sync_rmi round trip;
//   get_async(i)     one opaque_rmi (always, also for a local index, so the
//                    future is served in order with this location's other
//                    requests to itself);
//   set(i, x)        one async_rmi, aggregated with other requests to the owner;
//   update(i, op, x) one async_rmi carrying i and x: the owner runs
//                    a[i] = op(a[i], x).  The operation travels as a type, not
//                    as data: update is instantiated per Op, which must be
//                    default-constructible (plus_op, xor_op, min_op, max_op,
//                    std::plus<>, std::bit_xor<>, or your own functor type).
//                    A location runs one request at a time, so every update is
//                    atomic: concurrent updates to one element never lose one.
// Requests from one location to one owner run in the order issued, so a get
// after a set of the same element from the same location sees the set.  Sets
// and updates from different locations are unordered; rmi_fence() makes
// them all visible.  An index >= size() throws std::out_of_range naming the
// index and the size, on the caller, before anything is sent.
//
// Thread safety: a parray representative belongs to its location's thread;
// use it only from there (RMIs reach the others).  Distinct parrays: safe.
//
// Complexity: size(), owner(), local() are O(1) and local.  gather() is
// collective and moves the whole array to every location: for small arrays
// and tests.
#pragma once

#include <armi/containers/collective.hpp>
#include <armi/containers/distribution.hpp>
#include <armi/future.hpp>
#include <armi/p_object.hpp>
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

// The named binary operations of parray::update (and of any algorithm that
// takes an operation type).  Each is stateless and default-constructible.
struct plus_op {
  template <class T>
  T operator()(T const& a, T const& b) const {
    return a + b;
  }
};
struct xor_op {
  template <class T>
  T operator()(T const& a, T const& b) const {
    return a ^ b;
  }
};
struct min_op {
  template <class T>
  T operator()(T const& a, T const& b) const {
    return b < a ? b : a;
  }
};
struct max_op {
  template <class T>
  T operator()(T const& a, T const& b) const {
    return a < b ? b : a;
  }
};

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

template <class T, distribution Dist = block_distribution>
class parray : public p_object {
  static_assert(std::is_copy_constructible_v<T>, "armi::parray: the element type must be copyable");
  static_assert(!std::is_same_v<T, bool>,
                "armi::parray<bool> has no contiguous local part (std::vector<bool>); use std::uint8_t");

 public:
  using value_type = T;
  using distribution_type = Dist;

  // Collective: n elements, all equal to init, spread by Dist(n, locations).
  explicit parray(std::size_t n, T const& init = T{})
      : parray(detail::default_distribution<Dist>(n, get_num_locations()), init) {}

  // Collective: the given distribution (the same on every location), which
  // must cover exactly the current locations.
  explicit parray(Dist dist, T const& init = T{}) : m_dist(std::move(dist)), m_me(get_location_id()) {
    if (m_dist.num_locations() != get_num_locations())
      throw std::invalid_argument("armi::parray: the distribution is for " + std::to_string(m_dist.num_locations()) +
                                  " locations, the program runs " + std::to_string(get_num_locations()));
    m_local.assign(m_dist.local_size(m_me), init);
    rmi_fence();  // registered everywhere before anyone sends to it
  }

  // Collective, like construction: fences first, so every RMI to this
  // container has run before any representative goes away.  (Not while an
  // exception unwinds through it: the other locations may never get here.)
  ~parray() override {
    if (std::uncaught_exceptions() == m_uncaught) rmi_fence();
  }

  std::size_t size() const noexcept { return m_dist.size(); }
  bool empty() const noexcept { return size() == 0; }
  Dist const& distribution() const noexcept { return m_dist; }
  location_id owner(std::size_t i) const { return m_dist.owner(i); }

  // This location's elements, in local order (global index:
  // distribution().global_index(get_location_id(), k)).
  std::span<T> local() noexcept { return m_local; }
  std::span<T const> local() const noexcept { return m_local; }

  // The value of element i (a sync_rmi unless this location owns it).
  T get(std::size_t i) const {
    index_location const at = m_dist.locate(i);
    if (at.location == m_me) return m_local[at.local];
    return sync_rmi(at.location, get_rmi_handle(), armi::method<&parray::serve_get>, at.local);
  }

  // The value of element i, later.  One opaque_rmi.
  future<T> get_async(std::size_t i) const {
    index_location const at = m_dist.locate(i);
    return opaque_rmi(at.location, get_rmi_handle(), armi::method<&parray::serve_get>, at.local);
  }

  // Element i becomes x (an async_rmi unless this location owns it).
  void set(std::size_t i, T const& x) {
    index_location const at = m_dist.locate(i);
    if (at.location == m_me)
      m_local[at.local] = x;
    else
      async_rmi(at.location, get_rmi_handle(), armi::method<&parray::serve_set>, at.local, x);
  }

  // Element i becomes Op{}(element, x), applied at the owner: one async_rmi
  // (none if this location owns i).
  template <class Op>
  void update(std::size_t i, Op, T const& x) {
    static_assert(std::is_default_constructible_v<Op>,
                  "armi::parray::update: the operation must be a default-constructible function object type "
                  "(it travels as a type, not as data); use armi::plus_op, xor_op, min_op, max_op or your own "
                  "stateless functor");
    static_assert(std::is_convertible_v<std::invoke_result_t<Op&, T const&, T const&>, T>,
                  "armi::parray::update: Op{}(T, T) must return something convertible to T");
    index_location const at = m_dist.locate(i);
    if (at.location == m_me)
      apply<Op>(at.local, x);
    else
      async_rmi(at.location, get_rmi_handle(), armi::method<&parray::template serve_update<Op>>, at.local, x);
  }

  // Collective: the whole array, in index order, on every location.
  // Moves size() elements to every location; for small arrays and checks.
  std::vector<T> gather() const {
    std::vector<std::vector<T>> const parts = detail::allgather_value(m_local);
    std::vector<T> out;
    out.reserve(size());
    for (std::size_t i = 0; i < size(); ++i) {
      index_location const at = m_dist.locate(i);
      out.push_back(parts[at.location][at.local]);
    }
    return out;
  }

 private:
  int m_uncaught = std::uncaught_exceptions();  // at construction: is the destructor part of an unwinding?
  // The request targets (owner side), addressed by local index.
  T serve_get(std::size_t k) const { return m_local.at(k); }
  void serve_set(std::size_t k, T x) { m_local.at(k) = std::move(x); }
  template <class Op>
  void serve_update(std::size_t k, T x) {
    if (k >= m_local.size()) detail::index_out_of_range("armi::parray::update (local)", k, m_local.size());
    apply<Op>(k, x);
  }
  template <class Op>
  void apply(std::size_t k, T const& x) {
    m_local[k] = static_cast<T>(Op{}(static_cast<T const&>(m_local[k]), x));
  }

  Dist m_dist;
  location_id m_me;
  std::vector<T> m_local;
};

}  // namespace armi
