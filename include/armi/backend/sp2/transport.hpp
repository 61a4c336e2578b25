// The sp2 backend's transport: armi on the emulated SP2.  One location per
// node; each node is treated as a process of its own (process_first(self) ==
// self), so method indices travel as define requests with their check word
// and every id from the wire is validated exactly as on the mpi backend.
//
// An aggregated armi buffer becomes one AM bulk message (a 16-byte frame --
// source, fence epoch, request count, byte count -- then the buffer's bytes),
// which SP-AM fragments into packets and reassembles.  Its handler only
// queues the arrived buffer; armi runs the requests later, outside every AM
// handler, so AM handler atomicity and armi's own ordering both hold.  The
// sender's buffer is free as soon as its bytes are in the send queue.
//
// The fence's sum is a gather to node 0 and a broadcast back, both AM bulk
// messages, so it costs emulated time like any other traffic.
//
// One-sided operations on global arrays (core/remote_memory.hpp) are SP-AM
// messages of their own, as Split-C's global pointers are on SP-AM: a short
// request when the operation fits in 16 bytes (a get, or an 8-byte put or
// add), a bulk one otherwise; the owner's handler applies it to the exposed
// block at once and replies with the result (short or bulk), or with an
// error the caller's future throws.  No runtime runs at the owner.  The
// caller matches results to operations in order per owner (handlers run and
// reply in arrival order) and completes them in receive(), outside the
// handlers.
//
// Thread safety: one transport per node, used by that node's location thread
// only (each passes its own id as self).
#pragma once

#include <armi/backend/sp2/am.hpp>
#include <armi/core/collective_tree.hpp>
#include <armi/core/config.hpp>
#include <armi/core/error.hpp>
#include <armi/core/transport.hpp>

#include <cstdint>
#include <cstring>
#include <deque>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace armi::detail {

class sp2_transport final : public transport {
 public:
  // AM handler ids, the same on every node.
  static constexpr std::uint8_t armi_buffer_handler = 1;
  static constexpr std::uint8_t sum_handler = 2;
  static constexpr std::uint8_t sum_result_handler = 3;
  static constexpr std::uint8_t remote_handler = 4;
  static constexpr std::uint8_t remote_result_handler = 5;
  static constexpr std::uint8_t remote_error_handler = 6;

  // oversubscribed: more nodes than processors (wait less before sleeping).
  // The fence's sums travel over the tree of the nodes with tree_arity
  // children per node (core/collective_tree.hpp, --armi-tree-arity).
  sp2_transport(sp2::node& node, bool oversubscribed, std::uint32_t tree_arity)
      : m_node(node), m_tree(tree_links_of(node.id(), node.nodes(), tree_arity)) {
    m_spins = oversubscribed ? 16 : 2000;
    m_yields = oversubscribed ? 2 : 16;
    m_polls_before_yield = oversubscribed ? 16 : 4096;
    m_node.set_handler(armi_buffer_handler,
                       [this](sp2::call& c, std::byte const* d, std::size_t n) { on_buffer(c.source(), d, n); });
    m_node.set_handler(sum_handler, [this](sp2::call& c, std::byte const* d, std::size_t n) { on_sum(c, d, n); });
    m_node.set_handler(sum_result_handler,
                       [this](sp2::call& c, std::byte const* d, std::size_t n) { on_sum_result(c, d, n); });
    m_node.set_handler(remote_handler, [this](sp2::call& c, std::byte const* d, std::size_t n) { on_remote(c, d, n); });
    m_node.set_handler(remote_result_handler,
                       [this](sp2::call& c, std::byte const* d, std::size_t n) { on_remote_result(c, d, n, false); });
    m_node.set_handler(remote_error_handler,
                       [this](sp2::call& c, std::byte const* d, std::size_t n) { on_remote_result(c, d, n, true); });
  }
  sp2_transport(sp2_transport const&) = delete;
  sp2_transport& operator=(sp2_transport const&) = delete;

  ~sp2_transport() override {
    for (buffer* b : m_done) delete b;
    for (buffer* b : m_arrived) delete b;
    for (buffer* b : m_pool) delete b;
  }

  sp2::node& node() { return m_node; }

  location_id size() const override { return m_node.nodes(); }
  location_id process_first(location_id self) const override { return self; }
  location_id process_locations() const override { return 1; }
  // A message counts its bytes (the buffer's and its frame's) in 32 bits.
  std::size_t max_message_bytes() const override { return UINT32_MAX - sizeof(frame); }
  // A buffer is one AM bulk message: its fixed cost on the emulated clock,
  // and the packets a peer's receive queue holds before the sender must wait
  // for acknowledgements.
  message_model modeled_messages() const override {
    sp2::machine const& m = m_node.config();
    return {m.cost.one_way_ns(0, true), std::size_t{m.recv_queue} * m.payload_bytes()};
  }

  send_path send(location_id dest, buffer* b) override {
    frame const f{b->source, b->epoch, b->count, static_cast<std::uint32_t>(b->size)};
    m_node.store(dest, armi_buffer_handler, &f, sizeof f, b->data.get(), b->size);
    m_done.push_back(b);  // its bytes are in the send queue
    return send_path::message;
  }

  buffer* receive(location_id) override {
    if (m_arrived.empty()) m_node.poll();
    finish_sum();
    finish_remote();
    if (m_arrived.empty()) return nullptr;
    buffer* b = m_arrived.front();
    m_arrived.pop_front();
    return b;
  }

  void release(location_id, buffer* first, buffer* last) override {
    for (buffer* b = first;; b = static_cast<buffer*>(b->next.load(std::memory_order_relaxed))) {
      m_pool.push_back(b);
      if (b == last) break;
    }
  }

  buffer* reclaim(location_id) override {
    if (m_done.empty()) return nullptr;
    buffer* b = m_done.back();
    m_done.pop_back();
    return b;
  }

  std::uint32_t wake_token(location_id) const override { return m_node.wait_token(); }

  // Serves the network while it waits: acknowledgements and re-sends must go
  // out even when the location has nothing to do.
  bool idle_wait(location_id, std::uint32_t token, answer_watch) override {
    auto happened = [&] {
      if (m_node.work_waiting()) {
        m_node.poll();
        finish_sum();
      }
      if (m_fresh_result) {
        m_fresh_result = false;
        return true;
      }
      return !m_arrived.empty() || !m_remote_done.empty();
    };
    if (m_node.poll()) {
      finish_sum();
      return false;
    }
    if (happened()) return false;
    for (unsigned i = 0; i < m_spins; ++i) {
      if (happened()) return false;
      ARMI_CPU_RELAX();
    }
    for (unsigned i = 0; i < m_yields; ++i) {
      std::this_thread::yield();
      if (happened()) return false;
    }
    m_node.sleep(token);
    return true;
  }

  std::uint32_t empty_polls_before_yield() const override { return m_polls_before_yield; }
  void serve_network(location_id) override { m_node.poll(); }

  bool remote_memory() const override { return true; }
  void expose_block(location_id, std::uint32_t region, void* base, std::size_t bytes, std::size_t) override {
    if (region >= m_regions.size()) m_regions.resize(std::size_t{region} + 1);
    m_regions[region] = {static_cast<std::byte*>(base), bytes};
  }
  bool withdraw_block(location_id, std::uint32_t region, bool) override {
    if (region < m_regions.size()) m_regions[region] = {};
    return true;  // the handler refuses operations on it from now on
  }
  void start_remote(location_id, location_id owner, remote_op const& op, std::span<std::byte const> operands,
                    remote_completion* done) override {
    std::uint64_t result_bytes = 0;
    if (op.code == remote_code::get) std::memcpy(&result_bytes, operands.data(), sizeof result_bytes);
    result_bytes = remote_result_bytes(op, result_bytes);
    m_message.clear();
    write_remote_header(m_message, op);
    m_message.insert(m_message.end(), operands.begin(), operands.end());
    if (m_message.size() <= sp2::short_message_bytes)
      m_node.request(owner, remote_handler, m_message.data(), m_message.size());
    else
      m_node.store(owner, remote_handler, m_message.data(), m_message.size());
    // Only now: a send that stalls runs handlers, and this operation's
    // result cannot come before its last packet has gone.
    m_in_flight[owner].push_back({done, result_bytes});
  }

  void sum_contribute(location_id, std::uint64_t round, std::uint64_t const (&values)[2]) override {
    add(round, values[0], values[1]);
    finish_sum();
  }
  bool sum_ready(std::uint64_t round) const override { return m_have_result && m_result_round == round; }
  void sum_result(std::uint64_t, std::uint64_t (&values)[2]) const override {
    values[0] = m_result[0];
    values[1] = m_result[1];
  }

 private:
  struct frame {
    std::uint32_t source;
    std::uint32_t epoch;
    std::uint32_t count;
    std::uint32_t bytes;
  };
  static_assert(sizeof(frame) == 16);

  [[noreturn]] void bad(std::uint32_t from, std::string const& why) const {
    fatal_exit("sp2: node " + std::to_string(m_node.id()) + ": malformed message from node " + std::to_string(from) +
               ": " + why + " (not executed)");
  }

  void on_buffer(std::uint32_t from, std::byte const* d, std::size_t n) {
    frame f;
    if (n < sizeof f) bad(from, "an armi buffer shorter than its frame");
    std::memcpy(&f, d, sizeof f);
    if (f.bytes != n - sizeof f)
      bad(from, "an armi buffer announces " + std::to_string(f.bytes) + " bytes and carries " +
                    std::to_string(n - sizeof f));
    if (f.source != from) bad(from, "an armi buffer claims to come from location " + std::to_string(f.source));
    buffer* b = take_pooled(m_pool, f.bytes);
    if (f.bytes != 0) std::memcpy(b->data.get(), d + sizeof f, f.bytes);
    b->size = f.bytes;
    b->count = f.count;
    b->epoch = f.epoch;
    b->source = f.source;
    b->owner = f.source;  // != self: comes back through release()
    b->next.store(nullptr, std::memory_order_relaxed);
    m_arrived.push_back(b);
  }

  // A node adds up its own contribution to a round and its children's ...
  void on_sum(sp2::call& c, std::byte const* d, std::size_t n) {
    std::uint64_t w[3];
    bool const from_child = std::binary_search(m_tree.children.begin(), m_tree.children.end(), c.source());
    if (!from_child || n != sizeof w) bad(c.source(), "a malformed fence sum contribution");
    std::memcpy(w, d, sizeof w);
    if (w[0] != m_next_round && w[0] != m_next_round + 1)
      bad(c.source(), "a fence sum contribution for round " + std::to_string(w[0]) + " while round " +
                          std::to_string(m_next_round) + " is open");
    add(w[0], w[1], w[2]);
  }
  void add(std::uint64_t round, std::uint64_t a, std::uint64_t b) {
    partial& p = m_partial[round & 1];
    p.values[0] += a;
    p.values[1] += b;
    ++p.count;
  }
  // ... and, outside the handlers, sends the subtree's sum to its parent
  // once all are in (the root: the total, down to its children), and passes
  // a total that came down on to its children.
  void finish_sum() {
    if (m_forward) {
      m_forward = false;
      std::uint64_t const words[3] = {m_result_round, m_result[0], m_result[1]};
      for (std::size_t k : m_tree.children)
        m_node.store(static_cast<std::uint32_t>(k), sum_result_handler, words, sizeof words);
    }
    partial& p = m_partial[m_next_round & 1];
    if (p.count != m_tree.children.size() + 1) return;
    std::uint64_t const words[3] = {m_next_round, p.values[0], p.values[1]};
    p = partial{};
    ++m_next_round;
    if (m_tree.parent != tree_links::no_parent) {
      m_node.store(static_cast<std::uint32_t>(m_tree.parent), sum_handler, words, sizeof words);
      return;
    }
    set_result(words);
    finish_sum();  // down to the children
  }
  void on_sum_result(sp2::call& c, std::byte const* d, std::size_t n) {
    std::uint64_t w[3];
    if (c.source() != m_tree.parent || n != sizeof w) bad(c.source(), "a malformed fence sum result");
    std::memcpy(w, d, sizeof w);
    set_result(w);
  }
  void set_result(std::uint64_t const (&w)[3]) {
    m_result_round = w[0];
    m_result[0] = w[1];
    m_result[1] = w[2];
    m_have_result = true;
    m_fresh_result = true;
    m_forward = !m_tree.children.empty();
  }

  struct partial {
    std::uint64_t values[2] = {0, 0};
    std::uint32_t count = 0;
  };

  // The owner's end of a one-sided operation: apply it, reply with the
  // result.  A malformed one ends the run; one this block cannot serve (the
  // array is gone here, or its block is smaller) goes back as an error for
  // the caller's future, as a request's would: a type, a tab, the message.
  void on_remote(sp2::call& c, std::byte const* d, std::size_t n) {
    if (!c.is_request()) bad(c.source(), "a one-sided operation sent as a reply");
    remote_op op{};
    std::size_t header = 0;
    std::string why = read_remote_header({d, n}, op, header);
    if (!why.empty()) bad(c.source(), why);
    std::string type;
    if (op.region >= m_regions.size() || m_regions[op.region].base == nullptr) {
      type = "armi::unknown_handle";
      why = "location " + std::to_string(m_node.id()) + ": a one-sided operation from location " +
            std::to_string(c.source()) + " on the global_array with handle index " + std::to_string(op.region) +
            ", which has no block here: was it destroyed before an rmi_fence, or never constructed here?";
    } else {
      region const& r = m_regions[op.region];
      switch (apply_remote(op, r.base, r.bytes, d + header, n - header, m_reply, why)) {
        case remote_outcome::applied: c.reply(remote_result_handler, m_reply.data(), m_reply.size()); return;
        case remote_outcome::malformed: bad(c.source(), why);
        case remote_outcome::out_of_range:
          type = "std::out_of_range";
          why = "location " + std::to_string(m_node.id()) + ": " + why;
      }
    }
    std::string const text = type + '\t' + why;
    c.reply(remote_error_handler, text.data(), text.size());
  }
  // The caller's end: the result (or error) of the oldest operation in
  // flight to the sender, kept until receive() completes it.
  void on_remote_result(sp2::call& c, std::byte const* d, std::size_t n, bool error) {
    auto it = m_in_flight.find(c.source());
    if (c.is_request() || it == m_in_flight.end() || it->second.empty())
      bad(c.source(), "a one-sided result for no operation in flight");
    in_flight const op = it->second.front();
    if (!error && n != op.result_bytes)
      bad(c.source(), "a one-sided result of " + std::to_string(n) + " bytes where " +
                          std::to_string(op.result_bytes) + " are due");
    it->second.pop_front();
    if (it->second.empty()) m_in_flight.erase(it);
    m_remote_done.push_back({op.done, c.source(), error, std::vector<std::byte>(d, d + n)});
  }
  // Completes the operations whose results have come (their continuations
  // may send, and even wait: each is taken off the queue first).
  void finish_remote() {
    while (!m_remote_done.empty()) {
      remote_done r = std::move(m_remote_done.front());
      m_remote_done.pop_front();
      if (!r.error) {
        r.done->done(r.result);
        continue;
      }
      std::string const text(reinterpret_cast<char const*>(r.result.data()), r.result.size());
      std::size_t const tab = text.find('\t');
      if (tab == std::string::npos) bad(r.owner, "a one-sided error without its type");
      r.done->failed(text.substr(0, tab), text.substr(tab + 1), r.owner);
    }
  }

  struct region {
    std::byte* base = nullptr;
    std::size_t bytes = 0;
  };
  struct in_flight {
    remote_completion* done;
    std::uint64_t result_bytes;
  };
  struct remote_done {
    remote_completion* done;
    std::uint32_t owner;
    bool error;                     // result holds the owner's error text
    std::vector<std::byte> result;
  };

  sp2::node& m_node;
  unsigned m_spins = 2000;
  unsigned m_yields = 16;
  std::uint32_t m_polls_before_yield = 4096;
  std::vector<buffer*> m_done;     // ours, sent: back to the location through reclaim
  std::deque<buffer*> m_arrived;   // arrived, not yet handed to the location
  std::vector<buffer*> m_pool;     // released arrivals, for reuse
  tree_links m_tree;               // this node's place in the fence's tree
  partial m_partial[2];            // own and children's contributions by round parity
  std::uint64_t m_next_round = 0;  // the round being summed here
  bool m_have_result = false;
  bool m_fresh_result = false;  // a result came in since idle_wait last looked
  bool m_forward = false;       // a result to pass on to the children
  std::uint64_t m_result_round = 0;
  std::uint64_t m_result[2] = {0, 0};
  std::vector<region> m_regions;  // this node's exposed blocks, by array
  std::unordered_map<std::uint32_t, std::deque<in_flight>> m_in_flight;  // by owner, oldest first
  std::deque<remote_done> m_remote_done;  // results in, not yet completed
  std::vector<std::byte> m_message;       // an operation being sent
  std::vector<std::byte> m_reply;         // a result being sent back
};

}  // namespace armi::detail
