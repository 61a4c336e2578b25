// detail::node_hash_table: the open-addressing hash table under
// armi::node_hash_map and armi::node_hash_set, the local parts of
// punordered_map and punordered_set.
//
// Each slot is a control byte (empty, erased, or full with 7 bits of the
// key's hash), the 32-bit index of the element's node, and the high half of
// the key's hash, so that growing places elements without reading their
// nodes (a cache miss each).  A key's first slot is the top bits of a
// multiplicative (Fibonacci) hash of Hash{}(k); probing is linear.  A probe
// reads the control bytes and touches a node only where the 7 bits match.
// The table grows fourfold before full plus erased slots pass 7/8: its 9
// bytes a slot cost 10 to 41 bytes a key beside the node, and it rebuilds
// half as often as by doubling.  Nodes come from chunks the table owns (16
// nodes, doubling up to 4,096, then 4,096 each: small enough that the
// allocator reuses their memory rather than mapping fresh pages) and are
// reused through a free list, so an insertion allocates nothing in the
// common case.
//
// Nodes never move: a reference or pointer to an element stays valid until
// that element is erased, as with std::unordered_map (an RMI target may
// hold a value's reference across a nested poll that inserts).  Iterators
// are invalidated by insertion (the slots may be rebuilt) and by erasing
// the element they point at; erasing one element leaves the others'.
//
// Traits names the element: key_type, value_type, and key(value) -> key.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace armi::detail {

template <class Traits, class Hash, class KeyEqual>
class node_hash_table {
 public:
  using key_type = typename Traits::key_type;
  using value_type = typename Traits::value_type;
  using size_type = std::size_t;
  using hasher = Hash;
  using key_equal = KeyEqual;

  /// A forward iterator over the full slots, in slot order.
  template <bool Const>
  class basic_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = typename Traits::value_type;
    using difference_type = std::ptrdiff_t;
    using pointer = std::conditional_t<Const, value_type const*, value_type*>;
    using reference = std::conditional_t<Const, value_type const&, value_type&>;

    basic_iterator() = default;
    /// A mutable iterator converts to a const one.
    template <bool C = Const, class = std::enable_if_t<C>>
    basic_iterator(basic_iterator<false> const& other) noexcept  // NOLINT: implicit, as std's
        : m_table(other.m_table), m_at(other.m_at) {}

    reference operator*() const noexcept { return *m_table->element_at(m_at); }
    pointer operator->() const noexcept { return m_table->element_at(m_at); }
    basic_iterator& operator++() noexcept {
      ++m_at;
      skip_free();
      return *this;
    }
    basic_iterator operator++(int) noexcept {
      basic_iterator const before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(basic_iterator const& a, basic_iterator const& b) noexcept { return a.m_at == b.m_at; }

   private:
    friend class node_hash_table;
    template <bool>
    friend class basic_iterator;

    basic_iterator(node_hash_table const* table, std::size_t at) noexcept : m_table(table), m_at(at) {}
    void skip_free() noexcept {
      while (m_at != m_table->m_capacity && !is_full(m_table->m_control[m_at])) ++m_at;
    }

    node_hash_table const* m_table = nullptr;
    std::size_t m_at = 0;
  };
  using iterator = basic_iterator<std::is_same_v<value_type, key_type>>;  // a set's elements are read-only
  using const_iterator = basic_iterator<true>;

  explicit node_hash_table(Hash hash = Hash{}, KeyEqual equal = KeyEqual{})
      : m_hash(std::move(hash)), m_equal(std::move(equal)) {}
  node_hash_table(node_hash_table const& other) : m_hash(other.m_hash), m_equal(other.m_equal) {
    reserve(other.m_size);
    for (value_type const& v : other) emplace_new(Traits::key(v), v);
  }
  node_hash_table(node_hash_table&& other) noexcept : m_hash(other.m_hash), m_equal(other.m_equal) { swap(other); }
  node_hash_table& operator=(node_hash_table other) noexcept {
    swap(other);
    return *this;
  }
  ~node_hash_table() { destroy_elements(); }

  void swap(node_hash_table& other) noexcept {
    using std::swap;
    swap(m_hash, other.m_hash);
    swap(m_equal, other.m_equal);
    swap(m_control, other.m_control);
    swap(m_slots, other.m_slots);
    swap(m_high, other.m_high);
    swap(m_capacity, other.m_capacity);
    swap(m_shift, other.m_shift);
    swap(m_size, other.m_size);
    swap(m_erased, other.m_erased);
    swap(m_chunks, other.m_chunks);
    swap(m_nodes_made, other.m_nodes_made);
    swap(m_free, other.m_free);
  }
  friend void swap(node_hash_table& a, node_hash_table& b) noexcept { a.swap(b); }

  iterator begin() noexcept { return make_iterator<iterator>(0); }
  iterator end() noexcept { return iterator(this, m_capacity); }
  const_iterator begin() const noexcept { return make_iterator<const_iterator>(0); }
  const_iterator end() const noexcept { return const_iterator(this, m_capacity); }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }

  size_type size() const noexcept { return m_size; }
  bool empty() const noexcept { return m_size == 0; }
  /// Slots (not elements): the table holds up to 7/8 of them before it grows.
  size_type bucket_count() const noexcept { return m_capacity; }
  hasher hash_function() const { return m_hash; }
  key_equal key_eq() const { return m_equal; }

  iterator find(key_type const& k) { return iterator(this, find_slot(k)); }  // a full slot, or end()
  const_iterator find(key_type const& k) const { return const_iterator(this, find_slot(k)); }
  bool contains(key_type const& k) const { return find_slot(k) != m_capacity; }
  size_type count(key_type const& k) const { return contains(k) ? 1 : 0; }

  /// Removes k's element, if any; returns how many were removed (0 or 1).
  size_type erase(key_type const& k) {
    std::size_t const at = find_slot(k);
    if (at == m_capacity) return 0;
    erase_slot(at);
    return 1;
  }
  /// Removes the element at pos; returns the iterator after it.
  iterator erase(const_iterator pos) {
    std::size_t const at = pos.m_at;
    erase_slot(at);
    return make_iterator<iterator>(at + 1);
  }

  /// Removes every element; keeps the slots, gives the nodes back.
  void clear() noexcept {
    destroy_elements();
    m_chunks.clear();
    m_nodes_made = 0;
    m_free = no_node;
    std::fill_n(m_control.get(), m_capacity, empty_slot);
    m_size = m_erased = 0;
  }

  /// Makes room for n elements without growing again.
  void reserve(size_type n) {
    if (n != 0 && slots_for(n) > m_capacity) rebuild(slots_for(n));
  }

  /// Same elements (by key_equal on keys, == on whole elements).
  friend bool operator==(node_hash_table const& a, node_hash_table const& b) {
    if (a.m_size != b.m_size) return false;
    for (value_type const& v : a) {
      std::size_t const at = b.find_slot(Traits::key(v));
      if (at == b.m_capacity || !(*b.element_at(at) == v)) return false;
    }
    return true;
  }

 protected:
  // Where find_or_add found or put a key: its slot, its element, and whether it was added.
  struct found_or_added {
    std::size_t slot;
    value_type* element;
    bool added;
  };

  // Finds k, or adds the element make(node memory) builds for it.  make
  // must construct a value_type with key k at the address it is given.
  template <class Make>
  found_or_added find_or_add(key_type const& k, Make&& make) {
    std::uint64_t const h = spread(k);
    std::size_t reuse = m_capacity;  // where k goes: its probe's first erased slot, else the empty one ending it
    if (m_capacity != 0) {
      std::uint8_t const tag = fragment(h);
      for (std::size_t i = first_slot(h);; i = (i + 1) & (m_capacity - 1)) {
        std::uint8_t const c = m_control[i];
        if (c == empty_slot) {
          if (reuse == m_capacity) reuse = i;
          break;
        }
        if (c == tag) {
          value_type* const e = element_at(i);
          if (m_equal(Traits::key(*e), k)) return {i, e, false};
        }
        if (c == erased_slot && reuse == m_capacity) reuse = i;
      }
    }
    bool const takes_empty = reuse == m_capacity || m_control[reuse] == empty_slot;
    if (takes_empty && (m_size + m_erased + 1) * 8 > m_capacity * 7) {
      // Grow when live elements fill 7/16 or more; else erased slots are
      // most of the load, and rebuilding at the same size clears them.
      rebuild((m_size + 1) * 16 > m_capacity * 7 ? std::max<std::size_t>(16, m_capacity * 4) : m_capacity);
      reuse = free_slot(h);
    }
    std::uint32_t const node = take_node();
    void* const memory = node_at(node).element;
    try {
      make(memory);
    } catch (...) {
      give_node(node);
      throw;
    }
    if (m_control[reuse] == erased_slot) --m_erased;
    m_control[reuse] = fragment(h);
    m_slots[reuse] = node;
    m_high[reuse] = static_cast<std::uint32_t>(h >> 32);
    ++m_size;
    return {reuse, std::launder(static_cast<value_type*>(memory)), true};
  }

  // Adds k's element, known to be absent (copies, rebuilds).
  template <class... Args>
  void emplace_new(key_type const& k, Args&&... args) {
    find_or_add(k, [&](void* at) { ::new (at) value_type(std::forward<Args>(args)...); });
  }

  // The iterator at a full slot (or at end()).
  iterator iterator_at(std::size_t slot) noexcept { return iterator(this, slot); }

  // The first full slot from at on.
  template <class Iterator>
  Iterator make_iterator(std::size_t at) const noexcept {
    Iterator it(this, at);
    it.skip_free();
    return it;
  }

 private:
  static constexpr std::uint8_t empty_slot = 0;
  static constexpr std::uint8_t erased_slot = 1;
  static constexpr std::uint8_t full_bit = 0x80;
  static constexpr std::uint32_t no_node = 0xFFFFFFFF;
  static constexpr int first_chunk_bits = 4;  // chunk c < 8 holds 2^(4 + c) nodes,
  static constexpr int chunk_bits = 12;       // every later one 2^12

  // A node's memory: the element, or the free list's link while unused.
  union node_memory {  // trivial: a new chunk's memory is not touched until used
    std::uint32_t next;
    alignas(value_type) std::byte element[sizeof(value_type)];
  };

  // Node i: with j = i + 16, chunk j / 4096 + 7 at j % 4096 from j = 4096 on,
  // else chunk bit_width(j) - 5 at j less the chunk's first.
  node_memory& node_at(std::uint32_t i) const noexcept {
    std::uint64_t const j = std::uint64_t{i} + (1u << first_chunk_bits);
    if (j >> chunk_bits != 0) [[likely]]
      return m_chunks[(j >> chunk_bits) + (chunk_bits - first_chunk_bits - 1)][j & ((1u << chunk_bits) - 1)];
    int const top = std::bit_width(j) - 1;
    return m_chunks[top - first_chunk_bits][j - (std::uint64_t{1} << top)];
  }
  value_type* element_at(std::size_t slot) const noexcept {
    return std::launder(reinterpret_cast<value_type*>(node_at(m_slots[slot]).element));
  }

  static bool is_full(std::uint8_t c) noexcept { return (c & full_bit) != 0; }
  std::uint64_t spread(key_type const& k) const {
    return static_cast<std::uint64_t>(m_hash(k)) * 0x9E3779B97F4A7C15ULL;
  }
  // The top bits place, middle bits tag: independent for tables under 2^33 slots.
  std::size_t first_slot(std::uint64_t h) const noexcept { return static_cast<std::size_t>(h >> m_shift); }
  static std::uint8_t fragment(std::uint64_t h) noexcept {
    return static_cast<std::uint8_t>(full_bit | ((h >> 24) & 0x7F));
  }
  static std::size_t slots_for(std::size_t n) noexcept {
    std::size_t const wanted = std::max<std::size_t>(16, n * 8 / 7 + 1);
    return std::bit_ceil(wanted);
  }

  std::size_t find_slot(key_type const& k) const {
    if (m_size == 0) return m_capacity;
    std::uint64_t const h = spread(k);
    std::uint8_t const tag = fragment(h);
    for (std::size_t i = first_slot(h);; i = (i + 1) & (m_capacity - 1)) {
      std::uint8_t const c = m_control[i];
      if (c == empty_slot) return m_capacity;
      if (c == tag && m_equal(Traits::key(*element_at(i)), k)) return i;
    }
  }
  // The first empty slot on h's probe (after a rebuild, no slot is erased).
  std::size_t free_slot(std::uint64_t h) const noexcept {
    std::size_t i = first_slot(h);
    while (m_control[i] != empty_slot) i = (i + 1) & (m_capacity - 1);
    return i;
  }

  void erase_slot(std::size_t at) {
    value_type* const element = element_at(at);
    std::uint32_t const node = m_slots[at];
    // Linear probing: a slot may go back to empty when the next one is
    // empty, since no probe that reached it could have gone on.
    bool const next_empty = m_control[(at + 1) & (m_capacity - 1)] == empty_slot;
    m_control[at] = next_empty ? empty_slot : erased_slot;
    if (!next_empty) ++m_erased;
    --m_size;
    element->~value_type();
    give_node(node);
  }

  // Rebuilds the slots at the given capacity (erased slots disappear).  The
  // new arrays are made first and only pointers move, so a throwing Hash
  // or allocation leaves the table as it was.  Up to 2^32 slots the kept
  // high halves of the hashes place the elements.
  void rebuild(std::size_t capacity) {
    auto control = std::make_unique<std::uint8_t[]>(capacity);  // zeroed: every slot empty
    auto slots = std::make_unique_for_overwrite<std::uint32_t[]>(capacity);
    auto high = std::make_unique_for_overwrite<std::uint32_t[]>(capacity);
    int const shift = 64 - std::countr_zero(capacity);
    for (std::size_t i = 0; i < m_capacity; ++i) {
      if (!is_full(m_control[i])) continue;
      std::uint64_t const h = shift >= 32 ? std::uint64_t{m_high[i]} << 32 : spread(Traits::key(*element_at(i)));
      std::size_t j = static_cast<std::size_t>(h >> shift);
      while (control[j] != empty_slot) j = (j + 1) & (capacity - 1);
      control[j] = m_control[i];
      slots[j] = m_slots[i];
      high[j] = m_high[i];
    }
    m_control = std::move(control);
    m_slots = std::move(slots);
    m_high = std::move(high);

    m_capacity = capacity;
    m_shift = shift;
    m_erased = 0;
  }

  std::uint32_t take_node() {
    if (m_free != no_node) {
      std::uint32_t const i = m_free;
      m_free = node_at(i).next;
      return i;
    }
    if (m_nodes_made == no_node) throw std::length_error("armi::node_hash_table: more than 2^32 - 1 elements");
    std::uint32_t const i = m_nodes_made;
    std::uint64_t const j = std::uint64_t{i} + (1u << first_chunk_bits);
    std::uint64_t const chunk = std::uint64_t{1} << chunk_bits;
    if (j < chunk ? (j & (j - 1)) == 0 : (j & (chunk - 1)) == 0)  // the first node of a new chunk
      m_chunks.push_back(std::make_unique_for_overwrite<node_memory[]>(j < chunk ? j : chunk));
    ++m_nodes_made;
    return i;
  }
  void give_node(std::uint32_t i) noexcept {
    node_at(i).next = m_free;
    m_free = i;
  }
  void destroy_elements() noexcept {
    if constexpr (!std::is_trivially_destructible_v<value_type>) {
      for (std::size_t i = 0; i < m_capacity; ++i)
        if (is_full(m_control[i])) element_at(i)->~value_type();
    }
  }

  Hash m_hash;
  KeyEqual m_equal;
  std::unique_ptr<std::uint8_t[]> m_control;  // a byte per slot
  std::unique_ptr<std::uint32_t[]> m_slots;   // the node of each full slot
  std::unique_ptr<std::uint32_t[]> m_high;    // the high half of each full slot's spread hash
  std::size_t m_capacity = 0;                 // slots: 0 or a power of two >= 16
  int m_shift = 64;                           // 64 - log2(m_capacity)
  std::size_t m_size = 0;                     // full slots
  std::size_t m_erased = 0;                   // erased slots (they lengthen probes)
  std::vector<std::unique_ptr<node_memory[]>> m_chunks;
  std::uint32_t m_nodes_made = 0;  // nodes ever taken from the chunks
  std::uint32_t m_free = no_node;  // erased elements' nodes, linked
};

}  // namespace armi::detail
