// SP-AM, the Active Messages layer of the IBM SP2 as the MRPC paper
// describes it (mrpc.txt §4.1), one node's end of it.
//
// Messages: a short request carries up to 16 bytes (4 words) in one packet; a
// bulk (store) message any number of bytes, fragmented into packets of
// machine::packet_bytes (header included) and reassembled at the receiver.
// A message names a handler by a small id, validated on arrival against the
// node's handler table; the handler runs when the whole message is there, on
// the receiving node's thread inside poll(), atomically with respect to every
// other arrival (handlers never nest).  A request handler may send one reply
// to the requester; a reply handler may send nothing.
//
// Reliability over an unreliable wire: link.hpp.  Fault injection: faults.hpp.
//
// A sender whose send queue is full stalls: it polls (acknowledgements,
// arrivals; top-level sends also run handlers, so two stalled nodes keep
// draining each other) until an entry frees.  It never drops a message.
// Replies sent from inside a handler use reserved entries and never stall
// (a handler must not block).
//
// Thread safety: a node is used by one thread at a time (its owner); the wire
// is the only shared part.
#pragma once

#include <armi/backend/sp2/call.hpp>
#include <armi/backend/sp2/faults.hpp>
#include <armi/backend/sp2/link.hpp>
#include <armi/backend/sp2/model.hpp>
#include <armi/backend/sp2/node_stats.hpp>
#include <armi/backend/sp2/packet.hpp>
#include <armi/backend/sp2/wire.hpp>
#include <armi/core/error.hpp>
#include <armi/core/send_stall.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace armi::detail::sp2 {

class node {
 public:
  static constexpr std::size_t max_handlers = 256;

  node(std::uint32_t id, wire& w, machine const& m)
      : m_id(id), m_n(w.nodes()), m_wire(w), m_machine(m), m_links(w.nodes()) {
    if (m.packet_bytes <= header_bytes + short_message_bytes || m.packet_bytes > 65535)
      throw std::invalid_argument("sp2: packet size must be in (" + std::to_string(header_bytes + short_message_bytes) +
                                  ", 65535] bytes");
    if (m.send_queue == 0 || m.recv_queue == 0) throw std::invalid_argument("sp2: queue sizes must be at least 1");
    if (m_n > 65535) throw std::invalid_argument("sp2: at most 65535 nodes");
    m_handlers.resize(max_handlers);
  }
  node(node const&) = delete;
  node& operator=(node const&) = delete;

  std::uint32_t id() const { return m_id; }
  std::uint32_t nodes() const { return m_n; }
  machine const& config() const { return m_machine; }
  std::int64_t clock_ns() const { return m_clock; }
  node_stats stats() const {
    node_stats s = m_stats;
    s.emulated_ns = m_clock;
    s.peers = m_talking.size();
    return s;
  }

  void set_handler(std::uint8_t id, handler h) { m_handlers[id] = std::move(h); }

  // A short request (at most 16 bytes) to dst's handler h.
  void request(std::uint32_t dst, std::uint8_t h, void const* data, std::size_t n) {
    if (n > short_message_bytes)
      throw std::invalid_argument("sp2: a short request carries at most 16 bytes; use store() for " +
                                  std::to_string(n));
    top_level_send("request");
    send_message(dst, h, 0, as_bytes(data), n, nullptr, 0);
  }
  // A bulk message: head (n1 bytes) followed by tail (n2 bytes), fragmented.
  void store(std::uint32_t dst, std::uint8_t h, void const* head, std::size_t n1, void const* tail = nullptr,
             std::size_t n2 = 0) {
    top_level_send("store");
    send_message(dst, h, flag_bulk, as_bytes(head), n1, as_bytes(tail), n2);
  }

  // Serves the network: takes in arrived packets, re-sends what was lost,
  // acknowledges, then runs the handlers of complete messages.  True if
  // anything happened.  Not from inside a handler.
  bool poll() {
    if (m_depth != 0) fatal_exit("sp2: node " + std::to_string(m_id) + ": poll() called inside an AM handler");
    bool const a = pump();
    bool const b = dispatch();
    return a || b;
  }

  // For an idle owner: read a token, look for work (poll), then sleep(token).
  std::uint32_t wait_token() const { return m_wire.wait_token(m_id); }
  bool work_waiting() const { return m_wire.maybe_waiting(m_id) || !m_held.empty(); }
  // Sleeps until a packet may have arrived (or the retransmission timer is
  // due).  Held (delayed) packets go out first.
  void sleep(std::uint32_t token) {
    release_held();
    if (m_wire.maybe_waiting(m_id)) return;
    m_wire.wait(m_id, token, std::chrono::microseconds(m_unacked_total != 0 ? 2000 : 10000));
  }

  // Nothing of ours is unacknowledged, held back or waiting to be
  // acknowledged: this node's part of the network is at rest.
  bool quiescent() const { return m_unacked_total == 0 && m_held.empty() && m_pending.empty(); }
  // The end of the run across the wire (drain()).
  void declare_at_rest() { m_wire.declare_at_rest(m_id); }
  bool everyone_at_rest() const { return m_wire.all_at_rest(m_id); }

  // Spins, yields, then sleeps until something arrives; for loops that wait
  // on a condition only the network can change.
  void wait_a_little(unsigned& idle) {
    std::uint32_t const token = wait_token();
    if (work_waiting()) {
      idle = 0;
      return;
    }
    ++idle;
    if (idle < 16) return;
    if (idle < 20) {
      std::this_thread::yield();
      return;
    }
    sleep(token);
  }

 private:
  friend class call;

  link& peer(std::uint32_t p) {
    std::unique_ptr<link>& l = m_links[p];
    if (!l) [[unlikely]] {
      l = std::make_unique<link>();
      l->rx.advertised = l->tx.window = 1 + m_machine.recv_queue;
      m_talking.push_back(p);
    }
    return *l;
  }
  tx_link& tx(std::uint32_t p) { return peer(p).tx; }
  rx_link& rx(std::uint32_t p) { return peer(p).rx; }

  static std::byte const* as_bytes(void const* p) { return static_cast<std::byte const*>(p); }

  // ---- faults --------------------------------------------------------------

  enum class fate { sent, lost };

  // Puts one transmission on the wire, subject to fault injection.
  fate transmit(std::uint32_t dst, std::vector<std::byte>& bytes, std::uint32_t seq, std::uint32_t attempt,
                bool control) {
    ++m_stats.packets_sent;
    m_stats.bytes_sent += bytes.size();
    fault_rates const& f = m_machine.faults;
    if (f.any()) {
      std::uint32_t const what = control ? 0x100 : 0;
      if (f.drop > 0 && fault_draw(m_machine.faults.seed, m_id, dst, seq, attempt, what + 1) < f.drop) {
        ++m_stats.dropped;
        return fate::lost;
      }
      if (f.delay > 0 && fault_draw(m_machine.faults.seed, m_id, dst, seq, attempt, what + 2) < f.delay) {
        ++m_stats.delayed;
        held h{dst, bytes};
        if (!control) {
          packet_header ph;
          std::memcpy(&ph, h.bytes.data(), sizeof ph);
          ph.stamp += m_machine.cost.delay_ns;
          seal(ph);
          std::memcpy(h.bytes.data(), &ph, sizeof ph);
        }
        m_held.push_back(std::move(h));
        return fate::sent;
      }
      if (f.duplicate > 0 && fault_draw(m_machine.faults.seed, m_id, dst, seq, attempt, what + 3) < f.duplicate) {
        ++m_stats.duplicated;
        m_wire.put(dst, bytes.data(), bytes.size());
      }
    }
    m_wire.put(dst, bytes.data(), bytes.size());
    return fate::sent;
  }

  void release_held() {
    if (m_held.empty()) return;
    std::vector<held> out;
    out.swap(m_held);
    for (auto& h : out) m_wire.put(h.dst, h.bytes.data(), h.bytes.size());
  }

  // ---- sending -------------------------------------------------------------

  void top_level_send(char const* what) const {
    if (m_depth != 0)
      fatal_exit("sp2: node " + std::to_string(m_id) + ": " + what +
                 "() called inside an AM handler (a handler may only reply)");
  }

  void check_peer(std::uint32_t dst) const {
    if (dst >= m_n || dst == m_id)
      throw std::invalid_argument("sp2: node " + std::to_string(m_id) + " cannot send to node " + std::to_string(dst) +
                                  " (" + std::to_string(m_n) + " nodes; a node does not send to itself)");
  }

  void send_message(std::uint32_t dst, std::uint8_t h, std::uint8_t flags, std::byte const* head, std::size_t n1,
                    std::byte const* tail, std::size_t n2) {
    check_peer(dst);
    std::size_t const total = n1 + n2;
    if (total > UINT32_MAX) throw std::invalid_argument("sp2: message of more than 4 GiB");
    if (m_depth != 0) flags |= flag_reply;
    if (flags & flag_bulk) m_clock += m_machine.cost.bulk_overhead_ns;
    std::uint32_t const room = m_machine.payload_bytes();
    std::size_t offset = 0;
    do {
      wait_for_send_entry();
      std::size_t const len = std::min<std::size_t>(room, total - offset);
      tx_link& link = tx(dst);
      tx_entry e;
      e.seq = link.next_seq++;
      e.bytes.resize(header_bytes + len);
      packet_header ph;
      ph.src = static_cast<std::uint16_t>(m_id);
      ph.dst = static_cast<std::uint16_t>(dst);
      ph.seq = e.seq;
      ph.kind = packet_kind::data;
      ph.handler = h;
      ph.flags = flags;
      if (offset == 0) ph.flags |= flag_first;
      if (offset + len == total) ph.flags |= flag_last;
      ph.length = static_cast<std::uint16_t>(len);
      ph.message_bytes = static_cast<std::uint32_t>(total);
      // Gather the fragment from head and tail.
      std::byte* out = e.bytes.data() + header_bytes;
      for (std::size_t i = offset; i < offset + len;) {
        if (i < n1) {
          std::size_t const k = std::min(n1 - i, offset + len - i);
          std::memcpy(out, head + i, k);
          out += k;
          i += k;
        } else {
          std::size_t const k = offset + len - i;
          std::memcpy(out, tail + (i - n1), k);
          out += k;
          i += k;
        }
      }
      m_clock += m_machine.cost.send_overhead_ns + static_cast<std::int64_t>(e.bytes.size()) * m_machine.cost.gap_ns_per_byte;
      e.stamp = m_clock + m_machine.cost.latency_ns;
      ph.stamp = e.stamp;
      std::memcpy(e.bytes.data(), &ph, sizeof ph);
      ++m_stats.data_packets;
      link.unacked.push_back(std::move(e));
      ++m_unacked_total;
      send_entry(dst, link.unacked.back());
      offset += len;
    } while (offset < total);
    ++m_stats.messages_sent;
  }

  // (Re)transmits an entry with the current acknowledgement and window.
  void send_entry(std::uint32_t dst, tx_entry& e) {
    packet_header ph;
    std::memcpy(&ph, e.bytes.data(), sizeof ph);
    rx_link& r = rx(dst);
    ph.ack = r.expected;
    ph.window = r.advertised = r.consumed + m_machine.recv_queue;
    ph.stamp = e.stamp;
    seal(ph);
    std::memcpy(e.bytes.data(), &ph, sizeof ph);
    r.ack_pending = false;  // piggybacked
    e.sent = std::chrono::steady_clock::now();
    if (transmit(dst, e.bytes, e.seq, e.attempts++, false) == fate::lost && !e.lost) {
      e.lost = true;
      ++tx(dst).resend_count;
      note_pending(dst);
    }
  }

  void wait_for_send_entry() {
    if (m_unacked_total < m_machine.send_queue || m_depth != 0) return;
    ++m_stats.stalls;
    unsigned idle = 0;
    while (m_unacked_total >= m_machine.send_queue) {
      bool const a = pump();
      bool const b = dispatch();
      if (a || b) {
        idle = 0;
        continue;
      }
      // On the communication thread the receiver may be a location it
      // holds: let those acknowledge (core/send_stall.hpp).
      if (t_send_stall != nullptr) t_send_stall->serve_others(t_send_stall->self);
      wait_a_little(idle);
    }
  }

  void send_control(std::uint32_t dst, packet_kind kind, std::uint32_t seq) {
    rx_link& r = rx(dst);
    packet_header ph;
    ph.src = static_cast<std::uint16_t>(m_id);
    ph.dst = static_cast<std::uint16_t>(dst);
    ph.kind = kind;
    ph.seq = seq;
    ph.ack = r.expected;
    ph.window = r.advertised = r.consumed + m_machine.recv_queue;
    seal(ph);
    std::vector<std::byte> bytes(sizeof ph);
    std::memcpy(bytes.data(), &ph, sizeof ph);
    std::uint32_t const count = ++tx(dst).control_count;
    if (transmit(dst, bytes, count, 0, true) == fate::lost) {
      // Send it again at the next poll (what the peer's timer would cause).
      if (kind == packet_kind::nack)
        r.nack_from = r.nack_from == 0 ? seq : std::min(r.nack_from, seq);
      else
        r.ack_pending = true;
      note_pending(dst);
    }
  }

  void note_pending(std::uint32_t peer) {
    if (std::find(m_pending.begin(), m_pending.end(), peer) == m_pending.end()) m_pending.push_back(peer);
  }

  // ---- receiving -----------------------------------------------------------

  bool pump() {
    bool progress = false;
    while (m_wire.take(m_id, m_in)) {
      progress = true;
      on_packet();
    }
    // Backstop timer: anything unacknowledged for a long time goes again.
    if (m_unacked_total != 0 && ++m_timer_polls >= 64) {
      m_timer_polls = 0;
      auto const now = std::chrono::steady_clock::now();
      for (std::uint32_t p : m_talking) {
        tx_link& link = m_links[p]->tx;
        if (link.unacked.empty() || now - link.unacked.front().sent < backstop_timeout) continue;
        for (auto& e : link.unacked)
          if (!e.lost && !e.nacked && now - e.sent >= backstop_timeout) {
            e.nacked = true;
            ++link.resend_count;
            ++m_stats.timeouts;
          }
        note_pending(p);
      }
    }
    if (!m_pending.empty()) {
      std::vector<std::uint32_t> peers;
      peers.swap(m_pending);
      for (std::uint32_t p : peers) {
        tx_link& link = tx(p);
        if (link.resend_count != 0) {
          for (auto& e : link.unacked) {
            if (!e.lost && !e.nacked) continue;
            if (e.seq >= link.window) {  // the receiver has no room yet
              note_pending(p);
              continue;
            }
            ++m_stats.retransmissions;
            progress = true;
            m_clock += m_machine.cost.send_overhead_ns +
                       static_cast<std::int64_t>(e.bytes.size()) * m_machine.cost.gap_ns_per_byte;
            std::int64_t const due = e.lost ? e.stamp + m_machine.cost.retransmit_timeout_ns : e.stamp;
            e.stamp = std::max(due, m_clock + m_machine.cost.latency_ns);
            e.lost = e.nacked = false;
            --link.resend_count;
            send_entry(p, e);
          }
        }
        rx_link& r = rx(p);
        if (r.nack_from != 0) {
          std::uint32_t const from = r.nack_from;
          r.nack_from = 0;
          r.ack_pending = false;
          send_control(p, packet_kind::nack, from);
        }
        if (r.ack_pending) {
          r.ack_pending = false;
          send_control(p, packet_kind::ack, 0);
        }
      }
    }
    release_held();
    return progress;
  }

  [[noreturn]] void corrupt(std::string const& why) const {
    fatal_exit("sp2: node " + std::to_string(m_id) + ": corrupted packet from the wire (" + std::to_string(m_in.size()) +
               " bytes): " + why + " (not acted on)");
  }

  void on_packet() {
    if (m_in.size() < header_bytes || m_in.size() > m_machine.packet_bytes)
      corrupt("size outside [" + std::to_string(header_bytes) + ", " + std::to_string(m_machine.packet_bytes) + "]");
    packet_header ph;
    std::memcpy(&ph, m_in.data(), sizeof ph);
    if (ph.check != check_word(ph)) corrupt("header check word mismatch");
    if (ph.dst != m_id || ph.src >= m_n || ph.src == m_id)
      corrupt("names source " + std::to_string(ph.src) + " and destination " + std::to_string(ph.dst));
    if (header_bytes + std::size_t{ph.length} != m_in.size())
      corrupt("length " + std::to_string(ph.length) + " disagrees with the packet size");
    std::uint32_t const src = ph.src;
    acknowledge(src, ph.ack, ph.window);
    switch (ph.kind) {
      case packet_kind::ack:
        return;
      case packet_kind::nack: {
        tx_link& link = tx(src);
        for (auto& e : link.unacked)
          if (e.seq >= ph.seq && !e.lost && !e.nacked) {
            e.nacked = true;
            ++link.resend_count;
          }
        if (link.resend_count != 0) note_pending(src);
        return;
      }
      case packet_kind::data:
        break;
      default:
        corrupt("unknown packet kind " + std::to_string(static_cast<unsigned>(ph.kind)));
    }
    rx_link& r = rx(src);
    std::uint32_t const q = m_machine.recv_queue;
    if (ph.seq == 0) corrupt("data packet with sequence number 0");
    if (ph.seq >= r.expected && ph.seq >= r.consumed + q) {
      ++m_stats.overflows;
      r.nack_from = r.nack_from == 0 ? ph.seq : std::min(r.nack_from, ph.seq);
      note_pending(src);
      return;
    }
    if (ph.seq >= r.expected) grow_ring(r, ph.seq);
    if (ph.seq < r.expected || r.ring[ph.seq % r.ring.size()].seq == ph.seq) {
      ++m_stats.duplicates;
      r.ack_pending = true;
      note_pending(src);
      return;
    }
    slot& s = r.ring[ph.seq % r.ring.size()];
    s.seq = ph.seq;
    s.bytes.swap(m_in);
    while (r.ring[r.expected % r.ring.size()].seq == r.expected) ++r.expected;
    r.ack_pending = true;
    note_pending(src);
  }

  // Grows r's ring until it has an entry for seq (consumed <= seq < consumed
  // + recv_queue).  The held entries, all in [consumed, consumed + old size),
  // keep distinct places in the larger ring.
  void grow_ring(rx_link& r, std::uint32_t seq) {
    if (seq - r.consumed < r.ring.size()) return;
    std::size_t size = std::max<std::size_t>(r.ring.size(), 4);
    while (seq - r.consumed >= size) size *= 2;
    std::vector<slot> ring(std::min<std::size_t>(size, m_machine.recv_queue));
    for (slot& e : r.ring)
      if (e.seq != 0) ring[e.seq % ring.size()] = std::move(e);
    r.ring.swap(ring);
  }

  void acknowledge(std::uint32_t src, std::uint32_t ack, std::uint32_t window) {
    tx_link& link = tx(src);
    while (!link.unacked.empty() && link.unacked.front().seq < ack) {
      tx_entry const& e = link.unacked.front();
      if (e.lost || e.nacked) --link.resend_count;
      link.unacked.pop_front();
      --m_unacked_total;
    }
    if (window > link.window) {
      link.window = window;
      if (link.resend_count != 0) note_pending(src);
    }
  }

  // Hands complete messages to their handlers, in sequence order per peer.
  bool dispatch() {
    if (m_depth != 0) return false;
    bool progress = false;
    std::uint32_t const q = m_machine.recv_queue;
    std::size_t const talking = m_talking.size();  // a handler may add peers: they wait for the next poll
    if (talking == 0) return false;
    m_next_peer %= talking;
    for (std::size_t k = 0; k < talking; ++k) {
      std::uint32_t const p = m_talking[(m_next_peer + k) % talking];
      rx_link& r = m_links[p]->rx;
      while (r.consumed < r.expected) {
        slot& s = r.ring[r.consumed % r.ring.size()];
        m_packet.swap(s.bytes);
        std::vector<std::byte>().swap(s.bytes);  // an empty entry holds no packet's storage
        s.seq = 0;
        ++r.consumed;
        // The freed entry widens the window; once half the queue has freed
        // since the sender last heard, tell it (it may be waiting to re-send).
        if (r.consumed + q - r.advertised >= std::max<std::uint32_t>(1, q / 2)) {
          r.ack_pending = true;
          note_pending(p);
        }
        progress = true;
        deliver(p);
      }
    }
    m_next_peer = (m_next_peer + 1) % talking;
    return progress;
  }

  void deliver(std::uint32_t src) {
    packet_header ph;
    std::memcpy(&ph, m_packet.data(), sizeof ph);
    m_clock = std::max(m_clock, ph.stamp) + m_machine.cost.recv_overhead_ns;
    rx_link& r = m_links[src]->rx;
    assembly& a = (ph.flags & flag_reply) ? r.replies : r.requests;
    auto from = [src] { return " from node " + std::to_string(src); };
    if (ph.flags & flag_first) {
      if (a.active) corrupt("a new message" + from() + " starts inside another");
      if (ph.handler >= m_handlers.size() || !m_handlers[ph.handler])
        corrupt("unknown AM handler id " + std::to_string(ph.handler) + from());
      a.active = true;
      a.handler = ph.handler;
      a.expected_bytes = ph.message_bytes;
      if (a.data.capacity() == 0) a.data.swap(m_spare);
      a.data.clear();
    } else if (!a.active || a.handler != ph.handler || a.expected_bytes != ph.message_bytes) {
      corrupt("a message fragment" + from() + " belongs to no message in progress");
    }
    a.data.insert(a.data.end(), m_packet.begin() + header_bytes, m_packet.end());
    if (a.data.size() > a.expected_bytes) corrupt("a message" + from() + " runs past its announced size");
    if (!(ph.flags & flag_last)) return;
    if (a.data.size() != a.expected_bytes) corrupt("a message" + from() + " ends before its announced size");
    a.active = false;
    m_clock += m_machine.cost.handler_ns;
    ++m_stats.messages_received;
    std::vector<std::byte> data;
    data.swap(a.data);
    call c(*this, src, !(ph.flags & flag_reply));
    ++m_depth;
    m_handlers[ph.handler](c, data.data(), data.size());
    --m_depth;
    // Keep the largest storage for the node's next message, not per link: a
    // link that is idle holds no message bytes.
    if (m_spare.capacity() < data.capacity()) m_spare.swap(data);
  }

  struct held {
    std::uint32_t dst;
    std::vector<std::byte> bytes;
  };

  static constexpr std::chrono::milliseconds backstop_timeout{250};

  std::uint32_t m_id;
  std::uint32_t m_n;
  wire& m_wire;
  machine m_machine;
  std::vector<std::unique_ptr<link>> m_links;  // by peer; null until the two talk
  std::vector<std::uint32_t> m_talking;         // the peers with a link, in the order they first talked
  std::vector<handler> m_handlers;
  std::vector<held> m_held;
  std::vector<std::uint32_t> m_pending;  // peers with something to re-send or acknowledge
  std::vector<std::byte> m_in;      // the packet being taken in
  std::vector<std::byte> m_packet;  // the packet being delivered
  std::vector<std::byte> m_spare;   // storage for the next message to be assembled
  std::uint32_t m_unacked_total = 0;
  std::uint32_t m_depth = 0;  // inside a handler
  std::size_t m_next_peer = 0;  // where dispatch() starts in m_talking (round robin)
  std::uint32_t m_timer_polls = 0;
  std::int64_t m_clock = 0;
  node_stats m_stats;
};

inline void call::reply(std::uint8_t handler, void const* data, std::size_t n) {
  if (!m_request) fatal_exit("sp2: a reply handler tried to reply (only request handlers may)");
  if (m_replied) fatal_exit("sp2: a request handler replied twice");
  m_replied = true;
  m_node.send_message(m_source, handler, n > short_message_bytes ? flag_bulk : 0, node::as_bytes(data), n, nullptr, 0);
}

}  // namespace armi::detail::sp2
