// armi::view<T>: a request's read-only range of T that the target reads in
// place, in the buffer the request arrived in, instead of a fresh copy
// (UPC++'s view, Charm++'s nocopy on the receiving side).  On the wire it is
// a count, zero padding to T's alignment, then the elements' bytes.
//
// Only a target's parameter may be a view: the range lives as long as the
// target's call (the runtime keeps the buffer until the call returns, even
// when the target waits and serves other requests), so a view is never a
// result and never inside another type.  The caller passes any contiguous
// range (a std::vector, std::array, std::span, or a view it was given),
// copied into the request at the call as any argument is.
//
// Thread safety: a plain pair of pointer and size.
#pragma once

#include <armi/serialization/bulk_copies.hpp>
#include <armi/serialization/packer.hpp>
#include <armi/serialization/traits.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

namespace armi {

/// A read-only contiguous range of T that an RMI target takes as a parameter to read the
/// request's elements where they arrived, without a copy.  Valid until the target returns;
/// copy what must live longer (`std::vector<T>(v.begin(), v.end())`).
/// @tparam T trivially copyable, alignment at most 8, not a pointer.
template <class T>
class view {
  static_assert(detail::bitwise<T> && !std::is_same_v<T, bool>,
                "armi::view<T>: T must travel as its bytes (trivially copyable; not a pointer, a bool, a view, "
                "nor a type with a serializer or define_type): the target reads them in place");
  static_assert(alignof(T) <= 8,
                "armi::view<T>: T's alignment must be at most 8 (a request's payload is "
                "aligned to 8 bytes)");
  static_assert(!std::is_const_v<T> && !std::is_volatile_v<T>,
                "armi::view<T>: name the element type without "
                "const (a view is read-only)");

 public:
  using element_type = T const;     ///< what the range holds, read-only
  using value_type = T;             ///< the element type
  using const_iterator = T const*;  ///< iterates the elements in order
  using iterator = T const*;        ///< the same as const_iterator: a view is read-only

  /// An empty range.
  constexpr view() noexcept = default;
  /// The range [data, data + size).
  constexpr view(T const* data, std::size_t size) noexcept : m_data(data), m_size(size) {}
  /// Any contiguous range of T (std::vector, std::array, std::span, ...).
  template <class R>
  requires std::is_convertible_v<R const&, std::span<T const>>
  constexpr view(R const& range) noexcept
      : m_data(std::span<T const>(range).data()), m_size(std::span<T const>(range).size()) {}

  /// The first element (any pointer when empty).
  constexpr T const* data() const noexcept { return m_data; }
  /// The number of elements.
  constexpr std::size_t size() const noexcept { return m_size; }
  /// The number of bytes the elements take.
  constexpr std::size_t size_bytes() const noexcept { return m_size * sizeof(T); }
  /// True when there are no elements.
  constexpr bool empty() const noexcept { return m_size == 0; }
  /// Element i (unchecked: i < size()).
  constexpr T const& operator[](std::size_t i) const noexcept { return m_data[i]; }
  /// The first element's position.
  constexpr T const* begin() const noexcept { return m_data; }
  /// Past the last element.
  constexpr T const* end() const noexcept { return m_data + m_size; }
  /// The range as a span.
  constexpr std::span<T const> span() const noexcept { return {m_data, m_size}; }

 private:
  T const* m_data = nullptr;
  std::size_t m_size = 0;
};

namespace detail {

inline std::size_t view_padding(std::size_t position, std::size_t alignment) {
  return (alignment - position % alignment) % alignment;
}

// The compile-time check of a target's parameter: any type that travels,
// or a view (whose element type view<T> checks).
template <class T>
struct check_parameter : check_sendable<T> {};
template <class T>
struct check_parameter<view<T>> : std::true_type {};

// A view's encoding: its count, zeros up to T's alignment (counted from the
// start of the arguments, which a full record aligns to 8), its elements.
template <class T>
void pack_view(packer& p, view<T> v) {
  std::uint64_t const n = v.size();
  p.write_bytes(&n, sizeof n);
  static constexpr std::byte zeros[8] = {};
  p.write_bytes(zeros, view_padding(p.size(), alignof(T)));
  p.write_bytes(v.data(), v.size_bytes());
}

// Where the elements of a view that arrived misaligned are copied, for as
// long as the target's call: a routing location packs runs of requests with
// equal headers back to back at 4-byte boundaries (core/wire.hpp, repeat
// records), so there a view of 8-byte elements may not be in place.
class view_storage {
 public:
  std::byte const* hold(std::byte const* bytes, std::size_t n) {
    m_blocks.push_back(std::make_unique<std::uint64_t[]>((n + 7) / 8));
    std::memcpy(m_blocks.back().get(), bytes, n);
    count_copy(n);
    return reinterpret_cast<std::byte const*>(m_blocks.back().get());
  }

 private:
  std::vector<std::unique_ptr<std::uint64_t[]>> m_blocks;
};

// The view of the elements, in place where they are aligned for T, else in
// a copy that `storage` keeps.
template <class T>
view<T> unpack_view(unpacker& u, view_storage& storage) {
  std::size_t const n = u.read_count(sizeof(T));
  std::size_t const padding = view_padding(u.position(), alignof(T));
  std::byte const* pad = u.take_bytes(padding);
  for (std::size_t i = 0; i < padding; ++i)
    if (pad[i] != std::byte{0}) throw decode_error("armi: a view's padding is not zero");
  std::byte const* p = u.take_bytes(n * sizeof(T));
  if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) != 0) [[unlikely]]
    p = storage.hold(p, n * sizeof(T));
  return view<T>(reinterpret_cast<T const*>(p), n);
}

}  // namespace detail

}  // namespace armi
