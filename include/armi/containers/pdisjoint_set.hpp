// armi::pdisjoint_set<T, Hash>: a distributed union-find (YGM's
// disjoint_set): unite(a, b) merges the sets of a and b, find(a) names a's
// set by its representative.  Connected components of a graph are one
// unite per edge.
//
//   armi::pdisjoint_set<std::uint64_t> sets;   // collective
//   sets.unite(u, v);                          // asynchronous, aggregated
//   std::size_t n = sets.num_sets();           // collective; fences first
//   std::uint64_t r = sets.find(u);            // u's representative
//
// Each element's parent lives at the element's owner (hashed as in
// punordered_map).  Union by rank: a root links under the root of greater
// (rank, element) — ranks first, ties broken by T's operator< — and the
// rank of a root that takes one of equal rank grows by one.  Every link and
// every compression keeps "(rank, element) grows strictly from an element
// to its parent", so the parents never form a cycle however requests from
// different locations interleave.
//
// unite(a, b) is a chain of aggregated async_rmis: from a up to its root,
// then from b up to its root, then back and forth between the two sides
// until one root, read at its own owner, is below the other side's root
// (whose rank travels with the request: ranks only grow, so it is a lower
// bound).  Each step runs whole at one owner; a step that climbs through a
// parent on the same location halves the path there (the element then
// points at its grandparent).  The chain ends because the root it carries
// only grows.  Elements are added on first mention (unite or insert).
//
// find(a) climbs by sync_rmi (one per step off this location) and then
// compresses the path: every element it passed points at the root.  Its
// answer is a's representative when it read it; after rmi_fence(), with no
// unite in flight, every find of one set gives the same element.
// compress() (collective) makes every element point at its root by pointer
// jumping, O(log depth) rounds of one opaque_rmi per element whose parent
// lives elsewhere; representatives() and gather() build on it.
//
// Construction and destruction are collective and fence; num_sets, size,
// compress, representatives and gather are collective and fence first.
// T travels by RMI, is hashable by Hash and ordered by operator<.
#pragma once

#include <armi/containers/collective.hpp>
#include <armi/containers/detail/key_owner.hpp>
#include <armi/containers/node_hash_map.hpp>
#include <armi/future.hpp>
#include <armi/hold_requests.hpp>
#include <armi/p_object.hpp>
#include <armi/rmi.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace armi {

/// A distributed union-find over elements of type T; see the header comment.
///
/// Construction, destruction, num_sets, size, compress, representatives and
/// gather are Collective.
template <class T, class Hash = std::hash<T>>
class pdisjoint_set : public p_object {
  static_assert(std::totally_ordered<T>, "armi::pdisjoint_set: the element type needs operator< (it breaks rank ties)");

 public:
  using value_type = T;  ///< The element type.

  /// Collective: an empty structure.  hash must be the same on every location.
  explicit pdisjoint_set(Hash hash = Hash{}) : m_hash(std::move(hash)), m_nodes(m_hash) {
    rmi_fence();  // registered everywhere before anyone sends to it
  }

  /// Collective: fences first, so every unite has finished (not while an
  /// exception unwinds through it).
  ~pdisjoint_set() override {
    if (std::uncaught_exceptions() == m_uncaught) rmi_fence();
  }

  /// The location that keeps a's parent.  Local only.
  location_id owner(T const& a) const {
    return detail::key_owner(static_cast<std::uint64_t>(m_hash(a)), m_locations);
  }

  /// Adds a as a set of its own, if it is new; fire-and-forget.
  void insert(T const& a) {
    hold_requests const hold;
    location_id const at = owner(a);
    if (at == m_here)
      node_of(a);
    else
      async_rmi(at, get_rmi_handle(), armi::method<&pdisjoint_set::serve_insert>, a);
  }

  /// Merges the sets of a and b (adding either if new); fire-and-forget.
  /// Done everywhere after the next rmi_fence().
  void unite(T const& a, T const& b) {
    hold_requests const hold;
    if (a == b) return insert(a);
    seek(a, b, unvisited);
  }

  /// a's representative (a itself if a was never added).  Blocks for one
  /// sync_rmi per step of a's path that leaves this location, then sends one
  /// async_rmi per element passed to point it at the root.
  T find(T const& a) {
    hold_requests const hold;
    std::vector<T> path;
    T x = a;
    for (;;) {
      location_id const at = owner(x);
      T parent = at == m_here ? serve_parent(x)
                              : sync_rmi(at, get_rmi_handle(), armi::method<&pdisjoint_set::serve_parent>, x);
      if (parent == x) break;
      path.push_back(std::move(x));
      x = std::move(parent);
    }
    if (!path.empty()) path.pop_back();  // already points at the root
    for (T const& y : path) {
      location_id const at = owner(y);
      if (at == m_here)
        serve_set_parent(y, x);
      else
        async_rmi(at, get_rmi_handle(), armi::method<&pdisjoint_set::serve_set_parent>, y, x);
    }
    return x;
  }

  /// Collective: the number of sets.  Fences first.
  std::size_t num_sets() const {
    hold_requests const hold;
    rmi_fence();
    std::size_t roots = 0;
    for (auto const& [x, n] : m_nodes) roots += n.parent == x ? 1 : 0;
    return detail::allreduce_value(roots, std::plus<>{});
  }

  /// Collective: the number of elements.  Fences first.
  std::size_t size() const {
    hold_requests const hold;
    rmi_fence();
    return detail::allreduce_value(m_nodes.size(), std::plus<>{});
  }

  /// Collective: afterwards every element's parent is its root.  Fences
  /// first; no location may unite while it runs.
  void compress() {
    hold_requests const hold;
    rmi_fence();
    for (;;) {
      std::size_t moved = 0;
      std::vector<std::pair<node*, future<T>>> asked;
      for (auto& [x, n] : m_nodes) {
        if (n.parent == x) continue;
        location_id const at = owner(n.parent);
        if (at != m_here) {
          asked.emplace_back(&n, opaque_rmi(at, get_rmi_handle(), armi::method<&pdisjoint_set::serve_parent>,
                                            n.parent));
          continue;
        }
        T grandparent = serve_parent(n.parent);
        if (grandparent != n.parent) {
          n.parent = std::move(grandparent);
          ++moved;
        }
      }
      for (auto& [n, parent_of_parent] : asked) {
        T grandparent = parent_of_parent.get();  // nodes stay put: serving adds no element
        if (grandparent != n->parent) {
          n->parent = std::move(grandparent);
          ++moved;
        }
      }
      if (detail::allreduce_value(moved, std::plus<>{}) == 0) return;
    }
  }

  /// Collective: each element this location keeps, with its representative.
  std::unordered_map<T, T, Hash> representatives() {
    hold_requests const hold;
    compress();
    std::unordered_map<T, T, Hash> out(m_nodes.size(), m_hash);
    for (auto const& [x, n] : m_nodes) out.emplace(x, n.parent);
    return out;
  }

  /// Collective: every element with its representative, on every location.
  /// Moves every element to every location: for small structures, tests and output.
  std::unordered_map<T, T, Hash> gather() {
    hold_requests const hold;
    std::vector<std::unordered_map<T, T, Hash>> parts = detail::allgather_value(representatives());
    std::unordered_map<T, T, Hash> all(0, m_hash);
    for (auto& part : parts) all.merge(part);
    return all;
  }

 private:
  // A rank no root has: "the other side has not been visited yet".
  static constexpr std::uint32_t unvisited = ~std::uint32_t{0};

  struct node {
    T parent;
    std::uint32_t rank = 0;
  };

  // Whether (rank a, a) is below (rank b, b): the order links follow.
  static bool below(std::uint32_t rank_a, T const& a, std::uint32_t rank_b, T const& b) {
    return rank_a < rank_b || (rank_a == rank_b && a < b);
  }

  node& node_of(T const& x) { return m_nodes.try_emplace(x, node{x, 0}).first->second; }

  // One step of a unite, at x's owner: climb from x to a root while the
  // path stays here, then link it under `other` or carry it to other's side.
  // other_rank is a lower bound of other's rank, or unvisited.
  void seek(T x, T other, std::uint32_t other_rank) {
    for (;;) {
      location_id const at = owner(x);
      if (at != m_here) {
        async_rmi(at, get_rmi_handle(), armi::method<&pdisjoint_set::serve_seek>, x, other, other_rank);
        return;
      }
      node& n = node_of(x);
      if (!(n.parent == x)) {
        T const parent = n.parent;
        if (owner(parent) == m_here) n.parent = node_of(parent).parent;  // halve the path
        x = parent;
        continue;
      }
      if (x == other) return;  // one set already
      if (other_rank != unvisited && below(n.rank, x, other_rank, other)) {
        n.parent = other;
        if (n.rank == other_rank) bump(other, other_rank);
        return;
      }
      std::uint32_t const rank = n.rank;
      std::swap(x, other);  // carry this root to the other side
      other_rank = rank;
    }
  }

  // other took a root of rank r: other's rank becomes r + 1 if it is still
  // a root of rank r (otherwise the order already holds).
  void bump(T const& root, std::uint32_t r) {
    location_id const at = owner(root);
    if (at == m_here)
      serve_bump(root, r);
    else
      async_rmi(at, get_rmi_handle(), armi::method<&pdisjoint_set::serve_bump>, root, r);
  }

  // RMI targets.
  void serve_insert(T const& a) { node_of(a); }
  void serve_seek(T const& x, T const& other, std::uint32_t other_rank) { seek(x, other, other_rank); }
  void serve_bump(T const& root, std::uint32_t r) {
    node& n = node_of(root);
    if (n.parent == root && n.rank == r) ++n.rank;
  }
  T serve_parent(T const& x) const {
    auto it = m_nodes.find(x);
    return it == m_nodes.end() ? x : it->second.parent;
  }
  void serve_set_parent(T const& x, T const& root) {
    auto it = m_nodes.find(x);
    if (it != m_nodes.end() && !(it->first == root)) it->second.parent = root;
  }

  int m_uncaught = std::uncaught_exceptions();  // at construction: is the destructor part of an unwinding?
  location_id m_here = get_location_id();
  location_id m_locations = get_num_locations();
  Hash m_hash;
  node_hash_map<T, node, Hash> m_nodes;  // the elements this location keeps (nodes stay put)
};

}  // namespace armi
