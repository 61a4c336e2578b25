// The RMI primitives of DESIGN.md §2: async_rmi, sync_rmi, opaque_rmi,
// broadcast_rmi, reduce_rmi, allreduce_rmi, rmi_fence, rmi_poll, rmi_wait,
// rmi_flush.  Thin templates over the non-template runtime: each packs its
// arguments into the destination's buffer and names a handler id.
//
// Thread safety: call them from location threads (inside armi::execute).
#pragma once

#include <armi/future.hpp>
#include <armi/group.hpp>
#include <armi/runtime/location.hpp>
#include <armi/runtime/stubs.hpp>

#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace armi {

namespace detail {

[[noreturn, gnu::cold, gnu::noinline]] inline void invalid_handle(char const* what) {
  throw std::invalid_argument(std::string("armi::") + what + ": invalid rmi_handle (not from get_rmi_handle())");
}

// The test inline, the message out of line: every RMI pays for this check,
// and with the string building in its body GCC called it out of line.
inline void check_handle(rmi_handle h, char const* what) {
  if (!h.valid()) [[unlikely]]
    invalid_handle(what);
}

template <rmi_kind K, class M, class... A>
[[gnu::always_inline]] inline void send_call(location& ctx, location_id dest, rmi_handle h, M m, std::uint64_t tag,
                                             A&&... a) {
  method_stub<K, M>::send(ctx, dest, h, m, tag, std::forward<A>(a)...);
}

// send(), which puts a call answered under the reply slot `tag` in its
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

template <rmi_kind K, class M, class... A>
future<result_t<M>> send_answered(location& ctx, location_id dest, rmi_handle h, M m, A&&... a) {
  using R = result_t<M>;
  auto state = std::make_shared<reply_state<R>>();
  std::uint64_t const tag = ctx.replies().acquire(state.get(), state);
  send_or_cancel(ctx, tag, [&] { send_call<K>(ctx, dest, h, m, tag, std::forward<A>(a)...); });
  return future<R>(std::move(state), &ctx, dest, typeid(M).name());
}

// A request that goes to every member of g (broadcast_rmi, reduce_rmi) goes
// to all or none: too large for one, it throws before any is sent.
template <rmi_kind K, class M, class... A>
void check_fits_all(location const& ctx, group const& g, A const&... args) {
  std::size_t const record = method_stub<K, M>::request_size(args...);
  for (location_id dest : g.members()) ctx.check_fits(dest, record);
}

}  // namespace detail

// A method named at compile time, where any RMI takes a method pointer:
// async_rmi(dest, h, armi::method<&T::f>, args...).  Same semantics; the
// request names the method by its handler id alone, and the receiver calls
// T::f directly (inlined when the compiler can see it) instead of through
// a method pointer.  For the finest-grain methods.
template <auto F>
inline constexpr detail::method_constant<F> method{};

inline location_id get_location_id() { return detail::current("get_location_id").id(); }
inline location_id get_num_locations() { return detail::current("get_num_locations").size(); }

// Non-blocking; runs m(args...) on dest's representative of h.  Aggregated.
// Inlined into the caller: its common path is a few dozen instructions with
// no call (method_stub::send), so the call itself would be a good part of it.
template <class M, class... A>
  requires detail::member_function<M>
[[gnu::always_inline]] inline void async_rmi(location_id dest, rmi_handle h, M m, A&&... args) {
  detail::method_stub<detail::rmi_kind::async, M>::template check_call<A...>();
  auto& ctx = detail::current("async_rmi");
  ctx.check_destination(dest, "async_rmi");
  detail::check_handle(h, "async_rmi");
  detail::send_call<detail::rmi_kind::async>(ctx, dest, h, m, 0, std::forward<A>(args)...);
}

// Blocks until m(args...) has run on dest and returns its result, serving
// incoming requests meanwhile.  Travels with the async_rmis before it.
template <class M, class... A>
  requires detail::member_function<M>
detail::result_t<M> sync_rmi(location_id dest, rmi_handle h, M m, A&&... args) {
  using R = detail::result_t<M>;
  detail::method_stub<detail::rmi_kind::sync, M>::template check_call<A...>();
  auto& ctx = detail::current("sync_rmi");
  ctx.check_destination(dest, "sync_rmi");
  detail::check_handle(h, "sync_rmi");
  // Puts the call, under the tag that names where its answer goes, in dest's buffer.
  auto send = [&](std::uint64_t tag) {
    detail::send_call<detail::rmi_kind::sync>(ctx, dest, h, m, tag, std::forward<A>(args)...);
  };
  // Sends that buffer, then waits for the answer with wait(), which serves requests meanwhile.
  auto await = [&](auto const& wait) {
    ctx.flush(dest, detail::flush_cause::urgent);
    detail::wait_scope const waiting(ctx.watch(), detail::wait_kind::sync_rmi, dest, typeid(M).name());
    wait();
  };
  if constexpr (detail::answer_in_cell<R>) {
    std::uint64_t tag;
    if (detail::answer_cell* cell = ctx.open_answer(dest, tag)) {  // answered in place (answers.hpp)
      struct closing {
        detail::location& ctx;
        ~closing() { ctx.close_answer(); }
      } const close{ctx};
      send(tag);
      await([&] { ctx.wait_answer(*cell, tag, "sync_rmi"); });
      return detail::take_answer<R>(*cell);
    }
  }
  detail::reply_state<R> state;
  std::uint64_t const tag = ctx.replies().acquire(&state, nullptr);
  detail::send_or_cancel(ctx, tag, [&] { send(tag); });
  await([&] { ctx.wait_for(state.ready, "sync_rmi"); });
  return state.take();
}

// Non-blocking; the result arrives in the returned future.  Aggregated.
template <class M, class... A>
  requires detail::member_function<M>
future<detail::result_t<M>> opaque_rmi(location_id dest, rmi_handle h, M m, A&&... args) {
  detail::method_stub<detail::rmi_kind::opaque, M>::template check_call<A...>();
  auto& ctx = detail::current("opaque_rmi");
  ctx.check_destination(dest, "opaque_rmi");
  detail::check_handle(h, "opaque_rmi");
  return detail::send_answered<detail::rmi_kind::opaque>(ctx, dest, h, m, std::forward<A>(args)...);
}

// One-sided: runs m(args...) on every member of g, the caller included.
template <class M, class... A>
  requires detail::member_function<M>
void broadcast_rmi(group const& g, rmi_handle h, M m, A const&... args) {
  detail::method_stub<detail::rmi_kind::broadcast, M>::template check_call<A const&...>();
  auto& ctx = detail::current("broadcast_rmi");
  detail::check_handle(h, "broadcast_rmi");
  detail::check_fits_all<detail::rmi_kind::broadcast, M>(ctx, g, args...);
  for (location_id dest : g.members()) detail::send_call<detail::rmi_kind::broadcast>(ctx, dest, h, m, 0, args...);
}
template <class M, class... A>
  requires detail::member_function<M>
void broadcast_rmi(rmi_handle h, M m, A const&... args) {
  broadcast_rmi(group::all(), h, m, args...);
}

// One-sided: asks every member of g for m(args...) and combines the answers
// with op in member order, ((r0 op r1) op r2) ...; only the caller waits.
template <class M, class Op, class... A>
  requires detail::member_function<M>
detail::result_t<M> reduce_rmi(group const& g, rmi_handle h, M m, Op op, A const&... args) {
  using R = detail::result_t<M>;
  static_assert(!std::is_void_v<R>, "armi::reduce_rmi: the method must return a value to reduce");
  detail::method_stub<detail::rmi_kind::reduce, M>::template check_call<A const&...>();
  auto& ctx = detail::current("reduce_rmi");
  detail::check_handle(h, "reduce_rmi");
  detail::check_fits_all<detail::rmi_kind::reduce, M>(ctx, g, args...);
  std::vector<future<R>> answers;
  answers.reserve(g.size());
  for (location_id dest : g.members())
    answers.push_back(detail::send_answered<detail::rmi_kind::reduce>(ctx, dest, h, m, args...));
  R acc = answers[0].get();
  for (std::size_t i = 1; i < answers.size(); ++i) acc = op(std::move(acc), answers[i].get());
  return acc;
}
template <class M, class Op, class... A>
  requires detail::member_function<M>
detail::result_t<M> reduce_rmi(rmi_handle h, M m, Op op, A const&... args) {
  return reduce_rmi(group::all(), h, m, std::move(op), args...);
}

// Collective over g: every member calls it; each evaluates m(args...) on its
// own representative, and every member gets ((r0 op r1) op r2) ... in member
// order.  Members must call their group collectives in the same order.
// It succeeds or fails on all members: if the call throws on a member (bad
// handle, the method, op, a value too large to send), every member throws,
// that one its own exception and the others a remote_error naming it.
template <class M, class Op, class... A>
  requires detail::member_function<M>
detail::result_t<M> allreduce_rmi(group const& g, rmi_handle h, M m, Op op, A const&... args) {
  using R = detail::result_t<M>;
  using C = typename detail::method_traits<M>::class_type;
  static_assert(!std::is_void_v<R>, "armi::allreduce_rmi: the method must return a value to reduce");
  detail::method_stub<detail::rmi_kind::reduce, M>::template check_call<A const&...>();
  auto& ctx = detail::current("allreduce_rmi");
  location_id const me = ctx.id();
  if (!g.contains(me))
    throw std::logic_error("armi::allreduce_rmi: called on location " + std::to_string(me) +
                           ", which is not a member of the group");
  std::uint64_t const key = g.key();
  std::uint64_t const seq = ctx.next_collective_sequence(key);
  location_id const leader = g.members().front();
  auto& box = ctx.mailbox();
  using status = detail::collective_status;

  // This member's value, or what went wrong computing or packing it: then
  // the collective still completes, and fails on every member.
  std::optional<R> mine;
  std::vector<std::byte> packed;
  std::exception_ptr failure;
  try {
    detail::check_handle(h, "allreduce_rmi");
    auto* entry = ctx.registry().find(h.index, h.epoch);
    if (entry == nullptr)
      throw std::invalid_argument("armi::allreduce_rmi: the handle names no object on location " + std::to_string(me));
    C* obj = dynamic_cast<C*>(entry->object);
    if (obj == nullptr) throw std::invalid_argument("armi::allreduce_rmi: the handle names an object of another type");
    std::tuple<std::decay_t<A>...> copies(args...);  // by-value semantics, as for a remote call
    mine.emplace(std::apply([&](auto&... a) { return detail::call_member(obj, m, a...); }, copies));
    if (me != leader) packed = detail::pack_collective(ctx, std::span(&leader, 1), *mine);
  } catch (...) {
    failure = std::current_exception();
    packed = detail::pack_current_failure(me);
  }

  if (me != leader) {
    detail::send_collective(ctx, leader, key, seq, 0, failure ? status::failed : status::value, packed);
    ctx.flush(leader, detail::flush_cause::urgent);
    detail::location::collective_key const k{key, seq, 1};
    detail::wait_scope const waiting(ctx.watch(), detail::wait_kind::collective, leader);
    ctx.wait_until([&] { return box.count(k) != 0; }, "collective");
    auto node = box.extract(k);
    auto const& result = node.mapped().front();
    if (result.failed) detail::throw_collective_failure(result.bytes, me, failure);
    if (failure) std::rethrow_exception(failure);
    unpacker u(result.bytes.data(), result.bytes.size());
    return u.read<R>();
  }
  detail::location::collective_key const k{key, seq, 0};
  detail::wait_scope const waiting(ctx.watch(), detail::wait_kind::collective);
  ctx.wait_until(
      [&] {
        auto it = box.find(k);
        return g.size() == 1 || (it != box.end() && it->second.size() == g.size() - 1);
      },
      "allreduce_rmi");
  std::vector<detail::location::collective_message const*> from(g.size());
  decltype(box.extract(k)) node;
  if (g.size() > 1) {
    node = box.extract(k);
    for (auto const& msg : node.mapped()) {
      std::size_t const r = g.rank_of(msg.from);
      if (r >= g.size() || r == 0 || from[r])
        detail::fatal_exit("allreduce_rmi: contribution from an unexpected location");
      from[r] = &msg;
    }
  }
  // The first failure in member order ends it; else the result goes to all,
  // or none if it is too large for one of them.
  status outcome = failure ? status::failed : status::value;
  for (std::size_t r = 1; r < g.size() && outcome == status::value; ++r)
    if (from[r]->failed) {
      outcome = status::failed;
      packed = from[r]->bytes;
    }
  std::optional<R> acc;
  if (outcome == status::value) {
    try {
      acc.emplace(std::move(*mine));
      for (std::size_t r = 1; r < g.size(); ++r) {
        unpacker u(from[r]->bytes.data(), from[r]->bytes.size());
        acc.emplace(op(std::move(*acc), u.read<R>()));
      }
      if (g.size() > 1) packed = detail::pack_collective(ctx, std::span(g.members()).subspan(1), *acc);
    } catch (...) {
      failure = std::current_exception();
      packed = detail::pack_current_failure(me);
      outcome = status::failed;
    }
  }
  for (std::size_t r = 1; r < g.size(); ++r) detail::send_collective(ctx, g.members()[r], key, seq, 1, outcome, packed);
  ctx.flush_urgent();
  if (outcome == status::failed) detail::throw_collective_failure(packed, me, failure);
  return std::move(*acc);
}
template <class M, class Op, class... A>
  requires detail::member_function<M>
detail::result_t<M> allreduce_rmi(rmi_handle h, M m, Op op, A const&... args) {
  return allreduce_rmi(group::all(), h, m, std::move(op), args...);
}

// Collective: returns when every location has called it and every RMI issued
// before it, including the RMIs those issued, has been executed.
inline void rmi_fence() { detail::current("rmi_fence").fence(); }
// Serves the requests that have arrived; if none had, sends partial buffers.
inline void rmi_poll() { detail::current("rmi_poll").poll(); }
// Blocks until at least one request has been served.
inline void rmi_wait() { detail::current("rmi_wait").wait_for_request(); }
// Sends every partially filled buffer now.
inline void rmi_flush() { detail::current("rmi_flush").flush_all(detail::flush_cause::flush); }

// The calling location's aggregation factors (most requests per buffer):
// one for destinations in its own process, one for destinations in other
// processes (mpi, mixed).  set_aggregation(n) sets both; buffers already
// holding that many requests leave at once.  armi::aggregation_auto for
// either lets the runtime pick each destination's factor online (it starts
// afresh when a destination switches to auto); get_aggregation*() then
// return aggregation_auto.
inline void set_aggregation(std::size_t n) { detail::current("set_aggregation").set_aggregation(n, n); }
inline void set_aggregation(std::size_t local, std::size_t remote) {
  detail::current("set_aggregation").set_aggregation(local, remote);
}
inline std::size_t get_aggregation_local() { return detail::current("get_aggregation_local").aggregation_local(); }
inline std::size_t get_aggregation_remote() { return detail::current("get_aggregation_remote").aggregation_remote(); }
// The factor for other processes' locations, or, when all locations share
// this process (threads), the local one.
inline std::size_t get_aggregation() {
  auto& l = detail::current("get_aggregation");
  return l.has_remote() ? l.aggregation_remote() : l.aggregation_local();
}

}  // namespace armi
