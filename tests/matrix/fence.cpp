// rmi_fence (docs/design.md §2): collective; returns when every location has
// arrived and every RMI issued before it, including the RMIs those RMIs
// issued, has been executed.
//
// Every count below is checked LOCALLY right after the fence, with no further
// RMI (a later RMI would be ordered behind the ones under test and could hide a
// fence that returned early).  The expected counts are computed by replaying
// every location's deterministic random choices.
#include "support/test_support.hpp"

#include <cstdint>
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

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  splitmix64 r{a ^ (b * 0xd1b54a32d192ed03ULL)};
  return r();
}

class counter : public armi::p_object {
 public:
  void add(std::uint64_t v) {
    ++m_count;
    m_sum += v;
  }
  std::uint64_t add_and_get(std::uint64_t v) {
    add(v);
    return m_count;
  }

  // A chain: runs here, then forwards itself to a random location until no
  // hops are left; then tells its origin.
  void forward(armi::location_id origin, std::uint32_t hops, std::uint64_t state) {
    ++m_hops_here;
    if (hops == 0) {
      armi::async_rmi(origin, get_rmi_handle(), &counter::chain_done);
      return;
    }
    splitmix64 r{state};
    auto const next = static_cast<armi::location_id>(r() % armi::get_num_locations());
    // Every other hop names the method as a constant (armi::method): the
    // fence counts requests of both forms.
    armi_test::either_form<&counter::forward>(
        hops % 2 == 0, [&](auto m) { armi::async_rmi(next, get_rmi_handle(), m, origin, hops - 1, r.state); });
  }
  void chain_done() { ++m_chains_done; }

  // A tree: every node with depth > 0 spawns `fanout` children at random
  // locations; every leaf tells the root's origin.
  void spawn(armi::location_id origin, std::uint32_t depth, std::uint32_t fanout,
             std::uint64_t seed) {
    ++m_nodes_here;
    if (depth == 0) {
      armi::async_rmi(origin, get_rmi_handle(), &counter::leaf_done);
      return;
    }
    for (std::uint32_t k = 0; k < fanout; ++k) {
      std::uint64_t const child = mix(seed, k);
      armi::async_rmi(static_cast<armi::location_id>(child % armi::get_num_locations()),
                      get_rmi_handle(), &counter::spawn, origin, depth - 1, fanout, child);
    }
  }
  void leaf_done() { ++m_leaves_done; }

  std::uint64_t count() const { return m_count; }
  std::uint64_t sum() const { return m_sum; }
  std::uint64_t hops_here() const { return m_hops_here; }
  std::uint64_t chains_done() const { return m_chains_done; }
  std::uint64_t nodes_here() const { return m_nodes_here; }
  std::uint64_t leaves_done() const { return m_leaves_done; }

 private:
  std::uint64_t m_count = 0, m_sum = 0;
  std::uint64_t m_hops_here = 0, m_chains_done = 0;
  std::uint64_t m_nodes_here = 0, m_leaves_done = 0;
};

// What location `src` sends in round `round` of the simple traffic tests.
struct message {
  armi::location_id dest;
  std::uint64_t value;
};
std::uint64_t traffic_seed(armi::location_id src, std::uint64_t round) {
  return mix(0x7aff1cULL + src, round);
}
message next_message(splitmix64& rng, armi::location_id n) {
  auto const d = static_cast<armi::location_id>(rng() % n);
  return {d, rng() % 100000};
}

}  // namespace

TEST_CASE("fence: every async_rmi issued before rmi_fence has run when it returns", "[fence]") {
  armi_test::run([&] {
    counter c;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = c.get_rmi_handle();
    // Few messages (they sit in partial buffers) and many.
    std::size_t const sizes[] = {1, 3, armi_test::scaled(20000)};
    std::uint64_t exp_count = 0, exp_sum = 0;
    for (std::uint64_t round = 0; round < 3; ++round) {
      splitmix64 rng{traffic_seed(me, round)};
      for (std::size_t i = 0; i < sizes[round]; ++i) {
        auto const m = next_message(rng, n);
        armi::async_rmi(m.dest, h, &counter::add, m.value);
      }
      // Under --armi-progress=thread the next round's requests could run here while this location checks.
      armi::hold_requests const hold;
      armi::rmi_fence();
      for (armi::location_id src = 0; src < n; ++src) {
        splitmix64 r{traffic_seed(src, round)};
        for (std::size_t i = 0; i < sizes[round]; ++i) {
          auto const m = next_message(r, n);
          if (m.dest == me) {
            ++exp_count;
            exp_sum += m.value;
          }
        }
      }
      ARMI_CHECK_EQ(c.count(), exp_count);
      ARMI_CHECK_EQ(c.sum(), exp_sum);
    }
    armi::rmi_fence();
  });
}

TEST_CASE("fence: one async_rmi to the next location then a fence", "[fence]") {
  armi_test::run([&] {
    counter c;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    armi::async_rmi((me + 1) % n, c.get_rmi_handle(), &counter::add, std::uint64_t{me});
    armi::rmi_fence();
    ARMI_CHECK_EQ(c.count(), std::uint64_t{1});
    ARMI_CHECK_EQ(c.sum(), std::uint64_t{(me + n - 1) % n});
    armi::rmi_fence();
  });
}

TEST_CASE("fence: transitive chains hundreds of hops deep all complete before one fence returns",
          "[fence]") {
  armi_test::run([&] {
    counter c;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    std::uint32_t const chains = 12;
    auto const hops = static_cast<std::uint32_t>(armi_test::scaled(400));
    auto const chain_seed = [](armi::location_id origin, std::uint32_t k) {
      return mix(0xc4a1ULL + origin, k);
    };
    for (std::uint32_t k = 0; k < chains; ++k) {
      splitmix64 r{chain_seed(me, k)};
      auto const first = static_cast<armi::location_id>(r() % n);
      // The chain's length varies a little: hops - k.
      armi::async_rmi(first, c.get_rmi_handle(), &counter::forward, me, hops - k, r.state);
    }
    armi::rmi_fence();
    ARMI_CHECK_EQ(c.chains_done(), std::uint64_t{chains});
    // Replay every chain to count the hops that ran here.
    std::uint64_t expected_hops = 0;
    for (armi::location_id origin = 0; origin < n; ++origin) {
      for (std::uint32_t k = 0; k < chains; ++k) {
        splitmix64 r{chain_seed(origin, k)};
        auto at = static_cast<armi::location_id>(r() % n);
        for (std::uint32_t left = hops - k;; --left) {
          if (at == me) ++expected_hops;
          if (left == 0) break;
          at = static_cast<armi::location_id>(r() % n);
        }
      }
    }
    ARMI_CHECK_EQ(c.hops_here(), expected_hops);
    armi::rmi_fence();
  });
}

TEST_CASE("fence: trees of requests that spawn requests all complete before one fence returns",
          "[fence]") {
  armi_test::run([&] {
    counter c;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    std::uint32_t const fanout = 3;
    std::uint32_t const depth = armi_test::scaled(20) >= 20 ? 7 : 4;
    std::uint64_t const root_seed = mix(0x7ee5ULL, me);
    {
      // The root runs here, its children anywhere.  A direct call, not a
      // request: under --armi-progress=thread the others' requests to c may
      // run meanwhile, so it holds them off.
      armi::hold_requests const hold;
      c.spawn(me, depth, fanout, root_seed);
    }
    armi::rmi_fence();
    std::uint64_t leaves = 1;
    for (std::uint32_t i = 0; i < depth; ++i) leaves *= fanout;
    ARMI_CHECK_EQ(c.leaves_done(), leaves);
    // Replay all trees: nodes that ran here (the roots ran on their origin).
    std::uint64_t expected_nodes = 1;  // this location's own root
    struct node {
      std::uint32_t depth;
      std::uint64_t seed;
    };
    std::vector<node> stack;
    for (armi::location_id origin = 0; origin < n; ++origin) {
      stack.push_back({depth, mix(0x7ee5ULL, origin)});
      while (!stack.empty()) {
        auto const nd = stack.back();
        stack.pop_back();
        if (nd.depth == 0) continue;
        for (std::uint32_t k = 0; k < fanout; ++k) {
          std::uint64_t const child = mix(nd.seed, k);
          if (child % n == me) ++expected_nodes;
          stack.push_back({nd.depth - 1, child});
        }
      }
    }
    ARMI_CHECK_EQ(c.nodes_here(), expected_nodes);
    armi::rmi_fence();
  });
}

TEST_CASE("fence: many fences in a loop with traffic and sync and opaque requests in between",
          "[fence]") {
  armi_test::run([&] {
    counter c;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = c.get_rmi_handle();
    std::uint64_t const rounds = armi_test::scaled(200);
    std::uint64_t exp_count = 0, exp_sum = 0;
    std::vector<std::uint64_t> exp_count_at(n, 0);  // every destination's expected count
    std::uint64_t const chains_before = c.chains_done();
    for (std::uint64_t round = 0; round < rounds; ++round) {
      splitmix64 rng{traffic_seed(me, round)};
      // Round-dependent, location-dependent amount of traffic; some locations
      // send nothing in some rounds.
      std::size_t const k =
          (round + me) % 5 == 0 ? 0 : static_cast<std::size_t>(traffic_seed(me, round) % 20);
      for (std::size_t i = 0; i < k; ++i) {
        auto const m = next_message(rng, n);
        armi::async_rmi(m.dest, h, &counter::add, m.value);
      }
      if (round % 7 == 3) {
        // An opaque request whose future is dropped, and a short chain.
        auto const d = static_cast<armi::location_id>((me + round) % n);
        { auto f = armi::opaque_rmi(d, h, &counter::add_and_get, std::uint64_t{0}); }
        armi::async_rmi(d, h, &counter::forward, me, std::uint32_t{5}, round);
      }
      // Under --armi-progress=thread the next round's requests could run here
      // while this location checks (design.md §2): the hold keeps them off.
      armi::hold_requests const hold;
      armi::rmi_fence();
      for (armi::location_id src = 0; src < n; ++src) {
        splitmix64 r{traffic_seed(src, round)};
        std::size_t const ks =
            (round + src) % 5 == 0 ? 0 : static_cast<std::size_t>(traffic_seed(src, round) % 20);
        for (std::size_t i = 0; i < ks; ++i) {
          auto const m = next_message(r, n);
          ++exp_count_at[m.dest];
          if (m.dest == me) {
            ++exp_count;
            exp_sum += m.value;
          }
        }
        if (round % 7 == 3) {
          ++exp_count_at[(src + round) % n];  // the opaque add of 0
          if ((src + round) % n == me) ++exp_count;
        }
      }
      ARMI_CHECK_EQ(c.count(), exp_count);
      ARMI_CHECK_EQ(c.sum(), exp_sum);
      std::uint64_t const chains_expected = (round + 4) / 7;  // rounds 3, 10, 17, ... so far
      ARMI_CHECK_EQ(c.chains_done() - chains_before, chains_expected);
      if (round % 13 == 0) {
        // A sync_rmi right after a fence sees the state the fence produced.
        auto const d = static_cast<armi::location_id>((me + 1) % n);
        std::uint64_t const seen = armi::sync_rmi(d, h, &counter::count);
        ARMI_CHECK_EQ(seen, exp_count_at[d]);
        armi::rmi_fence();  // nobody sends the next round's traffic while others read
      }
    }
    armi::rmi_fence();
  });
}

TEST_CASE("fence: repeated fences each covering fresh transitive chains and trees", "[fence]") {
  // Requests are still being executed and sent while locations enter the
  // fence, so a termination detector that trusts one round of counts (sent
  // and executed totals can balance while a request is in flight) is caught.
  armi_test::run([&] {
    counter c;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    std::uint64_t const rounds = armi_test::scaled(100);
    for (std::uint64_t round = 0; round < rounds; ++round) {
      std::uint64_t const chains_before = c.chains_done();
      std::uint64_t const leaves_before = c.leaves_done();
      for (std::uint32_t k = 0; k < 3; ++k) {
        splitmix64 r{mix(round * 131 + k, me)};
        auto const first = static_cast<armi::location_id>(r() % n);
        armi::async_rmi(first, c.get_rmi_handle(), &counter::forward, me,
                        static_cast<std::uint32_t>(10 + (r() % 40)), r.state);
      }
      {
        armi::hold_requests const hold;  // a direct call (see the tree case above)
        c.spawn(me, 3, 3, mix(round, me + 1000));
      }
      armi::rmi_fence();
      ARMI_CHECK_EQ(c.chains_done() - chains_before, std::uint64_t{3});
      ARMI_CHECK_EQ(c.leaves_done() - leaves_before, std::uint64_t{27});
    }
    armi::rmi_fence();
  });
}

TEST_CASE("fence: fences with no traffic at all terminate", "[fence]") {
  armi_test::run([&] {
    std::size_t const rounds = armi_test::scaled(500);
    for (std::size_t i = 0; i < rounds; ++i) armi::rmi_fence();
    counter c;  // and with a registered object that receives nothing
    for (std::size_t i = 0; i < 10; ++i) armi::rmi_fence();
    ARMI_CHECK_EQ(c.count(), std::uint64_t{0});
  });
}
