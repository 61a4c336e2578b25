// The handlers: one stub per (RMI kind, method type) turns a request back
// into a method call on the target object, and answers it when the kind has
// an answer (sync, opaque).  Plus the two built-in handlers: replies and
// collective contributions.  (broadcast_rmi and reduce_rmi requests have
// stubs of their own, tree_stubs.hpp; they use the method_stub of their kind
// for its checks and method indices.)  Each stub reads all of its payload before
// calling user code, because a method that blocks may let the runtime
// recycle the buffer the payload sits in.
#pragma once

#include <armi/core/handlers.hpp>
#include <armi/core/wire.hpp>
#include <armi/runtime/args.hpp>
#include <armi/runtime/location.hpp>
#include <armi/runtime/method_traits.hpp>
#include <armi/runtime/reply.hpp>

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <typeinfo>
#include <vector>

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

// ---- method calls -------------------------------------------------------------

// The kinds whose method's result travels back (reduce: up its tree).
constexpr bool answers(rmi_kind k) { return k == rmi_kind::sync || k == rmi_kind::opaque || k == rmi_kind::reduce; }

template <rmi_kind K, class M, class Params = typename method_traits<M>::params>
struct method_stub;

template <rmi_kind K, class M, class... P>
struct method_stub<K, M, type_list<P...>> {
  static constexpr rmi_kind kind = K;
  using method = M;
  using class_type = typename method_traits<M>::class_type;
  using result = typename method_traits<M>::result;
  using pack = arg_pack<std::decay_t<P>...>;
  // A method constant (armi::method<&T::f>) is the stub's only method: its
  // requests carry method index 0 and need no definition in another
  // process; every other stub names one of method_table<M>'s methods.
  static constexpr bool fixed = is_method_constant<M>;

  // Compile-time checks of a call site, with messages that say what to do.
  template <class... A>
  static constexpr void check_call() {
    static_assert(std::is_base_of_v<p_object, class_type>,
                  "armi: the target of an RMI must be a method of a class derived from armi::p_object");
    static_assert(sizeof...(A) == sizeof...(P), "armi: wrong number of arguments for this method");
    if constexpr (sizeof...(A) == sizeof...(P)) {
      static_assert((check_parameter<std::decay_t<P>>::value && ...));
      static_assert((std::is_constructible_v<std::decay_t<P>, A&&> && ...),
                    "armi: an RMI argument cannot be converted to the method's parameter type");
    }
    if constexpr (answers(K) && !std::is_void_v<result>) static_assert(check_sendable<result>::value);
  }

  // A request's payload starts with the reply tag when it answers; with
  // arguments of fixed size (pack::bits) its payload and record sizes are constants.
  static constexpr std::size_t tag_prefix = answers(K) ? sizeof(std::uint64_t) : 0;
  static constexpr std::size_t fixed_payload = tag_prefix + pack::fixed_size;
  static constexpr std::size_t fixed_need = request_bytes(fixed_payload);

  // The bytes of the request a call with these arguments makes (header and
  // padded payload); a broadcast checks them against every member first.
  template <class... A>
  static std::size_t request_size(A&&... a) {
    if constexpr (pack::bits)
      return fixed_need;
    else
      return [](auto const&... v) { return request_bytes(tag_prefix + pack::measure(v...)); }(
          as_param<std::decay_t<P>>(std::forward<A>(a))...);
  }

  static std::uint32_t define(method_ref const& r)
    requires(!fixed)
  {
    return method_table<M>::define(r);
  }
  static std::uint32_t method_type()
    requires(!fixed)
  {
    return method_table<M>::type_id();
  }

  // m's method index: method_table's (cached_index: the thread's last
  // answer, if it is m's), 0 for a method constant.
  [[gnu::always_inline]] static bool cached_index([[maybe_unused]] M m, std::uint32_t& index) {
    if constexpr (fixed) {
      index = 0;
      return true;
    } else {
      return method_table<M>::cached_index(m, index);
    }
  }
  static std::uint32_t index_of([[maybe_unused]] M m) {
    if constexpr (fixed)
      return 0;
    else
      return method_table<M>::index_of(m);
  }

  // Arguments of fixed size (all trivially copyable) make a request whose
  // size is known before any of them is touched: when the method's index is
  // the thread's last, dest needs no definition first and its buffer has
  // room, the request goes straight in, with no call but the tail call of a
  // full buffer (location::room_for).  Without room, send_grown makes it
  // (out of line) and writes the request the same way, so that a stream
  // stays in one repeat record.  Everything else takes send_general.
  // A sync call needs no urgent mark here: sync_rmi flushes its buffer next.
  template <class... A>
  [[gnu::always_inline]] static void send(location& ctx, location_id dest, rmi_handle h, M m, std::uint64_t tag,
                                          A&&... a) {
    if constexpr (pack::bits) {
      std::uint32_t index;
      if (cached_index(m, index)) [[likely]] {
        std::uint32_t const word = handler_id<method_stub>::value | (index << handler_bits);
        if (fixed || ctx.told(dest, word)) [[likely]] {
          // Room for a full record after its padding: enough for either form.
          buffer* const b = ctx.room_for(dest, fixed_need + record_slack);
          if (b == nullptr) [[unlikely]]
            return send_grown(ctx, dest, h, word, tag, std::forward<A>(a)...);
          return write_fixed(ctx, *b, dest, h, word, tag, std::forward<A>(a)...);
        }
      }
    }
    send_general(ctx, dest, h, m, tag, std::forward<A>(a)...);
  }

  // The record of a request of fixed size, in b (which has room for it).
  template <class... A>
  [[gnu::always_inline]] static void write_fixed(location& ctx, buffer& b, location_id dest, rmi_handle h,
                                                 std::uint32_t word, [[maybe_unused]] std::uint64_t tag, A&&... a) {
    request_header const hdr{word, static_cast<std::uint32_t>(fixed_payload), h.index, h.epoch};
    std::size_t record;
    std::byte* const p = write_fixed_record<fixed_payload>(b, hdr, record);  // a repeat or a full record
    if constexpr (tag_prefix != 0) std::memcpy(p, &tag, sizeof tag);
    pack::write(p + tag_prefix, pack::fixed_size, as_param<std::decay_t<P>>(std::forward<A>(a))...);
    ctx.commit_request(&b, dest, K, record);
  }
  template <class... A>
  [[gnu::noinline]] static void send_grown(location& ctx, location_id dest, rmi_handle h, std::uint32_t word,
                                           std::uint64_t tag, A&&... a) {
    buffer* const b = ctx.make_room(dest, fixed_need + record_slack);
    write_fixed(ctx, *b, dest, h, word, tag, std::forward<A>(a)...);
  }

  template <class... A>
  [[gnu::noinline]] static void send_general(location& ctx, location_id dest, rmi_handle h, M m, std::uint64_t tag,
                                             A&&... a) {
    std::uint32_t const index = index_of(m);
    std::uint32_t const word = handler_id<method_stub>::value | (index << handler_bits);
    if constexpr (!fixed)
      if (!ctx.told(dest, word)) [[unlikely]]
        describe(ctx, dest, word, index, m);
    request_header hdr{word, 0, h.index, h.epoch};
    // Lent views go without a copy where the location allows it (by
    // reference within its process, from the caller's memory where the
    // transport sends from there; reached directly); it counts them once
    // the request is written.
    [[maybe_unused]] lend_context const* lending = nullptr;
    if constexpr (may_lend) lending = ctx.lending_to(dest);
    std::uint32_t const lent = [&](auto const&... v) -> std::uint32_t {
      std::size_t body;
      if constexpr (may_lend)
        body = pack::measure_lending(lending, v...);
      else
        body = pack::measure(v...);
      std::byte* p = ctx.begin_request(dest, K, hdr, tag_prefix + body);
      if constexpr (tag_prefix != 0) std::memcpy(p, &tag, sizeof tag);
      if constexpr (may_lend) {
        return pack::write_lending(p + tag_prefix, body, lending, v...);
      } else {
        pack::write(p + tag_prefix, body, v...);
        return 0;
      }
    }(as_param<std::decay_t<P>>(std::forward<A>(a))...);
    (void)tag;
    if (lent != 0) ctx.lent(lent);  // before the request may leave: its holes go with its buffer
    ctx.end_request(dest, K == rmi_kind::sync);
  }
  // Point-to-point calls lend; collectives copy (their requests are many, or forwarded).
  static constexpr bool may_lend = (K == rmi_kind::async || K == rmi_kind::sync || K == rmi_kind::opaque) &&
                                   (is_armi_view<std::decay_t<P>>::value || ...);

  // Out of line: once per (destination, method) a send to another process
  // has not seen told before.  word names the handler the definition is for
  // (this stub's, or a tree_stub's of the same method type).
  [[gnu::noinline]] static void describe(location& ctx, location_id dest, std::uint32_t word, std::uint32_t index, M m) {
    if (ctx.needs_definition(dest, word, [index] { return method_table<M>::key_of(index); }))
      define_stub::send(ctx, dest, word & handler_mask, index, method_table<M>::describe(m));
  }

  // The handler.  A stub with no answer to send takes a fast path when the
  // target is a symmetric handle already checked to be a class_type for this
  // handler (the common case: every request after an object's first), still
  // validating the method index, the handle and its epoch, and the payload's
  // size (call_checked, which run shares).  On that path it calls nothing
  // but the target; anything else (explicit handles, a first request, a
  // virtual base, a failed check) goes to invoke_general, which does it all.
  static void invoke(location& ctx, location_id source, request_header h, std::byte const* payload) {
    if constexpr (!answers(K)) {
      if (!call_checked(ctx, source, h, method_of(h.handler), payload)) [[unlikely]]
        invoke_general(ctx, source, h, payload);
    } else {
      invoke_general(ctx, source, h, payload);
    }
  }

  // The method a handler word names, or a decode error.
  [[gnu::always_inline]] static M method_of(std::uint32_t word) {
    M m{};
    bool known;
    if constexpr (fixed)
      known = (word >> handler_bits) == 0;
    else
      known = method_table<M>::lookup(word >> handler_bits, m);
    if (!known) [[unlikely]]
      throw_decode_error("armi: unknown method index");
    return m;
  }

  // The fast path of one request with no answer: calls m on a symmetric
  // target already checked to be a class_type for this handler, after the
  // handle, epoch and payload-size checks; false, having done nothing, for
  // anything that needs invoke_general.
  [[gnu::always_inline]] static bool call_checked(location& ctx, location_id source, request_header const& h, M m,
                                                  std::byte const* payload) {
    class_type* obj = ctx.checked_target<class_type>(h, h.handler & handler_mask);
    if (obj == nullptr) [[unlikely]]
      return false;
    call(ctx, source, obj, m, h, payload);
    return true;
  }
  // Decodes the payload (checking its size) and calls m on obj; lent views
  // are taken only where the location accepts them (lend_returns_from).
  [[gnu::always_inline]] static void call(location& ctx, [[maybe_unused]] location_id source, class_type* obj, M m,
                                          request_header const& h, std::byte const* payload) {
    pack::read_and_call(
        payload, h.payload_bytes,
        [&](auto&... v) {
          ctx.calling_target();
          call_member(obj, m, static_cast<P&&>(v)...);
        },
        may_lend ? ctx.lend_returns_from(source) : nullptr);
  }

  // The run_fn (see handlers.hpp): a stub with no answer to send executes
  // a run of requests for one method, checking the method index once (the
  // run shares one handler word, and method tables only grow) and, per
  // request as in invoke, the handle, its epoch and type (call_checked's
  // lookup), and the payload's size; next_in_run checks each header and its
  // payload's bounds.  A repeat record has the header of the request before
  // it, so it keeps that request's target without the lookup, unless the
  // registry has removed an object since (a target may destroy one, its own
  // included); docs/runtime-measurements.md.
  // Stubs that answer have no run_fn: they run one request (run_single).
  static void run(location& ctx, run_state& st, request_header h, std::byte const* payload)
    requires(!answers(K))
  {
    M const m = method_of(h.handler);
    class_type* obj = nullptr;   // the target looked up last; nullptr: none found
    std::uint64_t removals = 0;  // the registry's removals at that lookup
    bool repeat = false;
    do {
      if (!repeat || obj == nullptr || removals != ctx.registry_removals()) {
        obj = ctx.checked_target<class_type>(h, h.handler & handler_mask);
        removals = ctx.registry_removals();
      }
      if (obj == nullptr) [[unlikely]]
        run_general(ctx, st, h.handler, payload);
      else
        call(ctx, st.source, obj, m, h, payload);
      ctx.executed_one(K);
    } while (ctx.next_in_run(st, h, payload, repeat));
  }

  // run's slow path: the request whose payload is at `payload`, with its
  // handler word as translated, through invoke_general.  It takes the
  // header again from the buffer (the last one framed), so that run keeps
  // its fields in registers (passing run's copy made gcc 12 assemble it on
  // the stack every time).
  [[gnu::noinline]] static void run_general(location& ctx, run_state const& st, std::uint32_t word,
                                            std::byte const* payload) {
    request_header h = st.b.last;  // this request's header as framed (a repeat's: the one it repeats)
    h.handler = word;
    invoke_general(ctx, st.source, h, payload);
  }

  // Out of line for stubs with no answer (their slow path), inline in the
  // others (their only path).
  [[gnu::noinline]] static void invoke_general(location& ctx, location_id source, request_header h,
                                               std::byte const* payload) {
    std::uint32_t const handler = h.handler & handler_mask;
    M const m = method_of(h.handler);
    std::size_t n = h.payload_bytes;
    if constexpr (answers(K)) {
      std::uint64_t tag;
      if (n < sizeof tag) [[unlikely]]
        throw_decode_error("armi: truncated request (no reply tag)");
      std::memcpy(&tag, payload, sizeof tag);
      payload += sizeof tag;
      n -= sizeof tag;
      if (is_answer_tag(tag)) (void)ctx.answer_cell_for(source, tag);  // checked before the call
      class_type* obj = ctx.checked_target<class_type>(h, handler);  // one lookup, the common case
      if (obj == nullptr) [[unlikely]] {
        if (!ctx.has_target(h)) {
          send_error_reply(ctx, source, tag, "armi::unknown_handle", ctx.unknown_handle_message(h, handler, source));
          return;
        }
        obj = ctx.target<class_type>(h, handler, source);
      }
      pack::read_and_call(
          payload, n, [&](auto&... v) { call_and_answer(ctx, source, tag, obj, m, v...); },
          may_lend ? ctx.lend_returns_from(source) : nullptr);
    } else {
      // No answer to send: what the target throws ends the run, and
      // the dispatcher says so (calling_target tells it the throw
      // came from the target, not from decoding).  No try block here, so the
      // call of the target is this function's tail call.
      class_type* obj = ctx.target<class_type>(h, handler, source);
      call(ctx, source, obj, m, h, payload);
    }
  }

 private:
  // Runs the method and answers: its value, or the exception it threw
  // (answered from the handler, out of line: the common path builds no
  // strings).
  template <class... V>
  static void call_and_answer(location& ctx, location_id source, std::uint64_t tag, class_type* obj, M m, V&... v) {
    using stored = std::conditional_t<std::is_void_v<result>, char, result>;
    [[maybe_unused]] std::optional<stored> value;  // a void method's answer carries none
    try {
      if constexpr (std::is_void_v<result>) {
        call_member(obj, m, static_cast<P&&>(v)...);
      } else {
        value.emplace(call_member(obj, m, static_cast<P&&>(v)...));
      }
    } catch (std::exception const& e) {
      return answer_exception(ctx, source, tag, &e);
    } catch (...) {
      return answer_exception(ctx, source, tag, nullptr);
    }
    // An answer that cannot be sent (too large, or a user serializer that
    // threw) goes back as the caller's error; nothing of it was sent.
    try {
      if constexpr (std::is_void_v<result>)
        send_reply<char>(ctx, source, tag, nullptr);
      else
        send_reply<result>(ctx, source, tag, &*value);
    } catch (std::exception const& e) {
      answer_exception(ctx, source, tag, &e);
    }
  }

};

template <class Stub>
void run_single(location& ctx, run_state& st, request_header header, std::byte const* payload) {
  Stub::invoke(ctx, st.source, header, payload);
  ctx.executed_one(Stub::kind);
}

}  // namespace armi::detail
