// Ordering guarantees (docs/design.md §2, "Ordering"):
//  - requests from one location to one destination run in the order issued,
//    whatever their kind (async_rmi, opaque_rmi, sync_rmi), whatever their size,
//    whether they were issued by the location's body or by a request it runs,
//    and across changes of the aggregation factor and explicit flushes;
//  - sync_rmis of one location complete in its program order and each returns
//    the answer to its own call, even with nested sync_rmis outstanding;
//  - async_rmi to self is ordered too;
//  - all of it whether the method is named by a pointer (&T::f) or by a
//    method constant (armi::method<&T::f>, a handler of its own): the two
//    forms interleave in one stream.
// The "sizes" test also mixes one-argument requests of 8 bytes, which travel
// as repeat records of 12 bytes when they follow one another, with others,
// which then start after a pad word (core/buffer.hpp): the wire's two
// record forms, on every backend.
// Every request carries a per-(source, destination) sequence number and the
// target flags any gap or reordering.
#include "support/test_support.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {

struct splitmix64 {
  std::uint64_t state;
  std::uint64_t operator()() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

// The payload a request with sequence number seq carries in the "sizes" test:
// mostly small, sometimes a good part of a buffer or larger than the default
// 32 KiB one (between ranks of a node, a request of 4 KiB or more is written
// straight into the receiver's ring, after what was buffered for it), and
// sometimes larger than the 128 KiB that ranks of a node copy through their
// rings (the mpi backend sends it as an MPI message, marked in the ring).
std::string payload_for(std::uint64_t seq, std::uint64_t r) {
  std::size_t size = 0;
  switch (r % 64) {
    case 0:
      size = 40000 + static_cast<std::size_t>(r % 30000);
      break;  // bigger than a buffer
    case 1:
      size = 140000 + static_cast<std::size_t>(r % 30000);
      break;  // bigger than a ring copy
    case 2:
    case 3:
      size = 3000 + static_cast<std::size_t>(r % 5000);
      break;  // a good part of one
    default:
      size = static_cast<std::size_t>(r % 24);
      break;
  }
  return std::string(size, static_cast<char>('a' + seq % 26));
}

// One representative per location.  Every request names its source and its
// sequence number for this (source, destination) pair.
class sequencer : public armi::p_object {
 public:
  sequencer()
      : m_next(armi::get_num_locations(), 0),
        m_count(armi::get_num_locations(), 0),
        m_sent(armi::get_num_locations(), 0) {}

  // --- targets ---
  void on_async(armi::location_id src, std::uint64_t seq) { observe(src, seq); }
  // Source and sequence number in one word: 8 bytes of payload.
  static std::uint64_t packed(armi::location_id src, std::uint64_t seq) { return std::uint64_t{src} << 40 | seq; }
  void on_packed(std::uint64_t word) { observe(static_cast<armi::location_id>(word >> 40), word & ((1ULL << 40) - 1)); }

  // Returns how many requests from src had been executed here, this one
  // included: exactly seq + 1 if nothing was lost, doubled or reordered.
  std::uint64_t on_opaque(armi::location_id src, std::uint64_t seq) {
    observe(src, seq);
    return m_count[src];
  }
  std::uint64_t on_sync(armi::location_id src, std::uint64_t seq) {
    observe(src, seq);
    return m_count[src] * 3 + 1;
  }
  void on_payload(armi::location_id src, std::uint64_t seq, std::uint64_t r,
                  std::string const& payload) {
    observe(src, seq);
    ARMI_CHECK(payload == payload_for(seq, r));
  }
  // Executed on a third location: sends the next request of ITS OWN stream to
  // dest, interleaving with the requests its body sends to dest.
  void relay(armi::location_id dest) { send_async(dest); }

  std::uint64_t received_from(armi::location_id src) const { return m_count[src]; }

  // --- senders (run on the representative's own location) ---
  // A number taken from the location's own code must reach its request
  // before a relay (a request) takes the next: under --armi-progress=thread
  // requests may run between the two unless the caller holds them off.
  std::uint64_t next_seq(armi::location_id dest) { return m_sent[dest]++; }
  std::uint64_t sent_to(armi::location_id dest) const { return m_sent[dest]; }
  void send_async(armi::location_id dest, bool constant = false) {
    armi_test::either_form<&sequencer::on_async>(
        constant, [&](auto m) { armi::async_rmi(dest, get_rmi_handle(), m, armi::get_location_id(), next_seq(dest)); });
  }

 private:
  void observe(armi::location_id src, std::uint64_t seq) {
    if (seq != m_next[src] && m_reported < 5) {
      ++m_reported;
      ARMI_CHECK_EQ(seq, m_next[src]);
    }
    m_next[src] = seq + 1;
    ++m_count[src];
  }

  std::vector<std::uint64_t> m_next;   // next sequence number expected, per source
  std::vector<std::uint64_t> m_count;  // requests executed, per source
  std::vector<std::uint64_t> m_sent;   // sequence numbers handed out, per destination
  int m_reported = 0;
};

// After a fence: every destination executed exactly what this location sent it.
void check_totals(sequencer& s) {
  auto const me = armi::get_location_id();
  auto const n = armi::get_num_locations();
  for (armi::location_id d = 0; d < n; ++d) {
    std::uint64_t const got = armi::sync_rmi(d, s.get_rmi_handle(), &sequencer::received_from, me);
    ARMI_CHECK_EQ(got, s.sent_to(d));
  }
}

}  // namespace

TEST_CASE("ordering: async opaque and sync requests to random destinations run in issue order",
          "[ordering]") {
  armi_test::run([&] {
    sequencer s;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = s.get_rmi_handle();
    splitmix64 rng{0x5eed0000ULL + me};

    struct pending {
      armi::future<std::uint64_t> f;
      std::uint64_t expected;
    };
    std::vector<pending> futures;
    std::size_t const iters = armi_test::scaled(30000);
    for (std::size_t i = 0; i < iters; ++i) {
      armi::hold_requests const hold;  // see next_seq
      auto const d = static_cast<armi::location_id>(rng() % n);
      auto const kind = rng() % 100;
      if (kind < 70) {
        s.send_async(d, kind % 2 == 0);
      } else if (kind < 80) {
        // Ask a random location to send the next request of its own stream to d.
        armi::async_rmi(static_cast<armi::location_id>(rng() % n), h, &sequencer::relay, d);
      } else if (kind < 95) {
        auto const seq = s.next_seq(d);
        futures.push_back({armi_test::either_form<&sequencer::on_opaque>(
                               kind % 2 == 0, [&](auto m) { return armi::opaque_rmi(d, h, m, me, seq); }),
                           seq + 1});
        if (futures.size() > 100 || rng() % 16 == 0) {
          // Collect one outstanding future, not necessarily the oldest.
          auto const k = static_cast<std::size_t>(rng() % futures.size());
          ARMI_CHECK_EQ(futures[k].f.get(), futures[k].expected);
          std::swap(futures[k], futures.back());
          futures.pop_back();
        }
      } else {
        auto const seq = s.next_seq(d);
        std::uint64_t const r = armi_test::either_form<&sequencer::on_sync>(
            kind % 2 == 0, [&](auto m) { return armi::sync_rmi(d, h, m, me, seq); });
        ARMI_CHECK_EQ(r, (seq + 1) * 3 + 1);
      }
    }
    for (auto& p : futures) ARMI_CHECK_EQ(p.f.get(), p.expected);
    armi::rmi_fence();
    check_totals(s);
    armi::rmi_fence();
  });
}

TEST_CASE("ordering: async_rmi to self runs in issue order", "[ordering]") {
  armi_test::run([&] {
    sequencer s;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const h = s.get_rmi_handle();
    splitmix64 rng{0xa11ce000ULL + me};
    std::size_t const iters = armi_test::scaled(40000);
    for (std::size_t i = 0; i < iters; ++i) {
      armi::hold_requests const hold;  // see next_seq
      auto const r = rng() % 256;
      s.send_async(me, r >= 128);
      if (r == 0) armi::rmi_poll();
      if (r == 1) armi::rmi_flush();
      if (r == 2) {
        auto const seq = s.next_seq(me);
        ARMI_CHECK_EQ(armi::sync_rmi(me, h, &sequencer::on_sync, me, seq), (seq + 1) * 3 + 1);
      }
      if (r == 3) {
        auto const seq = s.next_seq(me);
        auto f = armi::opaque_rmi(me, h, &sequencer::on_opaque, me, seq);
        s.send_async(me);  // issued after the opaque request: must not overtake it
        ARMI_CHECK_EQ(f.get(), seq + 1);
      }
    }
    armi::rmi_fence();
    ARMI_CHECK_EQ(s.received_from(me), s.sent_to(me));
    armi::rmi_fence();
  });
}

TEST_CASE("ordering: small and large requests stay ordered across flushes and aggregation changes",
          "[ordering]") {
  armi_test::run([&] {
    sequencer s;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = s.get_rmi_handle();
    auto const initial_aggregation = armi::get_aggregation();
    splitmix64 rng{0xb16b00b5ULL + me};
    std::size_t const iters = armi_test::scaled(6000);
    for (std::size_t i = 0; i < iters; ++i) {
      armi::hold_requests const hold;  // see next_seq
      auto const d = static_cast<armi::location_id>(rng() % n);
      auto const r = rng();
      auto const seq = s.next_seq(d);
      switch (r % 64) {
        case 0: {
          std::size_t const aggs[] = {1, 2, 7, 64, 256};
          armi::set_aggregation(aggs[(r >> 8) % 5]);
          ARMI_CHECK_EQ(armi::get_aggregation(), aggs[(r >> 8) % 5]);
          armi::async_rmi(d, h, &sequencer::on_async, me, seq);
          break;
        }
        case 1:
          armi::rmi_flush();
          armi::async_rmi(d, h, &sequencer::on_async, me, seq);
          break;
        case 2:
          ARMI_CHECK_EQ(armi::sync_rmi(d, h, &sequencer::on_sync, me, seq), (seq + 1) * 3 + 1);
          break;
        default:
          if ((r >> 6) % 2 == 0)
            armi::async_rmi(d, h, &sequencer::on_packed, sequencer::packed(me, seq));
          else
            armi::async_rmi(d, h, &sequencer::on_payload, me, seq, r >> 8, payload_for(seq, r >> 8));
          break;
      }
    }
    armi::set_aggregation(initial_aggregation);
    armi::rmi_fence();
    check_totals(s);
    armi::rmi_fence();
  });
}

namespace {

// Nested sync_rmis: answer(tag, depth) first asks a random location for
// answer(tag', depth - 1) and checks that reply, then replies.  Replies
// arrive in any order; each sync_rmi must return the answer to its own call.
class echo : public armi::p_object {
 public:
  static std::uint64_t expected(std::uint64_t tag) { return tag * 0x9e3779b97f4a7c15ULL + 12345; }

  std::uint64_t answer(std::uint64_t tag, std::uint32_t depth) {
    if (depth > 0) {
      splitmix64 rng{tag};
      auto const next = static_cast<armi::location_id>(rng() % armi::get_num_locations());
      std::uint64_t const inner_tag = rng();
      std::uint64_t const r =
          armi::sync_rmi(next, get_rmi_handle(), &echo::answer, inner_tag, depth - 1);
      ARMI_CHECK_EQ(r, expected(inner_tag));
    }
    ++m_answered;
    return expected(tag);
  }
  // Records the program-order index of the caller's sync_rmis.
  std::uint64_t stamp(armi::location_id src, std::uint64_t k) {
    if (m_last_stamp.empty()) m_last_stamp.assign(armi::get_num_locations(), 0);
    ARMI_CHECK(k > m_last_stamp[src]);
    m_last_stamp[src] = k;
    return k * 2 + src;
  }

 private:
  std::uint64_t m_answered = 0;
  std::vector<std::uint64_t> m_last_stamp;
};

}  // namespace

TEST_CASE(
    "ordering: sync_rmis complete in program order - each with its own reply - while nested "
    "sync_rmis are outstanding",
    "[ordering]") {
  armi_test::run([&] {
    echo e;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = e.get_rmi_handle();
    splitmix64 rng{0xec40ULL + me * 977};
    std::uint64_t k = 0;
    std::size_t const iters = armi_test::scaled(600);
    for (std::size_t i = 0; i < iters; ++i) {
      armi::hold_requests const hold;  // see next_seq
      auto const d = static_cast<armi::location_id>(rng() % n);
      std::uint64_t const tag = rng();
      auto const depth = static_cast<std::uint32_t>(rng() % 4);
      // Several syncs in a row, to different destinations; each must see the
      // previous one completed (stamps strictly increase per source).
      ARMI_CHECK_EQ(armi::sync_rmi(d, h, &echo::stamp, me, ++k), k * 2 + me);
      ARMI_CHECK_EQ(armi::sync_rmi(d, h, &echo::answer, tag, depth), echo::expected(tag));
      auto const d2 = static_cast<armi::location_id>((d + 1) % n);
      ARMI_CHECK_EQ(armi::sync_rmi(d2, h, &echo::stamp, me, ++k), k * 2 + me);
    }
    armi::rmi_fence();
  });
}
