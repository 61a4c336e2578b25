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
// Or it lends the range (armi::lend, Madeleine's "send later"): it promises
// to leave the elements unchanged until its next flush point (rmi_flush,
// rmi_fence, rmi_wait, or a blocking call: sync_rmi, future::get, reduce_rmi,
// allreduce_rmi), which returns only once the target has read them.  An
// async_rmi, sync_rmi or opaque_rmi to a location of the caller's process,
// reached directly, then carries the range's address, not its elements
// (lent_bit in the count, then the address, the lender's return word and
// the lender), and the target reads the caller's memory: no copy at all.
// To another process whose transport can (mpi and mixed, large ranges:
// transport::apart_min_bytes), reached directly, the
// range goes apart: the transport sends it at the call as a message of its
// own, from the caller's memory, and the request carries its tag (apart_bit
// in the count, then the tag); the target's location receives it by that
// tag when the request runs, and the loan is back once the send has
// completed (Madeleine's "send later" and "receive cheaper").  Elsewhere (the
// sp2 backend, a routed path, a collective, a range under the minimum) the elements are copied at the
// call as usual, which the promise allows.  The receiver takes a lent
// record only where lend_returns accepts its lender (a buffer from its own
// process), and a range apart only from another process whose transport
// sends them; anywhere else either is a decode error.
//
// Thread safety: a plain pointer and size.  A lent range is read by the
// target's thread while the lender's runs: the lender's promise.
#pragma once

#include <armi/serialization/bulk_copies.hpp>
#include <armi/serialization/packer.hpp>
#include <armi/serialization/traits.hpp>

#include <atomic>
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
  /// True for a range the caller lent (armi::lend) rather than gave to be copied.
  constexpr bool lent() const noexcept { return m_lent; }

 private:
  template <class R>
  friend auto lend(R& range) noexcept;
  struct lent_tag {};
  constexpr view(std::span<T const> range, lent_tag) noexcept
      : m_data(range.data()), m_size(range.size()), m_lent(true) {}

  T const* m_data = nullptr;
  std::size_t m_size = 0;
  bool m_lent = false;
};

/// Lends a contiguous range to an RMI whose target takes an armi::view: the caller promises
/// to leave its elements unchanged until its next flush point (rmi_flush, rmi_fence,
/// rmi_wait, sync_rmi, future::get, reduce_rmi, allreduce_rmi), which returns only once the
/// target has read them.  An async_rmi, sync_rmi or opaque_rmi to a location of the
/// caller's process then copies nothing: the target reads the caller's memory.  On mpi, to
/// a rank off the caller's node (or with --armi-mpi-shm=off), MPI sends the range from the
/// caller's memory, with no copy at the call.  Elsewhere the range is copied at the call,
/// as without lend.
template <class R>
auto lend(R& range) noexcept {
  using T = std::remove_cv_t<typename decltype(std::span(range))::element_type>;
  return view<T>(std::span<T const>(range), typename view<T>::lent_tag{});
}
/// A temporary cannot be lent: it is gone before the flush point that ends the loan.
template <class R>
  requires(!std::is_lvalue_reference_v<R>)
auto lend(R&& range) {
  static_assert(!sizeof(R*),
                "armi::lend: the range must live until the caller's next flush point, and a temporary does not: "
                "lend a named container, or pass the range without armi::lend to have it copied at the call");
  return lend(range);  // (the view's type, for a single error message)
}

namespace detail {

inline std::size_t view_padding(std::size_t position, std::size_t alignment) {
  return (alignment - position % alignment) % alignment;
}

// A lent range at least this large goes by reference (lend_context's
// min_bytes within a process); a smaller one costs less to copy than its
// return does.
inline constexpr std::size_t lend_min_bytes = 4096;
// In a view's count: the elements are at the address that follows.
inline constexpr std::uint64_t lent_bit = std::uint64_t{1} << 63;
// In a view's count: the elements come apart, as the message whose tag follows.
inline constexpr std::uint64_t apart_bit = std::uint64_t{1} << 62;

// A lent range that the transport sends apart: where the request holds its
// tag (written once the send has started), and the range.
struct lent_range {
  std::byte* tag_at;
  void const* from;
  std::size_t bytes;
};

// The sender's side of a loan: set on the packer (allow_lending) by the
// runtime for a request that may carry lent views without copying them.
// Either by reference (ranges == nullptr: the receiver reads the lender's
// memory and gives the loan back), or sent apart from the lender's memory
// (listed in *ranges; the transport gives the loan back once sent).
struct lend_context {
  std::uint32_t lender;                  // the sending location
  std::atomic<std::uint32_t>* returned;  // its count of loans given back
  std::size_t min_bytes;                 // smaller lent views are copied
  std::vector<lent_range>* ranges;       // the ranges to send apart for the request being written, or nullptr
};

// The receiver's side: whether a lent record from `lender` may be read
// (the buffer came from the receiver's process), and the return of a loan
// once the target has read it (returned += 1, then the lender is woken);
// a range sent apart, received into memory kept until release_apart
// (nullptr where none may come: the buffer's sender is in this process, or
// its transport sends none apart).
class lend_returns {
 public:
  virtual bool accepts(std::uint32_t lender) const = 0;
  virtual void give_back(std::uint32_t lender, std::atomic<std::uint32_t>& returned) noexcept = 0;
  virtual std::byte const* receive_apart(std::uint64_t tag, std::size_t bytes) = 0;
  virtual void release_apart(std::byte const* range) noexcept = 0;

 protected:
  ~lend_returns() = default;
};

// The compile-time check of a target's parameter: any type that travels,
// or a view (whose element type view<T> checks).
template <class T>
struct check_parameter : check_sendable<T> {};
template <class T>
struct check_parameter<view<T>> : std::true_type {};

// A view's encoding: its count, zeros up to T's alignment (counted from the
// start of the arguments, which a full record aligns to 8), its elements.
// A lent one by reference is a lent record instead (the count with lent_bit,
// the address, the return word, the lender); one sent apart, its count with
// apart_bit and the tag of its message.
template <class T>
void pack_view(packer& p, view<T> v) {
  lend_context const* lending = v.lent() ? p.lending() : nullptr;
  if (lending != nullptr && v.size_bytes() < lending->min_bytes) lending = nullptr;
  if (lending != nullptr && lending->ranges == nullptr) {
    std::uint64_t const record[4] = {v.size() | lent_bit, reinterpret_cast<std::uintptr_t>(v.data()),
                                     reinterpret_cast<std::uintptr_t>(lending->returned), lending->lender};
    p.write_bytes(record, sizeof record);
    p.count_lent();
    return;
  }
  if (lending != nullptr) {
    std::uint64_t const count = v.size() | apart_bit;
    p.write_bytes(&count, sizeof count);
    if (std::byte* tag_at = p.skip_bytes(sizeof(std::uint64_t)))  // the runtime writes it (location::lent)
      lending->ranges->push_back({tag_at, v.data(), v.size_bytes()});
    p.count_lent();
    return;
  }
  std::uint64_t const n = v.size();
  p.write_bytes(&n, sizeof n);
  static constexpr std::byte zeros[8] = {};
  p.write_bytes(zeros, view_padding(p.size(), alignof(T)));
  p.write_bytes(v.data(), v.size_bytes());
}

// For as long as the target's call: where the elements of a view that
// arrived misaligned are copied (a routing location packs runs of requests
// with equal headers back to back at 4-byte boundaries, core/wire.hpp, so
// there a view of 8-byte elements may not be in place), and the loans to
// give back when the call is over, returned or thrown.
class view_storage {
 public:
  explicit view_storage(lend_returns* returns = nullptr) : m_returns(returns) {}
  view_storage(view_storage const&) = delete;
  view_storage& operator=(view_storage const&) = delete;
  ~view_storage() {
    for (auto const& [lender, returned] : m_loans) m_returns->give_back(lender, *returned);
    for (std::byte const* range : m_apart) m_returns->release_apart(range);
  }

  std::byte const* hold(std::byte const* bytes, std::size_t n) {
    m_blocks.push_back(std::make_unique_for_overwrite<std::uint64_t[]>((n + 7) / 8));
    std::memcpy(m_blocks.back().get(), bytes, n);
    count_copy(n);
    return reinterpret_cast<std::byte const*>(m_blocks.back().get());
  }
  // A lent record's lender and return word, to be given back; false (and
  // nothing kept) where this receiver takes no loans from it.
  bool borrow(std::uint64_t lender, std::uint64_t returned) {
    if (m_returns == nullptr || lender > UINT32_MAX || returned == 0 ||
        !m_returns->accepts(static_cast<std::uint32_t>(lender)))
      return false;
    m_loans.emplace_back(static_cast<std::uint32_t>(lender),
                         reinterpret_cast<std::atomic<std::uint32_t>*>(static_cast<std::uintptr_t>(returned)));
    return true;
  }
  // The elements of a range sent apart, kept until the call is over; nullptr
  // where none may come.
  std::byte const* receive_apart(std::uint64_t tag, std::size_t bytes) {
    if (m_returns == nullptr) return nullptr;
    std::byte const* range = m_returns->receive_apart(tag, bytes);
    if (range != nullptr) m_apart.push_back(range);
    return range;
  }

 private:
  lend_returns* m_returns;
  std::vector<std::byte const*> m_apart;
  std::vector<std::unique_ptr<std::uint64_t[]>> m_blocks;
  std::vector<std::pair<std::uint32_t, std::atomic<std::uint32_t>*>> m_loans;
};

// The view of the elements, in place where they are aligned for T, else in
// a copy that `storage` keeps.
template <class T>
view<T> unpack_view(unpacker& u, view_storage& storage) {
  std::uint64_t count;
  std::memcpy(&count, u.take_bytes(sizeof count), sizeof count);
  if ((count & lent_bit) != 0) {
    std::uint64_t fields[3];  // the elements' address, the return word's, the lender
    u.read_bytes(fields, sizeof fields);
    std::uint64_t const n = count & ~lent_bit;
    if (n > SIZE_MAX / sizeof(T) || fields[0] % alignof(T) != 0 || (fields[0] == 0 && n != 0))
      throw decode_error("armi: a lent view's range is malformed");
    if (!storage.borrow(fields[2], fields[1]))
      throw decode_error("armi: a lent view (armi::lend) where none may arrive (from another process, or in a "
                         "collective)");
    return view<T>(reinterpret_cast<T const*>(static_cast<std::uintptr_t>(fields[0])), static_cast<std::size_t>(n));
  }
  if ((count & apart_bit) != 0) {
    std::uint64_t tag;
    u.read_bytes(&tag, sizeof tag);
    std::uint64_t const n = count & ~apart_bit;
    if (n > (std::uint64_t{1} << 40) / sizeof(T)) throw decode_error("armi: a view sent apart is malformed");
    std::byte const* range = storage.receive_apart(tag, static_cast<std::size_t>(n * sizeof(T)));
    if (range == nullptr)
      throw decode_error(
          "armi: a view sent apart (armi::lend) where none may arrive (within a process, or on a "
          "transport that sends none apart)");
    return view<T>(reinterpret_cast<T const*>(range), static_cast<std::size_t>(n));
  }
  if (count > u.remaining() / sizeof(T)) throw decode_error("armi: element count exceeds the RMI payload");
  std::size_t const n = static_cast<std::size_t>(count);
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
