// armi::punordered_set<K, Hash>: a distributed hash set (STAPL's p_set,
// YGM's set).  Key k lives on owner(k), computed from Hash anywhere without
// communication (detail::keyed_container); each location keeps its keys in
// a node_hash_set (std::unordered_set's interface in an open-addressing
// table), reachable through local().
//
//   armi::punordered_set<std::uint64_t> seen;   // collective
//   seen.insert(x);                             // one aggregated async_rmi (or local)
//   bool b = seen.contains(x);                  // sync_rmi to the owner (or local)
//   std::size_t n = seen.size();                // collective; fences first
//
// Costs and order as punordered_map's: insert and erase one aggregated
// async_rmi unless local, contains a sync_rmi, contains_async an
// opaque_rmi; requests from one location to one owner run in the order
// issued; rmi_fence() makes every insert and erase visible.  Construction,
// destruction, size, clear and gather are collective and fence.
#pragma once

#include <armi/containers/detail/keyed_container.hpp>
#include <armi/containers/node_hash_set.hpp>
#include <armi/future.hpp>
#include <armi/hold_requests.hpp>
#include <armi/rmi.hpp>

#include <functional>
#include <unordered_set>
#include <utility>

namespace armi {

/// A distributed hash set: key k lives on owner(k); see the header comment.
///
/// Construction, destruction, size, clear and gather are Collective.
template <class K, class Hash = std::hash<K>>
class punordered_set
    : public detail::keyed_container<K, Hash, node_hash_set<K, Hash>, std::unordered_set<K, Hash>> {
  using base = detail::keyed_container<K, Hash, node_hash_set<K, Hash>, std::unordered_set<K, Hash>>;

 public:
  /// Collective: an empty set.  hash must be the same on every location.
  explicit punordered_set(Hash hash = Hash{}) : base(std::move(hash)) {
    rmi_fence();  // registered everywhere before anyone sends to it
  }

  /// Collective: fences first, so every request to the set has run (not
  /// while an exception unwinds through it).
  ~punordered_set() override {
    if (!this->unwinding()) rmi_fence();
  }

  /// Adds k (nothing if present); fire-and-forget.
  void insert(K const& k) {
    hold_requests const hold;
    location_id const at = this->owner(k);
    if (at == this->here())
      serve_insert(k);
    else
      async_rmi(at, this->get_rmi_handle(), armi::method<&punordered_set::serve_insert>, k);
  }

  /// Whether k is in the set; blocks for one sync_rmi unless this location owns k.
  bool contains(K const& k) const {
    hold_requests const hold;
    location_id const at = this->owner(k);
    if (at == this->here()) return serve_contains(k);
    return sync_rmi(at, this->get_rmi_handle(), armi::method<&punordered_set::serve_contains>, k);
  }

  /// Whether k is in the set, later: a future, ready at once when this
  /// location owns k, else answered by one opaque_rmi.
  future<bool> contains_async(K const& k) const {
    hold_requests const hold;
    location_id const at = this->owner(k);
    if (at == this->here()) return detail::ready_future(serve_contains(k), "punordered_set::contains_async");
    return opaque_rmi(at, this->get_rmi_handle(), armi::method<&punordered_set::serve_contains>, k);
  }

 private:
  void serve_insert(K const& k) { this->local().insert(k); }
  bool serve_contains(K const& k) const { return this->local().contains(k); }
};

}  // namespace armi
