// The handler of method definitions (define_stub): what a method index means,
// sent ahead of the first request that uses it to a location in another
// process (method_identity.hpp keeps the translations), with a check word,
// since its bytes become a code address.  Method stubs (stubs.hpp) send it.
#pragma once

#include <armi/core/handlers.hpp>
#include <armi/core/wire.hpp>
#include <armi/runtime/location.hpp>
#include <armi/serialization/packer.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace armi::detail {

// ---- method identity across processes ------------------------------------------

// "Your method index `remote` of handler `id`'s method type means this
// method_ref" (indices belong to the method type, shared by all kinds): sent
// once per (destination, method) ahead of the first request to a location in
// another process, in the same buffer stream, so it always arrives first.
//
// This is the one request whose bytes become a code address, and the range
// checks of method_table::define accept any even address of the executable:
// one damaged byte would make the receiver call into the middle of a
// function.  So the request carries a check word over its fields, and a
// definition that does not match it is rejected before it is registered.
struct define_stub {
  static constexpr rmi_kind kind = rmi_kind::define;
  static constexpr std::size_t fields_size = sizeof(define_prefix) + sizeof(method_ref);
  static constexpr std::size_t payload_size = fields_size + 8;        // then the check word

  // Any change confined to one 8-byte word of the fields changes the result
  // (each step is a bijection of the running value); others with odds 2^-64.
  static std::uint64_t check_word(std::byte const* fields) {
    std::uint64_t h = 0x6172'6d69'6465'6631;  // "armidef1"
    for (std::size_t i = 0; i < fields_size; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, fields + i, 8);
      h = (h ^ w) * 0x9e37'79b9'7f4a'7c15;
      h ^= h >> 29;
    }
    return h;
  }

  static void invoke(location& ctx, location_id source, request_header h, std::byte const* payload) {
    if (h.payload_bytes != payload_size) throw decode_error("armi: method definition of the wrong size");
    std::uint64_t check;
    std::memcpy(&check, payload + fields_size, 8);
    if (check != check_word(payload)) throw decode_error("armi: method definition damaged (check word mismatch)");
    auto const [id, remote] = read_prefix<define_prefix>(payload);
    auto const ref = read_prefix<method_ref>(payload + sizeof(define_prefix));
    handler_entry const* e = handler_table::instance().find(id);
    if (e == nullptr || e->define == nullptr)
      throw decode_error("armi: method definition for handler id " + std::to_string(id) + ", not a method stub");
    if (remote >= max_methods_per_type) throw decode_error("armi: method definition with an index out of range");
    std::uint32_t const local = e->define(ref);
    if (local == ~0u) throw decode_error("armi: method definition names no method of this executable");
    ctx.set_translation(source, e->method_type, remote, local);
  }

  static void send(location& ctx, location_id dest, std::uint32_t id, std::uint32_t index, method_ref const& ref) {
    request_header hdr{handler_id<define_stub>::value, 0, 0, 0};
    std::byte* p = ctx.begin_request(dest, kind, hdr, payload_size);
    write_prefix(p, define_prefix{id, index});
    write_prefix(p + sizeof(define_prefix), ref);
    std::uint64_t const check = check_word(p);
    std::memcpy(p + fields_size, &check, 8);
    ctx.end_request(dest, false);
  }
};

}  // namespace armi::detail
