// Aggregation buffers and the wire format of a request.
//
// A buffer holds requests for one destination, back to back, in two forms:
//   full:    request_header (16 bytes) | payload | zero padding to 8 bytes
//            at an offset that is a multiple of 8; when the record before
//            ends 4 bytes past one, a zero pad word comes first;
//   repeat:  repeat_marker (4 bytes) | payload | zero padding to 4 bytes
//            at any multiple of 4: a request with the header of the record
//            before it in the buffer (same handler word, target handle and
//            payload size), which must exist.
// A run of fine-grain requests to one method of one object (an element per
// async_rmi, the paper's sample sort) costs 8 bytes per 4-byte argument
// instead of 24, so a third of the cache lines or bytes on the wire; only
// the fast path of fixed-size arguments writes repeats.  The header names
// the handler by its registry id (never a code address) and the target
// object by handle; the receiver validates both before dispatch, and a
// repeat with nothing before it, a pad word that is not zero or a payload
// that runs past the end is a malformed buffer, never executed.
#pragma once

#include <armi/core/mpsc_queue.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace armi::detail {

struct request_header {
  std::uint32_t handler;        // low 20 bits: handler id; high 12 bits: method index
  std::uint32_t payload_bytes;  // bytes of payload after the header (unpadded)
  std::uint32_t handle_index;   // target object (unused by replies and collectives)
  std::uint32_t handle_epoch;
};
static_assert(sizeof(request_header) == 16);

inline constexpr std::uint32_t handler_bits = 20;
inline constexpr std::uint32_t handler_mask = (1u << handler_bits) - 1;
inline constexpr std::uint32_t max_methods_per_type = 1u << (32 - handler_bits);

// The first word of a repeat record.  A header's first word is a handler
// word, whose id is below handler_mask (handler_table::add), so never this.
inline constexpr std::uint32_t repeat_marker = 0xFFFF'FFFFu;

constexpr std::size_t align4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }
constexpr std::size_t align8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }
// A full record, without the pad word that may precede it.
constexpr std::size_t request_bytes(std::size_t payload) { return sizeof(request_header) + align8(payload); }
constexpr std::size_t repeat_bytes(std::size_t payload) { return sizeof(repeat_marker) + align4(payload); }
// The largest full record: the header counts a payload's bytes in 32 bits.
inline constexpr std::size_t max_record_bytes = request_bytes(UINT32_MAX);

constexpr bool same_header(request_header const& a, request_header const& b) {
  return a.handler == b.handler && a.payload_bytes == b.payload_bytes && a.handle_index == b.handle_index &&
         a.handle_epoch == b.handle_epoch;
}

// What frees a buffer's bytes: nothing when they are borrowed (a request
// written straight into a transport's memory, transport::direct_reserve).
struct bytes_deleter {
  bool borrowed = false;
  void operator()(std::byte* p) const noexcept {
    if (!borrowed) delete[] p;
  }
};

// A buffer's first allocation; it doubles from there as requests fill it
// (buffer::reserve), and a recycled buffer keeps what it grew to.  Small,
// because a sender keeps a buffer per destination: from 4 KiB, the buffers
// that 1024 locations of one process kept for one another when all talked
// to all took 4 GB (examples/histogram --armi-locations=1024
// --updates=20000: 5.3 GB in all, 9.0 s on 2 cores; from 1 KiB 2.1 GB, 5.2 s).
inline constexpr std::size_t buffer_first_bytes = 1024;

// One aggregation buffer.  Owned by the location that allocated it; after the
// destination has executed it, it goes back to its owner's free queue.
struct buffer : mpsc_node {
  std::uint32_t owner = 0;   // location whose pool it belongs to
  std::uint32_t source = 0;  // sender of the requests in it
  std::uint32_t count = 0;   // requests in it
  std::uint32_t epoch = 0;   // fences its sender had completed when it sent it
  std::uint32_t dest = 0;    // where it goes (set by the sender's flush)
  std::uint32_t left = 1;    // sender: requests until it looks again (at the factor, or a --armi-max-delay check)
  bool urgent = false;       // holds a reply or a sync request: flush soon
  std::size_t size = 0;      // bytes used
  std::size_t room = 0;      // sender: bytes it may hold, the byte cap or less (its capacity)
  std::size_t cursor = 0;    // receiver: next request to execute
  std::size_t capacity = 0;
  std::int64_t born_ns = 0;  // sender, under --armi-max-delay: when its first request went in
  std::int64_t half_ns = 0;  // sender, under auto: when it held half the factor
  // The header of the last full record: the sender's last written (what a
  // repeat would repeat; meaningful while count != 0), the receiver's last
  // framed (what a repeat at its cursor repeats; meaningful past cursor 0).
  request_header last{};
  std::unique_ptr<std::byte[], bytes_deleter> data;

  void reset() {
    count = 0;
    size = 0;
    cursor = 0;
    urgent = false;
    born_ns = 0;
    half_ns = 0;
  }
  // Room for n bytes, keeping the first `size`: the capacity doubles from
  // buffer_first_bytes until it holds n.  Bytes that were borrowed
  // (bytes_deleter) are left to their owner.
  void reserve(std::size_t n) {
    if (n <= capacity) return;
    std::size_t cap = capacity == 0 ? buffer_first_bytes : capacity;
    while (cap < n) cap *= 2;
    // new std::byte[] is max_align_t aligned, so headers at 8-byte offsets are aligned.
    decltype(data) bigger(new std::byte[cap]);
    if (size != 0) std::memcpy(bigger.get(), data.get(), size);
    data = std::move(bigger);
    capacity = cap;
  }
};

// A recycled buffer from `pool` (or a new one), emptied, with room for `bytes`:
// how a backend takes a buffer for a message that has arrived.
inline buffer* take_pooled(std::vector<buffer*>& pool, std::size_t bytes) {
  buffer* b;
  if (!pool.empty()) {
    b = pool.back();
    pool.pop_back();
  } else {
    b = new buffer;
  }
  b->reset();
  b->reserve(bytes);
  return b;
}

}  // namespace armi::detail
