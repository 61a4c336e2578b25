// armi::punordered_map<K, V, Hash>: a distributed hash map (STAPL's p_map,
// YGM's map).  Key k lives on owner(k), computed from Hash anywhere without
// communication (detail::keyed_container); each location keeps its keys in
// a node_hash_map (std::unordered_map's interface and reference stability
// in an open-addressing table), reachable through local().
//
//   armi::punordered_map<std::string, std::size_t> counts;   // collective
//   counts.update(word, armi::plus_op{}, 1);   // one async_rmi: counts[word] += 1 there
//   counts.insert(k, v);                       // the first value for k wins
//   std::optional<std::size_t> n = counts.get(word);   // sync_rmi to the owner
//   std::size_t keys = counts.size();          // collective; fences first
//
// Every operation on a key runs whole at its owner, so update, visit and
// insert are atomic there.  A key this location owns is served directly
// (get_async then returns a ready future); any other costs one RMI to the
// owner: insert, insert_or_assign, update, visit and erase one aggregated
// async_rmi each, get a sync_rmi, get_async an opaque_rmi.  Requests from one
// location to one owner run in the order issued, so a get after an insert of
// the same key from the same location sees it; operations from different
// locations on one key run in some order, and rmi_fence() makes them all
// visible.
//
// Construction and destruction are collective and fence, like every
// pContainer's.  size(), clear() and gather() are collective and fence
// first.  Thread safety: use a representative from its location's thread.
//
// K and V travel by RMI (strings, standard containers and define_type types
// included); V must be default-constructible for update and visit, which
// start a missing key from V{}.
#pragma once

#include <armi/containers/detail/keyed_container.hpp>
#include <armi/containers/node_hash_map.hpp>
#include <armi/containers/operations.hpp>
#include <armi/future.hpp>
#include <armi/hold_requests.hpp>
#include <armi/rmi.hpp>

#include <functional>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <utility>

namespace armi {

/// A distributed hash map: key k lives on owner(k); see the header comment.
///
/// Construction, destruction, size, clear and gather are Collective.
template <class K, class V, class Hash = std::hash<K>>
class punordered_map
    : public detail::keyed_container<K, Hash, node_hash_map<K, V, Hash>, std::unordered_map<K, V, Hash>> {
  using base = detail::keyed_container<K, Hash, node_hash_map<K, V, Hash>, std::unordered_map<K, V, Hash>>;

 public:
  using mapped_type = V;  ///< The value type.

  /// Collective: an empty map.  hash must be the same on every location.
  explicit punordered_map(Hash hash = Hash{}) : base(std::move(hash)) {
    rmi_fence();  // registered everywhere before anyone sends to it
  }

  /// Collective: fences first, so every request to the map has run (not
  /// while an exception unwinds through it).
  ~punordered_map() override {
    if (!this->unwinding()) rmi_fence();
  }

  /// Adds k with value v if k is absent (the first value for a key wins);
  /// fire-and-forget.
  void insert(K const& k, V const& v) {
    hold_requests const hold;
    location_id const at = this->owner(k);
    if (at == this->here())
      serve_insert(k, v);
    else
      async_rmi(at, this->get_rmi_handle(), armi::method<&punordered_map::serve_insert>, k, v);
  }

  /// Sets k's value to v, adding k if absent; fire-and-forget.
  void insert_or_assign(K const& k, V const& v) {
    hold_requests const hold;
    location_id const at = this->owner(k);
    if (at == this->here())
      serve_assign(k, v);
    else
      async_rmi(at, this->get_rmi_handle(), armi::method<&punordered_map::serve_assign>, k, v);
  }

  /// value = Op{}(value, x) at k's owner, a missing key starting from V{};
  /// fire-and-forget.  Op travels as a type (plus_op, min_op, ...).
  template <class Op>
  void update(K const& k, Op const&, V const& x) {
    hold_requests const hold;
    static_assert(std::is_default_constructible_v<Op>,
                  "armi::punordered_map::update: the operation must be a default-constructible function object "
                  "type (it travels as a type, not as data); use armi::plus_op, min_op, ... or your own");
    static_assert(std::is_convertible_v<std::invoke_result_t<Op&, V const&, V const&>, V>,
                  "armi::punordered_map::update: Op{}(V, V) must return something convertible to V");
    location_id const at = this->owner(k);
    if (at == this->here())
      serve_update<Op>(k, x);
    else
      async_rmi(at, this->get_rmi_handle(), armi::method<&punordered_map::template serve_update<Op>>, k, x);
  }

  /// Runs F{}(key, value, args...) at k's owner (value a V&, V{} if k was
  /// absent); fire-and-forget.  F is a stateless function object type or a
  /// captureless lambda; args travel by value.
  template <class F, class... A>
  void visit(K const& k, F const&, A const&... args) {
    hold_requests const hold;
    check_visitor<F, A...>();
    location_id const at = this->owner(k);
    if (at == this->here())
      serve_visit<F, A...>(k, args...);
    else
      async_rmi(at, this->get_rmi_handle(), armi::method<&punordered_map::template serve_visit<F, A...>>, k,
                args...);
  }

  /// Like visit, but only when k is present: an absent key is not added.
  template <class F, class... A>
  void visit_if_contains(K const& k, F const&, A const&... args) {
    hold_requests const hold;
    check_visitor<F, A...>();
    location_id const at = this->owner(k);
    if (at == this->here())
      serve_visit_if_contains<F, A...>(k, args...);
    else
      async_rmi(at, this->get_rmi_handle(),
                armi::method<&punordered_map::template serve_visit_if_contains<F, A...>>, k, args...);
  }

  /// k's value, or nothing if absent; blocks for one sync_rmi unless this
  /// location owns k.
  std::optional<V> get(K const& k) const {
    hold_requests const hold;
    location_id const at = this->owner(k);
    if (at == this->here()) return serve_get(k);
    return sync_rmi(at, this->get_rmi_handle(), armi::method<&punordered_map::serve_get>, k);
  }

  /// k's value later: a future, ready at once when this location owns k,
  /// else answered by one opaque_rmi.
  future<std::optional<V>> get_async(K const& k) const {
    hold_requests const hold;
    location_id const at = this->owner(k);
    if (at == this->here()) return detail::ready_future(serve_get(k), "punordered_map::get_async");
    return opaque_rmi(at, this->get_rmi_handle(), armi::method<&punordered_map::serve_get>, k);
  }

 private:
  template <class F, class... A>
  static constexpr void check_visitor() {
    static_assert(std::is_empty_v<F> && std::is_default_constructible_v<F>,
                  "armi::punordered_map::visit: the function must be stateless (a captureless lambda or an empty "
                  "function object type); pass what it needs as arguments");
    static_assert(std::is_invocable_v<F&, K const&, V&, A const&...>,
                  "armi::punordered_map::visit: the function must be callable as f(key, value, args...)");
  }

  // The owner's side of each operation (RMI targets, and the direct path).
  void serve_insert(K const& k, V const& v) { this->local().try_emplace(k, v); }
  void serve_assign(K const& k, V const& v) { this->local().insert_or_assign(k, v); }
  template <class Op>
  void serve_update(K const& k, V const& x) {
    V& value = this->local()[k];
    value = static_cast<V>(Op{}(static_cast<V const&>(value), x));
  }
  template <class F, class... A>
  void serve_visit(K const& k, A const&... args) {
    F{}(k, this->local()[k], args...);
  }
  template <class F, class... A>
  void serve_visit_if_contains(K const& k, A const&... args) {
    auto it = this->local().find(k);
    if (it != this->local().end()) F{}(it->first, it->second, args...);
  }
  std::optional<V> serve_get(K const& k) const {
    auto it = this->local().find(k);
    if (it == this->local().end()) return std::nullopt;
    return it->second;
  }
};

}  // namespace armi
