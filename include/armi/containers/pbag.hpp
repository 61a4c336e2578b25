// armi::pbag<T>: a distributed bag (YGM's bag): an unordered collection
// whose elements the container places, evenly, where it likes.  Work lists
// and edge lists that will be processed where they land are bags.
//
//   armi::pbag<edge> edges;             // collective
//   edges.push(e);                      // to the next location in turn
//   armi::rmi_fence();
//   for (edge const& x : edges.local()) ...   // this location's share
//
// The i-th push of location l goes to location (l + i) mod P: every
// location's pushes spread over all locations in turn, so each location
// holds its share of every pusher's elements (within one element per
// pusher).  A push to another location is one aggregated async_rmi; one to
// itself is a plain append.  rmi_fence() makes every push visible.
//
// Construction and destruction are collective and fence; size(), clear()
// and gather() are collective and fence first.  Thread safety: use a
// representative from its location's thread.
#pragma once

#include <armi/containers/collective.hpp>
#include <armi/hold_requests.hpp>
#include <armi/p_object.hpp>
#include <armi/rmi.hpp>

#include <cstddef>
#include <exception>
#include <functional>
#include <iterator>
#include <type_traits>
#include <vector>

namespace armi {

/// A distributed bag: elements spread evenly over the locations; see the header comment.
///
/// Construction, destruction, size, clear and gather are Collective.
template <class T>
class pbag : public p_object {
  static_assert(std::is_copy_constructible_v<T>, "armi::pbag: the element type must be copyable");

 public:
  using value_type = T;  ///< The element type.

  /// Collective: an empty bag.
  pbag() {
    rmi_fence();  // registered everywhere before anyone sends to it
  }

  /// Collective: fences first, so every push has landed (not while an
  /// exception unwinds through it).
  ~pbag() override {
    if (std::uncaught_exceptions() == m_uncaught) rmi_fence();
  }

  /// Adds x on the next location in this location's turn; fire-and-forget.
  void push(T const& x) {
    hold_requests const hold;
    location_id const at = m_next;
    m_next = m_next + 1 == m_locations ? 0 : m_next + 1;
    if (at == m_here)
      m_local.push_back(x);
    else
      async_rmi(at, get_rmi_handle(), armi::method<&pbag::serve_push>, x);
  }

  /// The elements on this location.  Local only; pushes from others land
  /// whenever the location is inside an armi call.
  std::vector<T>& local() noexcept { return m_local; }
  /// The elements on this location, read-only.  Local only.
  std::vector<T> const& local() const noexcept { return m_local; }

  /// Collective: the number of elements on all locations.  Fences first.
  std::size_t size() const {
    hold_requests const hold;
    rmi_fence();
    return detail::allreduce_value(m_local.size(), std::plus<>{});
  }

  /// Collective: empties the bag.  Fences first and last.
  void clear() {
    hold_requests const hold;
    rmi_fence();
    m_local.clear();
    rmi_fence();
  }

  /// Collective: every element, location 0's first, on every location.
  /// Fences first.  For small bags, tests and output.
  std::vector<T> gather() const {
    hold_requests const hold;
    rmi_fence();
    std::vector<std::vector<T>> parts = detail::allgather_value(m_local);
    std::vector<T> all;
    for (std::vector<T>& part : parts) all.insert(all.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    return all;
  }

 private:
  void serve_push(T const& x) { m_local.push_back(x); }

  int m_uncaught = std::uncaught_exceptions();  // at construction: is the destructor part of an unwinding?
  location_id m_here = get_location_id();
  location_id m_locations = get_num_locations();
  location_id m_next = m_here;  // where the next push goes
  std::vector<T> m_local;
};

}  // namespace armi
