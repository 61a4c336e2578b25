// The aggregation policy alone, with no transport or location under it:
// fixed factors, and auto's rules (grow on a fast fill, halve on a delayed
// send, burst bounds in this process and to another, the single-request
// rule).
#include <armi/runtime/aggregation_policy.hpp>

#include <catch2/catch.hpp>


namespace d = armi::detail;
using policy = d::aggregation_policy;

namespace {

// Two locations; dest 1 in this process (local) or in another one, reached
// through shared memory or not.
d::aggregation_setup two_locations(bool local, bool cheap, std::size_t factor = armi::aggregation_auto) {
  d::aggregation_setup s;
  s.size = 2;
  s.local_first = 0;
  s.local_count = local ? 2 : 1;
  s.factor_local = s.factor_remote = factor;
  s.bytes_local = s.bytes_remote = 1 << 16;
  s.cheap = {true, cheap};
  return s;
}

// A buffer of count requests (buffers do not move: filled in place).
struct filled : d::buffer {
  explicit filled(std::uint32_t n, std::int64_t half = 0) {
    count = n;
    size = 16 * std::size_t{n};
    half_ns = half;
  }
};

// A burst of n requests to dest 1 in one buffer, then a wait.
void burst(policy& p, std::uint32_t n, d::flush_cause cause = d::flush_cause::wait) {
  filled const b(n);
  p.on_flush(1, b, cause, false);
  p.end_bursts([](armi::location_id) -> d::buffer* { return nullptr; });  // no buffer open
}

}  // namespace

TEST_CASE("fixed factors are what was set, and look at the clock only under a max delay", "[aggregation_policy]") {
  d::location_stats stats;
  auto s = two_locations(true, true, 256);
  policy p(s, stats);
  CHECK(!p.clocked());
  CHECK(!p.is_auto(1));
  CHECK(p.factor(1) == 256);
  CHECK(p.next_limit(1, 0) == 256);
  filled b(10);
  p.rearm(1, b);
  CHECK(b.left == 246);
  CHECK(!p.on_flush(1, b, d::flush_cause::full, false));  // no auto: nothing adapts
  CHECK(stats.auto_buffers == 0);

  s.max_delay_ns = 1'000'000;
  d::location_stats stats2;
  policy delayed(s, stats2);
  CHECK(delayed.clocked());
  CHECK(delayed.next_limit(1, 10) == 10 + policy::delay_check_every);
  CHECK_THROWS_AS(delayed.set_factors(0, 1), std::invalid_argument);
}

TEST_CASE("auto doubles k on a fast fill, holds it on a slow one", "[aggregation_policy]") {
  d::location_stats stats;
  policy p(two_locations(true, true), stats);
  REQUIRE(p.is_auto(1));
  REQUIRE(p.factor(1) == policy::auto_start_factor);
  CHECK(stats.auto_destinations == 2);
  CHECK(p.may_grow(1));
  // Under auto a buffer looks at half the factor to note the time.
  CHECK(p.next_limit(1, 0) == policy::auto_start_factor / 2);

  filled const fast(64, policy::now_ns() - 100);  // filled in some 200 ns: far under the target
  CHECK(p.on_flush(1, fast, d::flush_cause::full, false));
  CHECK(p.factor(1) == 2 * policy::auto_start_factor);
  CHECK(stats.auto_grows == 1);

  filled const slow(128, policy::now_ns() - 1'000'000'000);  // a second from half to full
  p.on_flush(1, slow, d::flush_cause::full, false);
  CHECK(p.factor(1) == 2 * policy::auto_start_factor);

  filled const unmarked(128);  // no half mark: no opinion
  p.on_flush(1, unmarked, d::flush_cause::full, false);
  CHECK(p.factor(1) == 2 * policy::auto_start_factor);
  CHECK(stats.auto_final_sum == policy::auto_start_factor + 2 * policy::auto_start_factor);
}

TEST_CASE("auto halves k on a send for the max delay, down to its least", "[aggregation_policy]") {
  d::location_stats stats;
  auto s = two_locations(true, true);
  s.max_delay_ns = 1'000'000;
  policy p(s, stats);
  filled const b(3);
  p.on_flush(1, b, d::flush_cause::delay, false);
  CHECK(p.factor(1) == policy::auto_start_factor / 2);
  for (int i = 0; i < 10; ++i) p.on_flush(1, b, d::flush_cause::delay, false);
  CHECK(p.factor(1) == policy::auto_min_factor);
  // A buffer sent by the program's synchronization says nothing about k.
  p.on_flush(1, b, d::flush_cause::poll, false);
  CHECK(p.factor(1) == policy::auto_min_factor);
}

TEST_CASE("burst bounds: a quarter and a root through shared memory, half or more to another process",
          "[aggregation_policy]") {
  SECTION("this process") {
    d::location_stats stats;
    policy p(two_locations(true, true), stats);
    CHECK(p.burst_bound(1) == UINT64_MAX);  // none seen yet
    burst(p, 10000);
    CHECK(p.state(1).burst_mean == 10000);
    CHECK(p.burst_bound(1) == 800);  // min(10000 / 4, 8 sqrt(10000))
    // A short burst in this process goes in pieces of auto_short_factor.
    d::location_stats stats2;
    policy q(two_locations(true, true), stats2);
    burst(q, 20);
    CHECK(q.burst_bound(1) == policy::auto_short_factor);
    CHECK(q.factor(1) == policy::auto_short_factor);  // halved down to the bound at the wait
    CHECK(!q.may_grow(1));
  }
  SECTION("another process, not through shared memory") {
    d::location_stats stats;
    policy p(two_locations(false, false), stats);
    REQUIRE(p.is_auto(1));
    burst(p, 20);  // shorter than the start factor: fits one buffer, says nothing
    CHECK(p.state(1).burst_mean == 0);
    burst(p, 100);
    CHECK(p.burst_bound(1) == 2 * policy::auto_start_factor);  // all of a burst of up to twice the start
    d::location_stats stats2;
    policy q(two_locations(false, false), stats2);
    burst(q, 10000);
    CHECK(q.burst_bound(1) == 5000);  // half, while a request's time is not measured
  }
  SECTION("remote_burst_bound doubles while a send costs more than the receiver's head start") {
    CHECK(d::remote_burst_bound(1000, 500, 0) == 500);
    CHECK(d::remote_burst_bound(1000, 500, 10) == 500);      // cheap sends: half
    CHECK(d::remote_burst_bound(1000, 40500, 10) == 1024);   // sp2's message cost: the whole burst
  }
}

TEST_CASE("lone requests that waited set k to 1; a second request in a burst, with no poll between, restores it",
          "[aggregation_policy]") {
  d::location_stats stats;
  policy p(two_locations(true, true), stats);
  for (std::uint32_t i = 1; i < policy::auto_single_bursts; ++i) {
    burst(p, 1, d::flush_cause::poll);
    CHECK(p.factor(1) == policy::auto_start_factor);
  }
  burst(p, 1, d::flush_cause::poll);
  CHECK(p.factor(1) == 1);
  // A burst of one that did not wait (it left full, at k = 1) changes nothing...
  filled const one(1);
  p.on_flush(1, one, d::flush_cause::full, false);
  CHECK(p.factor(1) == 1);
  // ...nor does a second after a poll of the program (its answer was
  // there at once, so the poll ended no burst)...
  p.note_poll();
  p.on_flush(1, one, d::flush_cause::full, false);
  CHECK(p.factor(1) == 1);
  // ...its third request, with no poll before it, does.
  p.on_flush(1, one, d::flush_cause::full, false);
  CHECK(p.factor(1) == policy::auto_start_factor);
}

TEST_CASE("where the user set no byte cap, a process's open buffers share 256 MiB", "[aggregation_policy]") {
  // 7 locations all-to-all: far above any cap in use.
  CHECK(d::shared_byte_cap(7, 7) == (std::size_t{256} << 20) / 49);
  // 4,096 locations under grid routing, 126 next hops and themselves.
  CHECK(d::shared_byte_cap(4096, 127) == 516);
  // 1,024 all-to-all: 256 bytes; beyond it, the floor.
  CHECK(d::shared_byte_cap(1024, 1024) == 256);
  CHECK(d::shared_byte_cap(4096, 4096) == d::shared_cap_floor);
  // One location per process (mpi, sp2).
  CHECK(d::shared_byte_cap(1, 4096) == 65536);
}
