// armi::global_ptr<T>: Split-C's global pointer, an element of a
// global_array named by the array's handle, the location that owns the
// element and its index in that location's block.  A plain value: made
// anywhere without communication (global_array::pointer), copied, compared,
// moved along its block with + and -, and sent in RMIs like any trivially
// copyable argument.  rget, rput, fetch_add and compare_exchange
// (global_array.hpp) read and write through it.
//
// Thread safety: a value; use it anywhere.
#pragma once

#include <armi/core/handle.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace armi {

template <class T>
class global_array;

/// An element of a global_array: (array, owning location, index in its block).
///
/// Default-constructed it is null (names no element).  Arithmetic moves the index
/// within the owner's block; whether the result is inside the block is checked when an
/// operation uses it (std::out_of_range at the caller), not here.
template <class T>
class global_ptr {
 public:
  /// The element type.
  using element_type = T;

  /// A null pointer: names no element.
  global_ptr() = default;

  /// The handle of the global_array the element belongs to.
  rmi_handle array() const noexcept { return m_array; }
  /// The location whose block holds the element.
  location_id where() const noexcept { return m_owner; }
  /// The element's index in its owner's block.
  std::uint64_t index() const noexcept { return m_index; }
  /// True unless the pointer is null.
  explicit operator bool() const noexcept { return m_array.valid(); }

  /// The element k places further along the same block.
  friend global_ptr operator+(global_ptr p, std::int64_t k) noexcept {
    p.m_index += static_cast<std::uint64_t>(k);
    return p;
  }
  /// The element k places back along the same block.
  friend global_ptr operator-(global_ptr p, std::int64_t k) noexcept { return p + (-k); }
  /// Moves k places along the block.
  global_ptr& operator+=(std::int64_t k) noexcept { return *this = *this + k; }
  /// Moves k places back along the block.
  global_ptr& operator-=(std::int64_t k) noexcept { return *this = *this - k; }
  /// Moves to the next element of the block.
  global_ptr& operator++() noexcept { return *this += 1; }
  /// Moves to the previous element of the block.
  global_ptr& operator--() noexcept { return *this -= 1; }
  /// Pointers are equal when they name the same element of the same array.
  friend bool operator==(global_ptr const&, global_ptr const&) = default;

 private:
  friend class global_array<T>;
  global_ptr(rmi_handle array, location_id owner, std::uint64_t index) noexcept
      : m_array(array), m_owner(owner), m_index(index) {}

  rmi_handle m_array{};
  location_id m_owner = 0;
  std::uint64_t m_index = 0;
};

}  // namespace armi
