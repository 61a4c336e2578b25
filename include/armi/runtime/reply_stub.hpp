// The answer to a request: the handler of reply messages (reply_stub), and
// what a callee sends back, in place when the tag names an answer cell
// (core/answers.hpp) or as a reply message, a value or the error its target
// threw.  The caller's side of a reply is reply.hpp; method stubs
// (stubs.hpp) and tree stubs send their answers from here.
#pragma once

#include <armi/core/answers.hpp>
#include <armi/core/error.hpp>
#include <armi/core/handlers.hpp>
#include <armi/core/wire.hpp>
#include <armi/runtime/args.hpp>
#include <armi/runtime/location.hpp>
#include <armi/runtime/reply.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>

namespace armi::detail {

// ---- replies -------------------------------------------------------------

struct reply_stub {
  static constexpr rmi_kind kind = rmi_kind::reply;
  static void invoke(location& ctx, location_id source, request_header h, std::byte const* payload) {
    if (h.payload_bytes < sizeof(reply_prefix)) throw decode_error("armi: truncated reply");
    auto const pre = read_prefix<reply_prefix>(payload);
    unpacker u(payload + sizeof pre, h.payload_bytes - sizeof pre);
    if (!ctx.replies().deliver(pre.tag, u, static_cast<reply_status>(pre.status), source))
      throw decode_error("armi: reply for a request this location did not make");
  }
};

// ---- answers in place (answers.hpp) ---------------------------------------------

// The callee's side: writes the value (nullptr for void) into the cell the
// tag names and publishes it.
template <class R>
void answer_in_place([[maybe_unused]] location& ctx, [[maybe_unused]] location_id caller,
                     [[maybe_unused]] std::uint64_t tag, [[maybe_unused]] R const* value) {
  if constexpr (answer_in_cell<R>) {
    answer_cell& c = ctx.answer_cell_for(caller, tag);
    c.status = answer_status::value;
    if (value != nullptr) std::memcpy(c.value, value, sizeof(R));
    ctx.post_answer(caller, c, tag);
  } else {
    throw_decode_error("armi: request tag names an answer cell for a result that needs a reply message");
  }
}

// ... or the error, as a remote_error that the caller takes over.
inline void answer_error_in_place(location& ctx, location_id caller, std::uint64_t tag, std::string const& type,
                                  std::string const& what) {
  answer_cell& c = ctx.answer_cell_for(caller, tag);
  auto* e = new remote_error(what, type, ctx.id());
  c.status = answer_status::error;
  std::memcpy(c.value, &e, sizeof e);
  ctx.post_answer(caller, c, tag);
}

// The caller's side, once the cell holds its answer: the value, or the
// error thrown.
template <class R>
R take_answer(answer_cell& c) {
  if (c.status == answer_status::error) {
    remote_error* e;
    std::memcpy(&e, c.value, sizeof e);
    std::unique_ptr<remote_error> const owned(e);
    throw remote_error(*owned);
  }
  if constexpr (!std::is_void_v<R>) {
    raw_storage<R> r;
    std::memcpy(r.bytes, c.value, sizeof(R));
    return r.get();
  }
}

// ---- reply messages -----------------------------------------------------------

// Sends the answer to a request: a value (value == nullptr for void) or an
// error with the exception's type and message.  In place when the tag names
// a cell.
template <class R>
void send_reply(location& ctx, location_id dest, std::uint64_t tag, R const* value) {
  if (is_answer_tag(tag)) return answer_in_place(ctx, dest, tag, value);
  std::size_t const body = value == nullptr ? 0 : arg_pack<R>::measure(*value);
  request_header hdr{handler_id<reply_stub>::value, 0, 0, 0};
  std::byte* p = ctx.begin_request(dest, rmi_kind::reply, hdr, sizeof(reply_prefix) + body);
  write_prefix(p, reply_prefix{tag, static_cast<std::uint32_t>(reply_status::value)});
  if (value != nullptr) arg_pack<R>::write(p + sizeof(reply_prefix), body, *value);
  ctx.end_request(dest, true);
}

inline void send_error_reply(location& ctx, location_id dest, std::uint64_t tag, std::string const& type,
                             std::string const& what) {
  if (is_answer_tag(tag)) return answer_error_in_place(ctx, dest, tag, type, what);
  std::size_t const body = arg_pack<std::string, std::string>::measure(type, what);
  request_header hdr{handler_id<reply_stub>::value, 0, 0, 0};
  std::byte* p = ctx.begin_request(dest, rmi_kind::reply, hdr, sizeof(reply_prefix) + body);
  write_prefix(p, reply_prefix{tag, static_cast<std::uint32_t>(reply_status::error)});
  arg_pack<std::string, std::string>::write(p + sizeof(reply_prefix), body, type, what);
  ctx.end_request(dest, true);
}

// An exception as a remote_error carries it: its type's name and its
// message (e nullptr: something not derived from std::exception).
struct exception_text {
  std::string type, what;
};
inline exception_text describe_exception(std::exception const* e) {
  if (e != nullptr) return {demangle(typeid(*e).name()), e->what()};
  return {"unknown exception", "an exception not derived from std::exception"};
}

// The error answer to a request whose target threw e (nullptr: something
// not derived from std::exception).
[[gnu::noinline, gnu::cold]] inline void answer_exception(location& ctx, location_id source, std::uint64_t tag,
                                                          std::exception const* e) {
  exception_text const d = describe_exception(e);
  send_error_reply(ctx, source, tag, d.type, d.what);
}

}  // namespace armi::detail
