// The wire format of a request, its writer and its reader: the one place
// that knows where each byte of a record goes.  The send path (location,
// the stubs) writes records with the functions below and the receive path
// (the dispatcher) frames them with frame_record.
//
// A buffer holds requests for one destination, back to back, in two forms:
//   full:    [pad word] request_header (16 bytes) | payload | zero padding
//            to 8 bytes; the header starts at a multiple of 8, so when the
//            record before ends 4 bytes past one, a zero pad word comes first;
//   repeat:  repeat word (4 bytes) | count payloads back to back, unpadded |
//            zero padding to 4 bytes, at any multiple of 4: count requests
//            (1 to 4096, in the word) with the header of the full record
//            before it in the buffer (same handler word, target handle and
//            payload size), which must exist.
//   route:   route word (4 bytes) | destination (4) | [origin (4)], at any
//            multiple of 4 (--armi-routing): the requests after it, up to
//            the next route record or the end, are for that destination and
//            were issued by that origin (by the buffer's sender when the word
//            carries none).  A location that is not their destination passes
//            them on.  The full record a repeat repeats may stand before a
//            route record, and be another origin's: a repeat's header is
//            read as its own origin's.
//   hop:     hop word (4 bytes) | one payload, unpadded | zero padding to
//            4 bytes, at any multiple of 4: a route record and a repeat of
//            one request in a word, for the records a routed stream of
//            random destinations writes most.  The word names the
//            segment's destination and origin relative to the buffer's
//            sender and receiver on the route grid (core/routes.hpp,
//            route_grid::hop_code); the request has the header of the
//            full record before it, which must exist.
// Repeats carry streams of fine-grain requests to one method of one object
// at the size of their arguments (8 bytes a request for an 8-byte argument,
// against 24 in full records); only the fast path of fixed-size arguments
// writes them, counting each request into the buffer's last record.  The
// header names the handler by registry id (never a code address) and the
// target by handle; the receiver validates both before dispatch, and a
// repeat with nothing before it, a pad word that is not zero or payloads
// that run past the end are a malformed buffer, never executed (a repeat is
// checked whole, at its word, before any of its requests runs).  Payloads of
// the built-in handlers start with the prefixes below.
#pragma once

#include <armi/serialization/bulk_copies.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace armi::detail {

struct request_header {
  std::uint32_t handler;        // low 20 bits: handler id; high 12 bits: method index
  std::uint32_t payload_bytes;  // bytes of payload after the header (unpadded)
  std::uint32_t handle_index;   // target object (unused by replies and collectives)
  std::uint32_t handle_epoch;
};
static_assert(sizeof(request_header) == 16);
static_assert(offsetof(request_header, payload_bytes) == 4 && offsetof(request_header, handle_index) == 8 &&
              offsetof(request_header, handle_epoch) == 12);

inline constexpr std::uint32_t handler_bits = 20;
inline constexpr std::uint32_t handler_mask = (1u << handler_bits) - 1;
inline constexpr std::uint32_t max_methods_per_type = 1u << (32 - handler_bits);

// The first word of a repeat record: handler_mask in the bits of a handler
// id (an id no handler gets: handler_table::add), its count less one in the
// bits of a method index.
inline constexpr std::uint32_t max_repeat_count = 1u << (32 - handler_bits);
constexpr std::uint32_t repeat_word(std::uint32_t count) { return handler_mask | ((count - 1) << handler_bits); }
constexpr bool is_repeat_word(std::uint32_t word) { return (word & handler_mask) == handler_mask; }
constexpr std::uint32_t repeat_count(std::uint32_t word) { return (word >> handler_bits) + 1; }
static_assert(repeat_count(repeat_word(1)) == 1 && repeat_count(repeat_word(max_repeat_count)) == max_repeat_count);
// The first word of a route record: route_id in the bits of a handler id
// (an id no handler gets either), and route_has_origin when an origin follows.
inline constexpr std::uint32_t route_id = handler_mask - 1;
inline constexpr std::uint32_t route_has_origin = 1u << handler_bits;
// The first word of a hop record: hop_id in the bits of a handler id (an id
// no handler gets either), the route grid's code in the 12 bits above.
inline constexpr std::uint32_t hop_id = handler_mask - 2;
inline constexpr std::uint32_t max_hop_code = (1u << (32 - handler_bits)) - 1;
constexpr std::uint32_t hop_word(std::uint32_t code) { return hop_id | (code << handler_bits); }
constexpr bool is_hop_word(std::uint32_t word) { return (word & handler_mask) == hop_id; }
constexpr std::uint32_t hop_code(std::uint32_t word) { return word >> handler_bits; }
static_assert(hop_code(hop_word(max_hop_code)) == max_hop_code && is_hop_word(hop_word(0)));
// A route record's origin when it carries none: the buffer's sender.
inline constexpr std::uint32_t route_no_origin = UINT32_MAX;
constexpr bool is_route_word(std::uint32_t word) { return (word & handler_mask) == route_id; }
// The most bytes a route record takes, the zero bytes before it included.
inline constexpr std::size_t max_route_bytes = 3 + 3 * sizeof(std::uint32_t);
// What frame_record returns for a route or hop record at the cursor: not
// an error (read it with read_route, or a hop word with hop_code).
inline constexpr char route_follows[] = "a route record";
// What a sender keeps free beyond a record's request_bytes: the zero bytes
// before a full record (a pad word) or a repeat (up to 3, after a repeat).
inline constexpr std::size_t record_slack = 8;

constexpr std::size_t align4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }
constexpr std::size_t align8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }
// A full record, without the pad word that may precede it.
constexpr std::size_t request_bytes(std::size_t payload) { return sizeof(request_header) + align8(payload); }
// The largest full record: the header counts a payload's bytes in 32 bits.
inline constexpr std::size_t max_record_bytes = request_bytes(UINT32_MAX);

// A buffer's last header before any full record: a handler word no record
// carries, so that a repeat or hop record with no full record before it is
// seen as such (frame_record, dispatcher).
inline constexpr request_header no_header{handler_mask, 0, 0, 0};
// Whether h is no_header: no full record framed yet (a full record's
// handler word never has the id bits of a repeat).
constexpr bool is_no_header(request_header const& h) { return (h.handler & handler_mask) == handler_mask; }

constexpr bool same_header(request_header const& a, request_header const& b) {
  return a.handler == b.handler && a.payload_bytes == b.payload_bytes && a.handle_index == b.handle_index &&
         a.handle_epoch == b.handle_epoch;
}

// ---- payload prefixes of the built-in handlers --------------------------------

// A reply: the tag of the request it answers, then reply_status; the value
// or the error follows, packed.
struct reply_prefix {
  std::uint64_t tag;
  std::uint32_t status;
  std::uint32_t pad = 0;
};
static_assert(sizeof(reply_prefix) == 16 && offsetof(reply_prefix, status) == 8 && offsetof(reply_prefix, pad) == 12);

// A collective contribution or result: the group's key, the collective's
// sequence number in it, its phase, and whether the packed bytes that follow
// are a value or an error.
struct collective_prefix {
  std::uint64_t group;
  std::uint64_t sequence;
  std::uint32_t phase;
  std::uint32_t status;
};
static_assert(sizeof(collective_prefix) == 24 && offsetof(collective_prefix, sequence) == 8 &&
              offsetof(collective_prefix, phase) == 16 && offsetof(collective_prefix, status) == 20);

// Ahead of a reduce_rmi request's arguments (and its subtree's member runs):
// where the receiver's subtree sends its values, as a collective message
// under this key, and to which location.
struct reduce_prefix {
  std::uint64_t key;
  std::uint32_t report_to;
  std::uint32_t pad;
};
static_assert(sizeof(reduce_prefix) == 16 && offsetof(reduce_prefix, report_to) == 8 &&
              offsetof(reduce_prefix, pad) == 12);

// A method definition: the handler id and the sender's method index; a
// method_ref and a check word over both follow (define_stub).
struct define_prefix {
  std::uint32_t handler;
  std::uint32_t index;
};
static_assert(sizeof(define_prefix) == 8 && offsetof(define_prefix, index) == 4);

// Prefixes go in and out by memcpy: a full record's payload is 8-aligned, a repeat's anywhere.
template <class Prefix>
[[gnu::always_inline]] inline void write_prefix(std::byte* at, Prefix const& p) {
  std::memcpy(at, &p, sizeof p);
}
template <class Prefix>
[[gnu::always_inline]] inline Prefix read_prefix(std::byte const* at) {
  Prefix p;
  std::memcpy(&p, at, sizeof p);
  return p;
}

// ---- writing -------------------------------------------------------------------
// `b` is a buffer (buffer.hpp): bytes at b.data, b.size of them used, b.last
// the header of its last full record, b.count its requests.

// Writes a full record's start at b's end, adding nothing to b: zero bytes
// up to the next multiple of 8 first (a pad word after a full record; after
// a repeat there may be 1 to 7; their count goes into pad_word), then
// header.  Returns where the payload goes.
[[gnu::always_inline]] inline std::byte* place_header(auto const& b, request_header const& header,
                                                      std::size_t& pad_word) {
  std::byte* p = b.data.get() + b.size;
  pad_word = align8(b.size) - b.size;
  if (pad_word != 0) std::memset(p, 0, pad_word);
  std::memcpy(p + pad_word, &header, sizeof header);
  return p + pad_word + sizeof header;
}
// place_header, with the padding counted in b.size and header as b.last at
// once (and no repeat open).  The caller writes the payload and its padding
// and adds the record's request_bytes.
[[gnu::always_inline]] inline std::byte* write_header(auto& b, request_header const& header) {
  std::size_t pad_word;
  std::byte* const p = place_header(b, header, pad_word);
  b.size += pad_word;
  b.last = header;
  b.repeat_at = 0;
  return p;
}
// Zeroes the padding after a payload of n bytes that ends at p + n, up to `padded`.
[[gnu::always_inline]] inline void pad_payload(std::byte* p, std::size_t n, std::size_t padded) {
  if (padded != n) std::memset(p + n, 0, padded - n);
}

// write_record's new repeat, where the last record is a route record
// that has a hop word: the route record gives way to a hop record, this
// request's; returns where its payload goes, or nullptr where the route
// record is not the last.  A request of the same segment after it opens a
// repeat.
[[gnu::noinline]] inline std::byte* write_hop(auto& b, std::size_t payload, std::size_t& record) {
  std::uint32_t first;
  std::memcpy(&first, b.data.get() + b.hop_route_at, sizeof first);
  std::size_t const route = (first & route_has_origin) != 0 ? 3 * sizeof first : 2 * sizeof first;
  if (b.hop_route_at + route != b.size) {  // records came after it: it stays whole
    b.hop_word = 0;
    return nullptr;
  }
  std::memcpy(b.data.get() + b.hop_route_at, &b.hop_word, sizeof first);
  b.size = b.hop_route_at;  // the hop word is this request's record: it counts with the payload
  b.hop_word = 0;
  b.repeat_at = 0;
  record = sizeof first + payload;
  return b.data.get() + b.size + sizeof first;
}

// The record of a request of `payload` bytes with header hdr at b's end:
// one more request in the repeat record at b's end, or a new repeat, when
// b's last full record has hdr; else a full record.  b must have room for
// request_bytes(payload) + record_slack.  Writes all but the payload (its
// padding included) and returns where it goes; `record` is what the caller
// adds to b.size once it is written.  Inlined with a constant payload size
// by write_fixed_record, the fast path of fixed-size arguments.
[[gnu::always_inline]] inline std::byte* write_record(auto& b, request_header const& hdr, std::size_t payload,
                                                     std::size_t& record) {
  std::size_t const full = request_bytes(payload);
  std::byte* p = b.data.get() + b.size;
  if (b.count != 0 && same_header(b.last, hdr)) {
    if (b.repeat_at != 0) {  // one more in the open repeat, unless it is full
      std::uint32_t word;
      std::memcpy(&word, b.data.get() + b.repeat_at, sizeof word);
      if (repeat_count(word) != max_repeat_count) [[likely]] {
        word += 1u << handler_bits;
        std::memcpy(b.data.get() + b.repeat_at, &word, sizeof word);
        record = payload;
        return p;
      }
    }
    if (b.hop_word != 0) [[unlikely]]  // a route record that has one was written in b
      if (std::byte* at = write_hop(b, payload, record)) return at;
    std::size_t const pad = align4(b.size) - b.size;  // after a full repeat
    if (pad != 0) std::memset(p, 0, pad);
    std::uint32_t const word = repeat_word(1);
    std::memcpy(p + pad, &word, sizeof word);
    b.repeat_at = static_cast<std::uint32_t>(b.size + pad);
    record = pad + sizeof word + payload;
    return p + pad + sizeof word;
  }
  p = write_header(b, hdr);
  record = full;
  if (full != sizeof hdr + payload) pad_payload(p, payload, full - sizeof hdr);
  return p;
}
template <std::size_t Payload>
[[gnu::always_inline]] inline std::byte* write_fixed_record(auto& b, request_header const& hdr, std::size_t& record) {
  return write_record(b, hdr, Payload, record);
}
// write_record with its payload copied from `payload` (a request passed on
// as it came); returns what to add to b.size.
inline std::size_t write_copied_record(auto& b, request_header const& hdr, std::byte const* payload) {
  std::size_t record;
  std::byte* const p = write_record(b, hdr, hdr.payload_bytes, record);
  if (hdr.payload_bytes != 0) std::memcpy(p, payload, hdr.payload_bytes);
  count_copy(hdr.payload_bytes);
  return record;
}

// Starts a route record at b's end (zero bytes up to a multiple of 4
// first), counted in b.size: the requests written next are for dest, from
// origin (route_no_origin: from b's sender).  b must have room for
// max_route_bytes.  A repeat written next starts anew.  hop: the route as
// a hop word, or 0 where it has none; if the record right after this one
// is a repeat, the two become one hop record (write_record).
inline void write_route(auto& b, std::uint32_t dest, std::uint32_t origin, std::uint32_t hop) {
  std::byte* p = b.data.get() + b.size;
  std::size_t const pad = align4(b.size) - b.size;
  if (pad != 0) std::memset(p, 0, pad);
  bool const has_origin = origin != route_no_origin;
  std::uint32_t const words[3] = {route_id | (has_origin ? route_has_origin : 0u), dest, origin};
  std::size_t const bytes = (has_origin ? 3 : 2) * sizeof(std::uint32_t);
  std::memcpy(p + pad, words, bytes);
  b.size += pad + bytes;
  b.repeat_at = 0;
  b.hop_word = hop;
  b.hop_route_at = static_cast<std::uint32_t>(b.size - bytes);
}

// ---- reading -------------------------------------------------------------------

// Reads the route record at `cursor` (where frame_record found one): its
// destination, its origin (route_no_origin: none given) and where the next record
// starts.  Returns nullptr, or why it does not frame.
inline char const* read_route(std::byte const* data, std::size_t size, std::size_t cursor, std::uint32_t& dest,
                              std::uint32_t& origin, std::size_t& next) {
  std::uint32_t word;
  std::memcpy(&word, data + cursor, sizeof word);  // frame_record has seen it
  if ((word & ~(handler_mask | route_has_origin)) != 0) return "a route record with unknown flags";
  std::size_t const bytes = (word & route_has_origin) != 0 ? 3 * sizeof word : 2 * sizeof word;
  if (size - cursor < bytes) return "truncated route record";
  std::memcpy(&dest, data + cursor + sizeof word, sizeof dest);
  origin = route_no_origin;
  if ((word & route_has_origin) != 0) std::memcpy(&origin, data + cursor + 2 * sizeof word, sizeof origin);
  next = cursor + bytes;
  return nullptr;
}

// Frames the request at `cursor` of the size bytes at data: where its
// payload starts into payload, where the next request starts into next
// (past this one's padding, or the end: a last record may come unpadded),
// and whether it is a repeat.  A full record's header goes into h and into
// last (the buffer's last framed header); a repeat leaves h as it is, which
// must be the header it repeats.  repeat_left counts the requests of the
// repeat record at cursor not yet framed (the buffer keeps it between
// calls).  Returns nullptr, route_follows (a route record at cursor, h and
// last untouched), or why the request does not frame.  For a full
// record next is cursor + min(request_bytes(payload), left), as the header
// starts at a multiple of 8; the align8 form is fewer steps on the receive
// loop's critical path.
[[gnu::always_inline]] inline char const* frame_record(request_header& last, std::uint32_t& repeat_left,
                                                       std::byte const* data, std::size_t size, std::size_t cursor,
                                                       request_header& h, std::byte const*& payload,
                                                       std::size_t& next, bool& repeat) {
  if (repeat_left != 0) {  // the next request of a repeat, checked whole at its word
    repeat = true;
    payload = data + cursor;
    next = cursor + h.payload_bytes;
    if (--repeat_left == 0) next = std::min(align4(next), size);
    return nullptr;
  }
  std::size_t left = size - cursor;
  std::uint32_t first;
  if (left < sizeof first) [[unlikely]]
    return "truncated request header";
  std::memcpy(&first, data + cursor, sizeof first);
  repeat = is_repeat_word(first);
  if (repeat) {
    if (cursor == 0 || is_no_header(h)) [[unlikely]]
      return "a repeated request with no request before it";
    std::uint32_t const count = repeat_count(first);
    if (std::uint64_t{count} * h.payload_bytes > left - sizeof first) [[unlikely]]
      return "payload runs past the end of the buffer";
    repeat_left = count - 1;
    payload = data + cursor + sizeof first;
    next = cursor + sizeof first + h.payload_bytes;
    if (repeat_left == 0) next = std::min(align4(next), size);
    return nullptr;
  }
  if (is_route_word(first) || is_hop_word(first)) [[unlikely]]
    return route_follows;
  if (cursor & 4) {  // a pad word, then a header
    if (first != 0) [[unlikely]]
      return "a request header that is not at a multiple of 8 bytes";
    cursor += sizeof first;
    left -= sizeof first;
  }
  if (left < sizeof h) [[unlikely]]
    return "truncated request header";
  std::memcpy(&h, data + cursor, sizeof h);
  if (h.payload_bytes > left - sizeof h) [[unlikely]]
    return "payload runs past the end of the buffer";
  last = h;
  payload = data + cursor + sizeof h;
  next = std::min(align8(cursor + sizeof h + h.payload_bytes), size);
  return nullptr;
}

}  // namespace armi::detail
