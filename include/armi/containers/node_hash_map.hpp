// armi::node_hash_map<K, V, Hash, KeyEqual>: a hash map with
// std::unordered_map's interface where it matters (find, contains,
// try_emplace, insert_or_assign, operator[], at, erase, iteration over
// std::pair<K const, V>) and its reference stability, kept in an
// open-addressing table (detail/node_hash_table.hpp): a probe reads a byte
// per slot and touches a node only where 7 bits of hash match, and an
// insertion allocates no node of its own.  It is the local part of
// punordered_map (local()).
//
//   armi::node_hash_map<std::uint64_t, double> m;
//   m[7] += 1.5;
//   for (auto const& [k, v] : m) ...
//
// References to elements stay valid until the element is erased;
// iterators until the next insertion.  Iteration order is unspecified.
#pragma once

#include <armi/containers/detail/node_hash_table.hpp>

#include <functional>
#include <stdexcept>
#include <utility>

namespace armi {

namespace detail {
template <class K, class V>
struct map_elements {
  using key_type = K;
  using value_type = std::pair<K const, V>;
  static K const& key(value_type const& v) noexcept { return v.first; }
};
}  // namespace detail

/// A hash map of stable elements in an open-addressing table; see the header comment.
template <class K, class V, class Hash = std::hash<K>, class KeyEqual = std::equal_to<K>>
class node_hash_map : public detail::node_hash_table<detail::map_elements<K, V>, Hash, KeyEqual> {
  using table = detail::node_hash_table<detail::map_elements<K, V>, Hash, KeyEqual>;

 public:
  using mapped_type = V;  ///< The value type.
  using typename table::const_iterator;
  using typename table::iterator;
  using typename table::value_type;

  node_hash_map() = default;
  /// An empty map with the given hash and key equality.
  explicit node_hash_map(Hash hash, KeyEqual equal = KeyEqual{}) : table(std::move(hash), std::move(equal)) {}
  /// A map of the pairs in [first, last) (the first of equal keys wins).
  template <class InputIt>
  node_hash_map(InputIt first, InputIt last, Hash hash = Hash{}) : table(std::move(hash)) {
    insert(first, last);
  }

  /// Adds (k, V(args...)) if k is absent; returns k's element and whether it was added.
  template <class... Args>
  std::pair<iterator, bool> try_emplace(K const& k, Args&&... args) {
    auto const at = emplace_at(k, std::forward<Args>(args)...);
    return {this->iterator_at(at.slot), at.added};
  }
  /// Adds v if its key is absent.
  std::pair<iterator, bool> insert(value_type const& v) { return try_emplace(v.first, v.second); }
  /// Adds each element whose key is absent (the first of equal keys wins).
  template <class InputIt>
  void insert(InputIt first, InputIt last) {
    for (; first != last; ++first) try_emplace(first->first, first->second);
  }
  /// Sets k's value to v, adding k if absent; returns k's element and whether it was added.
  template <class M>
  std::pair<iterator, bool> insert_or_assign(K const& k, M&& v) {
    auto added = try_emplace(k, std::forward<M>(v));
    if (!added.second) added.first->second = std::forward<M>(v);
    return added;
  }
  /// k's value, value-initialized first if k is absent.
  V& operator[](K const& k) { return emplace_at(k).element->second; }
  /// k's value; std::out_of_range if k is absent.
  V& at(K const& k) { return const_cast<V&>(std::as_const(*this).at(k)); }
  /// k's value, read-only; std::out_of_range if k is absent.
  V const& at(K const& k) const {
    auto const it = this->find(k);
    if (it == this->end()) throw std::out_of_range("armi::node_hash_map::at: no such key");
    return it->second;
  }

 private:
  template <class... Args>
  auto emplace_at(K const& k, Args&&... args) {
    return this->find_or_add(k, [&](void* at) {
      ::new (at) value_type(std::piecewise_construct, std::forward_as_tuple(k),
                            std::forward_as_tuple(std::forward<Args>(args)...));
    });
  }
};

}  // namespace armi
