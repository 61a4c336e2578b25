// The location context: everything one location (a thread of SPMD
// execution) owns.  Outgoing requests are appended to a per-destination
// aggregation buffer, sent when it holds `aggregation` requests or would pass
// the byte cap (to other processes: the transport's, unless the user set one),
// or when the location flushes (rmi_flush, a blocking call, a poll that finds
// nothing to do, a fence), or, under --armi-max-delay, when its first request
// has waited that long.  Arrived buffers queue in `ready`
// and are executed in arrival order, one request at a time; a request that
// blocks (sync_rmi, future::get) serves the rest of the queue from where it
// stands, so per-pair order holds even under nesting.
//
// Aggregation auto: each destination has its own factor k, adjusted when one
// of its buffers leaves.  A buffer that reached k doubles k if it filled in
// less than half the target time (twice its time from half full to full, so
// buffers that never get half full, as in a ping-pong, read no clock, nor
// do those whose k is at its bound, may_grow) or,
// for a destination in another process, if sends back up (more than half
// the flow-control limit in flight).  A buffer
// sent for --armi-max-delay halves k.  Nothing else lowers k: buffers sent by
// the program's synchronization (polls, waits, fences, sync calls) go out
// whatever k is, so they say nothing about it, and a slowly filling buffer
// costs nothing as long as the program synchronizes (the max delay is the
// bound for one that does not).  The target time is auto_cost_multiple times
// the measured cost of one send (an average over every auto_send_sample-th),
// at least auto_min_target_ns (auto_min_target_shared_ns to a destination
// reached through shared memory, where the send's time misses most of what
// a buffer costs), at most half the max delay; so k follows the request
// rate, bigger where messages cost more.  k stays within
// [auto_min_factor, what the byte cap holds of the smallest request].
// A program that sends in bursts (so many requests to a destination, then
// it waits: a sync call, a fence, a wait, a poll loop that finds nothing)
// keeps its receiver idle while a buffer fills, so k also stays at most a
// quarter of the burst and 8 times its square root (or the start factor,
// if that is more): the receiver starts on the first quarter while the
// rest is written, and the last buffer, which runs after the sender is
// done, stays short; in this process, a burst shorter than the start
// factor goes in pieces of auto_short_factor.  To
// another process, where a message costs more, half the burst (or more,
// doubling while a send costs more than the head start the receiver loses;
// a send costs at least what a message costs on the machine the transport
// models, sp2's), and all of a burst of up to twice the start factor
// (burst_bound, remote_burst_bound).  The
// burst to a destination is the requests sent to it between two such
// waits, averaged (each new one weighs half; one shorter than the start
// factor is left out: it fits in one buffer whatever k is); when it
// shrinks, k halves down to the new bound at the next wait.  Bursts of one
// request that waited in its buffer for the wait (an async_rmi ping-pong)
// that come auto_single_bursts times in a row set k to 1, so the request
// leaves at the call; the second request of a burst sets k back to the
// start factor.
//
// The fence is termination detection: every location sums (requests sent,
// requests executed) over all locations, repeatedly, until two consecutive
// rounds give the same sums and sent == executed.
//
// Thread safety: a location is used only by its own thread; the transport
// is the only shared part.
#pragma once

#include <armi/core/buffer.hpp>
#include <armi/core/error.hpp>
#include <armi/core/handlers.hpp>
#include <armi/core/stats.hpp>
#include <armi/core/trace.hpp>
#include <armi/core/transport.hpp>
#include <armi/core/watchdog.hpp>
#include <armi/runtime/options.hpp>
#include <armi/runtime/registry.hpp>
#include <armi/runtime/reply.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace armi::detail {

// Aggregation auto, to a destination in another process reached not through
// shared memory (location::burst_bound): the most k may be for bursts of b
// requests (b more than twice the start factor), where a send costs send_ns
// and the sender writes a request every request_ns (0: not measured yet).
//
// Half the burst allows k up to the power of two below it, lo: the burst
// goes in 3 or 4 buffers.  Doubling k to 2 lo (2 buffers) saves about
// b / 2 lo messages and delays the receiver's start by lo requests written;
// it pays where a send costs more than that delay per message saved, and
// each further doubling, up to one buffer for the burst, is weighed the same
// way (k to 2k: b / 2k messages for k requests).  Measured at bursts of 1000
// (Fig. 5): MPI's sends took 0.4-0.6 us and its requests 7-22 ns, far from
// the 0.9-2.9 us at which 512 would be chosen, and 512 there took 1.02-1.12x
// the time of 256.  The SP2 emulation's sends took 0.4-0.7 us here, but a
// message costs 40.5 us on the machine it models (the caller passes that
// as the least send_ns), where fewer, larger messages win: emulated ns per
// ping at 1000 pings, 256: 331, 512: 297-299, 1024: 276-278; auto 312-339
// while only the cost here counted, 280-298 since.  What stops k short of
// the burst is then the fill-time target (location::auto_target_ns), on
// this machine's clock, and the modeled receive window (location::adapt):
// at 10000 pings the fixed factor 1024 took 1.03-1.05x the best on either
// clock, 4096 1.17x on the wall clock.
inline std::uint64_t remote_burst_bound(std::uint64_t b, double send_ns, double request_ns) {
  std::uint64_t const half = b / 2, lo = std::bit_floor(half), whole = std::bit_ceil(b);
  if (request_ns <= 0) return half;
  double const pays_below = send_ns * static_cast<double>(b) / (2.0 * request_ns);  // k to 2k pays while k^2 is less
  std::uint64_t k = lo;
  while (k < whole && static_cast<double>(k) * static_cast<double>(k) < pays_below) k *= 2;
  return k == lo ? half : k;
}

class location;
inline thread_local location* t_location = nullptr;

class location {
 public:
  location(transport& tr, location_id id, config const& cfg)
      : m_transport(tr),
        m_id(id),
        m_size(tr.size()),
        m_out(tr.size(), nullptr),
        m_release(tr.size()),
        m_aggregation_local(cfg.aggregation_local != 0 ? cfg.aggregation_local : cfg.aggregation),
        m_aggregation_remote(cfg.aggregation_remote != 0 ? cfg.aggregation_remote : cfg.aggregation),
        m_buffer_bytes_local(cfg.buffer_bytes),
        m_buffer_bytes_remote(!cfg.buffer_bytes_given && tr.remote_buffer_bytes() != 0 ? tr.remote_buffer_bytes()
                                                                                         : cfg.buffer_bytes),
        m_max_record_remote(std::min(max_record_bytes, tr.max_message_bytes())),
        m_modeled(tr.modeled_messages()),
        m_max_delay_ns(cfg.max_delay_ns),
        m_max_outstanding(64 + 8 * std::size_t{tr.size()}),
        m_polls_before_yield(tr.empty_polls_before_yield()),
        m_copy_limit(tr.copy_limit()),
        m_local_first(tr.process_first(id)),
        m_local_count(tr.process_locations()),
        m_timing(cfg.stats),
        m_trace(cfg.trace.empty() ? nullptr : std::make_unique<trace_log>()),
        m_told(tr.size()) {
    for (location_id d = 0; d < m_size; ++d) {
      m_told[d] = {no_word, same_process(d) ? 0u : ~0u};
      m_cheap_messages.push_back(tr.shares_memory(id, d));
    }
    for (location_id d = 0; d < m_size; ++d) track_auto(d, false);
    if (tr.answer_cells(id, id) != nullptr)
      for (location_id i = 0; i < m_local_count; ++i)
        m_process_cells.push_back(tr.answer_cells(id, m_local_first + i));
    update_clocked();
    tr.attach(id, m_pool);
  }

  location(location const&) = delete;
  location& operator=(location const&) = delete;

  ~location() {
    ask_service(false);  // every ask the transport saw ends
    for (buffer* b : m_out) delete b;
    for (buffer* b : m_ready) delete_if_mine(b);
    for (buffer* b : m_next_epoch) delete_if_mine(b);
    while (buffer* b = m_transport.reclaim(m_id)) delete b;
    for (buffer* b : m_pool) delete b;
  }

  location_id id() const { return m_id; }
  location_id size() const { return m_size; }
  object_registry& registry() { return m_registry; }
  reply_slots& replies() { return m_replies; }
  location_stats const& stats() const { return m_stats; }
  method_counts executed_by_method() const { return method_counts_of(m_executed_by_handler); }
  trace_log const* trace() const { return tracer(); }
  bool in_request() const { return m_depth != 0; }

  // The record the watchdog reads (--armi-watchdog), or nullptr when it is off.
  // (This, timing() and tracer() are the diagnostics' hooks; a program built
  // with ARMI_DIAGNOSTICS=0 has none, and benchmarks/ compare the two.)
  wait_record* watch() const { return has_diagnostics ? m_watch : nullptr; }
  void set_watch(wait_record* r) { m_watch = r; }

  // Aggregation factors: for destinations in this process and in others.
  std::size_t aggregation_local() const { return m_aggregation_local; }
  std::size_t aggregation_remote() const { return m_aggregation_remote; }
  bool has_remote() const { return m_local_count < m_size; }
  void set_aggregation(std::size_t local, std::size_t remote) {
    if (local == 0 || remote == 0)
      throw std::invalid_argument("armi::set_aggregation: a factor must be at least 1 (or armi::aggregation_auto)");
    std::vector<bool> was_auto(m_size);
    for (location_id d = 0; d < m_size; ++d) was_auto[d] = is_auto(d);
    m_aggregation_local = local;
    m_aggregation_remote = remote;
    update_clocked();
    for (location_id d = 0; d < m_size; ++d) {
      track_auto(d, was_auto[d]);
      buffer* b = m_out[d];
      if (b == nullptr) continue;
      if (m_max_delay_ns != 0 && b->born_ns == 0) b->born_ns = now_ns();
      if (b->count >= factor(d))
        flush(d, flush_cause::flush);
      else
        rearm(d, *b);
    }
  }

  bool same_process(location_id l) const { return l - m_local_first < m_local_count; }

  // A stub with no answer to send says it is calling its target: from here
  // on an exception is the target's, not a decoding failure (target_threw).
  void calling_target() { m_target_called = true; }

  // Sender side of method identity across processes.  told is the inline
  // first look of a send: true when dest needs no definition for `word`
  // because it shares our method tables (same process) or was last found
  // told it.  One load and no branch of its own:
  // a same-process destination's mask is 0, so its compare always holds.
  // (Asked as same_process(dest) || ..., requests to random destinations on
  // 2 ranks mispredicted that branch every other time: mpi_message_rate's
  // armi ran at 105-141 M RMIs/s with it, 157-185 M without.)
  bool told(location_id dest, std::uint32_t word) const {
    told_entry const t = m_told[dest];
    return ((t.word ^ word) & t.mask) == 0;
  }
  // Asked where told said no (dest is in another process, and `word` is not
  // its last word found told): true when the request must be preceded by its
  // method's definition, because dest has not yet been told what method
  // key() means; marks it told.  Told stays told, and the word becomes
  // dest's last, so a run of requests for one method passes told with one
  // compare, off the per-method table.
  template <class Key>
  bool needs_definition(location_id dest, std::uint32_t word, Key const& key) {
    m_told[dest].word = word;
    if (m_described.empty()) m_described.resize(m_size);
    auto& told = m_described[dest];
    std::uint32_t const k = key();
    if (k < told.size() && told[k]) return false;
    if (k >= told.size()) told.resize(k + 1, false);
    told[k] = true;
    return true;
  }
  // Receiver side: source's method index `remote` of method table `type` is
  // our index `local`.
  void set_translation(location_id source, std::uint32_t type, std::uint32_t remote, std::uint32_t local) {
    if (m_xlate.empty()) m_xlate.resize(m_size);
    auto& per_type = m_xlate[source];
    if (type >= per_type.size()) per_type.resize(type + 1);
    auto& indices = per_type[type];
    if (remote >= indices.size()) indices.resize(remote + 1, 0);
    indices[remote] = local + 1;
    m_last_xlate = {};
  }

  // Inline test, out-of-line message (see check_handle in rmi.hpp).
  void check_destination(location_id dest, char const* what) const {
    if (dest >= m_size) [[unlikely]]
      bad_destination(dest, what);
  }
  [[noreturn, gnu::cold, gnu::noinline]] void bad_destination(location_id dest, char const* what) const {
    throw std::out_of_range(std::string("armi::") + what + ": destination " + std::to_string(dest) +
                            " is not a location (there are " + std::to_string(m_size) + ")");
  }

  // The largest request (header and payload) that can go to dest: the wire
  // format counts a payload's bytes in 32 bits, and a transport may count a
  // message's in fewer (MPI in an int; transport::max_message_bytes).
  std::size_t max_record(location_id dest) const {
    return same_process(dest) ? max_record_bytes : m_max_record_remote;
  }
  // Throws std::length_error for a request of `record` bytes that cannot go
  // to dest.  Nothing of it has been written or counted then, so the caller
  // may catch this and go on (sync_rmi and opaque_rmi give their reply slot
  // back; an answer too large goes back as the caller's error; a broadcast
  // checks every member before it sends to any).
  void check_fits(location_id dest, std::size_t record) const {
    if (record > max_record(dest)) [[unlikely]]
      request_too_large(dest, record);
  }
  [[noreturn, gnu::cold, gnu::noinline]] void request_too_large(location_id dest, std::size_t record) const {
    throw std::length_error("armi: a request of " + std::to_string(record) + " bytes (its arguments as sent, and a " +
                            std::to_string(sizeof(request_header)) + "-byte header) to location " +
                            std::to_string(dest) + " is larger than one can be (at most " +
                            std::to_string(max_record(dest)) + " bytes to that location); nothing was sent");
  }

  // ---- sending ----------------------------------------------------------

  // The fast path of a send whose size is known before it touches its
  // arguments (method_stub::send): dest's buffer when it has room for `need`
  // more bytes (header and padded payload), else nullptr (then the caller
  // takes begin_request).  The caller writes the request at
  // b->data + b->size and calls commit_request.  Neither makes a call but
  // the tail call of a full buffer, so a send that takes them needs no
  // stack frame (a slow path that rejoined it would cost every send the
  // saving of registers).
  [[gnu::always_inline]] buffer* room_for(location_id dest, std::size_t need) const {
    buffer* b = m_out[dest];
    return b != nullptr && b->size + need <= b->room ? b : nullptr;
  }
  // Writes a full record's start at b's end, adding nothing to b: a zero
  // pad word first when b's size is 4 past a multiple of 8 (its bytes go
  // into pad_word), then header.  Returns where the payload goes.
  [[gnu::always_inline]] static std::byte* place_header(buffer const& b, request_header const& header,
                                                        std::size_t& pad_word) {
    std::byte* p = b.data.get() + b.size;
    pad_word = (b.size & 4) != 0 ? sizeof(repeat_marker) : 0;
    if (pad_word != 0) std::memset(p, 0, pad_word);
    std::memcpy(p + pad_word, &header, sizeof header);
    return p + pad_word + sizeof header;
  }
  // place_header, with the pad word counted in b->size and header as b->last
  // at once.  The caller writes the payload and its padding and commits the
  // record's request_bytes.
  [[gnu::always_inline]] static std::byte* write_header(buffer* b, request_header const& header) {
    std::size_t pad_word;
    std::byte* const p = place_header(*b, header, pad_word);
    b->size += pad_word;
    b->last = header;
    return p;
  }
  [[gnu::always_inline]] void commit_request(buffer* b, location_id dest, rmi_kind kind, std::size_t need) {
    b->size += need;
    ++b->count;
    ++m_stats.sent[static_cast<std::size_t>(kind)];
    if (--b->left == 0) [[unlikely]]  // a countdown: one instruction and a branch
      limit_reached(dest);
  }

  // Reserves room for one request of `payload` bytes to dest, writes its
  // header and returns where the payload goes.  Finish with end_request(),
  // which adds the record to the buffer: a payload whose packing throws (a
  // user serializer) leaves the buffer as it was, with nothing of the
  // request in it.  A request too large to send at all throws
  // std::length_error from here (make_room).
  //
  // Inlined into every send (with a constant payload size the padding folds
  // away); a missing or full buffer goes to make_room, out of line.
  // Always a full record (see buffer.hpp), after a pad word when the
  // buffer's size is 4 past a multiple of 8.
  [[gnu::always_inline]] std::byte* begin_request(location_id dest, rmi_kind kind, request_header header,
                                                  std::size_t payload) {
    std::size_t const record = request_bytes(payload);
    buffer* b = m_out[dest];
    if (b == nullptr || record >= direct_min_bytes || b->size + record + sizeof(repeat_marker) > b->room) [[unlikely]]
      b = make_room(dest, record + sizeof(repeat_marker));
    header.payload_bytes = static_cast<std::uint32_t>(payload);
    std::size_t pad_word;
    std::byte* const p = place_header(*b, header, pad_word);
    if (std::size_t const pad = align8(payload) - payload; pad != 0) std::memset(p + payload, 0, pad);
    m_open = {header, b->size + pad_word + record, kind};
    return p;
  }

  // Adds the request begun last to dest's buffer, then sends the buffer if
  // it reached the aggregation factor; mark `urgent` for requests someone
  // waits on (sync calls, replies).
  // Inlined (urgent is a constant at every call site); sending is out of line.
  [[gnu::always_inline]] void end_request(location_id dest, bool urgent) {
    buffer* b = m_out[dest];
    b->last = m_open.header;
    b->size = m_open.end;
    ++b->count;
    ++m_stats.sent[static_cast<std::size_t>(m_open.kind)];
    if (urgent && !b->urgent) mark_urgent(dest);
    if (--b->left == 0) [[unlikely]]
      limit_reached(dest);
  }

  [[gnu::noinline]] void mark_urgent(location_id dest) {
    m_out[dest]->urgent = true;
    m_urgent.push_back(dest);
  }

  void flush(location_id dest, flush_cause cause) {
    buffer* b = m_out[dest];
    if (b == nullptr || b->count == 0) return;
    m_out[dest] = nullptr;
    b->epoch = m_epoch;
    ++m_stats.buffers_sent;
    m_stats.bytes_sent += b->size;
    ++m_stats.requests_per_buffer[location_stats::bucket_of(b->count)];
    ++m_stats.flushes[static_cast<std::size_t>(cause)];
    bool const automatic = m_clocked && is_auto(dest);
    if (automatic) {
      adapt(dest, *b, cause);
      auto_state& a = m_auto[dest];
      a.burst += b->count;
      a.waited = cause == flush_cause::poll || cause == flush_cause::wait;
      m_burst_open = true;
    }
    if (trace_log* t = tracer()) t->flush(trace_log::now_ns(), dest, b->count, b->size);
    // Serving what has arrived from inside a send: never inside a request
    // (atomicity), nor inside serving that a send started.
    bool const may_serve = m_depth == 0 && !m_throttling;
    if (dest == m_id) {
      m_ready.push_back(b);
      // Requests to oneself run at the next poll; a location that keeps
      // sending to itself runs them here, so they cannot pile up.
      if (m_ready.size() > max_ready_to_self && may_serve) serve_from_send();
      return;
    }
    if (b == &m_direct) {
      m_transport.direct_send(dest, *b);
      b->data.release();  // the transport's memory, now the receiver's
    } else if (b->size <= m_copy_limit && m_transport.send_copy(dest, *b)) {
      // Copied out: free again, not in flight.  It stays dest's, empty (its
      // room, set by make_room for dest, still holds), so that the next
      // request to dest (the next sync_rmi, the next reply) finds a buffer
      // without make_room.  Not under --armi-max-delay, where a buffer's
      // clock starts when make_room hands it out.
      if (m_out[dest] == nullptr && m_max_delay_ns == 0) {
        b->reset();
        rearm(dest, *b);
        m_out[dest] = b;
      } else {
        m_pool.push_back(b);
      }
    } else {
      ++m_outstanding;
      if (!automatic || ++m_auto_flushes % auto_send_sample != 0) {
        m_transport.send(dest, b);
      } else {
        // The cost of a send, which sets auto's target fill time.
        std::int64_t const t0 = now_ns();
        m_transport.send(dest, b);
        average_in(m_send_ns, static_cast<double>(now_ns() - t0));
      }
      if (m_outstanding > m_max_outstanding / 2) ask_service(true);
    }
    if (!may_serve) return;
    // Flow control: a location far ahead of its receivers serves requests
    // until its buffers come back.
    if (m_outstanding > m_max_outstanding) return throttle();
    // A location that streams buffers out while its partners do the same
    // (an all-to-all phase: no one polls) serves what has arrived at each
    // buffer it sends once half its limit is in flight.  Then its partners'
    // buffers come back before they hit the limit, and no one sits in flow
    // control waiting for a partner that is busy sending.
    if (cause != flush_cause::full && cause != flush_cause::bytes) return;
    if (m_outstanding > m_max_outstanding / 2) return serve_from_send();
    // And one that streams while a partner has half its limit in flight
    // (ask_service: the partner may sit in flow control, waiting for us to
    // take its buffers, and no longer send, so it never makes us serve
    // above) serves at each buffer it sends until the partner is down to a
    // quarter.  Without this, building an R-MAT graph on 2 ranks of
    // a node sat 26 ms in flow control while the other rank kept
    // generating edges: its ring to us never filled, so it never served.
    if (m_transport.service_wanted(m_id)) serve_from_send();
  }

  // One poll from inside flush(), then the buffers that have come home.
  [[gnu::noinline]] void serve_from_send() {
    m_throttling = true;
    poll_once();
    m_throttling = false;
    while (buffer* b = m_transport.reclaim(m_id)) recycle_reclaimed(b);
  }

  // flush() may serve requests (flow control), and those may mark more
  // buffers urgent: m_urgent can grow while these loops run.
  // Returns whether it found a buffer to send.
  bool flush_all(flush_cause cause) {
    m_urgent.clear();
    bool sent = false;
    for (location_id d = 0; d < m_size; ++d)
      if (m_out[d] != nullptr && m_out[d]->count != 0) {
        sent = true;
        flush(d, cause);
      }
    return sent;
  }

  void flush_urgent() {
    for (std::size_t i = 0; i < m_urgent.size(); ++i) {
      location_id const d = m_urgent[i];
      if (m_out[d] != nullptr && m_out[d]->urgent) flush(d, flush_cause::urgent);
    }
    m_urgent.clear();
  }

  // --armi-max-delay: sends the buffers whose first request has waited that
  // long.  Looked at on every poll and every delay_check_every requests to
  // one destination; free while no buffer is pending.
  void send_overdue() {
    if (m_delay_deadline == no_deadline) return;
    std::int64_t const now = now_ns();
    if (now < m_delay_deadline) return;
    m_delay_deadline = no_deadline;
    for (location_id d = 0; d < m_size; ++d) {
      buffer* b = m_out[d];
      if (b == nullptr || b->count == 0) continue;
      if (now - b->born_ns >= m_max_delay_ns)
        flush(d, flush_cause::delay);
      else
        m_delay_deadline = std::min(m_delay_deadline, b->born_ns + m_max_delay_ns);
    }
  }

  // ---- receiving ---------------------------------------------------------

  // Serves everything that has arrived; true if it executed any request.
  // Each arrival runs as soon as it is taken, and the answers it made leave
  // before the transport is asked for the next one: on MPI that ask is a
  // probe, which a round trip would otherwise pay twice more.
  //
  // done (optional): the flag of a wait that polls.  Once the queue has run
  // and the flag is set, the transport is not asked again: the answer the
  // caller waits on is in, and on MPI the ask is a probe (some 40 ns)
  // between that answer and its caller's return.
  bool poll_once(bool const* done = nullptr) {
    ++m_polls;  // tells execute_run that a request served the queue itself
    bool progress = false;
    for (;;) {
      while (!m_ready.empty()) {
        buffer* b = m_ready.front();
        if (b->cursor >= b->size) {
          m_ready.pop_front();
          release(b);
          continue;
        }
        execute_run(*b);
        progress = true;
      }
      // Answers first: someone waits on them.
      if (!m_urgent.empty()) flush_urgent();
      if (done != nullptr && *done) break;
      buffer* b = m_transport.receive(m_id);
      if (b == nullptr) break;
      ++m_stats.buffers_received;
      // Sent by a location that has already left the fence we are still in:
      // it runs after ours ends (epochs of two locations differ by at most 1).
      if (((b->epoch ^ m_epoch) & 1) != 0)
        m_next_epoch.push_back(b);
      else
        m_ready.push_back(b);
    }
    if (progress && watch() != nullptr) m_watch->progress.fetch_add(1, std::memory_order_relaxed);
    // Then the bookkeeping that no one waits on: executed buffers back to
    // their owners, ours back to us (after a busy poll only every 8th time:
    // on MPI that asks MPI again, between an answer and what its waiter
    // does next; flow control and idle polls take them back meanwhile).
    send_overdue();
    if (m_held >= release_batch) return_released();
    if (!progress || (m_polls & 7) == 0)
      while (buffer* b = m_transport.reclaim(m_id)) recycle_reclaimed(b);
    return progress;
  }

  // rmi_poll(): serve what arrived; if nothing did, send partial buffers.
  // A user loop that keeps polling in vain yields the processor now and then,
  // so a partner sharing the core can run (oversubscribed machines).
  void poll() {
    stopwatch const timed(timing(), m_stats.ns_polling);
    if (poll_once()) {
      m_empty_polls = 0;
      return;
    }
    // A poll that finds nothing to receive and nothing to send: the
    // program waits in a poll loop, its bursts have ended.
    if (!flush_all(flush_cause::poll)) end_bursts();
    if (!m_releasing.empty() && (m_empty_polls & 15) == 15) return_released();
    if (++m_empty_polls >= m_polls_before_yield) {
      m_empty_polls = 0;
      std::this_thread::yield();
    }
  }

  // Waits, serving requests, until `ready` is set (by a reply): wait_until
  // that also tells poll_once to stop asking once it is.
  void wait_for(bool const& ready, char const* what) { wait_until([&ready] { return ready; }, what, &ready); }

  // Waits, serving requests, until pred() holds.
  // `what` names the wait in --armi-trace; done, if given, is a flag whose
  // setting makes pred() true (see poll_once); answer, if given, is the
  // answer cell whose answer makes pred() true, which the idle wait watches
  // as well (wait_answer).
  template <class Pred>
  void wait_until(Pred&& pred, char const* what = "blocked", bool const* done = nullptr, answer_watch answer = {}) {
    if (pred()) return;
    stopwatch const timed(timing() && !m_fencing, m_stats.ns_blocked);
    trace_scope const traced(m_fencing ? nullptr : tracer(), what);
    // After an idle wait, serve first and ask pred() after: pred() may cost
    // (the fence's asks MPI whether its sum is done), and what woke the wait
    // is more often a request that someone waits on than pred() turning true.
    for (;;) {
      if (poll_once(done)) {
        if (pred()) return;
        continue;
      }
      flush_all(flush_cause::wait);
      end_bursts();
      std::uint32_t const token = m_transport.wake_token(m_id);
      if (pred()) return;
      if (!m_ready.empty()) continue;
      go_idle(token, answer);
      // An answer in a cell is seen here, not by the next poll.
      if (answer.word != nullptr && pred()) return;
    }
  }

  // ---- answers in place (answers.hpp) ------------------------------------------

  // The caller's side: a cell for the answer to a sync_rmi to dest, with the
  // tag that names it, or nullptr (dest in another process, a transport
  // with no cells, or every cell taken by the waits this one is nested in).
  // Each cell taken is given back by close_answer, in reverse order.
  answer_cell* open_answer(location_id dest, std::uint64_t& tag) {
    if (m_process_cells.empty() || !same_process(dest) || m_answer_depth == answer_cells_per_location)
      return nullptr;
    std::uint32_t const index = m_answer_depth++;
    std::uint32_t& number = m_answer_numbers[index];
    if (++number == 0) number = 1;
    tag = answer_tag(index, number);
    return &m_process_cells[m_id - m_local_first][index];
  }
  void close_answer() { --m_answer_depth; }

  // Waits, serving requests, until c holds the answer numbered in tag.
  void wait_answer(answer_cell const& c, std::uint64_t tag, char const* what) {
    answer_watch const watch{&c.answered, answer_number(tag)};
    wait_until([&watch] { return watch.answered(); }, what, nullptr, watch);
  }

  // The callee's side: the cell that an answering request's tag names, in
  // the caller's memory.  A tag that names no cell of a location of this
  // process is a decode error (reply tags have bit 0 clear).
  answer_cell& answer_cell_for(location_id caller, std::uint64_t tag) {
    std::size_t const at = caller - m_local_first;  // unsigned: huge for a location before the first
    std::uint32_t const index = answer_index(tag);
    if (at >= m_process_cells.size() || index >= answer_cells_per_location || answer_number(tag) == 0) [[unlikely]]
      no_such_cell(caller);
    return m_process_cells[at][index];
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void no_such_cell(location_id caller) {
    throw decode_error("armi: request tag names an answer cell that location " + std::to_string(caller) +
                       " does not have");
  }

  // Publishes an answer written into c (status and value), after sending
  // the caller what this location has buffered for it: those requests were
  // made before the answer, so they should not wait behind it.
  void post_answer(location_id caller, answer_cell& c, std::uint64_t tag) {
    flush(caller, flush_cause::urgent);
    m_transport.post_answer(m_id, caller, c.answered, answer_number(tag));
  }

  // rmi_wait(): blocks until at least one request has been served.
  void wait_for_request() {
    wait_scope const waiting(watch(), wait_kind::rmi_wait);
    stopwatch const timed(timing(), m_stats.ns_blocked);
    trace_scope const traced(tracer(), "rmi_wait");
    for (;;) {
      if (poll_once()) return;
      flush_all(flush_cause::wait);
      end_bursts();
      std::uint32_t const token = m_transport.wake_token(m_id);
      if (m_ready.empty()) go_idle(token, {});
    }
  }

  // Nothing to run: give executed buffers back, then wait for the transport
  // (token read before the caller's last look at its condition; answer:
  // the cell of a sync_rmi's wait, or nullptr).
  void go_idle(std::uint32_t token, answer_watch answer) {
    if (!m_releasing.empty()) return_released();
    if (m_transport.idle_wait(m_id, token, answer)) ++m_stats.sleeps;
  }

  void fence() {
    if (m_depth != 0)
      fatal_exit("location " + std::to_string(m_id) + ": rmi_fence called inside an RMI target (it is collective; "
                 "call it from the location's main code)");
    ++m_stats.fences;
    wait_scope const waiting(watch(), wait_kind::fence, no_peer, nullptr, m_epoch);
    stopwatch const timed(timing(), m_stats.ns_fence);
    trace_scope const traced(tracer(), "rmi_fence", m_epoch);
    m_fencing = true;
    struct fencing_done {
      bool& flag;
      ~fencing_done() { flag = false; }
    } const done{m_fencing};
    std::uint64_t prev[2] = {~std::uint64_t{0}, ~std::uint64_t{0}};
    for (;;) {
      do flush_all(flush_cause::fence);
      while (poll_once() || !m_ready.empty());
      end_bursts();
      if (!m_releasing.empty()) return_released();  // owners free them at teardown
      std::uint64_t sums[2] = {m_stats.total_sent(), m_stats.total_executed()};
      std::uint64_t const round = m_fence_round++;
      m_transport.sum_contribute(m_id, round, sums);
      wait_until([&] { return m_transport.sum_ready(round); });
      m_transport.sum_result(round, sums);
      ++m_stats.fence_rounds;
      if (sums[0] == sums[1] && sums[0] == prev[0] && sums[1] == prev[1]) {
        ++m_epoch;
        for (buffer* b : m_next_epoch) m_ready.push_back(b);
        m_next_epoch.clear();
        return;
      }
      prev[0] = sums[0];
      prev[1] = sums[1];
    }
  }

  // ---- used by handlers ----------------------------------------------------

  // The local object a request targets, checked to be a live T.
  // Inlined into every stub's invoke; the first request of a handler to an
  // object checks the object's type, out of line.
  template <class T>
  [[gnu::always_inline]] T* target(request_header const& h, std::uint32_t handler, location_id source) {
    auto* e = m_registry.find(h.handle_index, h.handle_epoch);
    if (e == nullptr) [[unlikely]]
      unknown_handle(h, handler, source);
    if (e->checked_handler != handler) [[unlikely]]
      check_target_type<T>(*e, h, handler, source);
    if constexpr (requires(p_object* p) { static_cast<T*>(p); })
      return static_cast<T*>(e->object);
    else
      return dynamic_cast<T*>(e->object);
  }

  // target's fast path, which makes no calls: the object when h names a
  // live object by a symmetric handle and handler's type check of it has
  // been done (by target), else nullptr (then target).
  template <class T>
  [[gnu::always_inline]] T* checked_target(request_header const& h, std::uint32_t handler) {
    if constexpr (requires(p_object* p) { static_cast<T*>(p); }) {
      auto* e = m_registry.find_symmetric(h.handle_index, h.handle_epoch);
      return e != nullptr && e->checked_handler == handler ? static_cast<T*>(e->object) : nullptr;
    } else {
      return nullptr;  // a virtual base: dynamic_cast, a call
    }
  }

  template <class T>
  [[gnu::noinline]] void check_target_type(object_registry::entry& e, request_header const& h, std::uint32_t handler,
                                           location_id source) const {
    if (dynamic_cast<T*>(e.object) == nullptr)
      fatal_exit("location " + std::to_string(m_id) + ": RMI from location " + std::to_string(source) +
                 " targets handle{" + std::to_string(h.handle_index) + "," + std::to_string(h.handle_epoch) +
                 "}, which is a " + demangle(typeid(*e.object).name()) + ", not a " + type_name<T>());
    e.checked_handler = handler;
  }

  // Returns true when the handle names a live object here; used by stubs
  // that answer (sync/opaque/reduce) to reply with an error instead of dying.
  bool has_target(request_header const& h) { return m_registry.find(h.handle_index, h.handle_epoch) != nullptr; }

  std::string unknown_handle_message(request_header const& h, std::uint32_t handler, location_id source) const {
    handler_entry const* e = handler_table::instance().find(handler);
    return "location " + std::to_string(m_id) + ": RMI to unknown or destroyed handle{" +
           std::to_string(h.handle_index) + "," + std::to_string(h.handle_epoch) + "} from location " +
           std::to_string(source) + " (" + (e ? demangle(e->mangled_name) : std::string("?")) +
           "); was the object destroyed before an rmi_fence, or never registered here?";
  }
  [[noreturn, gnu::cold, gnu::noinline]] void unknown_handle(request_header const& h, std::uint32_t handler,
                                                             location_id source) const {
    fatal_exit(unknown_handle_message(h, handler, source));
  }

  // ---- collectives mailbox -------------------------------------------------

  using collective_key = std::tuple<std::uint64_t, std::uint64_t, std::uint32_t>;  // group, sequence, phase
  // One member's contribution to a collective, or the leader's result: a
  // packed value, or (failed) the packed error that ends the collective.
  struct collective_message {
    location_id from;
    bool failed;
    std::vector<std::byte> bytes;
  };
  std::map<collective_key, std::vector<collective_message>>& mailbox() { return m_mailbox; }
  std::uint64_t next_collective_sequence(std::uint64_t group_key) { return m_collective_seq[group_key]++; }

 private:
  // An empty buffer: pooled, come back, or new (with no bytes yet:
  // make_room gives it room, buffer_first_bytes at least).
  buffer* acquire_buffer() {
    buffer* b;
    if (!m_pool.empty()) {
      b = m_pool.back();
      m_pool.pop_back();
    } else if ((b = m_transport.reclaim(m_id)) != nullptr) {
      came_back();
    } else {
      b = new buffer;
      b->owner = m_id;
    }
    b->reset();
    b->source = m_id;
    return b;
  }

  bool is_auto(location_id dest) const {
    return (same_process(dest) ? m_aggregation_local : m_aggregation_remote) == aggregation_auto;
  }

  // The aggregation factor of a buffer for dest (buffer::left is 32 bits).
  std::uint32_t factor(location_id dest) const {
    std::size_t const f = same_process(dest) ? m_aggregation_local : m_aggregation_remote;
    return f == aggregation_auto ? m_auto[dest].k : static_cast<std::uint32_t>(std::min<std::size_t>(f, UINT32_MAX));
  }

  // Where a buffer to dest holding `count` requests looks again: at the
  // factor, or sooner under --armi-max-delay, to look at the clock.
  // Under auto, also at half the factor, to note the time, when k may grow.
  std::uint32_t next_limit(location_id dest, std::uint32_t count) const {
    std::uint32_t f = factor(dest);
    if (count < f / 2 && m_clocked && is_auto(dest) && may_grow(dest)) f /= 2;
    return m_max_delay_ns == 0 ? f : std::min(f, count + delay_check_every);
  }

  // Sets b's countdown to its next look (next_limit), or to its next request
  // when it already holds the factor (k went down under it).
  void rearm(location_id dest, buffer& b) const {
    b.left = b.count >= factor(dest) ? 1 : next_limit(dest, b.count) - b.count;
  }

  // A buffer reached its limit: the factor (send it), half of it under auto
  // (note the time), or a max-delay check.  Out of line: once per buffer.
  [[gnu::noinline]] void limit_reached(location_id dest) {
    buffer* b = m_out[dest];
    if (b == &m_direct) return flush(dest, flush_cause::bytes);  // its one request
    if (!m_clocked) return flush(dest, flush_cause::full);  // the limit is the factor
    std::uint32_t const f = factor(dest);
    if (b->count >= f) return flush(dest, flush_cause::full);
    if (b->half_ns == 0 && b->count >= f / 2 && is_auto(dest) && may_grow(dest)) b->half_ns = now_ns();
    rearm(dest, *b);
    send_overdue();
  }

  // Auto: whether a full buffer to dest may double k.  If not, its fill
  // time decides nothing, so it takes no half mark: a clock read and a stop
  // saved per buffer, which in bursts of 10 pings to a location of this
  // process (buffers of 8, at their bound) was 4-5 ns a ping (Fig. 5 on
  // threads, auto at k = 10: 35.0-37.6 ns a ping before, 30.3-30.8 after;
  // the best fixed factor 34-38).
  bool may_grow(location_id dest) const {
    std::uint32_t const k = m_auto[dest].k;
    return k < auto_max(dest) && 2 * std::uint64_t{k} <= burst_bound(dest);
  }

  // Auto, as a buffer to dest leaves (the rule: top of this file).
  void adapt(location_id dest, buffer const& b, flush_cause cause) {
    std::uint32_t& k = m_auto[dest].k;
    std::uint32_t const before = k;
    ++m_stats.auto_buffers;
    m_stats.auto_factor_sum += k;
    if (k == 1) {
      // Lone requests so far: a second one in this burst ends that.
      if (m_auto[dest].burst != 0) {
        k = auto_start_factor;
        ++m_stats.auto_grows;
      }
    } else if (cause == flush_cause::full && !may_grow(dest)) {
      // At the byte cap's bound nothing is decided; at the burst's, k is held
      // (and the buffer took no half mark).
      if (k < auto_max(dest)) ++m_stats.auto_held;
    } else if (cause == flush_cause::full) {
      std::int64_t const target = auto_target_ns(dest);
      std::int64_t const fill = b.half_ns == 0 ? target : 2 * (now_ns() - b.half_ns);  // no half mark: no opinion
      if (b.half_ns != 0) average_in(m_request_ns, static_cast<double>(fill) / k);
      // Sends backed up: bigger buffers mean fewer messages, which pays only
      // where each buffer is a message (another process, not through shared
      // memory).  In this process a send is a pointer handed over (between
      // ranks of a node, a copy into a ring), and a bigger buffer only keeps the
      // receiver waiting longer for its first request (pSCC on threads: k
      // grew to thousands, 1.2x the best fixed factor).
      bool const backed_up = !m_cheap_messages[dest] && m_outstanding > m_max_outstanding / 2;
      // On a modeled machine with flow control (sp2), a buffer twice this
      // size would pass what the receiver takes before the sender must wait
      // for it, so it saves a message's fixed cost and adds a wait for
      // acknowledgements.  Fig. 5 at 10000 pings, the fill-time rule let k
      // reach 4096 (16 KiB, the window 13.5 KiB): 1.18x the best factor on
      // the wall clock with nodes as threads; with nodes as processes 1.26x,
      // and 1.15x on the emulated clock.
      if (fill < target / 2 || backed_up) {
        if (m_modeled.window_bytes != 0 && 2 * b.size > m_modeled.window_bytes) {
          ++m_stats.auto_held;
        } else {
          k = std::min(2 * k, auto_max(dest));
          ++m_stats.auto_grows;
        }
      }
    } else if (cause == flush_cause::bytes) {
      ++m_stats.auto_capped;  // the cap, not k, bounds these requests: k stays
    } else if (cause == flush_cause::delay && k > auto_min_factor) {
      k = std::max(k / 2, auto_min_factor);
      ++m_stats.auto_shrinks;
    }
    m_stats.auto_final_sum = m_stats.auto_final_sum - before + k;
    m_stats.auto_factor_max = std::max<std::uint64_t>(m_stats.auto_factor_max, k);
  }

  // Auto: the most k may be for the bursts sent to dest (0: none seen yet).
  std::uint64_t burst_bound(location_id dest) const {
    std::uint64_t const b = m_auto[dest].burst_mean;
    if (b == 0) return UINT64_MAX;
    // A burst shorter than the start factor (end_bursts counts those only
    // in this process): its first auto_short_factor requests leave while
    // the rest are written.  Measured on threads, k pings + 1 pong (Fig. 5),
    // ns per ping at k = 10 / 20 / 40 / 60: factor 8 took 34 / 21 / 15 /
    // 13.6, factor 64 (one buffer) 39 / 25 / 17 / 14, and 4 did worse than 8
    // at each (38 / 26 / 21 / 18).  Between ranks of a node, where each
    // buffer is copied through a ring, 8 took 1.3-1.5x the time of 64 at
    // k = 20 and 40.
    if (b < auto_start_factor) return auto_short_factor;
    // Through shared memory, a quarter of the burst, and at most 8 sqrt(b):
    // the last buffer of a burst runs after the sender has finished, so
    // the time it adds grows with k while the time fewer buffers save
    // shrinks as 1/k, and the best k grows as the root of the burst.
    // Measured on threads (Fig. 5, k = 10000 pings): with the quarter
    // alone, k reached 2048 (1.07-1.16x the best factor, 256 or 1024);
    // with the root, 512 (0.99-1.00x); at 1000 pings the two agree (128).
    if (m_cheap_messages[dest]) {
      auto const root = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(b)));
      return std::max<std::uint64_t>(auto_start_factor, std::min(b / 4, 8 * root));
    }
    // A message to another process (not through shared memory: MPI between
    // nodes, or with --armi-mpi-shm=off; sp2) costs more (a library call and
    // a copy each side), so there a bigger share of the burst goes in one
    // buffer: half of it or more (remote_burst_bound), and all of a burst of
    // up to twice the start factor (a second buffer would give the receiver
    // a head start of a few dozen requests, for one message more).
    if (b <= 2 * auto_start_factor) return 2 * auto_start_factor;
    return remote_burst_bound(b, std::max(m_send_ns, static_cast<double>(m_modeled.message_ns)), m_request_ns);
  }

  // The location is about to wait (or is fenced): the bursts sent since the
  // last wait have ended.  Under auto, each one updates its destination's
  // mean burst, and a factor above what that allows halves down to it.
  void end_bursts() {
    if (!m_burst_open) return;
    m_burst_open = false;
    for (location_id d = 0; d < m_size; ++d) {
      // A burst shorter than the start factor fits in one buffer whatever
      // k is (at least the start), so to another process it says nothing
      // about k; in this process one of more than auto_short_factor
      // requests goes in pieces of that many (burst_bound).  The fence's
      // own requests say nothing either.
      auto_state& a = m_auto[d];
      std::uint64_t const n = std::exchange(a.burst, 0);
      if (n == 0 || !is_auto(d)) continue;
      std::uint32_t& k = a.k;
      std::uint32_t const before = k;
      if (n == 1 && a.waited) {  // (a sync call's request leaves at once anyway)
        if (++a.singles >= auto_single_bursts && k != 1) {
          k = 1;
          ++m_stats.auto_shrinks;
        }
      } else {
        a.singles = 0;
      }
      if (n >= auto_start_factor || (n > auto_short_factor && same_process(d))) {
        a.burst_mean = a.burst_mean == 0 ? n : (a.burst_mean + n) / 2;
        std::uint64_t const bound = burst_bound(d);
        while (k > bound && k / 2 >= auto_min_factor) {
          k /= 2;
          ++m_stats.auto_shrinks;
        }
      }
      if (k != before) {
        m_stats.auto_final_sum = m_stats.auto_final_sum - before + k;
        // An open buffer already at the new k leaves with its next request.
        if (buffer* b = m_out[d]; b != nullptr) rearm(d, *b);
      }
    }
  }

  // Auto's running averages: each new sample weighs 1/16, the first all.
  static void average_in(double& mean, double sample) { mean = mean == 0 ? sample : mean + (sample - mean) / 16; }

  std::int64_t auto_target_ns(location_id dest) const {
    std::int64_t const least = m_cheap_messages[dest] ? auto_min_target_shared_ns : auto_min_target_ns;
    auto const t = std::max(least, static_cast<std::int64_t>(m_send_ns * auto_cost_multiple));
    return m_max_delay_ns == 0 ? t : std::min(t, m_max_delay_ns / 2);
  }

  // Keeps the stats of auto destinations current as dest enters or leaves
  // auto (entering starts its factor afresh).
  void track_auto(location_id dest, bool was_auto) {
    bool const now_auto = is_auto(dest);
    if (now_auto == was_auto) return;
    if (m_auto.empty()) m_auto.resize(m_size);
    if (now_auto) {
      m_auto[dest] = auto_state{};
      ++m_stats.auto_destinations;
      m_stats.auto_final_sum += auto_start_factor;
      m_stats.auto_factor_max = std::max<std::uint64_t>(m_stats.auto_factor_max, auto_start_factor);
    } else {
      --m_stats.auto_destinations;
      m_stats.auto_final_sum -= m_auto[dest].k;
    }
  }

  // Buffers look at the clock only under auto or a max delay.
  void update_clocked() {
    m_clocked = m_max_delay_ns != 0 || m_aggregation_local == aggregation_auto ||
                m_aggregation_remote == aggregation_auto;
  }

  static std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  std::size_t bytes_cap(location_id dest) const {
    return same_process(dest) ? m_buffer_bytes_local : m_buffer_bytes_remote;
  }

  // Auto: the most a factor to dest grows to, the byte cap's worth of the
  // smallest request.
  std::uint32_t auto_max(location_id dest) const {
    return static_cast<std::uint32_t>(
        std::clamp<std::size_t>(bytes_cap(dest) / sizeof(request_header), auto_min_factor, UINT32_MAX));
  }

  // A pooled buffer may have grown past the cap of its new destination (a
  // local one's, or one large request's), so room, not capacity, bounds it.
  [[gnu::noinline]] buffer* make_room(location_id dest, std::size_t need) {
    check_fits(dest, need - sizeof(repeat_marker));
    if (need >= direct_min_bytes && need <= m_copy_limit && dest != m_id)
      if (buffer* d = make_direct(dest, need)) return d;
    buffer* b = m_out[dest];
    if (b != nullptr && b->count != 0 && b->size + need > bytes_cap(dest)) {
      flush(dest, flush_cause::bytes);
      b = m_out[dest];  // a throttle may not refill it, but be safe
    }
    if (b == nullptr) {
      b = acquire_buffer();
      rearm(dest, *b);
      if (m_max_delay_ns != 0) {
        b->born_ns = now_ns();
        m_delay_deadline = std::min(m_delay_deadline, b->born_ns + m_max_delay_ns);
      }
      m_out[dest] = b;
    }
    b->reserve(b->size + need);
    b->room = std::max(std::min(b->capacity, bytes_cap(dest)), b->size + need);  // one request larger than the cap fits alone
    return b;
  }

  // A buffer for one large request to dest (need bytes with its header)
  // in the transport's memory, where a copy of the buffer would have gone,
  // so its argument is written once, not twice (the Madeleine benchmark's
  // 4-64 KiB round trips between ranks of a node); or nullptr: the
  // transport has no room now.  What dest's buffer held leaves first.  The
  // request's end sends it (left is 1, limit_reached).
  buffer* make_direct(location_id dest, std::size_t need) {
    if (m_out[dest] != nullptr && m_out[dest]->count != 0) {
      flush(dest, flush_cause::bytes);
      if (m_out[dest] != nullptr && m_out[dest]->count != 0) return nullptr;  // refilled by what it served
    }
    std::byte* const room = m_transport.direct_reserve(dest, need);
    if (room == nullptr) return nullptr;
    if (buffer* kept = m_out[dest]) m_pool.push_back(kept);  // an empty one kept for dest (flush)
    buffer& d = m_direct;
    d.reset();
    d.data = decltype(d.data)(room, bytes_deleter{true});
    d.capacity = d.room = need;
    d.source = d.owner = m_id;
    d.left = 1;
    m_out[dest] = &d;
    return &d;
  }

  void recycle_reclaimed(buffer* b) {
    came_back();
    m_pool.push_back(b);
  }

  // One of this location's buffers in flight came back.
  void came_back() {
    --m_outstanding;
    if (m_asking_service && m_outstanding <= m_max_outstanding / 4) ask_service(false);
  }

  // A location with more than half its flow-control limit in flight (flush)
  // asks its partners to serve at each buffer they send, until a quarter is
  // left (came_back); one in flow control is past that.  A partner whose
  // own buffers come back, because this location serves them, never passes
  // half itself, so without the ask it would serve only once this location
  // sat in flow control (sample sort of 10M ints on 2 threads at
  // aggregation 64: 460-890 waits there per run, 5-16 ms; with the asks
  // from half 100-220, 2-5 ms).
  void ask_service(bool on) {
    if (m_asking_service == on) return;
    m_asking_service = on;
    if (on) ++m_stats.service_asks;
    m_transport.want_service(m_id, on);
  }

  // Executed buffers go back to their owners in batches, one chain per
  // owner per poll, to keep shared cache lines quiet.
  void release(buffer* b) {
    if (b->owner == m_id) {
      m_pool.push_back(b);  // one of ours came back from ourselves
      return;
    }
    auto& chain = m_release[b->owner];
    if (chain.first == nullptr) {
      chain.first = b;
      m_releasing.push_back(b->owner);
    } else {
      chain.last->next.store(b, std::memory_order_relaxed);
    }
    chain.last = b;
    ++m_held;
  }

  void return_released() {
    for (location_id owner : m_releasing) {
      auto& chain = m_release[owner];
      m_transport.release(m_id, chain.first, chain.last);
      chain = {};
    }
    m_releasing.clear();
    m_held = 0;
  }

  void delete_if_mine(buffer* b) {
    if (b->owner == m_id) delete b;
  }

  // Waits for buffers to come back (the partners have been asked to serve
  // since half the limit: ask_service).
  void throttle() {
    ++m_stats.flow_control_waits;
    stopwatch const timed(timing(), m_stats.ns_flow_control);
    m_throttling = true;
    wait_until(
        [&] {
          while (buffer* b = m_transport.reclaim(m_id)) recycle_reclaimed(b);
          return m_outstanding <= m_max_outstanding / 2;
        },
        "flow control");
    m_throttling = false;
  }

  // Part of poll_once's loop, its one caller: executes b's requests from its
  // cursor on, until b ends or a request's blocking call polled (that poll
  // served the queue from where we stood, so b may be finished and recycled:
  // poll_once looks at the queue again).  What does not change within a
  // buffer is read once per buffer, not per request: the sender (and so
  // whether its handler words need translating), the data, the size, the
  // diagnostics switches; b sits in m_ready, where only a poll touches it.
  // Every request is still checked in full (header, payload bounds, handler
  // id; method index and handle in the stub) before it runs.  Out of line
  // (a call per buffer), so that the per-request loop gets the registers to
  // itself; without tracing or per-handler counts it is a loop that has no
  // trace of them.
  [[gnu::noinline]] void execute_run(buffer& b) {
    if (tracer() != nullptr || timing()) [[unlikely]]
      return execute_requests<true>(b, !same_process(b.source));
    if (!same_process(b.source)) return execute_requests<false>(b, std::true_type{});
    execute_requests<false>(b, std::false_type{});
  }

  // Foreign: the sender is in another process (its method indices need
  // translating): a constant in the loops without diagnostics.
  template <bool Diagnosed, class Foreign>
  [[gnu::always_inline]] void execute_requests(buffer& b, Foreign const foreign) {
    std::uint64_t const polls = m_polls;
    location_id const source = b.source;
    std::byte const* const data = b.data.get();
    std::size_t const size = b.size;
    std::size_t cursor = b.cursor;  // == b.cursor at the top of each round (malformed reports it)
    trace_log* const t = Diagnosed ? tracer() : nullptr;
    bool const counting = Diagnosed && timing();
    // In a request from the first call to the last: nothing between two
    // calls looks at the depth.  (A guard, not a decrement at the end: a
    // fatal_hook may turn a fatal error into an exception.)
    struct depth_scope {
      std::uint32_t& depth;
      explicit depth_scope(std::uint32_t& d) : depth(d) { ++depth; }
      ~depth_scope() { --depth; }
    } const in_request(m_depth);
    do {
      request_header h;
      std::byte const* payload;
      cursor = frame(b, data, size, cursor, h, payload);
      handler_entry const* e = find_handler(h.handler & handler_mask);
      if (e == nullptr) [[unlikely]]
        malformed(b, "unknown handler id " + std::to_string(h.handler & handler_mask));
      std::uint32_t const word = h.handler;  // as sent
      if (e->define != nullptr && foreign) h.handler = translate(b, h.handler, e->method_type);
      b.cursor = cursor;  // before the call: a blocking call in it serves b from here
      m_target_called = false;
      if constexpr (Diagnosed) {
        // One request per call, so that each is counted and traced.
        std::uint64_t const traced = t != nullptr ? trace_log::now_ns() : 0;
        if (counting) [[unlikely]]  // before the call: nothing to keep across it
          count_execution(h.handler & handler_mask);
        try {
          e->fn(*this, source, h, payload);
        } catch (...) {
          if (m_target_called) target_threw(*e);
          undecodable(*e, source);
        }
        if (t != nullptr && t->sample_execution(traced))
          t->span(e->mangled_name, traced, trace_log::now_ns(), source, true);
        ++m_stats.executed[static_cast<std::size_t>(e->kind)];
      } else {
        // The handler executes this request and the ones after it with
        // the same handler word (run_fn), and counts them; it leaves the
        // cursor past the last one it ran.
        run_state st{b, data, size, cursor, polls, word, source};
        try {
          e->run(*this, st, h, payload);
        } catch (...) {
          if (m_target_called) target_threw(*e);
          undecodable(*e, source);
        }
        cursor = st.cursor;
      }
    } while (cursor < size && m_polls == polls);
  }

 public:
  // ---- used by run_fn handlers (see run_fn) ----------------------------

  void executed_one(rmi_kind kind) { ++m_stats.executed[static_cast<std::size_t>(kind)]; }

  // The registry's count of removed objects (a run's targets stay live
  // while it stays the same; method_stub::run).
  std::uint64_t registry_removals() const { return m_registry.removals(); }

  // After a request of a run: frames the next request of st's buffer into
  // h and payload, as execute_requests does (frame_record), and returns
  // true when it has the run's handler word (then h.handler keeps the run's
  // word as translated: the same word from the same source translates
  // alike, and no define request can come between two requests of one run;
  // a repeat record keeps h as it is, the record's before, and sets
  // `repeat`).  False at the end of the buffer, after a poll inside the
  // request (the buffer may be gone), for another word, and for a record
  // that does not frame (execute_requests frames it again and reports it);
  // h and payload are then no longer the run's.
  [[gnu::always_inline]] bool next_in_run(run_state& st, request_header& h, std::byte const*& payload, bool& repeat) {
    if (m_polls != st.polls) return false;
    std::uint32_t const translated = h.handler;
    std::size_t next;
    if (frame_record(st.b, st.data, st.size, st.cursor, h, payload, next, repeat) != nullptr) return false;
    if (!repeat) {
      if (h.handler != st.word) return false;
      h.handler = translated;
    }
    st.cursor = next;
    st.b.cursor = next;
    m_target_called = false;
    return true;
  }

 private:

  // Frames the record of b at cursor (see buffer.hpp): where its payload
  // starts into payload, where the next record starts into next (past this
  // one's padding, or the end of the buffer: a last record may come
  // unpadded), and whether it is a repeat.  A full record's header goes
  // into h and becomes b.last; a repeat leaves h as it is, which must be
  // the header it repeats (b.last, or the run's as translated).  Returns
  // nullptr, or why the record does not frame.
  // For a full record next is cursor + min(request_bytes(payload_bytes),
  // left), as the header starts at a multiple of 8; the align8 form is
  // fewer steps on the loop's critical path, which runs from one header's
  // load to the next.
  [[gnu::always_inline]] static char const* frame_record(buffer& b, std::byte const* data, std::size_t size,
                                                         std::size_t cursor, request_header& h,
                                                         std::byte const*& payload, std::size_t& next,
                                                         bool& repeat) {
    std::size_t left = size - cursor;
    std::uint32_t first;
    if (left < sizeof first) [[unlikely]]
      return "truncated request header";
    std::memcpy(&first, data + cursor, sizeof first);
    repeat = first == repeat_marker;
    if (repeat) {
      if (cursor == 0) [[unlikely]]
        return "a repeated request with no request before it";
      if (h.payload_bytes > left - sizeof first) [[unlikely]]
        return "payload runs past the end of the buffer";
      payload = data + cursor + sizeof first;
      next = std::min(cursor + repeat_bytes(h.payload_bytes), size);
      return nullptr;
    }
    if (cursor & 4) {  // a pad word, then a header
      if (first != 0) [[unlikely]]
        return "a request header that is not at a multiple of 8 bytes";
      cursor += sizeof first;
      left -= sizeof first;
    }
    if (left < sizeof h) [[unlikely]]
      return "truncated request header";
    std::memcpy(&h, data + cursor, sizeof h);
    if (h.payload_bytes > left - sizeof h) [[unlikely]]
      return "payload runs past the end of the buffer";
    b.last = h;
    payload = data + cursor + sizeof h;
    next = std::min(align8(cursor + sizeof h + h.payload_bytes), size);
    return nullptr;
  }

  // frame_record at the start of a round of execute_requests, reporting a
  // record that does not frame as a malformed buffer (at cursor: b.cursor ==
  // cursor here); h is the record's header (a repeat's: b.last, as sent).
  // Returns the next cursor.
  [[gnu::always_inline]] std::size_t frame(buffer& b, std::byte const* data, std::size_t size, std::size_t cursor,
                                           request_header& h, std::byte const*& payload) {
    h = b.last;  // what a repeat repeats
    std::size_t next;
    bool repeat;
    if (char const* why = frame_record(b, data, size, cursor, h, payload, next, repeat)) [[unlikely]]
      malformed(b, why);
    return next;
  }

  // The handler table's entry for id, or nullptr for an id it does not
  // hold.  The table only grows (static initialization, before any sender
  // could name the new id), so a size seen once stays a valid bound; only an
  // id past it pays the atomic load again.
  handler_entry const* find_handler(std::uint32_t id) {
    if (id >= m_handlers_known) [[unlikely]] {
      m_handlers_known = m_handlers.size();
      if (id >= m_handlers_known) return nullptr;
    }
    return &m_handlers.known(id);
  }

  // Out of line: with --armi-stats off, execute_run pays one predictable
  // branch for it.
  [[gnu::noinline]] void count_execution(std::uint32_t handler) {
    if (handler >= m_executed_by_handler.size()) m_executed_by_handler.resize(handler_table::instance().size());
    ++m_executed_by_handler[handler];
  }

  // A target that has no one to answer (async, broadcast) threw: the run
  // ends, naming the location, the kind, the method's type and the message.
  // (The stub set m_target_called just before calling it: an exception
  // before that is decoding gone wrong, below.  A nested poll inside the
  // target leaves the flag set, as each request it runs sets it before its
  // own target; one that failed to decode ended the run there.)
  [[noreturn, gnu::cold, gnu::noinline]] void target_threw(handler_entry const& e) const {
    std::string const kind_name = rmi_kind_names[static_cast<std::size_t>(e.kind)];
    std::string const head = "location " + std::to_string(m_id) + ": exception in " + kind_name + "_rmi target " +
                             (e.is_method() ? method_name(demangle(e.method_mangled_name)) : demangle(e.mangled_name)) +
                             ": ";
    try {
      throw;
    } catch (std::exception const& err) {
      fatal_exit(head + demangle(typeid(err).name()) + ": " + err.what());
    } catch (...) {
      fatal_exit(head + "an exception not derived from std::exception");
    }
  }

  // Stubs that answer catch what targets throw; other exceptions that reach
  // execute_run are decoding gone wrong (a corrupt size, bad_alloc on one, a user unpack
  // function that threw).  Out of line: the hot loop stays small.
  [[noreturn, gnu::cold, gnu::noinline]] void undecodable(handler_entry const& e, location_id source) const {
    std::string const where = "location " + std::to_string(m_id) + ": ";
    try {
      throw;
    } catch (decode_error const& err) {
      fatal_exit(where + "malformed request from location " + std::to_string(source) + " for " +
                 demangle(e.mangled_name) + ": " + err.what() + " (not executed)");
    } catch (std::exception const& err) {
      fatal_exit(where + "request from location " + std::to_string(source) + " for " + demangle(e.mangled_name) +
                 " could not be decoded: " + demangle(typeid(err).name()) + ": " + err.what());
    } catch (...) {
      fatal_exit(where + "request from location " + std::to_string(source) + " for " + demangle(e.mangled_name) +
                 " could not be decoded: an exception not derived from std::exception");
    }
  }

  // Another process's method index -> ours (set by its define requests).
  // The last translation answers a run of requests for one method, inline.
  [[gnu::always_inline]] std::uint32_t translate(buffer const& b, std::uint32_t word, std::uint32_t type) {
    if (word == m_last_xlate.remote && b.source == m_last_xlate.source) [[likely]]
      return m_last_xlate.local;
    return translate_table(b, word, type);
  }
  [[gnu::noinline]] std::uint32_t translate_table(buffer const& b, std::uint32_t word, std::uint32_t type) {
    std::uint32_t const id = word & handler_mask, remote = word >> handler_bits;
    if (b.source < m_xlate.size()) {
      auto const& per_type = m_xlate[b.source];
      if (type < per_type.size() && remote < per_type[type].size() && per_type[type][remote] != 0) {
        m_last_xlate = {b.source, word, id | ((per_type[type][remote] - 1) << handler_bits)};
        return m_last_xlate.local;
      }
    }
    malformed(b, "method index " + std::to_string(remote) + " of handler " + std::to_string(id) +
                     " was never defined by that location");
  }

  [[noreturn, gnu::cold, gnu::noinline]] void malformed(buffer const& b, std::string const& why) const {
    fatal_exit("location " + std::to_string(m_id) + ": malformed buffer from location " + std::to_string(b.source) +
               " at byte " + std::to_string(b.cursor) + " of " + std::to_string(b.size) + ": " + why +
               " (not executed)");
  }

  static constexpr std::size_t max_ready_to_self = 16;
  // A request this large (header included) is written into the transport's
  // memory when it can be (make_direct).  Below it, the copy it saves (some
  // 100 ns at 4 KiB) no longer pays for the message it adds when a buffer
  // was open for dest.  (Madeleine 4 KiB round trip, 8 KiB threshold 1.25-
  // 1.53 us, 4 KiB threshold 1.27-1.33.)
  static constexpr std::size_t direct_min_bytes = 4096;
  // Auto: the factor a destination starts at (the fixed default), the least
  // it goes down to, and its target fill time: this many times the cost of
  // a send, at least auto_min_target_ns.
  static constexpr std::uint32_t auto_start_factor = 64;
  static constexpr std::uint32_t auto_min_factor = 4;
  // In this process, the factor for bursts shorter than the start.
  static constexpr std::uint32_t auto_short_factor = 8;
  static constexpr double auto_cost_multiple = 8;
  static constexpr std::int64_t auto_min_target_ns = 5000;
  // The least target to a destination reached through shared memory.
  // There the send that auto times is a pointer or a line handed over
  // (some 50 ns), but a buffer costs far more than that: the receiver's
  // look at the ring, the buffer's lines moving between the cores, its
  // return to the owner.  Measured on threads (Fig. 7, 2 locations, 2^21
  // updates): random updates took 30.3 ms at factor 256 and 25.9 at 4096,
  // about 1.2 us a buffer.  With the 5 us target k stopped at 256 (1.11-
  // 1.16x the best factor; pSCC 1.17-1.24x); with this one it reaches
  // 1024-4096 (0.99-1.00x; pSCC 0.98-1.01x).  Bursts bound k as before
  // (burst_bound), which at Fig. 5's 10000 pings took the root rule.
  static constexpr std::int64_t auto_min_target_shared_ns = 40000;
  static constexpr std::uint64_t auto_send_sample = 16;
  static constexpr std::uint32_t auto_single_bursts = 4;
  // --armi-max-delay: requests to one destination between looks at the clock.
  static constexpr std::uint32_t delay_check_every = 32;
  static constexpr std::int64_t no_deadline = INT64_MAX;
  // Executed buffers go back to their owners in batches of this many, or
  // when the location runs out of work, whichever comes first.
  static constexpr std::size_t release_batch = 8;

  transport& m_transport;
  handler_table const& m_handlers = handler_table::instance();
  std::size_t m_handlers_known = 0;  // a size of m_handlers seen (find_handler)
  std::uint64_t m_polls = 0;         // poll_once calls, to see one made inside a request
  bool m_target_called = false;      // the running request's stub has called its target (target_threw)
  location_id m_id;
  location_id m_size;
  std::vector<buffer*> m_out;  // per destination: the buffer being filled
  struct chain {
    buffer* first = nullptr;
    buffer* last = nullptr;
  };
  std::vector<chain> m_release;  // per owner: executed buffers to give back
  std::vector<location_id> m_releasing;
  std::vector<location_id> m_urgent;
  std::deque<buffer*> m_ready;  // arrived, not yet fully executed
  std::vector<buffer*> m_next_epoch;  // arrived from locations past our fence
  std::uint32_t m_epoch = 0;          // fences completed
  std::vector<buffer*> m_pool;
  std::size_t m_aggregation_local;
  std::size_t m_aggregation_remote;
  std::size_t m_buffer_bytes_local;   // byte caps: to this process's locations,
  std::size_t m_buffer_bytes_remote;  // to other processes'
  std::size_t m_max_record_remote;    // the largest request to another process (to this one's: max_record_bytes)
  // The request between begin_request and end_request: its header, the
  // buffer's size with it, its kind.
  struct open_request {
    request_header header;
    std::size_t end;
    rmi_kind kind;
  } m_open{};
  // Auto: what one destination's factor is and has seen.
  struct auto_state {
    std::uint32_t k = auto_start_factor;  // the factor now
    std::uint32_t singles = 0;            // bursts of one request in a row
    std::uint64_t burst = 0;              // requests sent since the last wait
    std::uint64_t burst_mean = 0;         // the mean of those at each wait (0: none yet)
    bool waited = false;                  // its last buffer left for a poll or a wait
  };
  std::vector<auto_state> m_auto;  // per destination (allocated when a destination first goes auto)
  double m_send_ns = 0;                      // auto: average cost of a send
  transport::message_model m_modeled;        // auto: what messages cost on the machine the transport models
  double m_request_ns = 0;                   // auto: average time between two requests of a filling buffer
  bool m_burst_open = false;                 // auto: some auto_state::burst may be nonzero
  std::uint64_t m_auto_flushes = 0;          // auto: buffers sent (every auto_send_sample-th is timed)
  std::int64_t m_max_delay_ns;               // --armi-max-delay, 0 = none
  std::int64_t m_delay_deadline = no_deadline;  // earliest a pending buffer is overdue (may be early)
  bool m_clocked = false;                    // auto or max-delay somewhere: buffers look at the clock
  std::size_t m_outstanding = 0;
  std::size_t m_max_outstanding;
  bool m_throttling = false;
  bool m_asking_service = false;  // ask_service
  std::uint32_t m_depth = 0;
  wait_record* m_watch = nullptr;
  std::uint32_t m_empty_polls = 0;
  std::size_t m_held = 0;  // executed buffers not yet given back
  std::uint32_t m_polls_before_yield;
  std::size_t m_copy_limit;  // buffers this small go by send_copy when the transport takes them
  buffer m_direct;           // a large request's, in the transport's memory (make_direct)
  std::vector<bool> m_cheap_messages;  // [dest]: reached through shared memory (transport::shares_memory)
  location_id m_local_first;
  location_id m_local_count;
  bool m_timing;          // --armi-stats: time fences, blocking waits and polls; count executions per handler
  bool timing() const { return has_diagnostics && m_timing; }
  bool m_fencing = false;  // inside fence(): its waits count as fence time, not as blocked
  std::unique_ptr<trace_log> m_trace;  // --armi-trace, else null
  trace_log* tracer() const { return has_diagnostics ? m_trace.get() : nullptr; }
  std::vector<std::vector<bool>> m_described;  // per destination, per method key
  // Per destination: the handler word of the last request found described
  // (no_word: none; no handler id has all of the low 20 bits set), and the
  // bits of it that told() compares: none for a destination in this process.
  static constexpr std::uint32_t no_word = ~0u;
  struct told_entry {
    std::uint32_t word, mask;
  };
  std::vector<told_entry> m_told;
  std::vector<answer_cell*> m_process_cells;  // [l - m_local_first]: location l's cells; empty: none (answers.hpp)
  std::uint32_t m_answer_depth = 0;           // own cells taken by the sync_rmis waiting now
  std::array<std::uint32_t, answer_cells_per_location> m_answer_numbers{};  // per cell, its last call's
  std::vector<std::vector<std::vector<std::uint32_t>>> m_xlate;  // per source, method type, index: ours + 1
  struct translation {
    location_id source = 0;
    std::uint32_t remote = no_word;  // handler word as sent
    std::uint32_t local = 0;         // ... as we run it
  } m_last_xlate;
  std::uint64_t m_fence_round = 0;
  object_registry m_registry;
  reply_slots m_replies;
  location_stats m_stats;
  std::vector<std::uint64_t> m_executed_by_handler;  // --armi-stats: requests executed, per handler id
  std::map<collective_key, std::vector<collective_message>> m_mailbox;
  std::map<std::uint64_t, std::uint64_t> m_collective_seq;
};

// The location of the calling thread; throws outside armi::execute.
[[noreturn, gnu::cold, gnu::noinline]] inline void outside_execute(char const* what) {
  throw std::logic_error(std::string("armi::") + what + " called outside armi::execute");
}

// Inline: every RMI starts here (a TLS load and a test); the throw is out of line.
inline location& current(char const* what) {
  location* l = t_location;
  if (l == nullptr) [[unlikely]]
    outside_execute(what);
  return *l;
}

}  // namespace armi::detail
