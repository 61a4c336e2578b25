// The steps the public RMI templates (rmi.hpp) take: check the handle, put
// one request in its destination's buffer, and, for the kinds that answer,
// tie the request to where its answer goes (a reply slot or, between
// locations of one process, an answer cell in the caller's memory).
#pragma once

#include <armi/core/handle.hpp>
#include <armi/core/wait_record.hpp>
#include <armi/runtime/location.hpp>
#include <armi/runtime/reply.hpp>
#include <armi/runtime/reply_stub.hpp>
#include <armi/runtime/stubs.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <utility>

namespace armi::detail {

[[noreturn, gnu::cold, gnu::noinline]] inline void invalid_handle(char const* what) {
  throw std::invalid_argument(std::string("armi::") + what + ": invalid rmi_handle (not from get_rmi_handle())");
}

// The test inline, the message out of line: every RMI pays for this check.
inline void check_handle(rmi_handle h, char const* what) {
  if (!h.valid()) [[unlikely]]
    invalid_handle(what);
}

template <rmi_kind K, class M, class... A>
[[gnu::always_inline]] inline void send_call(location& ctx, location_id dest, rmi_handle h, M m, std::uint64_t tag,
                                             A&&... a) {
  method_stub<K, M>::send(ctx, dest, h, m, tag, std::forward<A>(a)...);
}

// Runs send(), which puts a call answered under the reply slot `tag` in its
// buffer; if it throws, nothing was sent (a request too large, an argument
// whose packing threw), so no reply will come and the slot is given back.
template <class Send>
void send_or_cancel(location& ctx, std::uint64_t tag, Send&& send) {
  try {
    send();
  } catch (...) {
    ctx.replies().cancel(tag);
    throw;
  }
}

// A request of kind K whose answer arrives in the returned state (an
// armi::future holds it).
template <rmi_kind K, class M, class... A>
std::shared_ptr<reply_state<result_t<M>>> send_answered(location& ctx, location_id dest, rmi_handle h, M m,
                                                        A&&... a) {
  auto state = std::make_shared<reply_state<result_t<M>>>();
  std::uint64_t const tag = ctx.replies().acquire(state.get(), state);
  send_or_cancel(ctx, tag, [&] { send_call<K>(ctx, dest, h, m, tag, std::forward<A>(a)...); });
  return state;
}

// sync_rmi: sends the call at once and waits for its answer, serving
// requests meanwhile.  Between locations of one process the answer is
// written into a cell of the caller's (answers.hpp); otherwise it comes back
// as a reply request.
template <class M, class... A>
result_t<M> sync_call(location& ctx, location_id dest, rmi_handle h, M m, A&&... args) {
  using R = result_t<M>;
  // Puts the call, under the tag that names where its answer goes, in dest's buffer.
  auto send = [&](std::uint64_t tag) { send_call<rmi_kind::sync>(ctx, dest, h, m, tag, std::forward<A>(args)...); };
  // Sends that buffer, then waits for the answer with wait(), which serves
  // requests meanwhile; a flush point, so also for the loans it made.
  auto await = [&](auto const& wait) {
    ctx.flush(dest, flush_cause::urgent);
    wait_scope const waiting(ctx.watch(), wait_kind::sync_rmi, dest, typeid(M).name());
    wait();
    ctx.settle_loans();
  };
  if constexpr (answer_in_cell<R>) {
    std::uint64_t tag;
    if (answer_cell* cell = ctx.open_answer(dest, tag)) {
      struct closing {
        location& ctx;
        ~closing() { ctx.close_answer(); }
      } const close{ctx};
      send(tag);
      await([&] { ctx.wait_answer(*cell, tag, "sync_rmi"); });
      return take_answer<R>(*cell);
    }
  }
  reply_state<R> state;
  std::uint64_t const tag = ctx.replies().acquire(&state, nullptr);
  send_or_cancel(ctx, tag, [&] { send(tag); });
  await([&] { ctx.wait_for(state.ready, "sync_rmi"); });
  return state.take();
}

}  // namespace armi::detail
