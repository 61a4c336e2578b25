// A map from location ids to values, for state a location keeps only for
// the locations it actually deals with: at thousands of locations, a value
// per location of the run, kept by every location, is P^2 in all.
//
// Open addressing with linear probing, never more than half full, the slot
// chosen by Fibonacci hashing: a lookup is one multiply and usually one
// compare.  A value lives in the table, so a reference or pointer to it
// stays valid only until the next insertion.  Not thread safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace armi::detail {

template <class T>
class location_map {
 public:
  static constexpr std::uint32_t no_key = UINT32_MAX;

  // The value of key, or nullptr.
  T* find(std::uint32_t key) {
    if (m_entries.empty()) return nullptr;
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      entry& e = m_entries[i];
      if (e.key == key) return &e.value;
      if (e.key == no_key) return nullptr;
    }
  }

  // The value of key, value-initialized first if key has none.
  T& operator[](std::uint32_t key) {
    if (T* v = find(key)) return *v;
    if (2 * (m_used + 1) > m_entries.size()) grow();
    ++m_used;
    return place(key, T{});
  }

  std::size_t size() const { return m_used; }

  // f(key, value&) for every entry, in no particular order.  f must not insert.
  template <class F>
  void for_each(F&& f) {
    for (entry& e : m_entries)
      if (e.key != no_key) f(e.key, e.value);
  }

 private:
  struct entry {
    std::uint32_t key = no_key;
    T value{};
  };

  std::size_t mask() const { return m_entries.size() - 1; }
  std::size_t home(std::uint32_t key) const {
    return static_cast<std::size_t>((std::uint64_t{key} * 0x9E3779B97F4A7C15ull) >> m_shift);
  }

  T& place(std::uint32_t key, T value) {
    std::size_t i = home(key);
    while (m_entries[i].key != no_key) i = (i + 1) & mask();
    m_entries[i].key = key;
    m_entries[i].value = std::move(value);
    return m_entries[i].value;
  }

  void grow() {
    std::vector<entry> old = std::exchange(m_entries, std::vector<entry>(old_or_first_size() * 2));
    m_shift = 64;
    for (std::size_t n = m_entries.size(); n > 1; n /= 2) --m_shift;
    for (entry& e : old)
      if (e.key != no_key) place(e.key, std::move(e.value));
  }
  std::size_t old_or_first_size() const { return m_entries.empty() ? 4 : m_entries.size(); }

  std::vector<entry> m_entries;  // a power of two in size, or empty
  std::size_t m_used = 0;
  unsigned m_shift = 64;  // 64 - log2(m_entries.size())
};

}  // namespace armi::detail
