// The protocols behind the collective RMIs over a set of members (an
// armi::group's), each over a tree of the members: broadcast and reduce
// (one request from the caller to the first member, passed down the tree:
// tree_stubs.hpp) and allreduce (contributions combine on the way up to the
// first member, and its result, or the first failure, comes back down).
#pragma once

#include <armi/core/collective_tree.hpp>
#include <armi/core/wait_record.hpp>
#include <armi/runtime/associative.hpp>
#include <armi/runtime/calls.hpp>
#include <armi/runtime/location.hpp>
#include <armi/runtime/stubs.hpp>
#include <armi/runtime/tree_stubs.hpp>

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

// A request that goes to several members goes to all or none: too large
// for one, it throws before any is sent.
template <rmi_kind K, class M, class... A>
member_runs check_fits_tree(location const& ctx, member_set g, A const&... args) {
  member_runs runs = runs_of(g.members);
  std::size_t const record = tree_stub<K, M>::request_size(runs, args...);  // the largest of the call's requests
  for (location_id dest : g.members) ctx.check_fits(dest, record);
  return runs;
}

template <class M, class... A>
void broadcast_call(location& ctx, member_set g, rmi_handle h, M m, A const&... args) {
  member_runs const runs = check_fits_tree<rmi_kind::broadcast, M>(ctx, g, args...);
  tree_stub<rmi_kind::broadcast, M>::send(ctx, g.members.front(), h, m, {}, runs, args...);
}

template <class M, class Op, class... A>
result_t<M> reduce_call(location& ctx, member_set g, rmi_handle h, M m, Op& op, A const&... args) {
  using R = result_t<M>;
  member_runs const runs = check_fits_tree<rmi_kind::reduce, M>(ctx, g, args...);
  location_id const me = ctx.id(), first = g.members.front();
  std::uint64_t const key = ctx.collectives().next_call_key(me);
  tree_stub<rmi_kind::reduce, M>::send(ctx, first, h, m, reduce_prefix{key, me, 0}, runs, args...);
  ctx.flush(first, flush_cause::urgent);
  auto answer = take_contributions(ctx, {key, 0, reduce_phase}, std::span(&first, 1), "reduce_rmi");
  if (answer.front().failed) throw_collective_failure(answer.front().bytes, me, nullptr);
  unpacker u(answer.front().bytes.data(), answer.front().bytes.size());
  R acc = u.read<R>();
  for (std::size_t i = 1; i < g.size(); ++i) acc = op(std::move(acc), u.read<R>());
  if (u.remaining() != 0) throw decode_error("armi: reduce_rmi answer with bytes to spare");
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

// A member's place in one allreduce_rmi: the tree over the group's
// members (collective_tree.hpp) and the collective's sequence number.
struct tree_collective {
  location& ctx;
  member_set g;
  std::uint64_t seq;
  tree_links links;

  bool root() const { return links.parent == tree_links::no_parent; }
  location_id parent() const { return g.members[links.parent]; }
};

inline tree_collective join_tree(location& ctx, member_set g) {
  std::uint64_t const seq = ctx.collectives().next_sequence(g.key);
  return {ctx, g, seq, tree_over(ctx, g.rank_of(ctx.id()), g.members)};
}

// Waits for the children's contributions (phase 0) and returns them in child order.
inline std::vector<location::collective_message> take_from_children(tree_collective const& t) {
  std::vector<location_id> children;
  for (std::size_t r : t.links.children) children.push_back(t.g.members[r]);
  return take_contributions(t.ctx, {t.g.key, t.seq, 0}, children, "allreduce_rmi");
}

// Sends this subtree's contribution to the parent and waits for the outcome
// (phase 1) it sends back.
inline location::collective_message exchange_with_parent(tree_collective const& t, collective_status up,
                                                         std::vector<std::byte> const& packed) {
  location_id const parent = t.parent();
  send_collective(t.ctx, parent, t.g.key, t.seq, 0, up, packed);
  t.ctx.flush(parent, flush_cause::urgent);
  location_id const from[] = {parent};
  return std::move(take_contributions(t.ctx, {t.g.key, t.seq, 1}, from, "allreduce_rmi").front());
}

inline void send_to_children(tree_collective const& t, collective_status outcome, std::vector<std::byte> const& bytes) {
  for (std::size_t r : t.links.children) send_collective(t.ctx, t.g.members[r], t.g.key, t.seq, 1, outcome, bytes);
  if (!t.links.children.empty()) t.ctx.flush_urgent();
}

// allreduce_rmi on one member of g, over the tree of g's members.  Up
// (phase 0): each member sends its parent its subtree's contribution: the
// subtree's combined value when op is associative<Op, R>, else its values
// one after another in member order (the root folds them left), or the
// first failure in member order.  Down (phase 1): the root's result, or that
// failure, packed once and passed on unchanged to every member.  The
// collective completes on every member even when one fails, so the group's
// next collective is not disturbed.
template <class M, class Op, class... A>
result_t<M> allreduce_call(location& ctx, member_set g, rmi_handle h, M m, Op& op, A const&... args) {
  using R = result_t<M>;
  using status = collective_status;
  constexpr bool regroup = associative_v<Op, R>;
  location_id const me = ctx.id();
  tree_collective const t = join_tree(ctx, g);

  // This member's value, or what went wrong computing it.
  std::optional<R> acc;
  std::vector<std::byte> packed;  // what goes up: the subtree's value(s), or its first failure
  std::exception_ptr failure;
  try {
    acc.emplace(call_on_own(ctx, h, m, args...));
  } catch (...) {
    failure = std::current_exception();
    packed = pack_current_failure(me);
  }

  std::vector<location::collective_message> from = take_from_children(t);
  status up = failure ? status::failed : status::value;
  take_first_failure(up, packed, from);
  if (up == status::value) {
    try {
      if (regroup || t.root()) {
        for (std::size_t i = 0; i < from.size(); ++i) {
          unpacker u(from[i].bytes.data(), from[i].bytes.size());
          std::size_t const values = regroup ? 1 : t.links.child_end(i) - t.links.children[i];
          for (std::size_t v = 0; v < values; ++v) acc.emplace(op(std::move(*acc), u.read<R>()));
          if (u.remaining() != 0) throw decode_error("armi: allreduce_rmi contribution with bytes to spare");
        }
      }
      if (!t.root()) {
        location_id const parent = t.parent();
        packed = pack_collective(ctx, std::span(&parent, 1), *acc);  // checked before it takes the memory
        if (!regroup) append_values(ctx, packed, from, parent);
      }
    } catch (...) {
      failure = std::current_exception();
      packed = pack_current_failure(me);
      up = status::failed;
    }
  }

  status outcome = up;
  if (!t.root()) {
    location::collective_message result = exchange_with_parent(t, up, packed);
    outcome = result.failed ? status::failed : status::value;
    packed = std::move(result.bytes);
  } else if (outcome == status::value && g.size() > 1) {
    // The result goes to all, or none if it is too large for one of them.
    try {
      packed = pack_collective(ctx, g.members.subspan(1), *acc);
    } catch (...) {
      failure = std::current_exception();
      packed = pack_current_failure(me);
      outcome = status::failed;
    }
  }
  send_to_children(t, outcome, packed);
  if (outcome == status::failed) throw_collective_failure(packed, me, failure);
  if (t.root()) return std::move(*acc);
  unpacker u(packed.data(), packed.size());
  return u.read<R>();
}

}  // namespace armi::detail
