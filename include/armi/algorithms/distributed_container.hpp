// The one concept armi's generic pAlgorithms ask of a container: the shared
// container conventions (docs/design.md, containers) reduced to what algorithms
// use.  A distributed_container C is a p_object with
//
//   c.distribution()   an armi::distribution (the same on every location)
//   c.local()          this location's elements as a random-access range
//                      (std::span for pvector and parray), in the order of
//                      their global indices distribution().global_index(me, k)
//   c.size()           the global size
//
// The algorithms work on local() and talk to other locations only about
// what crosses location boundaries (the pRange idea of the STAPL papers,
// kept small).  They need a container whose local part matches its
// distribution (local().size() == distribution().local_size(me)); a pvector
// with push_backs not yet made global by update_distribution() is refused
// with std::logic_error.
//
// Thread safety: the algorithms are collective (every location calls them,
// in the same order as its other collectives) and touch only the calling
// location's representative.
#pragma once

#include <armi/containers/distribution.hpp>
#include <armi/p_object.hpp>
#include <armi/rmi.hpp>

#include <concepts>
#include <cstddef>
#include <iterator>
#include <ranges>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace armi {

/// A p_object with distribution(), local() (a random-access range, in the
/// order of global_index(me, k)) and size(): what the generic algorithms need.
template <class C>
concept distributed_container = std::derived_from<std::remove_cvref_t<C>, p_object> &&
    requires(C& c) {
  { c.local() } -> std::ranges::random_access_range;
  { c.size() } -> std::convertible_to<std::size_t>;
  c.distribution();
} && distribution<std::remove_cvref_t<decltype(std::declval<C&>().distribution())>>;

/// The element type of a container's local part.
template <distributed_container C>
using container_value_t = std::ranges::range_value_t<decltype(std::declval<C&>().local())>;

namespace detail {

// Throws unless c's local part is the one its distribution describes.
template <class C>
void check_consistent(C const& c, char const* who) {
  location_id const me = get_location_id();
  std::size_t const local = static_cast<std::size_t>(std::ranges::size(c.local()));
  std::size_t const expected = c.distribution().local_size(me);
  if (local != expected)
    throw std::logic_error(std::string(who) + ": location " + std::to_string(me) + " holds " +
                           std::to_string(local) + " elements but its distribution says " +
                           std::to_string(expected) +
                           " (after push_back, call update_distribution() first)");
}

}  // namespace detail

}  // namespace armi
