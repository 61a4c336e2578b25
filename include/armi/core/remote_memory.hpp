// One-sided operations a transport carries out at the owner by itself, with
// no request to the owner's runtime (transport::remote_memory; sp2: SP-AM
// request and reply handlers, as Split-C's global pointers run on SP-AM).
// The operation's encoding, shared by the transport's two ends, and the
// caller's end of an operation in flight.
//
// An operation names a region (a global_array's handle index: every location
// exposes its block of the array under it), a byte offset in the owner's
// block, a code and an element width.  Its message is a header, then the
// operands:
//   get        the byte count (8 bytes)         result: those bytes
//   put        the bytes                         result: none
//   add_int    the addend (width bytes)          result: the old value
//   add_float  the addend (width 4 or 8)         result: the old value
//   exchange   expected, desired (width each)    result: the old value
// Short header (8 bytes, when the region is below 2^16 and the offset below
// 2^32, so that an 8-byte get, put or add fits in one 16-byte SP-AM request):
//   code | width log2 << 4, 0, region (2), offset (4)
// Long header (16 bytes): code | long_header, width log2 << 4, 0 (2),
// region (4), offset (8).
//
// Thread safety: plain functions; apply_remote runs on the owner's thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace armi::detail {

enum class remote_code : std::uint8_t { get = 0, put = 1, add_int = 2, add_float = 3, exchange = 4 };
inline constexpr std::uint8_t remote_code_count = 5;
inline constexpr std::uint8_t remote_long_header = 0x08;

struct remote_op {
  remote_code code;
  std::uint8_t width;  // bytes of an element: 1, 2, 4 or 8 (get and put: of the array's type)
  std::uint32_t region;
  std::uint64_t offset;  // bytes into the owner's block
};

// Bytes of the result the owner sends back for op (a get of get_bytes).
inline std::size_t remote_result_bytes(remote_op const& op, std::uint64_t get_bytes) {
  switch (op.code) {
    case remote_code::get:
      return get_bytes;
    case remote_code::put:
      return 0;
    default:
      return op.width;
  }
}

inline std::uint8_t width_log2(std::uint8_t width) {
  return width == 1 ? 0 : width == 2 ? 1 : width == 4 ? 2 : 3;
}

// Appends op's header to out (short when it fits).
inline void write_remote_header(std::vector<std::byte>& out, remote_op const& op) {
  std::byte h[16] = {};
  h[0] = static_cast<std::byte>(op.code);
  h[1] = static_cast<std::byte>(width_log2(op.width) << 4);
  std::size_t n = 8;
  if (op.region < (1u << 16) && op.offset < (std::uint64_t{1} << 32)) {
    std::uint16_t const region = static_cast<std::uint16_t>(op.region);
    std::uint32_t const offset = static_cast<std::uint32_t>(op.offset);
    std::memcpy(h + 2, &region, 2);
    std::memcpy(h + 4, &offset, 4);
  } else {
    h[0] |= static_cast<std::byte>(remote_long_header);
    std::memcpy(h + 4, &op.region, 4);
    std::memcpy(h + 8, &op.offset, 8);
    n = 16;
  }
  std::size_t const at = out.size();
  out.resize(at + n);
  std::memcpy(out.data() + at, h, n);
}

// Reads a header from the front of `message`; the operands follow at
// `header_bytes`.  Empty string when well formed, else what is wrong.
inline std::string read_remote_header(std::span<std::byte const> message, remote_op& op, std::size_t& header_bytes) {
  if (message.size() < 8) return "a one-sided operation shorter than its header";
  auto const first = static_cast<std::uint8_t>(message[0]), second = static_cast<std::uint8_t>(message[1]);
  std::uint8_t const code = first & 0x07;
  if (code >= remote_code_count || (first & ~(0x07 | remote_long_header)) != 0 || (second & 0x0f) != 0 ||
      (second >> 4) > 3)
    return "a one-sided operation with an unknown code";
  op.code = static_cast<remote_code>(code);
  op.width = static_cast<std::uint8_t>(1u << (second >> 4));
  if ((first & remote_long_header) == 0) {
    std::uint16_t region;
    std::uint32_t offset;
    std::memcpy(&region, message.data() + 2, 2);
    std::memcpy(&offset, message.data() + 4, 4);
    op.region = region;
    op.offset = offset;
    header_bytes = 8;
  } else {
    if (message.size() < 16) return "a one-sided operation shorter than its header";
    std::memcpy(&op.region, message.data() + 4, 4);
    std::memcpy(&op.offset, message.data() + 8, 8);
    header_bytes = 16;
  }
  return {};
}

namespace remote_detail {
template <class U>
void atomic_op(remote_code code, std::byte* at, std::byte const* operands, std::byte* result) {
  U a, b;
  std::memcpy(&a, operands, sizeof a);
  std::atomic_ref<U> cell(*reinterpret_cast<U*>(at));
  U old;
  if (code == remote_code::exchange) {
    std::memcpy(&b, operands + sizeof a, sizeof b);
    old = a;
    cell.compare_exchange_strong(old, b);
  } else {
    old = cell.fetch_add(a);
  }
  std::memcpy(result, &old, sizeof old);
}
// Integers add as unsigned (two's complement: the same bits as signed);
// exchange compares bytes, as compare_exchange on any type of that width.
inline void integer_op(std::uint8_t width, remote_code code, std::byte* at, std::byte const* operands,
                       std::byte* result) {
  switch (width) {
    case 1:
      atomic_op<std::uint8_t>(code, at, operands, result);
      break;
    case 2:
      atomic_op<std::uint16_t>(code, at, operands, result);
      break;
    case 4:
      atomic_op<std::uint32_t>(code, at, operands, result);
      break;
    default:
      atomic_op<std::uint64_t>(code, at, operands, result);
      break;
  }
}
}  // namespace remote_detail

// What became of an operation at the owner: applied, refused as malformed
// (a forged message: the run ends), or refused because it reaches past the
// owner's block (the caller checked against its own block: the arrays'
// sizes differ, an error for the caller).
enum class remote_outcome : std::uint8_t { applied, malformed, out_of_range };

// Checks op's operands (operand_bytes of them) against a block of
// block_bytes, and for a well-formed operation applies it to the block at
// base, writing its result into `result` (resized).  Anything but applied
// leaves the block untouched and says why in `why`.
inline remote_outcome apply_remote(remote_op const& op, std::byte* base, std::uint64_t block_bytes,
                                   std::byte const* operands, std::size_t operand_bytes, std::vector<std::byte>& result,
                                   std::string& why) {
  std::uint64_t touched = op.width;
  std::size_t expected = op.width;
  auto refuse = [&why](remote_outcome o, std::string text) {
    why = std::move(text);
    return o;
  };
  if (op.code == remote_code::get) {
    if (operand_bytes != 8) return refuse(remote_outcome::malformed, "a one-sided get without its byte count");
    std::memcpy(&touched, operands, 8);
  } else if (op.code == remote_code::put) {
    touched = expected = operand_bytes;
  } else if (op.code == remote_code::exchange) {
    expected = 2 * std::size_t{op.width};
  } else if (op.code == remote_code::add_float && op.width != 4 && op.width != 8) {
    return refuse(remote_outcome::malformed, "a one-sided floating-point add of width " + std::to_string(op.width));
  }
  if (op.code != remote_code::get && operand_bytes != expected)
    return refuse(remote_outcome::malformed, "a one-sided operation with " + std::to_string(operand_bytes) +
                                                 " bytes of operands (" + std::to_string(expected) + " expected)");
  bool const atomic = op.code != remote_code::get && op.code != remote_code::put;
  if (atomic && op.offset % op.width != 0) return refuse(remote_outcome::malformed, "a misaligned one-sided atomic");
  if (op.offset > block_bytes || touched > block_bytes - op.offset)
    return refuse(remote_outcome::out_of_range, "a one-sided operation on bytes [" + std::to_string(op.offset) + ", " +
                                                    std::to_string(op.offset + touched) + ") of a block of " +
                                                    std::to_string(block_bytes) + " bytes");
  std::byte* at = base + op.offset;
  result.resize(remote_result_bytes(op, touched));
  switch (op.code) {
    case remote_code::get:
      std::memcpy(result.data(), at, touched);
      break;
    case remote_code::put:
      std::memcpy(at, operands, touched);
      break;
    case remote_code::add_float:
      if (op.width == 4)
        remote_detail::atomic_op<float>(op.code, at, operands, result.data());
      else
        remote_detail::atomic_op<double>(op.code, at, operands, result.data());
      break;
    default:
      remote_detail::integer_op(op.width, op.code, at, operands, result.data());
  }
  return remote_outcome::applied;
}

// The caller's end of an operation in flight: the transport calls done()
// with the result bytes, or failed() with the owner's error (its type as
// remote_error names types, and what), once, on the caller's thread, outside
// its message handlers (in receive()), after which it forgets the operation.
struct remote_completion {
  virtual void done(std::span<std::byte const> result) = 0;
  virtual void failed(std::string const& type, std::string const& what, std::uint32_t owner) = 0;

 protected:
  ~remote_completion() = default;
};

}  // namespace armi::detail
