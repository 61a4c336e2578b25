// The sp2 backend's Active Messages layer on its own (backend/sp2/am.hpp, node_thread.hpp):
// exactly-once, in-order delivery over a lossy wire, fragmentation and
// reassembly, stalls on a full send queue, overflow of a receive queue, the
// emulated clock's calibration, and repeatable fault injection.
#include <armi/backend/sp2/node_thread.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace {

namespace sp2 = armi::detail::sp2;

struct word_pair {
  std::uint32_t source;
  std::uint32_t index;
};

// Runs body(node) on n threads, one node each, then drains the network.
// Returns every node's statistics.
std::vector<sp2::node_stats> run_nodes(std::uint32_t n, sp2::machine const& m,
                                       std::function<void(sp2::node&)> const& setup,
                                       std::function<void(sp2::node&)> const& body) {
  sp2::memory_wire w(n);
  std::vector<std::unique_ptr<sp2::node>> nodes;
  for (std::uint32_t i = 0; i < n; ++i) {
    nodes.push_back(std::make_unique<sp2::node>(i, w, m));
    setup(*nodes.back());
  }
  std::vector<std::thread> threads;
  for (std::uint32_t i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      body(*nodes[i]);
      sp2::drain(*nodes[i]);
    });
  for (auto& t : threads) t.join();
  std::vector<sp2::node_stats> out;
  for (auto& p : nodes) out.push_back(p->stats());
  return out;
}

void poll_until(sp2::node& n, std::function<bool()> const& done) {
  unsigned idle = 0;
  while (!done()) {
    if (n.poll())
      idle = 0;
    else
      n.wait_a_little(idle);
  }
}

// Every node sends `count` numbered short requests to every other node; each
// request is answered.  Receivers check order and count; senders check the
// replies.  Thread-safe bookkeeping: each node's counters are touched only by
// its own thread (handlers run inside its poll).
struct exchange {
  std::uint32_t n;
  std::uint32_t count;
  std::vector<std::vector<std::uint32_t>> next_request;  // [receiver][source]
  std::vector<std::vector<std::uint32_t>> next_reply;    // [requester][replier]
  std::atomic<int> errors{0};

  exchange(std::uint32_t nodes, std::uint32_t c)
      : n(nodes),
        count(c),
        next_request(nodes, std::vector<std::uint32_t>(nodes, 0)),
        next_reply(nodes, std::vector<std::uint32_t>(nodes, 0)) {}

  void setup(sp2::node& node) {
    std::uint32_t const me = node.id();
    node.set_handler(1, [this, me](sp2::call& c, std::byte const* d, std::size_t len) {
      word_pair w{};
      if (len != sizeof w) ++errors;
      std::memcpy(&w, d, sizeof w);
      if (w.source != c.source() || w.index != next_request[me][c.source()]) ++errors;
      ++next_request[me][c.source()];
      c.reply(2, &w, sizeof w);
    });
    node.set_handler(2, [this, me](sp2::call& c, std::byte const* d, std::size_t len) {
      word_pair w{};
      if (len != sizeof w || c.is_request()) ++errors;
      std::memcpy(&w, d, sizeof w);
      if (w.source != me || w.index != next_reply[me][c.source()]) ++errors;
      ++next_reply[me][c.source()];
    });
  }

  void body(sp2::node& node) {
    std::uint32_t const me = node.id();
    for (std::uint32_t i = 0; i < count; ++i)
      for (std::uint32_t d = 0; d < n; ++d) {
        if (d == me) continue;
        word_pair w{me, i};
        node.request(d, 1, &w, sizeof w);
        if (i % 8 == 0) node.poll();
      }
    poll_until(node, [&] {
      for (std::uint32_t d = 0; d < n; ++d)
        if (d != me && (next_request[me][d] != count || next_reply[me][d] != count)) return false;
      return true;
    });
  }

  std::vector<sp2::node_stats> run(sp2::machine const& m) {
    return run_nodes(
        n, m, [this](sp2::node& x) { setup(x); }, [this](sp2::node& x) { body(x); });
  }
};

sp2::node_stats total(std::vector<sp2::node_stats> const& all) {
  sp2::node_stats t;
  for (auto const& s : all) t += s;
  return t;
}

}  // namespace

TEST_CASE("sp2 am: requests and replies arrive exactly once and in order on a perfect wire", "[sp2]") {
  exchange x(4, 500);
  auto const t = total(x.run(sp2::machine{}));
  CHECK(x.errors.load() == 0);
  CHECK(t.messages_received == 2u * 4 * 3 * 500);
  CHECK(t.dropped == 0);
  CHECK(t.duplicated == 0);
  CHECK(t.timeouts == 0);
}

TEST_CASE("sp2 am: exactly once and in order with 10% drop, 5% duplication and delays", "[sp2]") {
  sp2::machine m;
  m.faults = {0.10, 0.05, 0.10, 42};
  exchange x(4, 400);
  auto const t = total(x.run(m));
  CHECK(x.errors.load() == 0);
  CHECK(t.messages_received == 2u * 4 * 3 * 400);
  CHECK(t.dropped > 0);
  CHECK(t.duplicated > 0);
  CHECK(t.delayed > 0);
  CHECK(t.retransmissions >= t.dropped / 2);  // lost data packets are re-sent (lost acks are not)
  CHECK(t.duplicates > 0);
}

namespace {

// Node 0 sends `sizes.size()` bulk messages of the given sizes to node 1, each
// filled with a pattern; node 1 checks them.
struct bulk_check {
  std::vector<std::size_t> sizes;
  std::size_t received = 0;
  std::atomic<int> errors{0};

  static std::byte pattern(std::size_t message, std::size_t i) {
    return static_cast<std::byte>((message * 131 + i * 7 + (i >> 8)) & 0xff);
  }

  std::vector<sp2::node_stats> run(sp2::machine const& m) {
    return run_nodes(
        2, m,
        [this](sp2::node& node) {
          node.set_handler(3, [this](sp2::call&, std::byte const* d, std::size_t len) {
            if (received >= sizes.size() || len != sizes[received]) {
              ++errors;
            } else {
              for (std::size_t i = 0; i < len; ++i)
                if (d[i] != pattern(received, i)) {
                  ++errors;
                  break;
                }
            }
            ++received;
          });
        },
        [this](sp2::node& node) {
          if (node.id() == 0) {
            for (std::size_t k = 0; k < sizes.size(); ++k) {
              std::vector<std::byte> data(sizes[k]);
              for (std::size_t i = 0; i < data.size(); ++i) data[i] = pattern(k, i);
              // Split into head and tail, as the armi transport does.
              std::size_t const h = data.size() / 3;
              node.store(1, 3, data.data(), h, data.data() + h, data.size() - h);
            }
          } else {
            poll_until(node, [this] { return received == sizes.size(); });
          }
        });
  }
};

}  // namespace

TEST_CASE("sp2 am: bulk messages are fragmented into packets and reassembled", "[sp2]") {
  bulk_check b;
  b.sizes = {0, 1, 215, 216, 217, 432, 1000, 40000, 3, 100000};
  sp2::machine m;
  auto const s = b.run(m);
  CHECK(b.errors.load() == 0);
  CHECK(b.received == b.sizes.size());
  std::size_t packets = 0;
  for (auto n : b.sizes) packets += n == 0 ? 1 : (n + m.payload_bytes() - 1) / m.payload_bytes();
  CHECK(s[0].data_packets == packets);

  SECTION("and under faults") {
    bulk_check f;
    f.sizes = b.sizes;
    m.faults = {0.1, 0.05, 0.1, 7};
    f.run(m);
    CHECK(f.errors.load() == 0);
    CHECK(f.received == f.sizes.size());
  }
}

TEST_CASE("sp2 am: a full send queue stalls the sender, a full receive queue loses packets that are re-sent",
          "[sp2]") {
  sp2::machine m;
  m.send_queue = 16;
  m.recv_queue = 4;
  std::atomic<bool> go{false};
  std::size_t received = 0;
  std::atomic<int> errors{0};
  std::uint32_t const count = 3000;
  auto const s = run_nodes(
      2, m,
      [&](sp2::node& node) {
        node.set_handler(1, [&](sp2::call&, std::byte const* d, std::size_t) {
          std::uint32_t v;
          std::memcpy(&v, d, sizeof v);
          if (v != received) ++errors;
          ++received;
        });
      },
      [&](sp2::node& node) {
        if (node.id() == 0) {
          for (std::uint32_t i = 0; i < count; ++i) {
            node.request(1, 1, &i, sizeof i);
            if (i == 10) go = true;
          }
        } else {
          // Let node 0 run into a full send queue before taking anything in.
          while (!go.load()) std::this_thread::yield();
          poll_until(node, [&] { return received == count; });
        }
      });
  CHECK(errors.load() == 0);
  CHECK(received == count);
  CHECK(s[0].stalls > 0);
  CHECK(s[1].overflows > 0);
  CHECK(s[0].retransmissions > 0);
}

namespace {

// Two nodes driven by one thread, alternately: a fully deterministic run.
sp2::node_stats ping_pong(sp2::machine const& m, std::uint32_t rounds, std::size_t bytes, bool bulk,
                          std::int64_t* round_trip_ns = nullptr) {
  sp2::memory_wire w(2);
  sp2::node a(0, w, m), b(1, w, m);
  std::uint32_t replies = 0;
  std::vector<std::byte> payload(bytes, std::byte{1});
  b.set_handler(1, [&](sp2::call& c, std::byte const* d, std::size_t n) { c.reply(2, d, bulk ? n : 4); });
  b.set_handler(4, [&](sp2::call& c, std::byte const*, std::size_t) { c.reply(2, payload.data(), 4); });
  a.set_handler(2, [&](sp2::call&, std::byte const*, std::size_t) { ++replies; });
  for (std::uint32_t r = 0; r < rounds; ++r) {
    std::int64_t const t0 = a.clock_ns();
    if (bulk)
      a.store(1, 4, payload.data(), payload.size());
    else
      a.request(1, 1, payload.data(), payload.size());
    while (replies <= r) {
      b.poll();
      a.poll();
    }
    if (round_trip_ns != nullptr) *round_trip_ns = a.clock_ns() - t0;
  }
  for (int i = 0; i < 1000 && !(a.quiescent() && b.quiescent()); ++i) {
    a.poll();
    b.poll();
  }
  auto s = a.stats();
  s += b.stats();
  return s;
}

}  // namespace

TEST_CASE("sp2 am: the emulated clock gives the calibrated round trips", "[sp2]") {
  sp2::machine m;
  std::int64_t rtt = 0;
  ping_pong(m, 10, 4, false, &rtt);
  CHECK(rtt == 51000);  // MRPC Table 9: AM 1-word request/reply
  ping_pong(m, 10, 160, true, &rtt);
  CHECK(rtt == 70000);  // MRPC Table 8: AM bulk, 40 words
  m.cost.latency_ns = 20000;
  ping_pong(m, 3, 4, false, &rtt);
  CHECK(rtt == 61000);
}

TEST_CASE("sp2 am: the same seed gives the same run", "[sp2]") {
  sp2::machine m;
  m.faults = {0.2, 0.1, 0.2, 1234};
  auto const a = ping_pong(m, 300, 600, true);
  auto const b = ping_pong(m, 300, 600, true);
  CHECK(a.dropped > 0);
  CHECK(a.dropped == b.dropped);
  CHECK(a.duplicated == b.duplicated);
  CHECK(a.delayed == b.delayed);
  CHECK(a.retransmissions == b.retransmissions);
  CHECK(a.packets_sent == b.packets_sent);
  CHECK(a.emulated_ns == b.emulated_ns);
  m.faults.seed = 99;
  auto const c = ping_pong(m, 300, 600, true);
  CHECK((c.dropped != a.dropped || c.emulated_ns != a.emulated_ns));
}

TEST_CASE("sp2 am: handlers run one at a time", "[sp2]") {
  int depth = 0, deepest = 0;
  std::uint32_t seen = 0;
  sp2::machine m;
  m.faults = {0.05, 0.05, 0.05, 3};
  run_nodes(
      3, m,
      [&](sp2::node& node) {
        if (node.id() == 0)
          node.set_handler(1, [&](sp2::call&, std::byte const*, std::size_t) {
            deepest = std::max(deepest, ++depth);
            ++seen;
            --depth;
          });
      },
      [&](sp2::node& node) {
        if (node.id() != 0) {
          std::uint32_t v = 0;
          for (int i = 0; i < 300; ++i) node.request(0, 1, &v, sizeof v);
        } else {
          poll_until(node, [&] { return seen == 600; });
        }
      });
  CHECK(deepest == 1);
  CHECK(seen == 600);
}

TEST_CASE("sp2 am: a node keeps links only to the nodes it talks to", "[sp2]") {
  // Nodes 0..n-2 form a ring (each sends requests to the next, which
  // replies); node n-1 takes no part.  With faults, so that acknowledgements,
  // nacks and re-sends also run over the links made on first contact.
  constexpr std::uint32_t n = 16, ring = n - 1, count = 200;
  sp2::machine m;
  m.faults = {0.05, 0.05, 0.05, 11};
  std::vector<std::uint32_t> replies(n, 0);
  std::atomic<int> errors{0};
  auto const all = run_nodes(
      n, m,
      [&](sp2::node& node) {
        node.set_handler(1, [&, me = node.id()](sp2::call& c, std::byte const* d, std::size_t len) {
          if (len != 4 || c.source() != (me + ring - 1) % ring) ++errors;
          c.reply(2, d, len);
        });
        node.set_handler(2, [&, me = node.id()](sp2::call& c, std::byte const*, std::size_t) {
          if (c.source() != (me + 1) % ring) ++errors;
          ++replies[me];
        });
      },
      [&](sp2::node& node) {
        if (node.id() == ring) return;
        for (std::uint32_t i = 0; i < count; ++i) node.request((node.id() + 1) % ring, 1, &i, 4);
        poll_until(node, [&] { return replies[node.id()] == count; });
      });
  CHECK(errors.load() == 0);
  for (std::uint32_t i = 0; i < ring; ++i) {
    CHECK(replies[i] == count);
    CHECK(all[i].peers == 2u);
  }
  CHECK(all[ring].peers == 0u);
  CHECK(total(all).dropped > 0);
}
