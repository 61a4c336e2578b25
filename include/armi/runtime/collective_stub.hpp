// The handler of collective messages (collective_stub): a group
// collective's contributions, results and failures, each kept in the
// receiver's mailbox (collective_mailbox.hpp) until the collective call there
// picks it up; and the sending side, packing a value or a failure once for
// every member it goes to.  The protocols that use them: collectives.hpp,
// tree_stubs.hpp.
#pragma once

#include <armi/core/error.hpp>
#include <armi/core/handlers.hpp>
#include <armi/core/wire.hpp>
#include <armi/runtime/args.hpp>
#include <armi/runtime/location.hpp>
#include <armi/runtime/reply_stub.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace armi::detail {

// ---- collectives ------------------------------------------------------------

// A contribution to (or the result of) a group collective, kept in the
// receiver's mailbox until the collective call there picks it up.  The
// prefix's fourth word says whether the bytes are a value or an error.
enum class collective_status : std::uint32_t { value = 0, failed = 1 };

struct collective_stub {
  static constexpr rmi_kind kind = rmi_kind::collective;
  static constexpr std::size_t prefix = sizeof(collective_prefix);
  static void invoke(location& ctx, location_id source, request_header h, std::byte const* payload) {
    if (h.payload_bytes < prefix) throw decode_error("armi: truncated collective message");
    auto const pre = read_prefix<collective_prefix>(payload);
    if (pre.status > static_cast<std::uint32_t>(collective_status::failed))
      throw decode_error("armi: collective message with an unknown status " + std::to_string(pre.status));
    ctx.collectives().messages()[{pre.group, pre.sequence, pre.phase}].push_back(
        {source, pre.status == static_cast<std::uint32_t>(collective_status::failed),
         std::vector<std::byte>(payload + prefix, payload + h.payload_bytes)});
    ctx.collectives().arrived();
  }
};

// The request's size for a collective message of n packed bytes.
constexpr std::size_t collective_request_bytes(std::size_t n) {
  return request_bytes(collective_stub::prefix + n);
}

// Sends bytes packed once (for every member they go to).
inline void send_collective(location& ctx, location_id dest, std::uint64_t key, std::uint64_t seq, std::uint32_t phase,
                            collective_status status, std::vector<std::byte> const& bytes) {
  request_header hdr{handler_id<collective_stub>::value, 0, 0, 0};
  std::byte* p = ctx.begin_request(dest, rmi_kind::collective, hdr, collective_stub::prefix + bytes.size());
  write_prefix(p, collective_prefix{key, seq, phase, static_cast<std::uint32_t>(status)});
  if (!bytes.empty()) std::memcpy(p + collective_stub::prefix, bytes.data(), bytes.size());
  ctx.end_request(dest, true);
}

// Packs v once for the collective messages to dests; too large for one of
// them, throws length_error before taking the memory.
template <class V>
std::vector<std::byte> pack_collective(location const& ctx, std::span<location_id const> dests, V const& v) {
  std::size_t const n = arg_pack<V>::measure(v);
  for (location_id d : dests) ctx.check_fits(d, collective_request_bytes(n));
  std::vector<std::byte> bytes(n);
  arg_pack<V>::write(bytes.data(), n, v);
  return bytes;
}

// A collective's failure: the exception's type, its message and where it was thrown.
inline std::vector<std::byte> pack_failure(std::string const& type, std::string const& what, location_id at) {
  using pack = arg_pack<std::string, std::string, location_id>;
  std::vector<std::byte> bytes(pack::measure(type, what, at));
  pack::write(bytes.data(), bytes.size(), type, what, at);
  return bytes;
}

// Called in a catch block: the exception being handled, packed as a
// collective's failure.
inline std::vector<std::byte> pack_current_failure(location_id at) {
  exception_text d;
  try {
    throw;
  } catch (std::exception const& e) {
    d = describe_exception(&e);
  } catch (...) {
    d = describe_exception(nullptr);
  }
  return pack_failure(d.type, d.what, at);
}

// Ends a failed collective on location me: the member where the failure
// happened rethrows its own exception (mine), every other one a remote_error
// that names it.
[[noreturn]] inline void throw_collective_failure(std::vector<std::byte> const& packed, location_id me,
                                                  std::exception_ptr const& mine) {
  unpacker u(packed.data(), packed.size());
  auto type = u.read<std::string>();
  auto what = u.read<std::string>();
  auto const at = u.read<location_id>();
  if (at == me && mine) std::rethrow_exception(mine);
  throw remote_error(what, std::move(type), at);
}

}  // namespace armi::detail
