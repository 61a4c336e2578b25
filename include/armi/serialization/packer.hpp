// Byte-level packing and unpacking: packer (measure or write) and unpacker
// (bounds-checked reads).  Which types travel, and how, is decided by
// serializer<T> in serialize.hpp.
//
// Thread safety: distinct objects safe; a shared object is not.
#pragma once

#include <armi/serialization/bulk_copies.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace armi {

/// Thrown when bytes from the wire do not decode: truncated, oversized or inconsistent.
///
/// The runtime turns it into a clear fatal error and never executes the request.  A
/// user's serializer<T>::unpack or define_type may throw it too, for input it rejects.
struct decode_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {
// Out of line, so that the checks of every request cost their callers no
// registers or code for building the exception.
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_decode_error(char const* what) { throw decode_error(what); }
}  // namespace detail

// Defined in traits.hpp (documented there); users may specialize it.
template <class T, class Enable = void>
struct serializer;

namespace detail {
struct lend_context;  // view.hpp: where a request's lent views may go by reference
}

/// Writes values into a byte range, or, in measure mode, only counts the bytes they would take.
///
/// The runtime packs each RMI's arguments twice: it measures first, reserves that much of
/// a buffer, then writes.  A serializer<T>::pack therefore must write the same bytes
/// both times, and must not care which pass it is in.  Not thread-safe: one packer
/// serves one (un)packing on one thread.
class packer {
 public:
  /// Measure mode: counts bytes, writes nothing.
  packer() = default;
  /// Write mode: writes into [dst, dst + capacity).
  packer(std::byte* dst, std::size_t capacity) : m_dst(dst), m_capacity(capacity) {}

  /// True in measure mode.
  bool measuring() const { return m_dst == nullptr; }
  /// The bytes written (or counted) so far.
  std::size_t size() const { return m_size; }

  /// Appends n raw bytes from src (in measure mode: counts them).
  /// @throws std::logic_error if they do not fit, which means the two passes differed.
  void write_bytes(void const* src, std::size_t n) {
    if (m_dst != nullptr) {
      if (n > m_capacity - m_size) throw std::logic_error("armi: packer overflow (measure/write mismatch)");
      if (n != 0) std::memcpy(m_dst + m_size, src, n);
      detail::count_copy(n);
    }
    m_size += n;
  }

  /// The runtime's: counts n bytes that the transport writes later (a lent view it sends
  /// from the caller's memory), leaving them unwritten; returns where they go, or nullptr
  /// in measure mode.
  /// @throws std::logic_error if they do not fit, which means the two passes differed.
  std::byte* skip_bytes(std::size_t n) {
    std::byte* at = nullptr;
    if (m_dst != nullptr) {
      if (n > m_capacity - m_size) throw std::logic_error("armi: packer overflow (measure/write mismatch)");
      at = m_dst + m_size;
    }
    m_size += n;
    return at;
  }

  /// Packs any travelling value, choosing its encoding as serializer<T> describes.
  template <class T>
  void write(T const& value);
  /// Packs value, like write(), and returns the packer, so calls chain: `p(a)(b)`.
  template <class T>
  packer& operator()(T const& value) {
    write(value);
    return *this;
  }

  /// The runtime's: lets views lent with armi::lend go by reference (both passes alike).
  void allow_lending(detail::lend_context const* context) { m_lending = context; }
  /// Where lent views may go by reference, or nullptr: they are copied.
  detail::lend_context const* lending() const { return m_lending; }
  /// Counts a view written by reference (the runtime then waits for its return).
  void count_lent() { ++m_lent; }
  /// The views written by reference so far.
  std::uint32_t lent() const { return m_lent; }

 private:
  std::byte* m_dst = nullptr;
  std::size_t m_capacity = 0;
  std::size_t m_size = 0;
  detail::lend_context const* m_lending = nullptr;
  std::uint32_t m_lent = 0;
};

/// Reads values back from a byte range, in the order a packer wrote them.
///
/// Every read is bounds-checked against the range and throws decode_error rather than
/// reading past it, because the bytes come from another location (and, on mpi or sp2,
/// from a network).  Not thread-safe: one unpacker serves one unpacking on one thread.
class unpacker {
 public:
  /// Reads from [src, src + n); the bytes must outlive the unpacker.
  unpacker(std::byte const* src, std::size_t n) : m_src(src), m_size(n) {}

  /// The bytes not read yet.
  std::size_t remaining() const { return m_size - m_pos; }
  /// The bytes read so far.
  std::size_t position() const { return m_pos; }

  /// Copies the next n bytes into dst.
  /// @throws decode_error if fewer than n remain.
  void read_bytes(void* dst, std::size_t n) {
    std::byte const* p = take_bytes(n);
    if (n != 0) std::memcpy(dst, p, n);
    detail::count_copy(n);
  }

  /// The next n bytes in place (valid as long as the source is), skipped.
  /// @throws decode_error if fewer than n remain.
  std::byte const* take_bytes(std::size_t n) {
    if (n > remaining()) throw decode_error("armi: truncated RMI payload");
    std::byte const* p = m_src + m_pos;
    m_pos += n;
    return p;
  }

  /// Reads a count of elements that follow, each taking at least min_bytes_each bytes.
  ///
  /// Rejects counts the remaining bytes cannot hold, so that a corrupt count cannot make
  /// the receiver allocate gigabytes before the reads fail.
  /// @throws decode_error for such a count.
  std::size_t read_count(std::size_t min_bytes_each) {
    std::uint64_t n = 0;
    read_bytes(&n, sizeof n);
    if (min_bytes_each != 0 && n > remaining() / min_bytes_each)
      throw decode_error("armi: element count exceeds the RMI payload");
    if (n > (std::uint64_t{1} << 40)) throw decode_error("armi: element count out of range");
    return static_cast<std::size_t>(n);
  }

  /// Reads the next value of type T, as serializer<T> describes its encoding.
  /// @throws decode_error if the bytes do not hold one.
  template <class T>
  T read();
  /// Reads the next value of type T into value (for types that are not default
  /// constructible, or to reuse value's storage).
  /// @throws decode_error if the bytes do not hold one.
  template <class T>
  void read_into(T& value);

 private:
  std::byte const* m_src;
  std::size_t m_size;
  std::size_t m_pos = 0;
};

}  // namespace armi
