// The outbox: a location's buffer being filled per next hop, its pool of
// empty buffers, the chains of executed buffers going back to their owners,
// and sending (flush: when a buffer leaves and what the location does
// around it).  Functions that serve or wait take the location (Ctx: its
// poll, its fence epoch, its diagnostics).
//
// A buffer's slot is the location it goes to.  Direct, that is each
// request's destination, and m_out[d] is d's slot buffer.  Routed
// (--armi-routing, core/routes.hpp), it is the next hop: a slot buffer
// holds segments, each opened by a route record naming the destination
// (and the origin, for requests passed on).  The send path finds the
// buffer taking this location's requests to d with out(d).  Direct, that
// is m_out[d], P entries; routed, a table of a few entries per slot,
// indexed by d's low bits, whose entry is checked against the buffer's
// open segment: a destination whose entry another took goes the slow way
// (make_room) once.  Slots exist for the next hops
// only (about 2 sqrt(P) under grid), and release chains for the few
// owners of a batch, so that nothing a routed location keeps grows with P.
#pragma once

#include <armi/core/buffer.hpp>
#include <armi/core/routes.hpp>
#include <armi/core/stats.hpp>
#include <armi/core/trace.hpp>
#include <armi/core/transport.hpp>
#include <armi/runtime/aggregation_policy.hpp>
#include <armi/runtime/flow_control.hpp>
#include <armi/runtime/location_errors.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <vector>

namespace armi::detail {

class outbox {
 public:
  // A request this large (header included) is written into the transport's
  // memory when it can be (make_direct): below it, the copy saved no longer
  // pays for the message added.
  static constexpr std::size_t direct_min_bytes = 4096;
  // Requests to oneself queue until the next poll, this many buffers at most.
  static constexpr std::size_t max_ready_to_self = 16;
  // Executed buffers go back to their owners in batches of this many, or
  // when the location runs out of work.
  static constexpr std::size_t release_batch = 8;
  static constexpr std::int64_t no_deadline = INT64_MAX;

  // The request between begin_request and end_request: its buffer, its
  // header, the buffer's size with it, its kind.
  struct open_request {
    buffer* b;
    request_header header;
    std::size_t end;
    rmi_kind kind;
  };

  outbox(transport& tr, location_id self, location_stats& stats, flow_control& flow, aggregation_policy& policy,
         route_grid const& routes)
      : m_transport(tr), m_self(self), m_stats(stats), m_flow(flow), m_policy(policy),
        m_routes(routes), m_routed(m_routes.routes()),
        m_copy_limit(tr.copy_limit()), m_copy_path(tr.copy_path()) {
    std::size_t entries = tr.size();
    if (m_routed) {
      m_hops = m_routes.next_hops(self);
      m_hops.insert(std::lower_bound(m_hops.begin(), m_hops.end(), self), self);  // requests to itself
      m_slots.assign(m_hops.size(), nullptr);
      // Two entries per slot, as a power of two, unless P entries are fewer.
      if (std::size_t const table = std::bit_ceil(2 * m_hops.size()); table < entries) {
        entries = table;
        m_out_mask = static_cast<location_id>(table - 1);
      }
    }
    m_out.assign(entries, nullptr);
    tr.attach(self, m_pool);
  }
  outbox(outbox const&) = delete;
  outbox& operator=(outbox const&) = delete;
  ~outbox() {
    for (std::size_t i = 0; i < slot_count(); ++i)
      if (buffer* b = slot_at(i); b != &m_direct) delete b;
    while (buffer* b = m_transport.reclaim(m_self)) delete b;
    for (buffer* b : m_pool) delete b;
  }

  // The buffer taking this location's requests to dest (its open segment
  // is dest's), or nullptr: the send path's index.  Direct, entry dest is
  // dest's, unchecked (the check cost the send path a few percent).
  [[gnu::always_inline]] buffer* out(location_id dest) const {
    if (!m_routed) [[likely]]
      return m_out[dest];
    buffer* b = m_out[dest & m_out_mask];
    return b != nullptr && b->segment_dest == dest ? b : nullptr;
  }
  open_request m_open{};
  buffer m_direct;  // a large request's, in the transport's memory (make_direct)

  // The slots (next hops), by number: how many, each one's location, its
  // buffer being filled (or nullptr).  Direct, slot d is location d.
  std::size_t slot_count() const { return m_routed ? m_slots.size() : m_out.size(); }
  location_id slot_location(std::size_t i) const { return m_routed ? m_hops[i] : static_cast<location_id>(i); }
  buffer* slot_at(std::size_t i) const { return m_routed ? m_slots[i] : m_out[i]; }
  // Slot `hop`'s buffer (hop: this location or one of its next hops).
  buffer*& slot(location_id hop) { return m_routed ? m_slots[hop_index(hop)] : m_out[hop]; }
  // The buffer being filled for `to` as a next hop, or nullptr (also where it is none).
  buffer* open_buffer_of(location_id to) {
    if (!m_routed) return m_out[to];
    std::size_t const i = hop_index(to);
    return i < m_hops.size() && m_hops[i] == to ? m_slots[i] : nullptr;
  }
  bool routed() const { return m_routed; }
  route_grid const& routes() const { return m_routes; }
  bool holds_released() const { return !m_releasing.empty(); }
  bool has_urgent() const { return !m_urgent.empty(); }

  // b holds a request someone waits on: its slot leaves at the next flush_urgent.
  [[gnu::noinline]] void mark_urgent(buffer& b) {
    b.urgent = true;
    m_urgent.push_back(b.dest);
  }

  // Sends the buffer toward dest (if it holds requests) for `cause`.
  template <class Ctx>
  void flush(Ctx& ctx, location_id dest, flush_cause cause) {
    flush_slot(ctx, m_routed ? m_routes.next_hop(m_self, dest) : dest, cause);
  }

  // Sends slot `dest`'s buffer (if it holds requests) for `cause`.
  template <class Ctx>
  void flush_slot(Ctx& ctx, location_id dest, flush_cause cause) {
    buffer*& held = slot(dest);
    buffer* b = held;
    if (b == nullptr || b->count == 0) return;
    held = nullptr;
    close_segment(*b);
    b->epoch = ctx.epoch();
    ++m_stats.buffers_sent;
    m_stats.bytes_sent += b->size;
    ++m_stats.requests_per_buffer[location_stats::bucket_of(b->count)];
    ++m_stats.flushes[static_cast<std::size_t>(cause)];
    bool const automatic = m_policy.on_flush(dest, *b, cause, m_flow.half_out());
    if (trace_log* t = ctx.diag().tracer()) t->flush(trace_log::now_ns(), dest, b->count, b->size);
    // Serving what has arrived from inside a send: never inside a request
    // (atomicity), nor inside serving that a send started.
    bool const may_serve = !ctx.in_request() && !m_flow.throttling();
    if (dest == m_self) {
      m_stats.sent_by(send_path::process);
      ctx.receiver().push_ready(b);
      // A location that keeps sending to itself runs them here, so they cannot pile up.
      if (ctx.receiver().ready_count() > max_ready_to_self && may_serve) serve_from_send(ctx);
      return;
    }
    if (b == &m_direct) {
      m_transport.direct_send(dest, *b);
      m_stats.sent_by(m_copy_path);
      b->data.release();  // the transport's memory, now the receiver's
    } else if (b->size <= m_copy_limit && m_transport.send_copy(dest, *b)) {
      m_stats.sent_by(m_copy_path);
      // Copied out: it stays dest's, empty (its room still holds), so that
      // the next request to dest finds a buffer without make_room.  Not
      // under --armi-max-delay, where a buffer's clock starts in make_room.
      if (held == nullptr && m_policy.max_delay_ns() == 0) {
        b->reset();
        m_policy.rearm(dest, *b);
        take_slot(dest, b);
      } else {
        m_pool.push_back(b);
      }
    } else {
      m_flow.sent(b->capacity);
      send_path path;
      if (!automatic || !m_policy.time_send()) {
        path = m_transport.send(dest, b);
      } else {
        std::int64_t const t0 = aggregation_policy::now_ns();  // a send's cost sets auto's target fill time
        path = m_transport.send(dest, b);
        m_policy.sent_in(aggregation_policy::now_ns() - t0);
      }
      m_stats.sent_by(path);
      if (m_flow.half_out()) m_flow.ask_service(true);  // after the send: the transport sees it in flight
    }
    if (!may_serve) return;
    // Flow control: a location far ahead of its receivers serves requests
    // until its buffers come back.
    if (m_flow.over_limit()) return ctx.throttle();
    // Streaming while partners stream (no one polls): serve at each buffer
    // once half the limit is in flight, or while a partner asks for it.
    if (cause != flush_cause::full && cause != flush_cause::bytes) return;
    if (m_flow.half_out()) return serve_from_send(ctx);
    if (m_transport.service_wanted(m_self)) serve_from_send(ctx);
  }

  // One poll from inside flush(), then the buffers that have come home.
  template <class Ctx>
  [[gnu::noinline]] void serve_from_send(Ctx& ctx) {
    m_flow.set_throttling(true);
    ctx.poll_once();
    m_flow.set_throttling(false);
    reclaim_all();
  }

  // Sends every buffer holding requests; whether there was one.  flush()
  // may serve requests, and those may mark more buffers urgent.
  template <class Ctx>
  bool flush_all(Ctx& ctx, flush_cause cause) {
    m_urgent.clear();
    bool sent = false;
    for (std::size_t i = 0; i < slot_count(); ++i)
      if (buffer const* b = slot_at(i); b != nullptr && b->count != 0) {
        sent = true;
        flush_slot(ctx, slot_location(i), cause);
      }
    return sent;
  }

  template <class Ctx>
  void flush_urgent(Ctx& ctx) {
    for (std::size_t i = 0; i < m_urgent.size(); ++i) {
      location_id const d = m_urgent[i];
      if (buffer const* b = slot(d); b != nullptr && b->urgent) flush_slot(ctx, d, flush_cause::urgent);
    }
    m_urgent.clear();
  }

  // --armi-max-delay: sends the buffers whose first request has waited that
  // long.  Free while no buffer is pending.
  template <class Ctx>
  [[gnu::always_inline]] void send_overdue(Ctx& ctx) {
    if (m_delay_deadline != no_deadline) [[unlikely]]
      send_overdue_now(ctx);
  }
  template <class Ctx>
  [[gnu::noinline]] void send_overdue_now(Ctx& ctx) {
    std::int64_t const now = aggregation_policy::now_ns();
    if (now < m_delay_deadline) return;
    m_delay_deadline = no_deadline;
    std::int64_t const delay = m_policy.max_delay_ns();
    for (std::size_t i = 0; i < slot_count(); ++i) {
      buffer const* b = slot_at(i);
      if (b == nullptr || b->count == 0) continue;
      if (now - b->born_ns >= delay)
        flush_slot(ctx, slot_location(i), flush_cause::delay);
      else
        m_delay_deadline = std::min(m_delay_deadline, b->born_ns + delay);
    }
  }

  // The buffer taking requests to dest reached its limit: the factor (send
  // it), half of it under auto (note the time), or a max-delay check.
  // (location calls it out of line.)
  template <class Ctx>
  void limit_reached(Ctx& ctx, location_id dest) {
    buffer* b = out(dest);
    if (b == &m_direct) return flush_slot(ctx, dest, flush_cause::bytes);  // its one request
    slot_limit_reached(ctx, *b);
  }
  template <class Ctx>
  void slot_limit_reached(Ctx& ctx, buffer& b) {
    location_id const slot = b.dest;
    if (!m_policy.clocked()) return flush_slot(ctx, slot, flush_cause::full);  // the limit is the factor
    if (b.count >= m_policy.factor(slot)) return flush_slot(ctx, slot, flush_cause::full);
    m_policy.note_half(slot, b);
    m_policy.rearm(slot, b);
    send_overdue(ctx);
  }

  // A buffer for dest with room for need more bytes.  A pooled buffer may
  // have grown past the cap of its new destination, so room, not capacity,
  // bounds it.  Throws length_error for a request that cannot go at all.
  template <class Ctx>
  buffer* make_room(Ctx& ctx, location_id dest, std::size_t need) {
    if (m_routed) return routed_room(ctx, dest, need, buffer::no_segment);
    ctx.check_fits(dest, need - record_slack);
    if (need >= direct_min_bytes && need <= m_copy_limit && dest != m_self)
      if (buffer* d = make_direct(ctx, dest, need)) return d;
    buffer* b = m_out[dest];
    std::size_t const cap = m_policy.bytes_cap(dest);
    if (b != nullptr && b->count != 0 && b->size + need > cap) {
      flush(ctx, dest, flush_cause::bytes);
      b = m_out[dest];  // a throttle may not refill it, but be safe
    }
    if (b == nullptr) b = open_slot(dest);
    b->reserve(b->size + need, std::min(buffer_first_bytes, cap), cap);
    b->room = std::max(std::min(b->capacity, cap), b->size + need);  // one request larger than the cap fits alone
    return b;
  }

  // Passes on a request that arrived for dest from origin (routed): its
  // header and payload go on as they came, into the buffer of the next hop.
  // urgent: someone waits on it.
  template <class Ctx>
  void forward(Ctx& ctx, location_id dest, location_id origin, request_header const& h, std::byte const* payload,
               bool urgent) {
    buffer* const b = routed_room(ctx, dest, request_bytes(h.payload_bytes) + record_slack, origin);
    b->size += write_copied_record(*b, h, payload);
    ++b->count;
    ++m_stats.requests_forwarded;
    if (urgent && !b->urgent) mark_urgent(*b);
    if (--b->left == 0) slot_limit_reached(ctx, *b);
  }

  // set_aggregation: the open buffers under the new factors.
  template <class Ctx>
  void refactor(Ctx& ctx) {
    for (std::size_t i = 0; i < slot_count(); ++i) {
      buffer* b = slot_at(i);
      if (b == nullptr) continue;
      location_id const d = slot_location(i);
      if (m_policy.max_delay_ns() != 0 && b->born_ns == 0) b->born_ns = aggregation_policy::now_ns();
      if (b->count >= m_policy.factor(d))
        flush_slot(ctx, d, flush_cause::flush);
      else
        m_policy.rearm(d, *b);
    }
  }

  // Executed buffers go back to their owners in batches, one chain per
  // owner per poll, to keep shared cache lines quiet.
  void release(buffer* b) {
    if (b->owner == m_self) {
      m_pool.push_back(b);  // one of ours came back from ourselves
      return;
    }
    // A batch has a few owners at most: a search, not a table of P chains.
    auto const mine = [b](chain const& c) { return c.owner == b->owner; };
    if (auto c = std::find_if(m_releasing.begin(), m_releasing.end(), mine); c != m_releasing.end()) {
      c->last->next.store(b, std::memory_order_relaxed);
      c->last = b;
    } else {
      m_releasing.push_back({b->owner, b, b});
    }
    ++m_held;
  }
  bool release_due() const { return m_held >= release_batch; }
  void return_released() {
    for (chain const& c : m_releasing) m_transport.release(m_self, c.first, c.last);
    m_releasing.clear();
    m_held = 0;
  }
  // Takes back the buffers that came home from their receivers.
  [[gnu::always_inline]] void reclaim_all() {
    while (buffer* b = m_transport.reclaim(m_self)) {
      m_flow.came_back(b->capacity);
      m_pool.push_back(b);
    }
  }
  void delete_if_mine(buffer* b) const {
    if (b->owner == m_self) delete b;
  }

 private:
  struct chain {  // executed buffers of one owner, linked through next
    location_id owner;
    buffer* first;
    buffer* last;
  };

  // Per destination d, at d & m_out_mask: the buffer whose open segment
  // takes this location's requests to d, or nullptr, or (routed) another
  // destination's with the same index (out() tells them apart).  Every
  // entry that points to a buffer sits at its segment_dest's index.
  std::vector<buffer*> m_out;
  location_id m_out_mask = ~location_id{0};  // direct: every bit (P entries)

  // Routed: where hop is (or would be) in m_hops.
  std::size_t hop_index(location_id hop) const {
    return static_cast<std::size_t>(std::lower_bound(m_hops.begin(), m_hops.end(), hop) - m_hops.begin());
  }

  // A new buffer for slot s, its clock started under --armi-max-delay.
  buffer* open_slot(location_id s) {
    buffer* b = acquire();
    m_policy.rearm(s, *b);
    if (std::int64_t const delay = m_policy.max_delay_ns(); delay != 0) {
      b->born_ns = aggregation_policy::now_ns();
      m_delay_deadline = std::min(m_delay_deadline, b->born_ns + delay);
    }
    take_slot(s, b);
    return b;
  }
  // b (empty) becomes slot s's buffer.  Its first segment (routed: with no
  // route record) is this location's requests to s.
  void take_slot(location_id s, buffer* b) {
    b->dest = s;
    slot(s) = b;
    open_own_segment(s, b);
  }
  // b's open segment (begun) takes this location's requests to dest.
  void open_own_segment(location_id dest, buffer* b) {
    b->segment_dest = dest;
    m_out[dest & m_out_mask] = b;
  }
  // b's open segment ends (b leaves its slot, or a route record follows):
  // out() finds b no more.
  void close_segment(buffer& b) {
    if (b.segment_dest != buffer::no_segment) {
      buffer*& entry = m_out[b.segment_dest & m_out_mask];
      if (entry == &b) entry = nullptr;
    }
    b.segment_dest = b.segment_origin = buffer::no_segment;
  }

  // make_room, routed: the buffer of dest's next hop with room for need
  // more bytes, its open segment dest's from origin (no_segment: this
  // location).  This location's request must fit both hops (one passed on
  // was checked so by its origin: a hop that crosses processes is one of
  // the two the origin saw cross).
  template <class Ctx>
  buffer* routed_room(Ctx& ctx, location_id dest, std::size_t need, location_id origin) {
    location_id const s = m_routes.next_hop(m_self, dest);
    if (origin == buffer::no_segment) {
      ctx.check_fits(dest, need - record_slack);
      if (s != dest) ctx.check_fits(s, need - record_slack);
    }
    buffer* b = slot(s);
    std::size_t const cap = m_policy.bytes_cap(s);
    if (b != nullptr && b->count != 0 && b->size + need + max_route_bytes > cap) {
      flush_slot(ctx, s, flush_cause::bytes);
      b = slot(s);
    }
    if (b == nullptr) b = open_slot(s);
    b->reserve(b->size + need + max_route_bytes, std::min(buffer_first_bytes, cap), cap);
    if (b->segment_dest != dest || b->segment_origin != origin) {
      // A repeat after the route record may repeat another origin's header:
      // its bits are the ones this record's full header would have, and the
      // receiver reads them as this origin's (method_identity::translate).
      close_segment(*b);
      std::uint32_t const code = m_routes.hop_code(m_self, s, dest, origin);
      write_route(*b, dest, origin, code != route_grid::no_hop_code ? hop_word(code) : 0);
      b->segment_dest = dest;
      b->segment_origin = origin;
    }
    // (Again when the segment was open: another destination may have taken its entry.)
    if (origin == buffer::no_segment) open_own_segment(dest, b);
    b->room = std::max(std::min(b->capacity, cap), b->size + need);
    return b;
  }

  // An empty buffer: pooled, come back, or new (with no bytes yet).
  buffer* acquire() {
    buffer* b;
    if (!m_pool.empty()) {
      b = m_pool.back();
      m_pool.pop_back();
    } else if ((b = m_transport.reclaim(m_self)) != nullptr) {
      m_flow.came_back(b->capacity);
    } else {
      b = new buffer;
      b->owner = m_self;
    }
    b->reset();
    b->source = m_self;
    return b;
  }

  // A buffer for one large request to dest in the transport's memory, so
  // its argument is written once, not twice; or nullptr: the transport has
  // no room now.  What dest's buffer held leaves first; the request's end
  // sends it (left is 1, limit_reached).
  template <class Ctx>
  buffer* make_direct(Ctx& ctx, location_id dest, std::size_t need) {
    if (m_out[dest] != nullptr && m_out[dest]->count != 0) {
      flush(ctx, dest, flush_cause::bytes);
      if (m_out[dest] != nullptr && m_out[dest]->count != 0) return nullptr;  // refilled by what it served
    }
    std::byte* const room = m_transport.direct_reserve(dest, need);
    if (room == nullptr) return nullptr;
    if (buffer* kept = m_out[dest]) m_pool.push_back(kept);  // an empty one kept for dest (flush)
    buffer& d = m_direct;
    d.reset();
    d.data = decltype(d.data)(room, bytes_deleter{true});
    d.capacity = d.room = need;
    d.source = d.owner = m_self;
    d.dest = dest;
    d.left = 1;
    open_own_segment(dest, &d);
    return &d;
  }

  transport& m_transport;
  location_id m_self;
  location_stats& m_stats;
  flow_control& m_flow;
  aggregation_policy& m_policy;
  route_grid const& m_routes;  // the location's
  bool m_routed;                  // whether requests may go through other locations
  std::vector<location_id> m_hops;  // routed: the next hops and itself, ascending
  std::vector<buffer*> m_slots;     // ... per hop, the buffer being filled
  std::vector<chain> m_releasing;   // executed buffers to give back, per owner
  std::vector<location_id> m_urgent;
  std::vector<buffer*> m_pool;
  std::size_t m_held = 0;    // executed buffers not yet given back
  std::size_t m_copy_limit;  // buffers this small go by send_copy when the transport takes them
  send_path m_copy_path;     // which way those copies go
  std::int64_t m_delay_deadline = no_deadline;  // earliest a pending buffer is overdue (may be early)
};

}  // namespace armi::detail
