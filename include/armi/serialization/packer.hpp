// Byte-level packing and unpacking: packer (measure or write) and unpacker
// (bounds-checked reads).  Which types travel, and how, is decided by
// serializer<T> in serialize.hpp.
//
// Thread safety: distinct objects safe; a shared object is not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace armi {

// Thrown when bytes from the wire do not decode: truncated, oversized or
// inconsistent.  The runtime turns it into a clear fatal error; the request
// is never executed.
struct decode_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {
// Out of line, so that the checks of every request cost their callers no
// registers or code for building the exception.
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_decode_error(char const* what) { throw decode_error(what); }
}  // namespace detail

template <class T, class Enable = void>
struct serializer;  // defined in serialize.hpp; users may specialize it

// Writes values into a byte range, or (measure mode) only counts the bytes
// they would take.  The runtime measures first, reserves, then writes.
class packer {
 public:
  // Measure mode: counts bytes, writes nothing.
  packer() = default;
  // Write mode: writes into [dst, dst + capacity).
  packer(std::byte* dst, std::size_t capacity) : m_dst(dst), m_capacity(capacity) {}

  bool measuring() const { return m_dst == nullptr; }
  std::size_t size() const { return m_size; }

  void write_bytes(void const* src, std::size_t n) {
    if (m_dst != nullptr) {
      if (n > m_capacity - m_size) throw std::logic_error("armi: packer overflow (measure/write mismatch)");
      if (n != 0) std::memcpy(m_dst + m_size, src, n);
    }
    m_size += n;
  }

  // Packs any travelling value (see serializer<T>).
  template <class T>
  void write(T const& value);
  template <class T>
  packer& operator()(T const& value) {
    write(value);
    return *this;
  }

 private:
  std::byte* m_dst = nullptr;
  std::size_t m_capacity = 0;
  std::size_t m_size = 0;
};

// Reads values back; every read is bounds-checked and throws decode_error.
class unpacker {
 public:
  unpacker(std::byte const* src, std::size_t n) : m_src(src), m_size(n) {}

  std::size_t remaining() const { return m_size - m_pos; }
  std::size_t position() const { return m_pos; }

  void read_bytes(void* dst, std::size_t n) {
    std::byte const* p = take_bytes(n);
    if (n != 0) std::memcpy(dst, p, n);
  }

  // The next n bytes in place (valid as long as the source is), skipped.
  std::byte const* take_bytes(std::size_t n) {
    if (n > remaining()) throw decode_error("armi: truncated RMI payload");
    std::byte const* p = m_src + m_pos;
    m_pos += n;
    return p;
  }

  // A count of elements that follow, each taking at least min_bytes: rejects
  // counts the remaining bytes cannot hold (so a corrupt count cannot make
  // the receiver allocate gigabytes).
  std::size_t read_count(std::size_t min_bytes_each) {
    std::uint64_t n = 0;
    read_bytes(&n, sizeof n);
    if (min_bytes_each != 0 && n > remaining() / min_bytes_each)
      throw decode_error("armi: element count exceeds the RMI payload");
    if (n > (std::uint64_t{1} << 40)) throw decode_error("armi: element count out of range");
    return static_cast<std::size_t>(n);
  }

  template <class T>
  T read();
  template <class T>
  void read_into(T& value);

 private:
  std::byte const* m_src;
  std::size_t m_size;
  std::size_t m_pos = 0;
};

}  // namespace armi
