// detail::element_access: the element-access piece shared by pvector,
// parray and pmatrix (after YGM's container/detail/base_*.hpp): a CRTP base
// that gives a container get / get_async / set / apply / update by global
// index, given a Derived that locates elements and reaches its local ones:
//
//   element_location<Key> locate_element(char const* method, Index... i) const;
//       owner and slot of element i; std::out_of_range (naming the
//       container, the method, the index and the size) if i is out of range
//   T& local_element(char const* method, Key k);   (and a const overload)
//       slot k on this location; std::out_of_range if there is none
//
// Index... is the global index (std::size_t, or row and column); Key the
// slot an owner is asked about, which travels with the request.  Derived
// befriends element_access when those two are private.
//
// An element on this location is read or written directly (get_async then
// returns a ready future); any other costs one RMI to its owner: get a
// sync_rmi, get_async an opaque_rmi, set/apply/update one aggregated
// async_rmi.  The owner runs each request whole, so apply and update are
// atomic read-modify-writes.  Requests from one location to one owner run in
// the order issued; rmi_fence() makes every set/apply/update visible.
// The RMI targets are the private serve_* members.
#pragma once

#include <armi/containers/detail/element_location.hpp>
#include <armi/future.hpp>
#include <armi/hold_requests.hpp>
#include <armi/p_object.hpp>
#include <armi/rmi.hpp>

#include <type_traits>
#include <utility>

namespace armi::detail {

template <class Derived, class T, class Key, class... Index>
class element_access : public p_object {
 public:
  /// Reads element (index); blocks for one sync_rmi unless this location owns it.
  T get(Index... i) const {
    hold_requests const hold;
    element_location<Key> const at = self().locate_element("get", i...);
    if (at.location == m_here) return self().local_element("get", at.key);
    return sync_rmi(at.location, get_rmi_handle(), armi::method<&element_access::serve_get>, at.key);
  }

  /// Reads element (index) later: returns a future, ready at once when this
  /// location owns the element, else answered by one opaque_rmi.
  future<T> get_async(Index... i) const {
    hold_requests const hold;
    element_location<Key> const at = self().locate_element("get_async", i...);
    if (at.location == m_here) return ready_future<T>(self().local_element("get_async", at.key), "get_async");
    return opaque_rmi(at.location, get_rmi_handle(), armi::method<&element_access::serve_get>, at.key);
  }

  /// Writes x to element (index); fire-and-forget (one async_rmi unless local).
  void set(Index... i, T const& x) {
    hold_requests const hold;
    element_location<Key> const at = self().locate_element("set", i...);
    if (at.location == m_here)
      self().local_element("set", at.key) = x;
    else
      async_rmi(at.location, get_rmi_handle(), armi::method<&element_access::serve_set>, at.key, x);
  }

  /// Runs F{}(element, args...) at the element's owner; fire-and-forget.
  /// F is a stateless function object type or captureless lambda (the owner
  /// runs its own default-constructed copy); args travel by value.
  template <class F, class... A>
  void apply(Index... i, F const&, A const&... args) {
    hold_requests const hold;
    static_assert(std::is_empty_v<F> && std::is_default_constructible_v<F>,
                  "armi: apply's function must be stateless (a captureless lambda or an empty function object "
                  "type); pass what it needs as arguments");
    element_location<Key> const at = self().locate_element("apply", i...);
    if (at.location == m_here)
      F{}(self().local_element("apply", at.key), args...);
    else
      async_rmi(at.location, get_rmi_handle(), armi::method<&element_access::template serve_apply<F, A...>>,
                at.key, args...);
  }

  /// Element = Op{}(element, x) at the owner; fire-and-forget.  Op travels
  /// as a type: a default-constructible function object (plus_op, xor_op,
  /// min_op, max_op, std::plus<>, ...).
  template <class Op>
  void update(Index... i, Op const&, T const& x) {
    hold_requests const hold;
    static_assert(std::is_default_constructible_v<Op>,
                  "armi: update's operation must be a default-constructible function object type (it travels as "
                  "a type, not as data); use armi::plus_op, xor_op, min_op, max_op or your own stateless functor");
    static_assert(std::is_convertible_v<std::invoke_result_t<Op&, T const&, T const&>, T>,
                  "armi: update's Op{}(T, T) must return something convertible to T");
    element_location<Key> const at = self().locate_element("update", i...);
    if (at.location == m_here)
      combine<Op>(self().local_element("update", at.key), x);
    else
      async_rmi(at.location, get_rmi_handle(), armi::method<&element_access::template serve_update<Op>>, at.key,
                x);
  }

 protected:
  element_access() = default;
  ~element_access() override = default;

  /// This location's id, kept at construction.
  location_id here() const noexcept { return m_here; }

 private:
  Derived& self() noexcept { return static_cast<Derived&>(*this); }
  Derived const& self() const noexcept { return static_cast<Derived const&>(*this); }

  template <class Op>
  static void combine(T& element, T const& x) {
    element = static_cast<T>(Op{}(static_cast<T const&>(element), x));
  }

  // RMI targets: they re-check the slot they are given.
  T serve_get(Key k) const { return self().local_element("get", k); }
  void serve_set(Key k, T const& x) { self().local_element("set", k) = x; }
  template <class F, class... A>
  void serve_apply(Key k, A const&... args) {
    F{}(self().local_element("apply", k), args...);
  }
  template <class Op>
  void serve_update(Key k, T const& x) {
    combine<Op>(self().local_element("update", k), x);
  }

  location_id m_here = get_location_id();
};

}  // namespace armi::detail
