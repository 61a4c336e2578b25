// The protocols behind the collective RMIs over a set of members (an
// armi::group's): broadcast (one request per member), reduce (answers
// gathered at the caller, combined in member order) and allreduce (every
// member contributes to the first member, the leader, which combines and
// sends the result, or the first failure, back to all).
#pragma once

#include <armi/core/wait_record.hpp>
#include <armi/runtime/calls.hpp>
#include <armi/runtime/location.hpp>
#include <armi/runtime/stubs.hpp>

#include <algorithm>
#include <cstdint>
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

namespace armi::detail {

// The members of a collective, sorted, and the key that names their group
// in collective messages (the same on every member).
struct member_set {
  std::span<location_id const> members;
  std::uint64_t key;

  std::size_t size() const { return members.size(); }
  // Position of l in members, or size() if absent.
  std::size_t rank_of(location_id l) const {
    auto it = std::lower_bound(members.begin(), members.end(), l);
    return it != members.end() && *it == l ? std::size_t(it - members.begin()) : size();
  }
};

template <class M, class... A>
void broadcast_call(location& ctx, member_set g, rmi_handle h, M m, A const&... args) {
  check_fits_all<rmi_kind::broadcast, M>(ctx, g.members, args...);
  for (location_id dest : g.members) send_call<rmi_kind::broadcast>(ctx, dest, h, m, 0, args...);
}

template <class M, class Op, class... A>
result_t<M> reduce_call(location& ctx, member_set g, rmi_handle h, M m, Op& op, A const&... args) {
  using R = result_t<M>;
  check_fits_all<rmi_kind::reduce, M>(ctx, g.members, args...);
  std::vector<std::shared_ptr<reply_state<R>>> answers;
  answers.reserve(g.size());
  for (location_id dest : g.members) answers.push_back(send_answered<rmi_kind::reduce>(ctx, dest, h, m, args...));
  auto take = [&](std::size_t i) {
    reply_state<R>& s = *answers[i];
    wait_scope const waiting(ctx.watch(), wait_kind::future_get, g.members[i], typeid(M).name());
    ctx.wait_for(s.ready, "reduce_rmi");
    return s.take();
  };
  R acc = take(0);
  for (std::size_t i = 1; i < answers.size(); ++i) acc = op(std::move(acc), take(i));
  return acc;
}

// This member's value of m(args...) on its own representative of h, called
// with copies of the arguments (by value, as for a remote call).
template <class M, class... A>
result_t<M> call_on_own(location& ctx, rmi_handle h, M m, A const&... args) {
  using C = typename method_traits<M>::class_type;
  check_handle(h, "allreduce_rmi");
  auto* entry = ctx.registry().find(h.index, h.epoch);
  if (entry == nullptr)
    throw std::invalid_argument("armi::allreduce_rmi: the handle names no object on location " +
                                std::to_string(ctx.id()));
  C* obj = dynamic_cast<C*>(entry->object);
  if (obj == nullptr) throw std::invalid_argument("armi::allreduce_rmi: the handle names an object of another type");
  std::tuple<std::decay_t<A>...> copies(args...);
  return std::apply([&](auto&... a) { return call_member(obj, m, a...); }, copies);
}

// allreduce_rmi on member `me` of g.  Phase 0: the members' values (or their
// failures) to the leader; phase 1: the leader's result (or the first failure
// in member order) to every other member.  The collective completes on every
// member even when one fails, so the group's next collective is not
// disturbed.
template <class M, class Op, class... A>
result_t<M> allreduce_call(location& ctx, member_set g, rmi_handle h, M m, Op& op, A const&... args) {
  using R = result_t<M>;
  using status = collective_status;
  location_id const me = ctx.id();
  std::uint64_t const seq = ctx.next_collective_sequence(g.key);
  location_id const leader = g.members.front();
  auto& box = ctx.mailbox();

  // This member's value, or what went wrong computing or packing it.
  std::optional<R> mine;
  std::vector<std::byte> packed;
  std::exception_ptr failure;
  try {
    mine.emplace(call_on_own(ctx, h, m, args...));
    if (me != leader) packed = pack_collective(ctx, std::span(&leader, 1), *mine);
  } catch (...) {
    failure = std::current_exception();
    packed = pack_current_failure(me);
  }

  if (me != leader) {
    send_collective(ctx, leader, g.key, seq, 0, failure ? status::failed : status::value, packed);
    ctx.flush(leader, flush_cause::urgent);
    location::collective_key const k{g.key, seq, 1};
    wait_scope const waiting(ctx.watch(), wait_kind::collective, leader);
    ctx.wait_until([&] { return box.count(k) != 0; }, "collective");
    auto node = box.extract(k);
    auto const& result = node.mapped().front();
    if (result.failed) throw_collective_failure(result.bytes, me, failure);
    if (failure) std::rethrow_exception(failure);
    unpacker u(result.bytes.data(), result.bytes.size());
    return u.read<R>();
  }

  location::collective_key const k{g.key, seq, 0};
  wait_scope const waiting(ctx.watch(), wait_kind::collective);
  ctx.wait_until(
      [&] {
        auto it = box.find(k);
        return g.size() == 1 || (it != box.end() && it->second.size() == g.size() - 1);
      },
      "allreduce_rmi");
  std::vector<location::collective_message const*> from(g.size());
  decltype(box.extract(k)) node;
  if (g.size() > 1) {
    node = box.extract(k);
    for (auto const& msg : node.mapped()) {
      std::size_t const r = g.rank_of(msg.from);
      if (r >= g.size() || r == 0 || from[r]) fatal_exit("allreduce_rmi: contribution from an unexpected location");
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
      if (g.size() > 1) packed = pack_collective(ctx, g.members.subspan(1), *acc);
    } catch (...) {
      failure = std::current_exception();
      packed = pack_current_failure(me);
      outcome = status::failed;
    }
  }
  for (std::size_t r = 1; r < g.size(); ++r) send_collective(ctx, g.members[r], g.key, seq, 1, outcome, packed);
  ctx.flush_urgent();
  if (outcome == status::failed) throw_collective_failure(packed, me, failure);
  return std::move(*acc);
}

}  // namespace armi::detail
