// The SP-AM packet: a 40-byte header and up to packet_bytes - 40 bytes of
// payload.  Data packets carry a sequence number on their (source,
// destination) link; every packet carries the sender's cumulative
// acknowledgement and receive window for the reverse link.  The header is
// guarded by a check word: a packet whose header does not match it is
// corrupt and is never acted on.
//
// Thread safety: plain values.
#pragma once

#include <armi/backend/sp2/model.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace armi::detail::sp2 {

enum class packet_kind : std::uint8_t { data = 1, ack = 2, nack = 3 };

// packet_header::flags
inline constexpr std::uint8_t flag_first = 1;  // first fragment of a message
inline constexpr std::uint8_t flag_last = 2;   // last fragment of a message
inline constexpr std::uint8_t flag_bulk = 4;   // a bulk (store) message, not a short one
inline constexpr std::uint8_t flag_reply = 8;  // sent by a request handler's reply

struct packet_header {
  std::uint32_t check = 0;  // check_word() of the rest of the header
  std::uint16_t src = 0;
  std::uint16_t dst = 0;
  std::uint32_t seq = 0;     // data: sequence number on src->dst, from 1; control: 0
  std::uint32_t ack = 0;     // every seq < ack on dst->src has been received
  std::uint32_t window = 0;  // dst may send seq < window on dst->src without overflowing src's queue
  packet_kind kind = packet_kind::data;
  std::uint8_t handler = 0;  // data: AM handler id
  std::uint8_t flags = 0;
  std::uint8_t reserved = 0;
  std::uint16_t length = 0;  // payload bytes in this packet
  std::uint16_t pad = 0;
  std::uint32_t message_bytes = 0;  // data: payload bytes of the whole message
  std::int64_t stamp = 0;           // data: emulated arrival time at dst (ns)
};
static_assert(sizeof(packet_header) == header_bytes);

inline std::uint32_t check_word(packet_header const& h) {
  // FNV-1a over the header after the check word, salted so that an all-zero
  // header does not pass.
  unsigned char bytes[sizeof h];
  std::memcpy(bytes, &h, sizeof h);
  std::uint32_t x = 0x811c9dc5u ^ 0x53503241u;  // "SP2A"
  for (std::size_t i = sizeof h.check; i < sizeof h; ++i) x = (x ^ bytes[i]) * 0x01000193u;
  return x;
}

inline void seal(packet_header& h) { h.check = check_word(h); }

}  // namespace armi::detail::sp2
