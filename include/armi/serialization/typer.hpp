// armi::typer, the argument of a user's  void define_type(armi::typer& t),
// after the ARMI paper §3.4: each member is declared
//   local    a member (or an array of n) packed by value, recursively;
//   dynamic  a heap block of n elements; the receiver allocates it with new[];
//   offset   a pointer into a dynamic block declared before it.
// The same define_type serves measuring, packing and unpacking.
//
// Thread safety: a typer lives for one (un)packing of one object.
#pragma once

#include <armi/serialization/packer.hpp>
#include <armi/serialization/traits.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace armi {

/// The argument of a class's `void define_type(armi::typer& t)`, which makes the class
/// travel in RMIs by declaring its members.
///
/// One define_type serves measuring, packing and unpacking: it calls, for each member in
/// a fixed order, local() for a member sent by value, dynamic() for a heap block the
/// object owns, and offset() for a pointer into such a block.  When unpacking, the
/// receiver's object was default constructed and define_type fills it.  A typer lives
/// for one (un)packing of one object, on one thread.
///
/// ```
/// struct particle {
///   double x, y;
///   std::vector<int> neighbours;
///   void define_type(armi::typer& t) { t.local(x); t.local(y); t.local(neighbours); }
/// };
/// ```
class typer {
 public:
  /// A typer that packs (or measures) into p.
  explicit typer(packer& p) : m_packer(&p) {}
  /// A typer that unpacks from u.
  explicit typer(unpacker& u) : m_unpacker(&u) {}
  typer(typer const&) = delete;
  typer& operator=(typer const&) = delete;

  /// True while unpacking: the members are being written, not read.  Lets a define_type
  /// size a member before declaring it (a dynamic block's count is a member declared
  /// before it, so it is already read).
  bool unpacking() const { return m_unpacker != nullptr; }

  /// Declares a member that travels by value (recursively: it may itself be any
  /// travelling type).
  template <class T>
  void local(T& member) {
    if (m_unpacker != nullptr)
      m_unpacker->read_into(member);
    else
      m_packer->write(member);
  }

  /// Declares an array member of n elements that travel by value, each as local() would.
  template <class T>
  void local(T* array, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) local(array[i]);
  }

  /// Declares a heap block of n elements that the object owns through ptr.
  ///
  /// When packing, ptr may be null only if n is 0.  When unpacking, the receiver
  /// allocates the block with `new T[n]` and the object owns it (its destructor must
  /// `delete[]` it); n must be the value of a member declared before, since the count
  /// travels ahead of the block.  At most 16 dynamic blocks per object.
  /// @throws decode_error if the count on the wire differs from n or the block does not fit.
  template <class T>
  void dynamic(T*& ptr, std::size_t n) {
    if (m_unpacker != nullptr) {
      std::uint64_t sent = 0;
      m_unpacker->read_bytes(&sent, sizeof sent);
      if (sent != n)
        throw decode_error("armi: define_type dynamic block: element count on the wire differs "
                           "from the count declared before it");
      // Both counts come from the wire: check them against the bytes left
      // before allocating (an element of unknown wire size needs at least one).
      if (n > m_unpacker->remaining() / std::max<std::size_t>(detail::min_wire_size<T>(), 1))
        throw decode_error("armi: element count exceeds the RMI payload");
      ptr = n == 0 ? nullptr : new T[n];
      try {
        for (std::size_t i = 0; i < n; ++i) m_unpacker->read_into(ptr[i]);
      } catch (...) {
        delete[] ptr;
        ptr = nullptr;
        throw;
      }
    } else {
      if (n != 0 && ptr == nullptr)
        throw std::logic_error("armi: define_type dynamic(): null pointer with a non-zero count");
      std::uint64_t const count = n;
      m_packer->write_bytes(&count, sizeof count);
      for (std::size_t i = 0; i < n; ++i) m_packer->write(ptr[i]);
    }
    remember(ptr, n);
  }

  /// Declares a pointer into a dynamic block declared before it, whose start is base.
  ///
  /// The pointer travels as its offset from base (or as null), so on the receiver it points
  /// at the same element of the receiver's copy of the block.
  /// @throws std::logic_error when packing a pointer outside its block.
  /// @throws decode_error when unpacking an offset outside the block.
  template <class T>
  void offset(T*& ptr, T* base) {
    std::size_t const n = block_size(base);
    if (m_unpacker != nullptr) {
      std::int64_t off = 0;
      m_unpacker->read_bytes(&off, sizeof off);
      if (off == -1) {
        ptr = nullptr;
        return;
      }
      if (off < 0 || static_cast<std::uint64_t>(off) > n)
        throw decode_error("armi: define_type offset() points outside its block");
      ptr = base + off;
    } else {
      std::int64_t off = -1;
      if (ptr != nullptr) {
        if (ptr < base || ptr > base + n)
          throw std::logic_error("armi: define_type offset(): pointer is not inside its base block");
        off = ptr - base;
      }
      m_packer->write_bytes(&off, sizeof off);
    }
  }

 private:
  struct block {
    void const* base;
    std::size_t n;
  };
  static constexpr std::size_t max_blocks = 16;

  void remember(void const* base, std::size_t n) {
    if (m_blocks == max_blocks) throw std::logic_error("armi: define_type declares too many dynamic blocks (max 16)");
    m_block[m_blocks++] = {base, n};
  }
  std::size_t block_size(void const* base) const {
    for (std::size_t i = m_blocks; i-- > 0;)
      if (m_block[i].base == base) return m_block[i].n;
    if (m_unpacker != nullptr)
      throw decode_error("armi: define_type offset(): its base is not a dynamic block declared before it");
    throw std::logic_error("armi: define_type offset(): its base is not a dynamic block declared before it");
  }

  packer* m_packer = nullptr;
  unpacker* m_unpacker = nullptr;
  block m_block[max_blocks]{};
  std::size_t m_blocks = 0;
};

}  // namespace armi
