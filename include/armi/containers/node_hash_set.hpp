// armi::node_hash_set<K, Hash, KeyEqual>: a hash set with
// std::unordered_set's interface where it matters (insert, find, contains,
// erase, iteration) in the open-addressing table of node_hash_map
// (detail/node_hash_table.hpp).  It is the local part of punordered_set
// (local()).  References to elements stay valid until the element is
// erased; iterators until the next insertion.
#pragma once

#include <armi/containers/detail/node_hash_table.hpp>

#include <functional>
#include <utility>

namespace armi {

namespace detail {
template <class K>
struct set_elements {
  using key_type = K;
  using value_type = K;
  static K const& key(K const& k) noexcept { return k; }
};
}  // namespace detail

/// A hash set of stable elements in an open-addressing table; see the header comment.
template <class K, class Hash = std::hash<K>, class KeyEqual = std::equal_to<K>>
class node_hash_set : public detail::node_hash_table<detail::set_elements<K>, Hash, KeyEqual> {
  using table = detail::node_hash_table<detail::set_elements<K>, Hash, KeyEqual>;

 public:
  using typename table::const_iterator;
  using typename table::iterator;

  node_hash_set() = default;
  /// An empty set with the given hash and key equality.
  explicit node_hash_set(Hash hash, KeyEqual equal = KeyEqual{}) : table(std::move(hash), std::move(equal)) {}
  /// A set of the keys in [first, last).
  template <class InputIt>
  node_hash_set(InputIt first, InputIt last, Hash hash = Hash{}) : table(std::move(hash)) {
    insert(first, last);
  }

  /// Adds k if absent; returns its element and whether it was added.
  std::pair<iterator, bool> insert(K const& k) {
    auto const at = this->find_or_add(k, [&](void* memory) { ::new (memory) K(k); });
    return {this->iterator_at(at.slot), at.added};
  }
  /// Adds each key that is absent.
  template <class InputIt>
  void insert(InputIt first, InputIt last) {
    for (; first != last; ++first) insert(*first);
  }
};

}  // namespace armi
