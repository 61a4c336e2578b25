// Receive and dispatch: the queue of arrived buffers, executed in arrival
// order one request at a time (a request that blocks serves the rest of the
// queue from where it stands, so per-pair order holds under nesting), the
// poll and wait loops, and the per-buffer loop that frames each record
// (core/wire.hpp), checks it and calls its handler; routed, the segments of
// a buffer that are for other locations are passed on (outbox::forward)
// without being unpacked.  Functions that touch the rest of the location
// take it (Ctx).
#pragma once

#include <armi/core/answers.hpp>
#include <armi/core/buffer.hpp>
#include <armi/core/handlers.hpp>
#include <armi/core/stats.hpp>
#include <armi/core/trace.hpp>
#include <armi/core/wait_record.hpp>
#include <armi/core/wire.hpp>
#include <armi/runtime/location_errors.hpp>
#include <armi/runtime/progress_claim.hpp>

#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace armi::detail {

class dispatcher {
 public:
  dispatcher(location_id self, std::uint32_t polls_before_yield)
      : m_self(self), m_polls_before_yield(polls_before_yield) {}

  bool in_request() const { return m_depth != 0; }
  // The sender of the buffer whose requests run now (~0: none runs).
  location_id running_source() const { return m_running.empty() ? ~location_id{0} : m_running.back()->source; }
  void calling_target() { m_target_called = true; }
  void push_ready(buffer* b) { m_ready.push_back(b); }
  std::size_t ready_count() const { return m_ready.size(); }
  std::deque<buffer*> const& ready() const { return m_ready; }

  // Serves everything that has arrived; true if it executed any request.
  // Each arrival runs as soon as it is taken, and the answers it made leave
  // before the transport is asked for the next one (on MPI that ask is a
  // probe).  done (optional): the flag of a wait; once it is set, the
  // transport is not asked again.
  template <class Ctx>
  bool poll_once(Ctx& ctx, bool const* done = nullptr) {
    ++m_polls;  // tells execute_run that a request served the queue itself
    auto& out = ctx.outgoing();
    bool progress = false;
    bool deferred = false;
    for (;;) {
      while (!m_ready.empty()) {
        buffer* b = m_ready.front();
        if (b->cursor >= b->size && b->repeat_left == 0) {
          m_ready.pop_front();
          if (running(b))  // a request of it waits further up the stack, maybe reading it (armi::view)
            m_finished_running.push_back(b);
          else
            out.release(b);
          continue;
        }
        if (t_nested_wait != nullptr && m_depth == 0 && names_absent_object(ctx, *b)) [[unlikely]] {
          // The communication thread, serving a location that computes: a
          // request names an object the location has not constructed yet
          // (others may use theirs at once).  Its own thread runs it after
          // the constructor, as under poll; the thread keeps off till then.
          ctx.claim().hold_for_new_object();
          deferred = true;
          break;
        }
        execute_run(ctx, *b);
        progress = true;
      }
      if (deferred) break;
      if (out.has_urgent()) out.flush_urgent(ctx);  // answers first: someone waits on them
      if (done != nullptr && *done) break;
      buffer* b = ctx.transport_of().receive(m_self);
      if (b == nullptr) break;
      ++ctx.mutable_stats().buffers_received;
      if (ctx.fences().early(*b))
        ctx.fences().hold(b);
      else
        m_ready.push_back(b);
    }
    ctx.collectives().advance_pending();  // opaque collectives, if a message for one came
    if (progress && ctx.diag().watch() != nullptr)
      ctx.diag().watch()->progress.fetch_add(1, std::memory_order_relaxed);
    // Then the bookkeeping that no one waits on: executed buffers back to
    // their owners, ours back to us (after a busy poll only every 8th time).
    out.send_overdue(ctx);
    if (out.release_due()) out.return_released();
    if (!progress || (m_polls & 7) == 0) out.reclaim_all();
    return progress;
  }

  // rmi_poll(): serve what arrived; if nothing did, send partial buffers.
  // A loop that keeps polling in vain yields the processor now and then.
  template <class Ctx>
  void poll(Ctx& ctx) {
    stopwatch const timed(ctx.diag().timing(), ctx.mutable_stats().ns_polling);
    if (poll_once(ctx)) {
      m_empty_polls = 0;
      return;
    }
    // Nothing to receive and nothing to send: the program waits in a poll
    // loop, its bursts have ended.
    if (!ctx.flush_all(flush_cause::poll)) ctx.end_bursts();
    if (ctx.outgoing().holds_released() && (m_empty_polls & 15) == 15) ctx.outgoing().return_released();
    if (++m_empty_polls >= m_polls_before_yield) {
      m_empty_polls = 0;
      std::this_thread::yield();
    }
  }

  // Waits, serving requests, until pred() holds.  `what` names the wait in
  // --armi-trace; done, if given, is a flag whose setting makes pred() true;
  // answer, if given, the answer cell whose answer does (the idle wait
  // watches it too).
  template <class Ctx, class Pred>
  void wait_until(Ctx& ctx, Pred&& pred, char const* what, bool const* done, answer_watch answer) {
    if (pred()) return;
    bool const fencing = ctx.fences().fencing();
    stopwatch const timed(ctx.diag().timing() && !fencing, ctx.mutable_stats().ns_blocked);
    trace_scope const traced(fencing ? nullptr : ctx.diag().tracer(), what);
    // After an idle wait, serve first and ask pred() after: pred() may cost,
    // and what woke the wait is more often a request someone waits on.
    for (;;) {
      if (poll_once(ctx, done)) {
        if (pred()) return;
        continue;
      }
      ctx.flush_all(flush_cause::wait);
      ctx.end_bursts();
      std::uint32_t const token = ctx.transport_of().wake_token(m_self);
      if (pred()) return;
      if (!m_ready.empty()) continue;
      go_idle(ctx, token, answer);
      if (answer.word != nullptr && pred()) return;  // an answer in a cell is seen here
    }
  }

  // rmi_wait(): blocks until at least one request has been served.
  template <class Ctx>
  void wait_for_request(Ctx& ctx) {
    wait_scope const waiting(ctx.diag().watch(), wait_kind::rmi_wait);
    stopwatch const timed(ctx.diag().timing(), ctx.mutable_stats().ns_blocked);
    trace_scope const traced(ctx.diag().tracer(), "rmi_wait");
    for (;;) {
      if (poll_once(ctx)) return;
      ctx.flush_all(flush_cause::wait);
      ctx.end_bursts();
      std::uint32_t const token = ctx.transport_of().wake_token(m_self);
      if (m_ready.empty()) go_idle(ctx, token, {});
    }
  }

  // Nothing to run: give executed buffers back, then wait for the transport
  // (token read before the caller's last look at its condition); on the
  // communication thread, look after the process's other locations instead.
  template <class Ctx>
  void go_idle(Ctx& ctx, std::uint32_t token, answer_watch answer) {
    if (ctx.outgoing().holds_released()) ctx.outgoing().return_released();
    if (t_nested_wait != nullptr) return t_nested_wait->idle(t_nested_wait->self);
    if (ctx.transport_of().idle_wait(m_self, token, answer)) ++ctx.mutable_stats().sleeps;
  }

  // After a request of a run: frames the next request of st's buffer and
  // returns true when it has the run's handler word (h.handler keeps the
  // run's word as translated; a repeat keeps h and sets `repeat`).  False
  // at the end of the buffer, after a poll inside the request (the buffer
  // may be gone), for another word, and for a record that does not frame
  // (execute_requests frames it again and reports it).
  [[gnu::always_inline]] bool next_in_run(run_state& st, request_header& h, std::byte const*& payload, bool& repeat) {
    if (m_polls != st.polls) return false;
    std::uint32_t const translated = h.handler;
    std::size_t next;
    if (frame_record(st.b.last, st.b.repeat_left, st.data, st.size, st.cursor, h, payload, next, repeat) != nullptr)
      return false;
    if (!repeat) {
      if (h.handler != st.word) return false;
      h.handler = translated;
    }
    st.cursor = next;
    st.b.cursor = next;
    m_target_called = false;
    return true;
  }

  // Part of poll_once's loop: executes b's requests from its cursor on,
  // until b ends or a request's blocking call polled (that poll served the
  // queue from where we stood; b may be finished and recycled).  What does
  // not change within a buffer is read once per buffer; every request is
  // still checked in full before it runs.  Out of line, so that the
  // per-request loop gets the registers to itself.
  // A routed buffer's segment at a time: the requests of one origin for
  // this location, or those for another, passed on.
  template <class Ctx>
  [[gnu::noinline]] void execute_run(Ctx& ctx, buffer& b) {
    running_scope<Ctx> const scope(*this, ctx, b);
    if (b.segment_dest != buffer::no_segment && b.segment_dest != m_self) return forward_requests(ctx, b);
    location_id const origin = origin_of(b);
    bool const foreign = !ctx.same_process(origin);
    if (ctx.diag().tracer() != nullptr || ctx.diag().timing()) [[unlikely]]
      return execute_requests<true>(ctx, b, origin, foreign);
    if (foreign) return execute_requests<false>(ctx, b, origin, std::true_type{});
    execute_requests<false>(ctx, b, origin, std::false_type{});
  }

 private:
  // In a request from the first call to the last (a guard: a fatal_hook
  // may turn a fatal error into an exception).
  struct depth_scope {
    std::uint32_t& depth;
    explicit depth_scope(std::uint32_t& d) : depth(d) { ++depth; }
    ~depth_scope() { --depth; }
  };

  // Marks b as having a request on this location's stack while execute_run
  // runs it: a nested poll that finishes b keeps it (m_finished_running)
  // rather than giving it back, and the last frame on b gives it back.
  template <class Ctx>
  struct running_scope {
    dispatcher& d;
    Ctx& ctx;
    running_scope(dispatcher& dd, Ctx& c, buffer& b) : d(dd), ctx(c) { d.m_running.push_back(&b); }
    ~running_scope() {
      d.m_running.pop_back();
      if (!d.m_finished_running.empty()) d.release_finished(ctx);
    }
  };
  bool running(buffer const* b) const {
    for (buffer const* r : m_running)
      if (r == b) return true;
    return false;
  }
  template <class Ctx>
  void release_finished(Ctx& ctx) {
    std::size_t kept = 0;
    for (buffer* b : m_finished_running) {
      if (running(b))
        m_finished_running[kept++] = b;
      else
        ctx.outgoing().release(b);
    }
    m_finished_running.resize(kept);
  }

  // Whether a request of b for this location, from its cursor on, names an
  // object that is not in the registry (not constructed here yet, or
  // destroyed).  Reads b without changing it; a record that does not frame
  // ends the look (execute_run reports it).
  template <class Ctx>
  [[gnu::cold, gnu::noinline]] bool names_absent_object(Ctx& ctx, buffer const& b) {
    request_header last = b.last;
    std::uint32_t repeat_left = b.repeat_left;
    location_id segment = b.segment_dest;
    std::size_t cursor = b.cursor;
    std::byte const* const data = b.data.get();
    while (cursor < b.size || repeat_left != 0) {
      request_header h = last;
      std::byte const* payload;
      std::size_t next;
      bool repeat;
      char const* why = frame_record(last, repeat_left, data, b.size, cursor, h, payload, next, repeat);
      if (why == route_follows) {
        std::uint32_t word, dest, origin;
        std::memcpy(&word, data + cursor, sizeof word);
        if (is_hop_word(word)) {
          if (!ctx.outgoing().routed() ||
              !ctx.outgoing().routes().hop_segment(b.source, m_self, hop_code(word), dest, origin))
            return false;
          next = cursor + sizeof word;
          repeat_left = 1;
        } else if (read_route(data, b.size, cursor, dest, origin, next) != nullptr) {
          return false;
        }
        segment = dest;
        cursor = next;
        continue;
      }
      if (why != nullptr) return false;
      cursor = next;
      if (segment != buffer::no_segment && segment != m_self) continue;  // passed on, not run here
      handler_entry const* e = find_handler(h.handler & handler_mask);
      if (e == nullptr) return false;
      bool const targets_object = e->kind == rmi_kind::async || e->kind == rmi_kind::sync ||
                                  e->kind == rmi_kind::opaque || e->kind == rmi_kind::broadcast ||
                                  e->kind == rmi_kind::reduce;
      if (targets_object && ctx.registry().find(h.handle_index, h.handle_epoch) == nullptr) return true;
    }
    return false;
  }

  // Who issued the requests of b's segment at its cursor.
  static location_id origin_of(buffer const& b) {
    return b.segment_origin != buffer::no_segment ? b.segment_origin : b.source;
  }

  // Reads the route record at cursor into b's segment; returns the cursor
  // after it.  A hop record's request is then a repeat of one (repeat_left).
  template <class Ctx>
  std::size_t enter_segment(Ctx& ctx, buffer& b, std::size_t cursor) {
    std::uint32_t dest, origin;
    std::size_t next;
    std::uint32_t word;
    std::memcpy(&word, b.data.get() + cursor, sizeof word);  // frame_record has seen it
    if (is_hop_word(word)) {
      if (!ctx.outgoing().routed()) [[unlikely]]
        malformed(b, "a hop record, which a location under --armi-routing=direct does not read");
      if (!ctx.outgoing().routes().hop_segment(b.source, m_self, hop_code(word), dest, origin)) [[unlikely]]
        malformed(b, "a hop record whose code " + std::to_string(hop_code(word)) + " names no route from location " +
                         std::to_string(b.source));
      if (is_no_header(b.last)) [[unlikely]]
        malformed(b, "a hop record with no request before it");
      next = cursor + sizeof word;
      if (b.last.payload_bytes > b.size - next) [[unlikely]]
        malformed(b, "payload runs past the end of the buffer");
      b.repeat_left = 1;
    } else if (char const* why = read_route(b.data.get(), b.size, cursor, dest, origin, next)) [[unlikely]] {
      malformed(b, why);
    }
    if (dest >= ctx.size() || (origin != buffer::no_segment && origin >= ctx.size())) [[unlikely]]
      malformed(b, "a route record naming location " + std::to_string(dest >= ctx.size() ? dest : origin) +
                       " of " + std::to_string(ctx.size()));
    if (dest != m_self && !ctx.outgoing().routed()) [[unlikely]]
      malformed(b, "a route record for location " + std::to_string(dest) +
                       ", which this location does not pass requests on to (--armi-routing=direct here)");
    b.segment_dest = dest;
    b.segment_origin = origin;
    b.cursor = next;
    return next;
  }

  // Passes on the requests of b's segments for other locations, from its
  // cursor to the end or to a segment for this one.  Nothing runs here and
  // nothing is served (the sends see a request in progress), so b stays.
  template <class Ctx>
  [[gnu::noinline]] void forward_requests(Ctx& ctx, buffer& b) {
    depth_scope const in_request(m_depth);
    std::byte const* const data = b.data.get();
    std::size_t const size = b.size;
    std::size_t cursor = b.cursor;
    while (cursor < size || b.repeat_left != 0) {
      request_header h = b.last;  // what a repeat repeats
      std::byte const* payload;
      std::size_t next;
      bool repeat;
      char const* why = frame_record(b.last, b.repeat_left, data, size, cursor, h, payload, next, repeat);
      if (why == route_follows) {
        cursor = enter_segment(ctx, b, cursor);
        if (b.segment_dest == m_self) return;
        continue;
      }
      if (why != nullptr) [[unlikely]]
        malformed(b, why);
      handler_entry const* e = find_handler(h.handler & handler_mask);
      if (e == nullptr) [[unlikely]]
        malformed(b, "unknown handler id " + std::to_string(h.handler & handler_mask));
      // Someone waits on all but one-way requests: they leave at this poll's end.
      bool const awaited = e->kind != rmi_kind::async && e->kind != rmi_kind::broadcast && e->kind != rmi_kind::define;
      ctx.outgoing().forward(ctx, b.segment_dest, origin_of(b), h, payload, awaited);
      cursor = next;
      b.cursor = next;
    }
  }

  // Foreign: the origin is in another process (its method indices need
  // translating): a constant in the loops without diagnostics.
  template <bool Diagnosed, class Ctx, class Foreign>
  [[gnu::always_inline]] void execute_requests(Ctx& ctx, buffer& b, location_id const source, Foreign const foreign) {
    std::uint64_t const polls = m_polls;
    std::byte const* const data = b.data.get();
    std::size_t const size = b.size;
    std::size_t cursor = b.cursor;  // == b.cursor at the top of each round (malformed reports it)
    trace_log* const t = Diagnosed ? ctx.diag().tracer() : nullptr;
    bool const counting = Diagnosed && ctx.diag().timing();
    depth_scope const in_request(m_depth);
    do {
      request_header h;
      std::byte const* payload;
      if (!frame(ctx, b, source, cursor, h, payload)) return;  // another segment: execute_run looks again
      handler_entry const* e = find_handler(h.handler & handler_mask);
      if (e == nullptr) [[unlikely]]
        malformed(b, "unknown handler id " + std::to_string(h.handler & handler_mask));
      std::uint32_t const word = h.handler;  // as sent
      if (e->define != nullptr && foreign) h.handler = ctx.identity().translate(source, b, h.handler, e->method_type);
      b.cursor = cursor;  // before the call: a blocking call in it serves b from here
      m_target_called = false;
      if constexpr (Diagnosed) {
        // One request per call, so that each is counted and traced.
        std::uint64_t const traced = t != nullptr ? trace_log::now_ns() : 0;
        if (counting) [[unlikely]]
          ctx.diag().count_execution(h.handler & handler_mask);
        try {
          e->fn(ctx, source, h, payload);
        } catch (...) {
          if (m_target_called) errors::target_threw(m_self, *e);
          errors::undecodable(m_self, *e, source);
        }
        if (t != nullptr && t->sample_execution(traced))
          t->span(e->mangled_name, traced, trace_log::now_ns(), source, true);
        ++ctx.mutable_stats().executed[static_cast<std::size_t>(e->kind)];
      } else {
        // The handler executes this request and the ones after it with the
        // same handler word (run_fn), counts them, and leaves the cursor
        // past the last one it ran.
        run_state st{b, data, size, cursor, polls, word, source};
        try {
          e->run(ctx, st, h, payload);
        } catch (...) {
          if (m_target_called) errors::target_threw(m_self, *e);
          errors::undecodable(m_self, *e, source);
        }
        cursor = st.cursor;
      }
      // (After a poll inside the request b may be executed and given back:
      // look at it only when there was none.)
    } while (m_polls == polls && (cursor < size || b.repeat_left != 0));
  }

  // frame_record at the start of a round: true with the request framed and
  // cursor past it; false after a route record that starts a segment not
  // for this location or from another origin than `source` (cursor and
  // b.cursor past it), or at the end.  A record that does not frame is a
  // malformed buffer.
  template <class Ctx>
  [[gnu::always_inline]] bool frame(Ctx& ctx, buffer& b, location_id source, std::size_t& cursor, request_header& h,
                                    std::byte const*& payload) {
    for (;;) {
      h = b.last;  // what a repeat repeats
      std::size_t next;
      bool repeat;
      char const* why = frame_record(b.last, b.repeat_left, b.data.get(), b.size, cursor, h, payload, next, repeat);
      if (why == nullptr) [[likely]] {
        cursor = next;
        return true;
      }
      if (why != route_follows) malformed(b, why);
      cursor = enter_segment(ctx, b, cursor);
      if (b.segment_dest != m_self || origin_of(b) != source || (cursor >= b.size && b.repeat_left == 0)) return false;
    }
  }

  [[noreturn, gnu::cold, gnu::noinline]] void malformed(buffer const& b, std::string const& why) const {
    errors::malformed(m_self, b.source, b.cursor, b.size, why);
  }

  // The handler table's entry for id, or nullptr.  The table only grows
  // (before any sender could name a new id), so a size seen once stays a
  // valid bound; only an id past it pays the atomic load again.
  handler_entry const* find_handler(std::uint32_t id) {
    if (id >= m_handlers_known) [[unlikely]] {
      m_handlers_known = m_handlers.size();
      if (id >= m_handlers_known) return nullptr;
    }
    return &m_handlers.known(id);
  }

  location_id m_self;
  handler_table const& m_handlers = handler_table::instance();
  std::size_t m_handlers_known = 0;  // a size of m_handlers seen (find_handler)
  std::uint64_t m_polls = 0;         // poll_once calls, to see one made inside a request
  bool m_target_called = false;      // the running request's stub has called its target (target_threw)
  std::uint32_t m_depth = 0;         // requests running (nested)
  std::uint32_t m_empty_polls = 0;
  std::uint32_t m_polls_before_yield;
  std::deque<buffer*> m_ready;  // arrived, not yet fully executed
  std::vector<buffer*> m_running;           // buffers with a request on the stack, innermost last
  std::vector<buffer*> m_finished_running;  // executed, given back when no request of theirs runs
};

}  // namespace armi::detail
