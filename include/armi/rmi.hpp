// The RMI primitives: async_rmi, sync_rmi, opaque_rmi, broadcast_rmi,
// reduce_rmi, allreduce_rmi and their opaque (future-returning) twins, rmi_fence, rmi_poll, rmi_wait, rmi_flush, and
// the aggregation factors.  Thin templates: each checks its call at compile
// time and its arguments at run time, then hands over to the runtime
// (runtime/calls.hpp, runtime/collectives.hpp).  The guarantees they keep
// are those of docs/design.md §2.
//
// Thread safety: call them from location threads (inside armi::execute).
#pragma once

#include <armi/future.hpp>
#include <armi/group.hpp>
#include <armi/runtime/calls.hpp>
#include <armi/runtime/collectives.hpp>
#include <armi/runtime/location.hpp>
#include <armi/runtime/stubs.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace armi {

namespace detail {
// g's members, or (g == nullptr) every location, from the list the
// process's locations share (runtime/world.hpp).
inline member_set members_of(location& ctx, group const* g) {
  if (g != nullptr) return {g->members(), g->key()};
  world_members const& w = ctx.world();
  return {w.members, w.key};
}

template <class M, class... A>
void broadcast(group const* g, rmi_handle h, M m, A const&... args) {
  method_stub<rmi_kind::broadcast, M>::template check_call<A const&...>();
  detail::armi_call const call;
  auto& ctx = current("broadcast_rmi");
  check_handle(h, "broadcast_rmi");
  broadcast_call(ctx, members_of(ctx, g), h, m, args...);
}

template <class M, class Op, class... A>
result_t<M> reduce(group const* g, rmi_handle h, M m, Op op, A const&... args) {
  static_assert(!std::is_void_v<result_t<M>>, "armi::reduce_rmi: the method must return a value to reduce");
  method_stub<rmi_kind::reduce, M>::template check_call<A const&...>();
  detail::armi_call const call;
  auto& ctx = current("reduce_rmi");
  check_handle(h, "reduce_rmi");
  return reduce_call(ctx, members_of(ctx, g), h, m, op, args...);
}

template <class M, class Op, class... A>
result_t<M> allreduce(group const* g, rmi_handle h, M m, Op op, A const&... args) {
  static_assert(!std::is_void_v<result_t<M>>, "armi::allreduce_rmi: the method must return a value to reduce");
  method_stub<rmi_kind::reduce, M>::template check_call<A const&...>();
  detail::armi_call const call;
  auto& ctx = current("allreduce_rmi");
  if (g != nullptr && !g->contains(ctx.id()))
    throw std::logic_error("armi::allreduce_rmi: called on location " + std::to_string(ctx.id()) +
                           ", which is not a member of the group");
  return allreduce_call(ctx, members_of(ctx, g), h, m, op, args...);
}

template <class M, class Op, class... A>
future<result_t<M>> opaque_reduce(group const* g, rmi_handle h, M m, Op op, A const&... args) {
  static_assert(!std::is_void_v<result_t<M>>, "armi::opaque_reduce_rmi: the method must return a value to reduce");
  method_stub<rmi_kind::reduce, M>::template check_call<A const&...>();
  detail::armi_call const call;
  auto& ctx = current("opaque_reduce_rmi");
  check_handle(h, "opaque_reduce_rmi");
  auto out = std::make_shared<reply_state<result_t<M>>>();
  opaque_reduce_call(ctx, members_of(ctx, g), h, m, std::move(op), out, args...);
  return future<result_t<M>>(std::move(out), &ctx);
}

template <class M, class Op, class... A>
future<result_t<M>> opaque_allreduce(group const* g, rmi_handle h, M m, Op op, A const&... args) {
  static_assert(!std::is_void_v<result_t<M>>, "armi::opaque_allreduce_rmi: the method must return a value to reduce");
  method_stub<rmi_kind::reduce, M>::template check_call<A const&...>();
  detail::armi_call const call;
  auto& ctx = current("opaque_allreduce_rmi");
  if (g != nullptr && !g->contains(ctx.id()))
    throw std::logic_error("armi::opaque_allreduce_rmi: called on location " + std::to_string(ctx.id()) +
                           ", which is not a member of the group");
  auto out = std::make_shared<reply_state<result_t<M>>>();
  opaque_allreduce_call(ctx, members_of(ctx, g), g != nullptr, h, m, std::move(op), out, args...);
  return future<result_t<M>>(std::move(out), &ctx);
}
}  // namespace detail

/// A method named at compile time, accepted wherever an RMI takes a method
/// pointer: `async_rmi(dest, h, armi::method<&T::f>, args...)`.
///
/// Same semantics as `&T::f`; the request names the method by its handler id
/// alone, and the receiver calls `T::f` directly (inlined where the compiler
/// sees it) instead of through a member pointer.  For the finest-grain methods.
template <auto F>
inline constexpr detail::method_constant<F> method{};

/// This location's id, in `[0, get_num_locations())`.
inline location_id get_location_id() { return detail::current("get_location_id").id(); }
/// The number of locations of the run.
inline location_id get_num_locations() { return detail::current("get_num_locations").size(); }

/// Runs `m(args...)` on `dest`'s representative of `h`, without waiting.
///
/// The arguments are copied at the call (by value); the request is
/// aggregated with others to `dest` and runs in the order this location
/// issued its requests to `dest`.  An exception from the target ends the run.
template <class M, class... A>
  requires detail::member_function<M>
[[gnu::always_inline]] inline void async_rmi(location_id dest, rmi_handle h, M m, A&&... args) {
  detail::method_stub<detail::rmi_kind::async, M>::template check_call<A...>();
  detail::armi_call const call;
  auto& ctx = detail::current("async_rmi");
  ctx.check_destination(dest, "async_rmi");
  detail::check_handle(h, "async_rmi");
  detail::send_call<detail::rmi_kind::async>(ctx, dest, h, m, 0, std::forward<A>(args)...);
}

/// Runs `m(args...)` on `dest`'s representative of `h` and returns its result.
///
/// Blocks, serving incoming requests meanwhile; travels after the requests
/// this location sent `dest` before it.  An exception from the target is
/// rethrown here as armi::remote_error.
template <class M, class... A>
  requires detail::member_function<M>
detail::result_t<M> sync_rmi(location_id dest, rmi_handle h, M m, A&&... args) {
  detail::method_stub<detail::rmi_kind::sync, M>::template check_call<A...>();
  detail::armi_call const call;
  auto& ctx = detail::current("sync_rmi");
  ctx.check_destination(dest, "sync_rmi");
  detail::check_handle(h, "sync_rmi");
  return detail::sync_call(ctx, dest, h, m, std::forward<A>(args)...);
}

/// Runs `m(args...)` on `dest`'s representative of `h` without waiting; its
/// result (or its exception, as armi::remote_error) arrives in the future.
template <class M, class... A>
  requires detail::member_function<M>
future<detail::result_t<M>> opaque_rmi(location_id dest, rmi_handle h, M m, A&&... args) {
  detail::method_stub<detail::rmi_kind::opaque, M>::template check_call<A...>();
  detail::armi_call const call;
  auto& ctx = detail::current("opaque_rmi");
  ctx.check_destination(dest, "opaque_rmi");
  detail::check_handle(h, "opaque_rmi");
  auto state = detail::send_answered<detail::rmi_kind::opaque>(ctx, dest, h, m, std::forward<A>(args)...);
  return future<detail::result_t<M>>(std::move(state), &ctx, dest, typeid(M).name());
}

/// Runs `m(args...)` on every member of `g`, the caller included, without
/// waiting.  One-sided: only the caller calls it.  Too large for any member,
/// it throws and goes to none.
template <class M, class... A>
  requires detail::member_function<M>
void broadcast_rmi(group const& g, rmi_handle h, M m, A const&... args) {
  detail::broadcast(&g, h, m, args...);
}
/// broadcast_rmi to every location.
template <class M, class... A>
  requires detail::member_function<M>
void broadcast_rmi(rmi_handle h, M m, A const&... args) {
  detail::broadcast(nullptr, h, m, args...);
}

/// Asks every member of `g` for `m(args...)` and returns the answers
/// combined with `op` in member order, `((r0 op r1) op r2) ...`.
///
/// One-sided: only the caller calls it and waits.  A member whose target
/// throws makes it throw armi::remote_error.
template <class M, class Op, class... A>
  requires detail::member_function<M>
detail::result_t<M> reduce_rmi(group const& g, rmi_handle h, M m, Op op, A const&... args) {
  return detail::reduce(&g, h, m, std::move(op), args...);
}
/// reduce_rmi over every location.
template <class M, class Op, class... A>
  requires detail::member_function<M>
detail::result_t<M> reduce_rmi(rmi_handle h, M m, Op op, A const&... args) {
  return detail::reduce(nullptr, h, m, std::move(op), args...);
}

/// Collective over `g`: each member evaluates `m(args...)` on its own
/// representative of `h`, and every member returns `((r0 op r1) op r2) ...`
/// in member order.
///
/// Members call their group's collectives in the same order.  It succeeds or
/// fails on every member: if it throws on one (a bad handle, the method,
/// `op`, a value too large to send), that member throws its own exception and
/// the others an armi::remote_error naming it.
template <class M, class Op, class... A>
  requires detail::member_function<M>
detail::result_t<M> allreduce_rmi(group const& g, rmi_handle h, M m, Op op, A const&... args) {
  return detail::allreduce(&g, h, m, std::move(op), args...);
}
/// allreduce_rmi over every location.
template <class M, class Op, class... A>
  requires detail::member_function<M>
detail::result_t<M> allreduce_rmi(rmi_handle h, M m, Op op, A const&... args) {
  return detail::allreduce(nullptr, h, m, std::move(op), args...);
}

/// reduce_rmi without waiting: returns a future of the combined answers.
///
/// The request goes down the group's tree at once; the answer is taken in
/// the polls of later armi calls (and in the future's ready() and get()).
/// Keep the object named by `h` alive on every member until the future is
/// ready: the members run `m` when the request reaches them.
template <class M, class Op, class... A>
  requires detail::member_function<M>
future<detail::result_t<M>> opaque_reduce_rmi(group const& g, rmi_handle h, M m, Op op, A const&... args) {
  return detail::opaque_reduce(&g, h, m, std::move(op), args...);
}
/// opaque_reduce_rmi over every location.
template <class M, class Op, class... A>
  requires detail::member_function<M>
future<detail::result_t<M>> opaque_reduce_rmi(rmi_handle h, M m, Op op, A const&... args) {
  return detail::opaque_reduce(nullptr, h, m, std::move(op), args...);
}

/// allreduce_rmi without waiting: collective over `g` like allreduce_rmi (same
/// order, same failure rules), but it returns a future at once.
///
/// This member's `m(args...)` runs in the call; the contributions of the
/// others are combined and passed on in the polls of this location's later
/// armi calls, so keep calling armi (or the future's ready()) while computing
/// for the collective to progress.  Members call a group's collectives, the
/// blocking and the opaque ones, in the same order.
template <class M, class Op, class... A>
  requires detail::member_function<M>
future<detail::result_t<M>> opaque_allreduce_rmi(group const& g, rmi_handle h, M m, Op op, A const&... args) {
  return detail::opaque_allreduce(&g, h, m, std::move(op), args...);
}
/// opaque_allreduce_rmi over every location.
template <class M, class Op, class... A>
  requires detail::member_function<M>
future<detail::result_t<M>> opaque_allreduce_rmi(rmi_handle h, M m, Op op, A const&... args) {
  return detail::opaque_allreduce(nullptr, h, m, std::move(op), args...);
}

/// Collective: returns when every location has called it and every RMI
/// issued before it, and every RMI those issued, has run.  Not inside an RMI target.
inline void rmi_fence() {
  detail::armi_call const call;
  auto& ctx = detail::current("rmi_fence");
  ctx.fence();
  ctx.settle_loans();
}
/// Runs the requests that have arrived; if none had, sends partially filled buffers.
inline void rmi_poll() {
  detail::armi_call const call;
  detail::current("rmi_poll").program_poll();
}
/// Blocks until at least one request has run here, and every view this location lent
/// (armi::lend) has been read.
inline void rmi_wait() {
  detail::armi_call const call;
  auto& ctx = detail::current("rmi_wait");
  ctx.wait_for_request();
  ctx.settle_loans();
}
/// Sends every partially filled aggregation buffer now; returns once every view this
/// location lent (armi::lend) has been read.
inline void rmi_flush() {
  detail::armi_call const call;
  auto& ctx = detail::current("rmi_flush");
  ctx.flush_all(detail::flush_cause::flush);
  ctx.settle_loans();
}

/// Sets this location's aggregation factor (most requests per buffer) for
/// every destination; buffers already holding that many leave at once.
/// armi::aggregation_auto lets the runtime pick each destination's factor
/// online (afresh for a destination that switches to it).
inline void set_aggregation(std::size_t n) {
  detail::armi_call const call;
  detail::current("set_aggregation").set_aggregation(n, n);
}
/// Sets the factors for destinations in this process (`local`) and in other
/// processes (`remote`: mpi, mixed) apart.
inline void set_aggregation(std::size_t local, std::size_t remote) {
  detail::armi_call const call;
  detail::current("set_aggregation").set_aggregation(local, remote);
}
/// True under `--armi-progress=thread`: the process's communication thread may run this
/// location's requests while the location computes outside armi calls.
inline bool has_progress_thread() {
  return detail::current("has_progress_thread").served_by_progress_thread();
}

/// The factor for destinations in this process (armi::aggregation_auto under auto).
inline std::size_t get_aggregation_local() {
  detail::armi_call const call;
  return detail::current("get_aggregation_local").aggregation_local();
}
/// The factor for destinations in other processes.
inline std::size_t get_aggregation_remote() {
  detail::armi_call const call;
  return detail::current("get_aggregation_remote").aggregation_remote();
}
/// The factor for other processes' locations, or, when every location is in
/// this process (threads), the local one.
inline std::size_t get_aggregation() {
  detail::armi_call const call;
  auto& l = detail::current("get_aggregation");
  return l.has_remote() ? l.aggregation_remote() : l.aggregation_local();
}

}  // namespace armi
