// Atomicity (docs/design.md §2): a location runs one request at a time to
// completion; the only interleaving points inside a request are the blocking
// calls it makes itself (sync_rmi, future::get, rmi_fence, rmi_wait).
// Non-blocking calls made inside a request (async_rmi, opaque_rmi, rmi_flush)
// must not run other requests.
#include "support/test_support.hpp"

#include <cstdint>
#include <functional>
#include <thread>
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

// Some work the optimizer cannot drop, to widen the window in which a second
// request would be caught inside the first.
void busy(int rounds) {
  volatile std::uint64_t x = 1;
  for (int i = 0; i < rounds; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
}

class guarded : public armi::p_object {
 public:
  guarded() : m_owner(std::this_thread::get_id()), m_rng{0xfeedULL + armi::get_location_id()} {}

  // A lock-free, non-atomic read-modify-write with non-blocking RMI calls in
  // the middle.  No other request may run between the read and the write.
  std::uint64_t increment(std::uint64_t by) {
    enter();
    m_in_critical = true;
    std::uint64_t const entries = m_entries;
    std::uint64_t const v = m_counter;
    busy(100);
    auto const n = armi::get_num_locations();
    armi::async_rmi(static_cast<armi::location_id>(m_rng() % n), get_rmi_handle(), &guarded::touch);
    armi::async_rmi(armi::get_location_id(), get_rmi_handle(), &guarded::touch);
    auto f = armi::opaque_rmi(static_cast<armi::location_id>(m_rng() % n), get_rmi_handle(),
                              &guarded::peek);
    m_pending.push_back(std::move(f));
    armi::rmi_flush();
    busy(100);
    m_counter = v + by;
    ARMI_CHECK_EQ(m_entries, entries);
    m_in_critical = false;
    return m_counter;
  }

  void touch() {
    enter();
    ++m_touches;
  }
  std::uint64_t peek() {
    enter();
    return armi::get_location_id() * 7ULL + 3;
  }

  // A request that blocks in the middle.  Other requests may run during the
  // blocking call (and, for a call to self, must), never before or after it.
  std::uint64_t blocking_step(std::uint32_t kind, armi::location_id target) {
    enter();
    critical_stretch();
    auto const me = armi::get_location_id();
    std::uint64_t const before = m_entries;
    std::uint64_t r = 0;
    switch (kind) {
      case 0:
        r = armi::sync_rmi(target, get_rmi_handle(), &guarded::peek);
        ARMI_CHECK_EQ(r, target * 7ULL + 3);
        break;
      case 1: {
        auto f = armi::opaque_rmi(target, get_rmi_handle(), &guarded::peek);
        r = f.get();
        ARMI_CHECK_EQ(r, target * 7ULL + 3);
        break;
      }
      case 2:
        // A request to self is pending, so rmi_wait has something to serve.
        armi::async_rmi(me, get_rmi_handle(), &guarded::touch);
        armi::rmi_flush();
        armi::rmi_wait();
        ARMI_CHECK(m_entries > before);
        break;
      default:
        // The request to self can only run inside this sync_rmi: it must be
        // served here (interleaving at the blocking call), not deadlock.
        r = armi::sync_rmi(me, get_rmi_handle(), &guarded::peek);
        ARMI_CHECK_EQ(r, me * 7ULL + 3);
        ARMI_CHECK(m_entries > before);
        break;
    }
    critical_stretch();
    ++m_blocking_done;
    return r;
  }

  // Sends `buffers` buffers (one request each) from inside a request: past
  // the flow-control limit, let alone half of it, where a location sending
  // from its own code serves what has arrived.  Inside a request it must
  // not: no other request may start before this one ends.
  void flood(std::uint64_t buffers) {
    enter();
    m_in_critical = true;
    std::uint64_t const entries = m_entries;
    auto const n = armi::get_num_locations();
    auto const next = static_cast<armi::location_id>((armi::get_location_id() + 1) % n);
    for (std::uint64_t i = 0; i < buffers; ++i) {
      armi::async_rmi(next, get_rmi_handle(), &guarded::touch);
      armi::rmi_flush();
    }
    ARMI_CHECK_EQ(m_entries, entries);
    m_in_critical = false;
  }

  std::uint64_t counter() const { return m_counter; }
  std::uint64_t touches() const { return m_touches; }
  std::uint64_t blocking_done() const { return m_blocking_done; }
  void collect() {
    for (auto& f : m_pending) {
      auto const v = f.get();
      ARMI_CHECK(v % 7 == 3);
    }
    m_pending.clear();
  }

 private:
  void enter() {
    ARMI_CHECK(!m_in_critical);
    // Requests run on their location's own thread, never beside it; under
    // --armi-progress=thread also on the communication thread (while the
    // location computes: m_in_critical says it is never beside it).
    if (!armi::has_progress_thread()) ARMI_CHECK(std::this_thread::get_id() == m_owner);
    ++m_entries;
  }
  void critical_stretch() {
    m_in_critical = true;
    std::uint64_t const entries = m_entries;
    busy(200);
    auto const n = armi::get_num_locations();
    armi::async_rmi(static_cast<armi::location_id>(m_rng() % n), get_rmi_handle(), &guarded::touch);
    armi::rmi_flush();
    busy(200);
    ARMI_CHECK_EQ(m_entries, entries);
    m_in_critical = false;
  }

  bool m_in_critical = false;
  std::uint64_t m_entries = 0;
  std::uint64_t m_counter = 0;
  std::uint64_t m_touches = 0;
  std::uint64_t m_blocking_done = 0;
  std::thread::id m_owner;
  splitmix64 m_rng;
  std::vector<armi::future<std::uint64_t>> m_pending;
};

// The increments source `src` sends: (destination, amount, kind).
struct increment_plan {
  armi::location_id dest;
  std::uint64_t amount;
  unsigned kind;  // 0..7 async, 8 opaque, 9 sync
};
increment_plan plan(splitmix64& rng, armi::location_id n, bool hot_spot) {
  increment_plan p{};
  p.dest = hot_spot ? 0 : static_cast<armi::location_id>(rng() % n);
  p.amount = rng() % 1000 + 1;
  p.kind = static_cast<unsigned>(rng() % 10);
  return p;
}

void run_increments(bool hot_spot) {
  guarded g;
  armi::rmi_fence();
  auto const me = armi::get_location_id();
  auto const n = armi::get_num_locations();
  auto const h = g.get_rmi_handle();
  std::size_t const iters = armi_test::scaled(hot_spot ? 3000 : 6000);
  auto const seed = [](armi::location_id src) { return 0xc0ffee00ULL + src * 0x10001ULL; };

  std::vector<armi::future<std::uint64_t>> futures;
  splitmix64 rng{seed(me)};
  for (std::size_t i = 0; i < iters; ++i) {
    auto const p = plan(rng, n, hot_spot);
    // Half of them name the method as a constant (a handler of its own).
    bool const constant = p.amount % 2 == 0;
    armi_test::either_form<&guarded::increment>(constant, [&](auto m) {
      if (p.kind < 8)
        armi::async_rmi(p.dest, h, m, p.amount);
      else if (p.kind == 8)
        futures.push_back(armi::opaque_rmi(p.dest, h, m, p.amount));
      else
        ARMI_CHECK(armi::sync_rmi(p.dest, h, m, p.amount) >= p.amount);
    });
  }
  for (auto& f : futures) ARMI_CHECK(f.get() > 0);
  armi::rmi_fence();
  g.collect();
  armi::rmi_fence();

  // Every location replays every source's plan to know its exact total.
  std::uint64_t expected = 0;
  for (armi::location_id src = 0; src < n; ++src) {
    splitmix64 r{seed(src)};
    for (std::size_t i = 0; i < iters; ++i) {
      auto const p = plan(r, n, hot_spot);
      if (p.dest == me) expected += p.amount;
    }
  }
  ARMI_CHECK_EQ(g.counter(), expected);
  // Each increment sent two touches.
  std::uint64_t const touches = armi::allreduce_rmi(h, &guarded::touches, std::plus<>{});
  ARMI_CHECK_EQ(touches, 2 * iters * n);
  armi::rmi_fence();
}

}  // namespace

TEST_CASE(
    "atomicity: lock-free read-modify-write requests from all locations to random destinations "
    "are never interleaved",
    "[atomicity]") {
  armi_test::run([&] { run_increments(false); });
}

TEST_CASE("atomicity: every location increments location 0's counter without locks; total exact",
          "[atomicity]") {
  armi_test::run([&] { run_increments(true); });
}

TEST_CASE("atomicity: a request is interleaved only at the blocking call it makes", "[atomicity]") {
  armi_test::run([&] {
    guarded g;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = g.get_rmi_handle();
    splitmix64 rng{0xb10cULL + me};
    std::size_t const iters = armi_test::scaled(100);
    for (std::size_t i = 0; i < iters; ++i) {
      auto const d = static_cast<armi::location_id>(rng() % n);
      auto const kind = static_cast<std::uint32_t>(rng() % 4);
      auto const target = static_cast<armi::location_id>(rng() % n);
      // Plain increments to the same destination, to be caught inside the
      // critical stretches if the runtime interleaved them there.
      armi::async_rmi(d, h, &guarded::blocking_step, kind, target);
      armi::async_rmi(d, h, &guarded::increment, std::uint64_t{1});
      if (i % 10 == 0) {
        // The body's own blocking calls are interleaving points as well.
        auto const r = armi::sync_rmi(d, h, &guarded::blocking_step, kind, target);
        if (kind <= 1) ARMI_CHECK_EQ(r, target * 7ULL + 3);
      }
    }
    armi::rmi_fence();
    g.collect();
    armi::rmi_fence();
    std::uint64_t const steps = armi::allreduce_rmi(h, &guarded::blocking_done, std::plus<>{});
    ARMI_CHECK_EQ(steps, (iters + (iters + 9) / 10) * n);
    std::uint64_t const total = armi::allreduce_rmi(h, &guarded::counter, std::plus<>{});
    ARMI_CHECK_EQ(total, iters * n);
    armi::rmi_fence();
  });
}

TEST_CASE("atomicity: a request that sends past the flow-control limit runs no other request inside it",
          "[atomicity]") {
  armi_test::run([&] {
    guarded g;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = g.get_rmi_handle();
    auto const next = static_cast<armi::location_id>((me + 1) % n);
    std::uint64_t const buffers = 64 + 8 * std::uint64_t{n} + 64;  // the limit is 64 + 8 per location
    constexpr std::uint64_t rounds = 3, increments = 20;
    for (std::uint64_t r = 0; r < rounds; ++r) {
      // Increments from everywhere arrive while the floods run.
      armi::async_rmi(next, h, &guarded::flood, buffers);
      for (std::uint64_t i = 0; i < increments; ++i) armi::async_rmi(next, h, &guarded::increment, std::uint64_t{1});
    }
    armi::rmi_fence();
    g.collect();
    armi::rmi_fence();
    ARMI_CHECK_EQ(g.counter(), rounds * increments);
    std::uint64_t const touches = armi::allreduce_rmi(h, &guarded::touches, std::plus<>{});
    ARMI_CHECK_EQ(touches, (rounds * buffers + 2 * rounds * increments) * n);
    armi::rmi_fence();
  });
}
