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
#include <armi/runtime/collective_stub.hpp>
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

// One reduce_rmi, from its caller's side, once the request has gone to the
// group's first member: waits for the first member's message (the values
// of every member in member order, or the first failure) and folds it into
// `out`.  A step function: advance() never blocks.
template <class R, class Op>
class reduce_progress final : public collective_mailbox::pending {
 public:
  reduce_progress(location& ctx, std::uint64_t key, location_id first, std::size_t members, Op op,
                  std::shared_ptr<reply_state<R>> out)
      : m_ctx(ctx), m_key(key), m_first(first), m_members(members), m_op(std::move(op)), m_out(std::move(out)) {}

  bool advance() override {
    // The first member's message only: when this location is also a member
    // of the tree, its children report to it under the same key.
    auto& box = m_ctx.collectives().messages();
    auto it = box.find({m_key, 0, reduce_phase});
    if (it == box.end()) return false;
    auto answer = std::find_if(it->second.begin(), it->second.end(),
                               [&](collective_mailbox::message const& msg) { return msg.from == m_first; });
    if (answer == it->second.end()) return false;
    collective_mailbox::message const taken = std::move(*answer);
    it->second.erase(answer);
    if (it->second.empty()) box.erase(it);
    try {
      if (taken.failed) throw_collective_failure(taken.bytes, m_ctx.id(), nullptr);
      unpacker u(taken.bytes.data(), taken.bytes.size());
      R acc = u.read<R>();
      for (std::size_t i = 1; i < m_members; ++i) acc = m_op(std::move(acc), u.read<R>());
      if (u.remaining() != 0) throw decode_error("armi: reduce_rmi answer with bytes to spare");
      m_out->value.emplace(std::move(acc));
      m_out->complete();
    } catch (...) {
      m_out->fail_here();
    }
    return true;
  }

 private:
  location& m_ctx;
  std::uint64_t m_key;
  location_id m_first;
  std::size_t m_members;
  Op m_op;
  std::shared_ptr<reply_state<R>> m_out;
};

// Sends a reduce_rmi's request down the group's tree and returns what
// waits for its answer.
template <class M, class Op, class... A>
std::unique_ptr<reduce_progress<result_t<M>, Op>> start_reduce(location& ctx, member_set g, rmi_handle h, M m, Op op,
                                                               std::shared_ptr<reply_state<result_t<M>>> out,
                                                               A const&... args) {
  member_runs const runs = check_fits_tree<rmi_kind::reduce, M>(ctx, g, args...);
  location_id const me = ctx.id(), first = g.members.front();
  std::uint64_t const key = ctx.collectives().next_call_key(me);
  tree_stub<rmi_kind::reduce, M>::send(ctx, first, h, m, reduce_prefix{key, me, 0}, runs, args...);
  ctx.flush(first, flush_cause::urgent);
  return std::make_unique<reduce_progress<result_t<M>, Op>>(ctx, key, first, g.size(), std::move(op), std::move(out));
}

template <class M, class Op, class... A>
result_t<M> reduce_call(location& ctx, member_set g, rmi_handle h, M m, Op& op, A const&... args) {
  auto out = std::make_shared<reply_state<result_t<M>>>();
  auto const progress = start_reduce(ctx, g, h, m, op, out, args...);
  wait_scope const waiting(ctx.watch(), wait_kind::collective, g.members.front());
  ctx.wait_until([&] { return progress->advance(); }, "reduce_rmi");
  ctx.settle_loans();  // a flush point
  return out->take();
}

// reduce_rmi without waiting: its result arrives in `out`, which the caller's
// future holds; the poll takes the answer when it comes.
template <class M, class Op, class... A>
void opaque_reduce_call(location& ctx, member_set g, rmi_handle h, M m, Op op,
                        std::shared_ptr<reply_state<result_t<M>>> out, A const&... args) {
  ctx.collectives().add_pending(start_reduce(ctx, g, h, m, std::move(op), std::move(out), args...));
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

// allreduce_rmi on one member of a group, over the tree of the group's
// members (collective_tree.hpp), as a step function.  Up (phase 0): each
// member sends its parent its subtree's contribution: the subtree's
// combined value when op is associative<Op, R>, else its values one after
// another in member order (the root folds them left), or the first failure
// in member order.  Down (phase 1): the root's result, or that failure,
// packed once and passed on unchanged to every member.  The collective
// completes on every member even when one fails, so the group's next
// collective is not disturbed.  advance() takes what has arrived, sends
// what it can and never blocks; it completes `out` at the end.  The members
// must outlive it, or be given to keep (`kept`, which g then points into:
// not movable).
template <class R, class Op>
class allreduce_progress final : public collective_mailbox::pending {
 public:
  // own: this member's value, or empty, `failure` what computing it threw
  // and `packed` that failure as it travels.
  allreduce_progress(location& ctx, member_set g, std::vector<location_id> kept, Op op, std::optional<R> own,
                     std::exception_ptr failure, std::vector<std::byte> packed, std::shared_ptr<reply_state<R>> out)
      : m_ctx(ctx),
        m_kept(std::move(kept)),
        m_g{m_kept.empty() ? g.members : std::span<location_id const>(m_kept), g.key},
        m_members(m_g.members),
        m_seq(ctx.collectives().next_sequence(g.key)),
        m_links(tree_over(ctx, m_g.rank_of(ctx.id()), m_members)),
        m_op(std::move(op)),
        m_acc(std::move(own)),
        m_failure(std::move(failure)),
        m_packed(std::move(packed)),
        m_out(std::move(out)) {
  }
  allreduce_progress(allreduce_progress const&) = delete;
  allreduce_progress& operator=(allreduce_progress const&) = delete;

  bool advance() override {
    if (m_stage == stage::children) {
      std::vector<location_id> children;
      for (std::size_t r : m_links.children) children.push_back(m_members[r]);
      auto from = try_take_contributions(m_ctx, {m_g.key, m_seq, 0}, children, "allreduce_rmi");
      if (!from) return false;
      combine_and_send_up(*from);
      if (!root()) return false;  // waits for the outcome from the parent
    }
    if (m_stage == stage::parent) {
      location_id const parent[] = {m_members[m_links.parent]};
      auto result = try_take_contributions(m_ctx, {m_g.key, m_seq, 1}, parent, "allreduce_rmi");
      if (!result) return false;
      m_status = result->front().failed ? collective_status::failed : collective_status::value;
      m_packed = std::move(result->front().bytes);
    }
    finish();
    return true;
  }

 private:
  using status = collective_status;
  enum class stage { children, parent };
  static constexpr bool regroup = associative_v<Op, R>;

  bool root() const { return m_links.parent == tree_links::no_parent; }


  // The subtree's contribution from this member's value and its children's:
  // to the parent (then stage::parent), or, at the root, the outcome.
  void combine_and_send_up(std::vector<location::collective_message>& from) {
    m_status = m_failure ? status::failed : status::value;
    take_first_failure(m_status, m_packed, from);
    if (m_status == status::value) {
      try {
        if (regroup || root()) {
          for (std::size_t i = 0; i < from.size(); ++i) {
            unpacker u(from[i].bytes.data(), from[i].bytes.size());
            std::size_t const values = regroup ? 1 : m_links.child_end(i) - m_links.children[i];
            for (std::size_t v = 0; v < values; ++v) m_acc.emplace(m_op(std::move(*m_acc), u.read<R>()));
            if (u.remaining() != 0) throw decode_error("armi: allreduce_rmi contribution with bytes to spare");
          }
        }
        if (!root()) {
          location_id const parent = m_members[m_links.parent];
          m_packed = pack_collective(m_ctx, std::span(&parent, 1), *m_acc);  // checked before it takes the memory
          if (!regroup) append_values(m_ctx, m_packed, from, parent);
        } else if (m_members.size() > 1) {
          // The result goes to all, or none if it is too large for one of them.
          m_packed = pack_collective(m_ctx, m_members.subspan(1), *m_acc);
        }
      } catch (...) {
        m_failure = std::current_exception();
        m_packed = pack_current_failure(m_ctx.id());
        m_status = status::failed;
      }
    }
    if (root()) return;
    location_id const parent = m_members[m_links.parent];
    send_collective(m_ctx, parent, m_g.key, m_seq, 0, m_status, m_packed);
    m_ctx.flush(parent, flush_cause::urgent);
    m_stage = stage::parent;
  }

  // The outcome down to the children, and into out.
  void finish() {
    for (std::size_t r : m_links.children)
      send_collective(m_ctx, m_members[r], m_g.key, m_seq, 1, m_status, m_packed);
    if (!m_links.children.empty()) m_ctx.flush_urgent();
    try {
      if (m_status == status::failed) throw_collective_failure(m_packed, m_ctx.id(), m_failure);
      if (root()) {
        m_out->value.emplace(std::move(*m_acc));
      } else {
        unpacker u(m_packed.data(), m_packed.size());
        m_out->value.emplace(u.read<R>());
      }
      m_out->complete();
    } catch (...) {
      m_out->fail_here();
    }
  }

  location& m_ctx;
  std::vector<location_id> m_kept;  // the members, when the caller's list may not outlive this
  member_set m_g;
  std::span<location_id const> m_members;
  std::uint64_t m_seq;
  tree_links m_links;
  Op m_op;
  std::optional<R> m_acc;          // this subtree's value so far (root: the result)
  std::exception_ptr m_failure;    // what failed on this member, if anything
  std::vector<std::byte> m_packed;  // what goes up, then what came down
  status m_status = status::value;
  stage m_stage = stage::children;
  std::shared_ptr<reply_state<R>> m_out;
};

// This member's value for an allreduce_rmi, and the progress that combines
// it (keeping a copy of the members if `keep`).
template <class M, class Op, class... A>
std::unique_ptr<allreduce_progress<result_t<M>, Op>> start_allreduce(location& ctx, member_set g, bool keep,
                                                                     rmi_handle h, M m, Op op,
                                                                     std::shared_ptr<reply_state<result_t<M>>> out,
                                                                     A const&... args) {
  std::optional<result_t<M>> own;
  std::exception_ptr failure;
  std::vector<std::byte> packed;
  try {
    own.emplace(call_on_own(ctx, h, m, args...));
  } catch (...) {
    failure = std::current_exception();
    packed = pack_current_failure(ctx.id());
  }
  std::vector<location_id> kept;
  if (keep) kept.assign(g.members.begin(), g.members.end());
  return std::make_unique<allreduce_progress<result_t<M>, Op>>(ctx, g, std::move(kept), std::move(op), std::move(own),
                                                               std::move(failure), std::move(packed), std::move(out));
}

template <class M, class Op, class... A>
result_t<M> allreduce_call(location& ctx, member_set g, rmi_handle h, M m, Op& op, A const&... args) {
  auto out = std::make_shared<reply_state<result_t<M>>>();
  auto const progress = start_allreduce(ctx, g, false, h, m, op, out, args...);
  if (!progress->advance()) {
    location_id const leader = g.members.front();  // the tree's root, which the watchdog names
    wait_scope const waiting(ctx.watch(), wait_kind::collective, leader == ctx.id() ? no_peer : leader);
    ctx.wait_until([&] { return progress->advance(); }, "allreduce_rmi");
  }
  ctx.settle_loans();  // a flush point
  return out->take();
}

// allreduce_rmi without waiting: this member's value is computed now, the
// rest happens in the polls of later armi calls, and the result (or the
// failure) lands in `out`, which the caller's future holds.  keep: the
// members are a group's, which may go away first.
template <class M, class Op, class... A>
void opaque_allreduce_call(location& ctx, member_set g, bool keep, rmi_handle h, M m, Op op,
                           std::shared_ptr<reply_state<result_t<M>>> out, A const&... args) {
  auto progress = start_allreduce(ctx, g, keep, h, m, std::move(op), std::move(out), args...);
  if (!progress->advance()) ctx.collectives().add_pending(std::move(progress));
}

}  // namespace armi::detail
