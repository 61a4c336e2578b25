// broadcast_rmi and reduce_rmi over a tree of the group's members
// (core/collective_tree.hpp).  The caller sends one request to the group's
// first member; a request names the members of its receiver's subtree, and
// the receiver passes the call on to its children (each with its own
// subtree) before it runs the method itself.  Under reduce_rmi each member
// then waits for its children's contributions and sends its subtree's values,
// in member order, to where it was asked from (its parent, or the caller),
// as one collective message; or the first failure among them.  The caller
// folds the values left with op, so any op gives ((r0 op r1) op r2) ....
#pragma once

#include <armi/core/collective_tree.hpp>
#include <armi/core/handlers.hpp>
#include <armi/core/transport.hpp>
#include <armi/core/wait_record.hpp>
#include <armi/core/wire.hpp>
#include <armi/runtime/args.hpp>
#include <armi/runtime/collective_stub.hpp>
#include <armi/runtime/location.hpp>
#include <armi/runtime/method_traits.hpp>
#include <armi/runtime/stubs.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace armi::detail {

// A subtree's members as runs first, first + stride, ... (count of them):
// one run for every location, or for every other one.
struct member_run {
  location_id first;
  location_id stride;
  location_id count;
};
using member_runs = std::vector<member_run>;

inline member_runs runs_of(std::span<location_id const> members) {
  member_runs runs;
  for (std::size_t i = 0; i < members.size();) {
    member_run r{members[i], 1, 1};
    if (i + 1 < members.size()) {
      r.stride = members[i + 1] - members[i];
      while (i + r.count < members.size() && members[i + r.count] - members[i + r.count - 1] == r.stride) ++r.count;
    }
    runs.push_back(r);
    i += r.count;
  }
  return runs;
}

// The members the runs name, checked: ascending, each a location of the run
// (fewer than `size`), the first of them `self`.
inline std::vector<location_id> members_of_runs(member_runs const& runs, location_id self, location_id size) {
  std::vector<location_id> members;
  for (member_run const& r : runs) {
    if (r.count == 0 || r.stride == 0 || r.count > size || r.first >= size ||
        (size - 1 - r.first) / r.stride < r.count - 1 || members.size() + r.count > size)
      throw decode_error("armi: a collective request names members outside the run");
    for (location_id k = 0; k < r.count; ++k) {
      location_id const l = r.first + k * r.stride;
      if (!members.empty() && l <= members.back()) throw decode_error("armi: a collective request's members are not ascending");
      members.push_back(l);
    }
  }
  if (members.empty() || members.front() != self)
    throw decode_error("armi: a collective request for a subtree this location does not root");
  return members;
}

// The tree over a group's members (rank: a position among them): it follows
// the machine where the transport knows one (mpi, mixed: nodes, then
// processes, then locations), else the plain tree.
inline tree_links tree_over(location& ctx, std::size_t rank, std::span<location_id const> members) {
  std::size_t const arity = ctx.collectives().tree_arity();
  transport const& tr = ctx.transport_of();
  if (!tr.layered() || members.size() < 2) return tree_links_of(rank, members.size(), arity);
  std::vector<std::vector<std::size_t>> levels(2, std::vector<std::size_t>{0});  // nodes, processes
  for (std::size_t i = 1; i < members.size(); ++i) {
    bool const node = tr.node_of(members[i]) != tr.node_of(members[i - 1]);
    if (node) levels[0].push_back(i);
    if (node || tr.process_of(members[i]) != tr.process_of(members[i - 1])) levels[1].push_back(i);
  }
  return tree_links_of(rank, members.size(), arity, levels);
}

// Takes one collective message (under key k) from each of `from`
// (ascending) in that order, if all of them have arrived; else nothing,
// and the mailbox keeps what has.
inline std::optional<std::vector<collective_mailbox::message>> try_take_contributions(
    location& ctx, collective_mailbox::key const& k, std::span<location_id const> from, char const* what) {
  std::vector<collective_mailbox::message> taken(from.size());
  if (from.empty()) return taken;
  auto& box = ctx.collectives().messages();
  auto it = box.find(k);
  if (it == box.end() || it->second.size() != from.size()) return std::nullopt;
  auto node = box.extract(it);
  std::vector<bool> seen(from.size());
  for (auto& msg : node.mapped()) {
    auto const at = std::lower_bound(from.begin(), from.end(), msg.from);
    std::size_t const i = std::size_t(at - from.begin());
    if (at == from.end() || *at != msg.from || seen[i])
      fatal_exit(std::string(what) + ": a contribution from an unexpected location " + std::to_string(msg.from));
    seen[i] = true;
    taken[i] = std::move(msg);
  }
  return taken;
}

// Waits, serving requests, for one collective message (under key k) from
// each of `from` (ascending) and returns them in that order.
inline std::vector<collective_mailbox::message> take_contributions(location& ctx, collective_mailbox::key const& k,
                                                                   std::span<location_id const> from,
                                                                   char const* what) {
  std::optional<std::vector<collective_mailbox::message>> taken;
  wait_scope const waiting(ctx.watch(), wait_kind::collective, from.size() == 1 ? from.front() : no_peer);
  ctx.wait_until([&] { return (taken = try_take_contributions(ctx, k, from, what)).has_value(); }, what);
  return std::move(*taken);
}

// A subtree's contribution fails with the first failure in member order:
// this member's (status already failed), else its first failed child's.
inline void take_first_failure(collective_status& status, std::vector<std::byte>& bytes,
                               std::vector<collective_mailbox::message>& children) {
  for (auto& c : children)
    if (status == collective_status::value && c.failed) {
      status = collective_status::failed;
      bytes = std::move(c.bytes);
    }
}

// Appends the children's values to this member's (bytes: its own, packed),
// in member order; throws length_error if they no longer fit one
// collective message to `to`.
inline void append_values(location const& ctx, std::vector<std::byte>& bytes,
                          std::vector<collective_mailbox::message> const& children, location_id to) {
  for (auto const& c : children) bytes.insert(bytes.end(), c.bytes.begin(), c.bytes.end());
  ctx.check_fits(to, collective_request_bytes(bytes.size()));
}

// The phase of a reduce_rmi's contributions in the collectives' mailbox
// (allreduce_rmi's are 0 and 1), under the key the caller chose.
inline constexpr std::uint32_t reduce_phase = 2;

template <rmi_kind K, class M, class Params = typename method_traits<M>::params>
struct tree_stub;

template <rmi_kind K, class M, class... P>
struct tree_stub<K, M, type_list<P...>> {
  static_assert(K == rmi_kind::broadcast || K == rmi_kind::reduce);
  static constexpr rmi_kind kind = K;
  using method = M;
  using calls = method_stub<K, M>;  // its checks and method indices (shared by every kind)
  using class_type = typename method_traits<M>::class_type;
  using result = typename method_traits<M>::result;
  using pack = arg_pack<member_runs, std::decay_t<P>...>;
  static constexpr bool reduces = K == rmi_kind::reduce;
  static constexpr std::size_t prefix_bytes = reduces ? sizeof(reduce_prefix) : 0;

  static std::uint32_t define(method_ref const& r)
    requires(!calls::fixed)
  {
    return calls::define(r);
  }
  static std::uint32_t method_type()
    requires(!calls::fixed)
  {
    return calls::method_type();
  }

  // The bytes of the request a call with these members and arguments makes.
  template <class... A>
  static std::size_t request_size(member_runs const& runs, A const&... a) {
    return [&](auto const&... v) { return request_bytes(prefix_bytes + pack::measure(runs, v...)); }(
        as_param<std::decay_t<P>>(a)...);
  }

  template <class... A>
  static void send(location& ctx, location_id dest, rmi_handle h, M m, reduce_prefix const& pre,
                   member_runs const& runs, A const&... a) {
    std::uint32_t const index = calls::index_of(m);
    std::uint32_t const word = handler_id<tree_stub>::value | (index << handler_bits);
    if constexpr (!calls::fixed)
      if (!ctx.told(dest, word)) [[unlikely]]
        calls::describe(ctx, dest, word, index, m);
    request_header hdr{word, 0, h.index, h.epoch};
    [&](auto const&... v) {
      std::size_t const body = pack::measure(runs, v...);
      std::byte* p = ctx.begin_request(dest, K, hdr, prefix_bytes + body);
      if constexpr (reduces) write_prefix(p, pre);
      pack::write(p + prefix_bytes, body, runs, v...);
    }(as_param<std::decay_t<P>>(a)...);
    (void)pre;
    // A reduce is waited for: out at once.  A broadcast is aggregated like
    // any one-sided request, and leaves when its sender next runs out of work.
    ctx.end_request(dest, reduces);
  }

  static void invoke(location& ctx, location_id source, request_header h, std::byte const* payload) {
    std::uint32_t const handler = h.handler & handler_mask;
    M const m = calls::method_of(h.handler);
    reduce_prefix pre{};
    std::size_t n = h.payload_bytes;
    if constexpr (reduces) {
      if (n < sizeof pre) throw_decode_error("armi: truncated reduce request");
      pre = read_prefix<reduce_prefix>(payload);
      if (pre.report_to >= ctx.size()) throw_decode_error("armi: a reduce request reports to no location");
      payload += sizeof pre;
      n -= sizeof pre;
    }
    pack::read_and_call(payload, n, [&](member_runs& runs, auto&... v) {
      std::vector<location_id> const members = members_of_runs(runs, ctx.id(), ctx.size());
      tree_links const t = tree_over(ctx, 0, members);
      rmi_handle const target{h.handle_index, h.handle_epoch};
      std::vector<location_id> children;
      for (std::size_t i = 0; i < t.children.size(); ++i) {
        std::span<location_id const> const subtree(&members[t.children[i]], t.child_end(i) - t.children[i]);
        children.push_back(subtree.front());
        send(ctx, subtree.front(), target, m, reduce_prefix{pre.key, ctx.id(), 0}, runs_of(subtree), v...);
      }
      if constexpr (!reduces) {
        class_type* obj = ctx.target<class_type>(h, handler, source);
        ctx.calling_target();
        call_member(obj, m, static_cast<P&&>(v)...);
      } else {
        if (!children.empty()) ctx.flush_urgent();
        contribute(ctx, source, h, handler, m, pre, children, v...);
      }
    });
  }

 private:
  // This member's value (or failure), then its children's, in member order,
  // to pre.report_to: the subtree's values, or the first failure among them.
  template <class... V>
  static void contribute(location& ctx, location_id source, request_header const& h, std::uint32_t handler, M m,
                         reduce_prefix const& pre, std::vector<location_id> const& children, V&... v) {
    location_id const me = ctx.id();
    collective_status status = collective_status::value;
    std::vector<std::byte> bytes;
    if (!ctx.has_target(h)) {
      status = collective_status::failed;
      bytes = pack_failure("armi::unknown_handle", ctx.unknown_handle_message(h, handler, source), me);
    } else {
      try {
        class_type* obj = ctx.target<class_type>(h, handler, source);
        std::decay_t<result> const r = call_member(obj, m, static_cast<P&&>(v)...);
        bytes = pack_collective(ctx, std::span(&pre.report_to, 1), r);  // checked before it takes the memory
      } catch (...) {
        status = collective_status::failed;
        bytes = pack_current_failure(me);
      }
    }
    auto from = take_contributions(ctx, {pre.key, 0, reduce_phase}, children, "reduce_rmi");
    take_first_failure(status, bytes, from);
    if (status == collective_status::value) {
      try {
        append_values(ctx, bytes, from, pre.report_to);
      } catch (...) {
        status = collective_status::failed;
        bytes = pack_current_failure(me);
      }
    }
    send_collective(ctx, pre.report_to, pre.key, 0, reduce_phase, status, bytes);
    ctx.flush(pre.report_to, flush_cause::urgent);
  }
};

}  // namespace armi::detail
