// Threads backend: a buffer small enough to go through a ring by copy stays
// its destination's open buffer, emptied (location::flush), and a wait whose
// answer has come in stops polling (location::poll_once(done)).  Checked:
// the emptied buffer takes the next request at the factor in force then,
// even after set_aggregation; it is never sent empty; a lone request behind
// it still leaves when its sender polls or its max delay passes; requests
// larger than a slot (by pointer) interleave in order; and replies to sync
// calls that come in while the caller waits are all served.
#include "support/test_support.hpp"

#include <cstdint>
#include <string>

namespace {

class peer : public armi::p_object {
 public:
  // On location 1.
  std::uint64_t add(std::uint64_t v) {
    m_sum += v;
    return m_sum;
  }
  std::uint64_t add_text(std::string const& s) {
    m_sum += s.size();
    return m_sum;
  }
  void ping(std::uint64_t round) { armi::async_rmi(0, get_rmi_handle(), &peer::pong, round); }
  std::uint64_t sum() const { return m_sum; }
  // On location 0.
  void pong(std::uint64_t round) {
    if (round != m_pongs) ++m_out_of_order;
    ++m_pongs;
  }
  std::uint64_t pongs() const { return m_pongs; }
  std::uint64_t out_of_order() const { return m_out_of_order; }

 private:
  std::uint64_t m_sum = 0, m_pongs = 0, m_out_of_order = 0;
};

armi::detail::location_stats const& my_stats() { return armi::detail::current("test").stats(); }

armi::config two_threads(std::size_t aggregation, std::int64_t max_delay_ns = 0) {
  armi::config cfg;
  cfg.locations = 2;
  cfg.aggregation = aggregation;
  cfg.max_delay_ns = max_delay_ns;
  return cfg;
}

// Location 0: sync calls (copied, or by pointer for a long string), each
// followed by a lone async ping that location 0 then polls for.  A ping
// left sitting in the emptied buffer would hang here.
void sync_then_lone_ping(std::uint64_t rounds) {
  peer p;
  auto const h = p.get_rmi_handle();
  armi::rmi_fence();
  std::uint64_t expected = 0;
  if (armi::get_location_id() == 0) {
    std::string const long_text(100, 'x');  // past a ring slot's 48 bytes
    for (std::uint64_t i = 0; i < rounds; ++i) {
      std::uint64_t got;
      if (i % 5 == 4) {
        expected += long_text.size();
        got = armi::sync_rmi(1, h, &peer::add_text, long_text);
      } else {
        expected += i;
        got = armi::sync_rmi(1, h, &peer::add, i);
      }
      ARMI_CHECK_EQ(got, expected);
      armi::async_rmi(1, h, &peer::ping, i);
      while (p.pongs() != i + 1) armi::rmi_poll();
    }
    ARMI_CHECK_EQ(p.out_of_order(), std::uint64_t{0});
  }
  armi::rmi_fence();
  std::uint64_t const total = armi::allreduce_rmi(h, &peer::sum, [](std::uint64_t a, std::uint64_t b) { return a + b; });
  std::uint64_t want = 0;
  for (std::uint64_t i = 0; i < rounds; ++i) want += i % 5 == 4 ? 100 : i;
  ARMI_CHECK_EQ(total, want);
}

}  // namespace

TEST_CASE("copied buffers: a lone request after a copied sync_rmi leaves when its sender polls", "[copy]") {
  for (std::size_t agg : {std::size_t{1}, std::size_t{7}, std::size_t{64}})
    armi_test::run(two_threads(agg), [] { sync_then_lone_ping(500); });
}

TEST_CASE("copied buffers: under --armi-max-delay too", "[copy]") {
  armi_test::run(two_threads(64, 200'000), [] { sync_then_lone_ping(200); });
}

TEST_CASE("copied buffers: the emptied buffer takes set_aggregation's factor", "[copy]") {
  armi_test::run(two_threads(64), [] {
    peer p;
    auto const h = p.get_rmi_handle();
    armi::rmi_fence();
    if (armi::get_location_id() == 0) {
      ARMI_CHECK_EQ(armi::sync_rmi(1, h, &peer::add, std::uint64_t{3}), std::uint64_t{3});  // copied out: kept
      armi::set_aggregation(1);
      auto const before = my_stats().buffers_sent;
      armi::async_rmi(1, h, &peer::ping, std::uint64_t{0});
      // At factor 1 the request leaves inside async_rmi, not at a later poll.
      ARMI_CHECK_EQ(my_stats().buffers_sent, before + 1);
      while (p.pongs() != 1) armi::rmi_poll();
      // A sync call at factor 1 leaves at its limit; the buffer it leaves
      // behind must count down from 1 again.
      ARMI_CHECK_EQ(armi::sync_rmi(1, h, &peer::add, std::uint64_t{4}), std::uint64_t{7});
      auto const after_sync = my_stats().buffers_sent;
      armi::async_rmi(1, h, &peer::ping, std::uint64_t{1});
      ARMI_CHECK_EQ(my_stats().buffers_sent, after_sync + 1);
      while (p.pongs() != 2) armi::rmi_poll();
      armi::set_aggregation(64);
      auto const again = my_stats().buffers_sent;
      for (std::uint64_t i = 2; i < 11; ++i) armi::async_rmi(1, h, &peer::ping, i);
      ARMI_CHECK_EQ(my_stats().buffers_sent, again);  // 9 of 64: still open
      while (p.pongs() != 11) armi::rmi_poll();
      ARMI_CHECK_EQ(p.out_of_order(), std::uint64_t{0});
    }
    armi::rmi_fence();
  });
}

TEST_CASE("copied buffers: no buffer leaves empty", "[copy]") {
  armi_test::run(two_threads(64), [] {
    peer p;
    auto const h = p.get_rmi_handle();
    armi::rmi_fence();
    if (armi::get_location_id() == 0) {
      auto const before = my_stats();
      constexpr std::uint64_t n = 300;
      for (std::uint64_t i = 0; i < n; ++i) {
        (void)armi::sync_rmi(1, h, &peer::add, i);
        armi::rmi_flush();  // nothing open but the emptied buffer: sends nothing
        armi::rmi_poll();
      }
      auto const& after = my_stats();
      // One buffer per sync_rmi (its request alone), and every buffer sent
      // held at least one request.
      ARMI_CHECK_EQ(after.buffers_sent - before.buffers_sent, n);
      ARMI_CHECK_EQ(after.total_sent() - before.total_sent(), n);
    }
    armi::rmi_fence();
  });
}
