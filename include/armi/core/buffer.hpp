// Aggregation buffers: one per destination being filled on the sender,
// one per arrival on the receiver.  What goes in them is core/wire.hpp's.
#pragma once

#include <armi/core/mpsc_queue.hpp>
#include <armi/core/wire.hpp>
#include <armi/serialization/bulk_copies.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace armi::detail {

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
// because a sender keeps a buffer per destination (docs/runtime-measurements.md,
// "First buffer size").
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
  // The requests being written (sender) or read (receiver) are for
  // segment_dest, from segment_origin; no_segment: for the buffer's
  // destination, from its source.  Routed (--armi-routing), a route record
  // starts each segment; a sender's open buffer names its segment's
  // destination here under every routing, which the routed send path's
  // index checks (outbox::out), so it sits beside size and room.
  static constexpr std::uint32_t no_segment = route_no_origin;
  std::uint32_t segment_dest = no_segment;
  std::uint32_t segment_origin = no_segment;
  bool urgent = false;       // holds a reply or a sync request: flush soon
  std::uint32_t repeat_left = 0;  // receiver: requests of the repeat record at cursor not yet framed
  std::size_t size = 0;      // bytes used
  std::size_t room = 0;      // sender: bytes it may hold, the byte cap or less (its capacity)
  std::size_t cursor = 0;    // receiver: next request to execute
  std::size_t capacity = 0;
  std::int64_t born_ns = 0;  // sender, under --armi-max-delay: when its first request went in
  std::int64_t half_ns = 0;  // sender, under auto: when it held half the factor
  // The header of the last full record: the sender's last written (what a
  // repeat would repeat; meaningful while count != 0), the receiver's last
  // framed (what a repeat or hop record at its cursor repeats); no_header
  // before the first.
  request_header last = no_header;
  std::uint32_t repeat_at = 0;    // sender: offset of the count of its open repeat record (core/wire.hpp), or 0
  // Sender, routed: the hop word of the route record at hop_route_at, or 0
  // (write_route, write_hop).
  std::uint32_t hop_word = 0;
  std::uint32_t hop_route_at = 0;
  std::unique_ptr<std::byte[], bytes_deleter> data;

  void reset() {
    last = no_header;
    count = 0;
    size = 0;
    cursor = 0;
    repeat_at = 0;
    hop_word = 0;
    repeat_left = 0;
    segment_dest = no_segment;
    segment_origin = no_segment;
    urgent = false;
    born_ns = 0;
    half_ns = 0;
  }
  // Room for n bytes, keeping the first `size`: the capacity doubles from
  // `first` (where it has none yet) until it holds n, but stops at `most`
  // (a sender's byte cap) when n is within it.  Bytes that were borrowed
  // (bytes_deleter) are left to their owner.
  void reserve(std::size_t n, std::size_t first = buffer_first_bytes, std::size_t most = SIZE_MAX) {
    if (n <= capacity) return;
    std::size_t cap = capacity == 0 ? std::max<std::size_t>(first, 64) : capacity;
    while (cap < n) cap *= 2;
    if (cap > most) cap = std::max(n, most);
    // new std::byte[] is max_align_t aligned, so headers at 8-byte offsets are aligned.
    decltype(data) bigger(new std::byte[cap]);
    if (size != 0) std::memcpy(bigger.get(), data.get(), size);
    count_copy(size);
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
  b->reserve(bytes, std::min(bytes, buffer_first_bytes));  // a small copy keeps a small buffer
  return b;
}

}  // namespace armi::detail
