// The location context: everything one location (a thread of SPMD
// execution) owns, as a façade over its components.  Outgoing requests go
// into a per-destination buffer (outbox.hpp), sent when it holds the
// aggregation factor's worth (aggregation_policy.hpp), would pass the byte
// cap, or the location synchronizes; flow control (flow_control.hpp) bounds
// what is in flight.  Arrived buffers are executed in arrival order
// (dispatcher.hpp); method indices are translated between processes
// (method_identity.hpp); the fence is termination detection (fence.hpp);
// sync_rmi answers go in place where they can (answer_cells.hpp).
//
// The send path's inline parts stay here (room_for, commit_request,
// begin_request, end_request): one send makes no call but the tail call of
// a full buffer.  What a send or a wait calls out of line (flushes, the
// poll and wait loops, the fence) is defined at the end of this file, under
// ARMI_RUNTIME_BODIES: inline when header-only, compiled once by
// <armi/src.hpp> with separate compilation, so that a user's translation
// unit does not compile the runtime's loops again.  Thread safety: a
// location is used by its own thread, or, under --armi-progress=thread,
// by the communication thread while its claim (progress_claim.hpp) keeps
// its own thread out; the transport is the only shared part.
#pragma once

#include <armi/core/buffer.hpp>
#include <armi/core/config.hpp>
#include <armi/core/handlers.hpp>
#include <armi/core/stats.hpp>
#include <armi/core/transport.hpp>
#include <armi/core/wire.hpp>
#include <armi/runtime/aggregation_policy.hpp>
#include <armi/runtime/answer_cells.hpp>
#include <armi/runtime/collective_mailbox.hpp>
#include <armi/runtime/diagnostics.hpp>
#include <armi/runtime/dispatcher.hpp>
#include <armi/runtime/fence.hpp>
#include <armi/runtime/flow_control.hpp>
#include <armi/runtime/location_errors.hpp>
#include <armi/runtime/method_identity.hpp>
#include <armi/runtime/options.hpp>
#include <armi/runtime/outbox.hpp>
#include <armi/runtime/progress_claim.hpp>
#include <armi/runtime/registry.hpp>
#include <armi/runtime/reply.hpp>
#include <armi/runtime/world.hpp>
#include <armi/serialization/view.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace armi::detail {

class location;
inline thread_local location* t_location = nullptr;

// The dynamic type of a registered object, for messages; defined in
// p_object.hpp, where p_object is complete (every caller targets one).
std::string dynamic_type_name(p_object const& object);

class location final : private lend_returns {
 public:
  location(transport& tr, location_id id, config const& cfg)
      : m_transport(tr),
        m_id(id),
        m_size(tr.size()),
        m_local_first(tr.process_first(id)),
        m_local_count(tr.process_locations()),
        m_max_record_remote(std::min(max_record_bytes, tr.max_message_bytes())),
        m_routes(routes_of(tr, cfg)),
        m_partners(m_routes.partners(id)),
        m_policy(policy_setup(tr, id, cfg, m_partners + 1), m_stats),
        m_flow(tr, id, m_stats, m_partners),
        m_outbox(tr, id, m_stats, m_flow, m_policy, m_routes),
        m_receiver(id, tr.empty_polls_before_yield()),
        m_identity(id, tr.size(), [this](location_id d) { return same_process(d); }),
        m_answers(tr, id),
        m_diag(cfg.stats, !cfg.trace.empty()),
        m_mailbox(cfg.tree_arity),
        m_progress_thread(cfg.progress == "thread"),
        m_lending{id, &m_loans_returned, lend_min_bytes, nullptr},
        m_sending_apart{id, &m_loans_returned, 0, &m_lent_ranges} {}

  location(location const&) = delete;
  location& operator=(location const&) = delete;

  ~location();

  location_id id() const { return m_id; }
  location_id size() const { return m_size; }
  object_registry& registry() { return m_registry; }
  reply_slots& replies() { return m_replies; }
  location_stats const& stats() const { return m_stats; }
  method_counts executed_by_method() const { return m_diag.executed_by_method(); }
  trace_log const* trace() const { return m_diag.tracer(); }
  bool in_request() const { return m_receiver.in_request(); }

  // --armi-progress=thread: the process's communication thread may serve
  // this location while it runs its own code; claim() says when it may.
  bool served_by_progress_thread() const { return m_progress_thread; }
  progress_claim& claim() { return m_claim; }

  // Every location of the run (world.hpp): the launcher's list, shared by
  // the locations of its process, or one of this location's own.
  world_members const& world() {
    if (m_world == nullptr) m_world = std::make_shared<world_members const>(world_members::of(m_size));
    return *m_world;
  }
  void share_world(std::shared_ptr<world_members const> w) { m_world = std::move(w); }

  // Diagnostics' hooks (none with ARMI_DIAGNOSTICS=0): the watchdog's record.
  wait_record* watch() const { return m_diag.watch(); }
  void set_watch(wait_record* r) { m_diag.set_watch(r); }

  // Aggregation factors: for destinations in this process and in others.
  std::size_t aggregation_local() const { return m_policy.factor_local(); }
  std::size_t aggregation_remote() const { return m_policy.factor_remote(); }
  bool has_remote() const { return m_local_count < m_size; }
  void set_aggregation(std::size_t local, std::size_t remote);

  bool same_process(location_id l) const { return l - m_local_first < m_local_count; }
  // The paths of --armi-routing (where a request to dest goes next).
  route_grid const& routes() const { return m_routes; }

  // ---- loans (armi::lend; serialization/view.hpp) --------------------------
  // How a point-to-point RMI to dest, reached directly, may carry lent views
  // without a copy: by reference to a location of this process, or sent
  // apart from the caller's memory where the transport can
  // (transport::apart_min_bytes); else nullptr (copied).
  lend_context const* lending_to(location_id dest) {
    if (m_routes.next_hop(m_id, dest) != dest) return nullptr;
    if (same_process(dest)) return &m_lending;
    m_sending_apart.min_bytes = m_transport.apart_min_bytes(dest);
    if (m_sending_apart.min_bytes == 0) return nullptr;
    m_lent_ranges.clear();  // left by a request whose packing threw
    return &m_sending_apart;
  }
  // The smallest lent view to dest that travels without a copy (lending_to), or 0: none.
  std::size_t lends_to(location_id dest) const {
    if (m_routes.next_hop(m_id, dest) != dest) return 0;
    return same_process(dest) ? lend_min_bytes : m_transport.apart_min_bytes(dest);
  }
  // The request being written to dest (before end_request) lent `views`:
  // the runtime now waits for them at the flush points; ranges that go
  // apart start now, before the request can leave, and it names their tags.
  void lent(location_id dest, std::uint32_t views) {
    m_loans += views;
    if (!m_lent_ranges.empty()) [[unlikely]]
      send_apart(dest);
  }
  // Where the lent views of a running request go back, and its ranges sent
  // apart come from (lend_returns: each checks the running request's source).
  lend_returns* loans() { return this; }
  // A flush point: returns once every view this location lent has been read.
  void settle_loans() {
    if (m_loans_returned.load(std::memory_order_seq_cst) != m_loans) [[unlikely]]
      wait_for_loans();
  }
  // The first location of this location's process (transport::process_first).
  location_id process_first() const { return m_local_first; }

  // A stub with no answer to send says it is calling its target: from here
  // on an exception is the target's, not a decoding failure.
  void calling_target() { m_receiver.calling_target(); }

  // Method identity across processes (method_identity.hpp).
  [[gnu::always_inline]] bool told(location_id dest, std::uint32_t word) const { return m_identity.told(dest, word); }
  template <class Key>
  bool needs_definition(location_id dest, std::uint32_t word, Key const& key) {
    return m_identity.needs_definition(dest, word, key);
  }
  void set_translation(location_id source, std::uint32_t type, std::uint32_t remote, std::uint32_t local) {
    m_identity.set_translation(source, type, remote, local);
  }

  // Inline test, out-of-line message.
  void check_destination(location_id dest, char const* what) const {
    if (dest >= m_size) [[unlikely]]
      errors::bad_destination(dest, what, m_size);
  }

  // The largest request (header and payload) that can go to dest: the wire
  // format counts a payload in 32 bits, a transport may count a message in
  // fewer (transport::max_message_bytes).
  std::size_t max_record(location_id dest) const {
    return same_process(dest) ? max_record_bytes : m_max_record_remote;
  }
  // Throws std::length_error for a request of `record` bytes that cannot go
  // to dest; nothing of it has been written or counted then.
  void check_fits(location_id dest, std::size_t record) const {
    if (record > max_record(dest)) [[unlikely]]
      errors::request_too_large(dest, record, max_record(dest));
  }

  // ---- sending ----------------------------------------------------------

  // The fast path of a send whose size is known before it touches its
  // arguments: dest's buffer when it has room for `need` more bytes (header
  // and padded payload), else nullptr (then make_room, out of line: the open
  // buffer grown, or a new one after sending the full one).  The caller
  // writes the record (write_fixed_record) and calls commit_request.
  [[gnu::always_inline]] buffer* room_for(location_id dest, std::size_t need) const {
    buffer* b = m_outbox.out(dest);
    return b != nullptr && b->size + need <= b->room ? b : nullptr;
  }
  buffer* make_room(location_id dest, std::size_t need);  // out of line: the send path's cold part
  [[gnu::always_inline]] static std::byte* write_header(buffer* b, request_header const& header) {
    return detail::write_header(*b, header);
  }
  [[gnu::always_inline]] void commit_request(buffer* b, location_id dest, rmi_kind kind, std::size_t need) {
    b->size += need;
    ++b->count;
    ++m_stats.sent[static_cast<std::size_t>(kind)];
    if (--b->left == 0) [[unlikely]]  // a countdown: one instruction and a branch
      limit_reached(dest);
  }

  // Reserves room for one request of `payload` bytes to dest, writes its
  // header (a full record, after a pad word when needed) and returns where
  // the payload goes.  end_request() adds the record to the buffer: a
  // payload whose packing throws leaves the buffer as it was.  A request
  // too large to send throws std::length_error (make_room).
  [[gnu::always_inline]] std::byte* begin_request(location_id dest, rmi_kind kind, request_header header,
                                                  std::size_t payload) {
    std::size_t const record = request_bytes(payload);
    buffer* b = m_outbox.out(dest);
    if (b == nullptr || record >= outbox::direct_min_bytes || b->size + record + record_slack > b->room)
        [[unlikely]]
      b = make_room(dest, record + record_slack);
    header.payload_bytes = static_cast<std::uint32_t>(payload);
    std::size_t pad_word;
    std::byte* const p = place_header(*b, header, pad_word);
    pad_payload(p, payload, align8(payload));
    m_outbox.m_open = {b, header, b->size + pad_word + record, kind};
    return p;
  }

  // Adds the request begun last to dest's buffer, then sends the buffer if
  // it reached its limit; `urgent` for requests someone waits on.
  [[gnu::always_inline]] void end_request(location_id dest, bool urgent) {
    outbox::open_request const& open = m_outbox.m_open;
    buffer* b = open.b;
    b->last = open.header;
    b->repeat_at = 0;
    b->size = open.end;
    ++b->count;
    ++m_stats.sent[static_cast<std::size_t>(open.kind)];
    if (urgent && !b->urgent) m_outbox.mark_urgent(*b);
    if (--b->left == 0) [[unlikely]]
      limit_reached(dest);
  }

  void flush(location_id dest, flush_cause cause);
  bool flush_all(flush_cause cause);
  void flush_urgent();
  void end_bursts();

  // ---- receiving ---------------------------------------------------------

  bool poll_once(bool const* done = nullptr);
  void poll();
  // rmi_poll: a poll of the program's own (the aggregation policy counts
  // those; a progress thread's are not).
  void program_poll() {
    m_policy.note_poll();
    poll();
  }
  void wait_for(bool const& ready, char const* what);
  // Serves requests until pred() holds.  With separate compilation, through a
  // function pointer: the loop is compiled once (<armi/src.hpp>), not per caller.
  template <class Pred>
  void wait_until(Pred&& pred, char const* what = "blocked", bool const* done = nullptr, answer_watch answer = {}) {
#if ARMI_SEPARATE_COMPILATION
    using P = std::remove_reference_t<Pred>;
    wait_until_test(wait_test{&pred, [](void const* p) { return (*static_cast<P const*>(p))(); }}, what, done, answer);
#else
    m_receiver.wait_until(*this, pred, what, done, answer);
#endif
  }
  void wait_for_request();
  void fence();

  // ---- answers in place (answer_cells.hpp) ---------------------------------

  answer_cell* open_answer(location_id dest, std::uint64_t& tag) { return m_answers.open(same_process(dest), tag); }
  void close_answer() { m_answers.close(); }
  void wait_answer(answer_cell const& c, std::uint64_t tag, char const* what);
  answer_cell& answer_cell_for(location_id caller, std::uint64_t tag) { return m_answers.cell_for(caller, tag); }
  // Publishes an answer written into c, after sending the caller what this
  // location has buffered for it (made before the answer).
  void post_answer(location_id caller, answer_cell& c, std::uint64_t tag);

  // ---- used by handlers ----------------------------------------------------

  // The local object a request targets, checked to be a live T; the first
  // request of a handler to an object checks its type, out of line.
  template <class T>
  [[gnu::always_inline]] T* target(request_header const& h, std::uint32_t handler, location_id source) {
    auto* e = m_registry.find(h.handle_index, h.handle_epoch);
    if (e == nullptr) [[unlikely]]
      errors::unknown_handle(m_id, h, handler, source);
    if (e->checked_handler != handler) [[unlikely]]
      check_target_type<T>(*e, h, handler, source);
    if constexpr (requires(p_object* p) { static_cast<T*>(p); })
      return static_cast<T*>(e->object);
    else
      return dynamic_cast<T*>(e->object);
  }

  // target's fast path, which makes no calls: the object when h names a
  // live object by a symmetric handle whose type check for handler is done.
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
      errors::wrong_target_type(m_id, h, source, dynamic_type_name(*e.object), type_name<T>());
    e.checked_handler = handler;
  }

  // Whether the handle names a live object here (stubs that answer reply
  // with an error instead of dying).
  bool has_target(request_header const& h) { return m_registry.find(h.handle_index, h.handle_epoch) != nullptr; }
  std::string unknown_handle_message(request_header const& h, std::uint32_t handler, location_id source) const {
    return errors::unknown_handle_message(m_id, h, handler, source);
  }

  // ---- collectives mailbox (collective_mailbox.hpp) -------------------------

  using collective_key = collective_mailbox::key;
  using collective_message = collective_mailbox::message;
  collective_mailbox& collectives() { return m_mailbox; }

  // ---- used by run_fn handlers ---------------------------------------------

  void executed_one(rmi_kind kind) { ++m_stats.executed[static_cast<std::size_t>(kind)]; }
  // The registry's count of removed objects (a run's targets stay live while
  // it stays the same).
  std::uint64_t registry_removals() const { return m_registry.removals(); }
  [[gnu::always_inline]] bool next_in_run(run_state& st, request_header& h, std::byte const*& payload, bool& repeat) {
    return m_receiver.next_in_run(st, h, payload, repeat);
  }

  // ---- the components, for one another (outbox, dispatcher, fence) ----------

  transport& transport_of() { return m_transport; }
  location_stats& mutable_stats() { return m_stats; }
  diagnostics& diag() { return m_diag; }
  outbox& outgoing() { return m_outbox; }
  dispatcher& receiver() { return m_receiver; }
  fence_state& fences() { return m_fence; }
  method_identity& identity() { return m_identity; }
  std::uint32_t epoch() const { return m_fence.epoch(); }
  void throttle();

 private:
  // slots: the locations this one keeps a buffer for (partners and itself).
  static aggregation_setup policy_setup(transport& tr, location_id id, config const& cfg, std::size_t slots) {
    aggregation_setup s;
    s.size = tr.size();
    s.local_first = tr.process_first(id);
    s.local_count = tr.process_locations();
    s.factor_local = cfg.aggregation_local != 0 ? cfg.aggregation_local : cfg.aggregation;
    s.factor_remote = cfg.aggregation_remote != 0 ? cfg.aggregation_remote : cfg.aggregation;
    s.bytes_local = cfg.buffer_bytes;
    s.bytes_remote = !cfg.buffer_bytes_given && tr.remote_buffer_bytes() != 0 ? tr.remote_buffer_bytes()
                                                                             : cfg.buffer_bytes;
    if (!cfg.buffer_bytes_given) {
      std::size_t const shared = shared_byte_cap(tr.process_locations(), slots);
      s.bytes_local = std::min(s.bytes_local, shared);
      s.bytes_remote = std::min(s.bytes_remote, shared);
    }
    s.max_delay_ns = cfg.max_delay_ns;
    s.modeled = tr.modeled_messages();
    for (location_id d = 0; d < s.size; ++d) s.cheap.push_back(tr.shares_memory(id, d));
    return s;
  }

  // The paths of --armi-routing: none, the square grid, or rows of nodes.
  static route_grid routes_of(transport const& tr, config const& cfg) {
    if (cfg.routing == "grid") return route_grid::square(tr.size());
    if (cfg.routing != "node" || !tr.layered()) return route_grid::direct(tr.size());
    std::vector<std::uint32_t> node(tr.size());
    for (location_id l = 0; l < tr.size(); ++l) node[l] = tr.node_of(l);
    return route_grid::of_rows(node);
  }

  // A wait's condition, by address: the argument of the one compiled wait loop.
  struct wait_test {
    void const* state;
    bool (*holds)(void const*);
    bool operator()() const { return holds(state); }
  };
  void wait_until_test(wait_test test, char const* what, bool const* done, answer_watch answer);

  void limit_reached(location_id dest);
  void wait_for_loans();
  void send_apart(location_id dest);
  // A lent record is read only in a buffer sent from this process (by its
  // sender, not only the lender it names); a range sent apart only from
  // another process.
  bool accepts(std::uint32_t lender) const override {
    return same_process(lender) && same_process(m_receiver.running_source());
  }
  void give_back(std::uint32_t lender, std::atomic<std::uint32_t>& returned) noexcept override {
    m_transport.post_return(m_id, lender, returned);
  }
  std::byte const* receive_apart(std::uint64_t tag, std::size_t bytes) override {
    location_id const source = m_receiver.running_source();
    return same_process(source) ? nullptr : m_transport.receive_apart(m_id, source, tag, bytes);
  }
  void release_apart(std::byte const* range) noexcept override {
    m_transport.release_apart(m_id, range);
  }

  transport& m_transport;
  location_id m_id;
  location_id m_size;
  location_id m_local_first;
  location_id m_local_count;
  std::size_t m_max_record_remote;  // the largest request to another process (to this one's: max_record_bytes)
  location_stats m_stats;
  route_grid m_routes;  // --armi-routing's paths (the outbox's)
  std::size_t m_partners;  // the locations it sends buffers to (O(P) to count: counted once)
  aggregation_policy m_policy;
  flow_control m_flow;
  outbox m_outbox;
  dispatcher m_receiver;
  fence_state m_fence;
  method_identity m_identity;
  answer_cells m_answers;
  diagnostics m_diag;
  object_registry m_registry;
  reply_slots m_replies;
  collective_mailbox m_mailbox;
  std::shared_ptr<world_members const> m_world;  // see world()
  bool m_progress_thread;
  progress_claim m_claim;
  // Views lent, and (written by their receivers or the transport, on a line
  // of its own) those given back.
  std::uint32_t m_loans = 0;
  alignas(64) std::atomic<std::uint32_t> m_loans_returned{0};
  lend_context const m_lending;  // by reference
  lend_context m_sending_apart;  // sent apart, the request's ranges in m_lent_ranges
  std::vector<lent_range> m_lent_ranges;
};

// The location of the calling thread; throws outside armi::execute.  Inline:
// every RMI starts here (a TLS load and a test); the throw is out of line.
inline location& current(char const* what) {
  location* l = t_location;
  if (l == nullptr) [[unlikely]]
    errors::outside_execute(what);
  return *l;
}

#if ARMI_RUNTIME_BODIES  // (see the top of this file)
ARMI_DECL location::~location() {
  m_flow.ask_service(false);  // every ask the transport saw ends
  for (buffer* b : m_receiver.ready()) m_outbox.delete_if_mine(b);
  for (buffer* b : m_fence.held()) m_outbox.delete_if_mine(b);
}
ARMI_DECL void location::set_aggregation(std::size_t local, std::size_t remote) {
  m_policy.set_factors(local, remote);
  m_outbox.refactor(*this);
}
ARMI_DECL void location::flush(location_id dest, flush_cause cause) { m_outbox.flush(*this, dest, cause); }
ARMI_DECL bool location::flush_all(flush_cause cause) { return m_outbox.flush_all(*this, cause); }
ARMI_DECL void location::flush_urgent() { m_outbox.flush_urgent(*this); }
ARMI_DECL void location::end_bursts() {
  m_policy.end_bursts([this](location_id d) { return m_outbox.open_buffer_of(d); });
}
ARMI_DECL bool location::poll_once(bool const* done) { return m_receiver.poll_once(*this, done); }
ARMI_DECL void location::poll() { m_receiver.poll(*this); }
ARMI_DECL void location::wait_for(bool const& ready, char const* what) {
  wait_until([&ready] { return ready; }, what, &ready);
}
ARMI_DECL void location::wait_until_test(wait_test test, char const* what, bool const* done, answer_watch answer) {
  m_receiver.wait_until(*this, test, what, done, answer);
}
ARMI_DECL void location::wait_for_request() { m_receiver.wait_for_request(*this); }
ARMI_DECL void location::send_apart(location_id dest) {
  for (lent_range const& r : m_lent_ranges) {
    std::uint64_t const tag = m_transport.send_apart(m_id, dest, r.from, r.bytes, m_loans_returned);
    std::memcpy(r.tag_at, &tag, sizeof tag);
    m_stats.bytes_sent += r.bytes;  // bytes on the wire, if not in a buffer
  }
  m_lent_ranges.clear();
}

ARMI_DECL void location::wait_for_loans() {
  flush_all(flush_cause::flush);  // the requests that carry them leave first
  // Loans taken while waiting (by the requests it serves) are waited for too.
  for (std::uint32_t lent = m_loans; m_loans_returned.load(std::memory_order_seq_cst) != lent; lent = m_loans) {
    answer_watch const watch{&m_loans_returned, lent};
    wait_until([&watch] { return watch.answered(); }, "views lent with armi::lend to be read", nullptr, watch);
    flush_all(flush_cause::flush);
  }
}
ARMI_DECL void location::fence() { m_fence.fence(*this); }
ARMI_DECL void location::wait_answer(answer_cell const& c, std::uint64_t tag, char const* what) {
  answer_watch const watch = answer_cells::watch(c, tag);
  wait_until([&watch] { return watch.answered(); }, what, nullptr, watch);
}
ARMI_DECL void location::post_answer(location_id caller, answer_cell& c, std::uint64_t tag) {
  flush(caller, flush_cause::urgent);
  m_transport.post_answer(m_id, caller, c.answered, answer_number(tag));
}
ARMI_DECL void location::throttle() {
  m_flow.throttle(
      m_diag.timing(), [this](auto&& pred) { wait_until(pred, "flow control"); },
      [this] { m_outbox.reclaim_all(); });
}
[[gnu::noinline]] ARMI_DECL buffer* location::make_room(location_id dest, std::size_t need) {
  return m_outbox.make_room(*this, dest, need);
}
[[gnu::noinline]] ARMI_DECL void location::limit_reached(location_id dest) { m_outbox.limit_reached(*this, dest); }
#endif  // ARMI_RUNTIME_BODIES

}  // namespace armi::detail
