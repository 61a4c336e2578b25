// The handlers: one stub per (RMI kind, method type) turns a request back
// into a method call on the target object, and answers it when the kind has
// an answer (sync, opaque).  The built-in handlers have headers of their
// own, included here so that this header still brings them all: replies and
// answers (reply_stub.hpp), collective contributions (collective_stub.hpp)
// and method definitions (define_stub.hpp).  (broadcast_rmi and reduce_rmi
// requests have stubs of their own, tree_stubs.hpp; they use the method_stub
// of their kind for its checks and method indices.)  Each stub reads all of
// its payload before calling user code, because a method that blocks may let
// the runtime recycle the buffer the payload sits in.
#pragma once

#include <armi/core/handlers.hpp>
#include <armi/core/wire.hpp>
#include <armi/runtime/args.hpp>
#include <armi/runtime/collective_stub.hpp>
#include <armi/runtime/define_stub.hpp>
#include <armi/runtime/location.hpp>
#include <armi/runtime/method_traits.hpp>
#include <armi/runtime/reply_stub.hpp>

#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>

namespace armi::detail {

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
    if (lent != 0) ctx.lent(dest, lent);  // before the request may leave: its ranges sent apart start
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
  // are taken only where the location accepts them (location::loans).
  [[gnu::always_inline]] static void call(location& ctx, [[maybe_unused]] location_id source, class_type* obj, M m,
                                          request_header const& h, std::byte const* payload) {
    pack::read_and_call(
        payload, h.payload_bytes,
        [&](auto&... v) {
          ctx.calling_target();
          call_member(obj, m, static_cast<P&&>(v)...);
        },
        may_lend ? ctx.loans() : nullptr);
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
          may_lend ? ctx.loans() : nullptr);
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
