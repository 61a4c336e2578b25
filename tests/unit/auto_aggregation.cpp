// --armi-aggregation=auto and --armi-max-delay (docs/design.md §3, options):
// under auto a streaming sender's factor grows well above its start, a
// ping-pong (sync_rmi) leaves it alone, and a max delay sends a lone request
// while its sender keeps running armi code, with no fence or flush.
#include "support/test_support.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace {

class sink : public armi::p_object {
 public:
  void take(std::uint64_t v) { m_sum += v; }
  std::uint64_t sum() const { return m_sum; }
  void noop() {}

 private:
  std::uint64_t m_sum = 0;
};

armi::detail::location_stats const& my_stats() { return armi::detail::current("test").stats(); }

armi::config auto_config(char const* backend = "threads") {
  armi::config cfg;
  cfg.backend = backend;
  cfg.locations = 2;
  cfg.aggregation = armi::aggregation_auto;
  return cfg;
}

// On location 0: `bursts` bursts of `burst` requests to location 1, each
// ended by a sync_rmi (location 0 waits).  Returns the stats from before
// the last `last` bursts.
armi::detail::location_stats send_bursts(sink& s, std::uint64_t burst, std::uint64_t bursts, std::uint64_t last) {
  auto mid = my_stats();
  for (std::uint64_t r = 0; r < bursts; ++r) {
    if (r == bursts - last) mid = my_stats();
    for (std::uint64_t i = 0; i < burst; ++i) armi::async_rmi(1, s.get_rmi_handle(), &sink::take, i);
    (void)armi::sync_rmi(1, s.get_rmi_handle(), &sink::sum);  // the burst ends: location 0 waits
  }
  return mid;
}

}  // namespace

TEST_CASE("aggregation auto: a streaming sender's factor grows well above its start", "[auto]") {
  armi_test::run(auto_config(), [] {
    ARMI_CHECK_EQ(armi::get_aggregation(), armi::aggregation_auto);
    sink s;
    armi::rmi_fence();
    if (armi::get_location_id() == 0) {
      constexpr std::uint64_t n = 200000;
      auto const before = my_stats();
      auto const t0 = std::chrono::steady_clock::now();
      for (std::uint64_t i = 0; i < n; ++i) armi::async_rmi(1, s.get_rmi_handle(), &sink::take, i);
      double const ns_per_request =
          std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / double(n);
      auto const& after = my_stats();
      std::uint64_t const buffers = after.buffers_sent - before.buffers_sent;
      INFO(ns_per_request << " ns per request, k reached " << after.auto_factor_max);
      // To a location of this process only the fill time grows k: a buffer
      // of 64 must fill in under half auto's target (in this process 40 us
      // at least), 312 ns a request.  An optimized build sends in a few ns;
      // a sanitizer build may be too slow to need bigger buffers, and then
      // k only must not have dropped (only a max delay lowers it).
      if (ns_per_request < 30) {
        ARMI_CHECK(after.auto_grows >= 2);  // 64 -> 256 at least
        ARMI_CHECK(after.auto_factor_max >= 256);
        ARMI_CHECK(buffers != 0 && n / buffers >= 128);  // achieved requests per buffer
      } else {
        ARMI_CHECK_EQ(after.auto_shrinks, before.auto_shrinks);
        ARMI_CHECK(after.auto_factor_max >= 64);
      }
    }
    armi::rmi_fence();
    if (armi::get_location_id() == 1) ARMI_CHECK_EQ(s.sum(), std::uint64_t{200000} * 199999 / 2);
  });
}

TEST_CASE("aggregation auto: a sync_rmi ping-pong leaves the factor alone", "[auto]") {
  armi_test::run(auto_config(), [] {
    sink s;
    armi::rmi_fence();
    if (armi::get_location_id() == 0) {
      auto const before = my_stats();
      for (int i = 0; i < 2000; ++i) (void)armi::sync_rmi(1, s.get_rmi_handle(), &sink::sum);
      auto const& after = my_stats();
      ARMI_CHECK_EQ(after.auto_grows, before.auto_grows);
      ARMI_CHECK_EQ(after.auto_shrinks, before.auto_shrinks);
      ARMI_CHECK_EQ(after.flushes[0], before.flushes[0]);  // no buffer left full: each one was forced
      ARMI_CHECK(after.buffers_sent - before.buffers_sent >= 2000);
    }
    armi::rmi_fence();
  });
}

TEST_CASE("aggregation auto: bursts then a wait keep the factor at most a quarter of the burst", "[auto]") {
  armi_test::run(auto_config(), [] {
    sink s;
    armi::rmi_fence();
    if (armi::get_location_id() == 0) {
      constexpr std::uint64_t last = 10;
      auto const before = my_stats();
      auto const mid = send_bursts(s, 1000, 40, last);
      auto const& after = my_stats();
      // The last bursts: k <= 1000 / 4 rounds to at most 256, so at least 3
      // buffers of each burst leave full; and k stays at least 64 (at most 15).
      std::uint64_t const full = after.flushes[0] - mid.flushes[0];
      ARMI_CHECK(full >= 3 * last);
      ARMI_CHECK(full <= 15 * last);
      std::uint64_t const decisions = after.auto_held + after.auto_shrinks - before.auto_held - before.auto_shrinks;
      INFO("grows " << after.auto_grows - before.auto_grows << ", held or shrunk " << decisions);
      // Whether k got above the bound (a fast machine) or never grew there
      // (a slow one: sanitizers), the bound was applied or never needed.
      if (after.auto_factor_max > 256) ARMI_CHECK(decisions >= 1);
    }
    armi::rmi_fence();
    if (armi::get_location_id() == 1) ARMI_CHECK_EQ(s.sum(), std::uint64_t{40} * (999 * 1000 / 2));
  });
}

TEST_CASE("aggregation auto: in this process, long bursts keep the factor at most 8 times the burst's root",
          "[auto]") {
  // Fig. 5 on threads at 10000 pings: the quarter rule alone let k reach
  // 2048 (1.07-1.16x the best factor); 8 sqrt(10000) = 800 holds it at 512.
  armi_test::run(auto_config(), [] {
    sink s;
    armi::rmi_fence();
    if (armi::get_location_id() == 0) {
      constexpr std::uint64_t burst = 10000, last = 5;
      auto const mid = send_bursts(s, burst, 20, last);
      auto const& after = my_stats();
      // Each of the last bursts in buffers of at most 512 (fewer if k never
      // grew that far: a slow build): at least 19 leave full, against 4 at
      // 2048.
      std::uint64_t const full = after.flushes[0] - mid.flushes[0];
      INFO("k reached " << after.auto_factor_max << ", " << full << " full buffers in the last " << last
                        << " bursts");
      ARMI_CHECK(full >= 19 * last);
    }
    armi::rmi_fence();
    if (armi::get_location_id() == 1) ARMI_CHECK_EQ(s.sum(), std::uint64_t{20} * (9999 * 10000 / 2));
  });
}

TEST_CASE("aggregation auto: in this process, a burst shorter than the start factor leaves in pieces of 8",
          "[auto]") {
  // Fig. 5 on threads at k = 10..40 pings: buffers of 8 let the receiver
  // start while the rest is written (one buffer of 64 took 1.1-1.2x).
  armi_test::run(auto_config(), [] {
    sink s;
    armi::rmi_fence();
    if (armi::get_location_id() == 0) {
      constexpr std::uint64_t last = 10;
      auto const mid = send_bursts(s, 20, 40, last);
      auto const& after = my_stats();
      INFO("k reached " << after.auto_factor_max);
      // Each of the last bursts: full at 8 and at 16, the last 4 sent by the sync_rmi.
      ARMI_CHECK_EQ(after.flushes[0] - mid.flushes[0], 2 * last);
    }
    armi::rmi_fence();
    if (armi::get_location_id() == 1) ARMI_CHECK_EQ(s.sum(), std::uint64_t{40} * (19 * 20 / 2));
  });
}

TEST_CASE("aggregation auto: to another process, a short burst leaves in one buffer", "[auto]") {
  // sp2 nodes are processes of their own: there a burst of up to twice the
  // start factor (64) is not split (on one process, the quarter rule would
  // send each burst of 100 as a full buffer of 64 and a rest).
  armi_test::run(auto_config("sp2"), [] {
    sink s;
    armi::rmi_fence();
    if (armi::get_location_id() == 0) {
      constexpr std::uint64_t last = 10;
      auto const mid = send_bursts(s, 100, 40, last);
      auto const& after = my_stats();
      INFO("k reached " << after.auto_factor_max);
      ARMI_CHECK(after.auto_factor_max <= 128);
      // k grew from 64 to 128 unless buffers filled too slowly to ask for it
      // (a sanitizer build); where it was 128 for every buffer of the last
      // bursts, none of them filled a buffer.  (Under ThreadSanitizer k once
      // reached 128 and then shrank below 100 again: then a burst fills one.)
      std::uint64_t const buffers = after.auto_buffers - mid.auto_buffers;
      if (buffers != 0 && after.auto_factor_sum - mid.auto_factor_sum == 128 * buffers)
        ARMI_CHECK_EQ(after.flushes[0] - mid.flushes[0], 0u);
    }
    armi::rmi_fence();
    if (armi::get_location_id() == 1) ARMI_CHECK_EQ(s.sum(), std::uint64_t{40} * (99 * 100 / 2));
  });
}

TEST_CASE("aggregation auto: to another process, a burst goes in fewer buffers the more a message costs", "[auto]") {
  using armi::detail::remote_burst_bound;
  // Nothing measured yet: half the burst (k up to the power of two below it).
  CHECK(remote_burst_bound(1000, 40500, 0) == 500);
  // MPI between nodes (sends 0.5 us, requests 15 ns): half.
  CHECK(remote_burst_bound(1000, 500, 15) == 500);
  // One doubling pays (1000 x 600 > 2 x 256^2 x 4), a second does not (< 2 x 512^2 x 4).
  CHECK(remote_burst_bound(1000, 600, 4) == 512);
  // The emulated SP2's 40.5 us message: the whole burst in one buffer, and never more.
  CHECK(remote_burst_bound(1000, 40500, 4) == 1024);
  CHECK(remote_burst_bound(1000, 1e12, 4) == 1024);
  CHECK(remote_burst_bound(10000, 40500, 4) == 8192);  // not 16384: 405e6 < 2 x 8192^2 x 4
  // A burst whose half is a power of two.
  CHECK(remote_burst_bound(1024, 500, 15) == 512);
  CHECK(remote_burst_bound(1024, 40500, 4) == 1024);
}

TEST_CASE("aggregation auto: on the emulated SP2, a buffer stays within what a peer takes without waiting",
          "[auto]") {
  // sp2 messages cost what the SP2 charged (40.5 us), so k may grow past
  // half a burst, up to the power of two above it (8192 for bursts of
  // 10000); but a buffer doubles only while twice its bytes fit in a peer's
  // receive queue (64 packets of 216 bytes: 13824).  A request here is 12
  // bytes (a uint64 and a repeat marker), so k stops at 1024.  (On a slow
  // build the fill time may stop it sooner.)
  armi_test::run(auto_config("sp2"), [] {
    sink s;
    armi::rmi_fence();
    if (armi::get_location_id() == 0) {
      (void)send_bursts(s, 1000, 20, 1);
      (void)send_bursts(s, 10000, 4, 1);
      auto const& after = my_stats();
      INFO("k reached " << after.auto_factor_max);
      ARMI_CHECK(after.auto_factor_max <= 1024);
    }
    armi::rmi_fence();
    if (armi::get_location_id() == 1)
      ARMI_CHECK_EQ(s.sum(), std::uint64_t{20} * (999 * 1000 / 2) + std::uint64_t{4} * (9999 * 10000 / 2));
  });
}

namespace {
class echo : public armi::p_object {
 public:
  void ping() { armi::async_rmi(0, get_rmi_handle(), &echo::pong); }
  void pong() { ++m_pongs; }
  // Requests of one sender run in the order sent, across the buffers of k = 1 and k = 64.
  void seq(std::uint64_t i) { m_in_order += i == m_next++ ? 1 : 0; }
  std::uint64_t pongs() const { return m_pongs; }
  std::uint64_t in_order() const { return m_in_order; }

 private:
  std::uint64_t m_pongs = 0, m_next = 0, m_in_order = 0;
};
}  // namespace

TEST_CASE("aggregation auto: an async_rmi ping-pong sends at the call; a burst restores the factor", "[auto]") {
  armi_test::run(auto_config(), [] {
    echo e;
    armi::rmi_fence();
    if (armi::get_location_id() == 0) {
      for (std::uint64_t r = 1; r <= 10; ++r) {  // learns: a lone request, then a poll loop
        armi::async_rmi(1, e.get_rmi_handle(), &echo::ping);
        while (e.pongs() != r) armi::rmi_poll();
      }
      auto const before = my_stats();
      for (std::uint64_t r = 11; r <= 30; ++r) {
        armi::async_rmi(1, e.get_rmi_handle(), &echo::ping);
        // Now and then the pong is already there at the first poll (a fast
        // partner, or this thread held off its core): still a ping-pong.
        if (r % 4 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(3));
        while (e.pongs() != r) armi::rmi_poll();
      }
      auto const mid = my_stats();
      ARMI_CHECK(mid.flushes[0] - before.flushes[0] == 20);  // every ping left full, at its call (k = 1)
      ARMI_CHECK(mid.flushes[3] == before.flushes[3]);       // none waited for a poll
      for (std::uint64_t i = 0; i < 640; ++i) armi::async_rmi(1, e.get_rmi_handle(), &echo::seq, i);
      auto const& after = my_stats();
      // The second request put k back at 64: 1 + 639 requests in 1 + 9 full buffers, not 640.
      ARMI_CHECK(after.flushes[0] - mid.flushes[0] <= 12);
    }
    armi::rmi_fence();
    if (armi::get_location_id() == 1) ARMI_CHECK_EQ(e.in_order(), std::uint64_t{640});
  });
}

namespace {
std::atomic<bool> g_arrived{false};
class flag : public armi::p_object {
 public:
  void set() { g_arrived.store(true); }
};
}  // namespace

TEST_CASE("--armi-max-delay sends a lone request while its sender keeps running armi code", "[auto]") {
  for (std::size_t const factor : {std::size_t{4096}, armi::aggregation_auto}) {
    INFO(factor);
    g_arrived.store(false);
    armi::config cfg;
    cfg.locations = 2;
    cfg.aggregation = factor;
    cfg.max_delay_ns = 2'000'000;  // 2 ms
    armi_test::run(cfg, [] {
      flag f;
      sink s;
      armi::rmi_fence();
      if (armi::get_location_id() == 0) {
        auto const t0 = std::chrono::steady_clock::now();
        armi::async_rmi(1, f.get_rmi_handle(), &flag::set);
        // Busy with requests to itself, which never flush the buffer to 1.
        auto const deadline = t0 + std::chrono::seconds(20);
        while (!g_arrived.load() && std::chrono::steady_clock::now() < deadline)
          armi::async_rmi(0, s.get_rmi_handle(), &sink::noop);
        ARMI_CHECK(g_arrived.load());
        ARMI_CHECK(my_stats().flushes[7] >= 1);  // flush_cause::delay
        ARMI_CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(2));
      } else {
        while (!g_arrived.load()) armi::rmi_poll();
      }
      armi::rmi_fence();
    });
  }
}
