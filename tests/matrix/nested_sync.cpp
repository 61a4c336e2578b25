// Nested sync_rmi (docs/design.md §2): sync_rmi serves incoming requests while it
// waits, so a method that itself calls sync_rmi (to anyone, itself included)
// does not deadlock, even when every location does this at the same time.
// Results are checked against a local replay of the deterministic call chains.
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

std::uint64_t alpha_value(armi::location_id loc) {
  return 1000 + 7ULL * loc;
}
std::uint64_t beta_value(armi::location_id loc) {
  return 5000 + 13ULL * loc;
}

// The result of a chain that starts at `at` on an alpha (or beta) object.
std::uint64_t replay(armi::location_id at, std::uint32_t depth, std::uint64_t seed, bool on_alpha) {
  std::uint64_t const v = on_alpha ? alpha_value(at) : beta_value(at);
  if (depth == 0) return v;
  splitmix64 r{seed};
  auto const next = static_cast<armi::location_id>(r() % armi::get_num_locations());
  std::uint64_t const s2 = r();
  return v * 31 + replay(next, depth - 1, s2, !on_alpha);
}

class beta;

// Two classes whose methods call each other through sync_rmi: alpha::hop on x
// calls beta::hop on y, which calls alpha::hop on z, ...
class alpha : public armi::p_object {
 public:
  alpha() : m_value(alpha_value(armi::get_location_id())) {}
  void set_partner(armi::rmi_handle h) { m_partner = h; }

  std::uint64_t hop(std::uint32_t depth, std::uint64_t seed);

  // Always calls itself on its own location: depth nested sync_rmis to self.
  std::uint64_t self_hop(std::uint32_t depth) {
    ++m_calls;
    if (depth == 0) return m_value;
    return m_value + 3 * armi::sync_rmi(armi::get_location_id(), get_rmi_handle(), &alpha::self_hop,
                                        depth - 1);
  }

  // Bounces between the origin and another location.
  std::uint64_t ping_pong(armi::location_id origin, armi::location_id other, std::uint32_t depth) {
    ++m_calls;
    if (depth == 0) return m_value;
    auto const next = armi::get_location_id() == origin ? other : origin;
    // Odd depths name the method as a constant (armi::method): nested calls
    // of both forms wait inside each other.
    return m_value + 5 * armi_test::either_form<&alpha::ping_pong>(depth % 2 == 1, [&](auto m) {
                       return armi::sync_rmi(next, get_rmi_handle(), m, origin, other, depth - 1);
                     });
  }

  // An async_rmi target that blocks in sync_rmi (and in future::get), then
  // reports the result to the origin.
  void ask(armi::location_id origin, std::uint64_t id, armi::location_id start, std::uint32_t depth,
           std::uint64_t seed) {
    std::uint64_t const r = armi::sync_rmi(start, get_rmi_handle(), &alpha::hop, depth, seed);
    auto f = armi::opaque_rmi(origin, get_rmi_handle(), &alpha::value);
    std::uint64_t const v = f.get();
    ARMI_CHECK_EQ(v, alpha_value(origin));
    armi::async_rmi(origin, get_rmi_handle(), &alpha::report, id, r);
  }
  void report(std::uint64_t id, std::uint64_t result) {
    ARMI_CHECK(id < m_expected.size());
    if (id < m_expected.size()) ARMI_CHECK_EQ(result, m_expected[id]);
    ++m_reports;
  }
  std::uint64_t expect(std::uint64_t result) {
    m_expected.push_back(result);
    return m_expected.size() - 1;
  }

  void noise() { ++m_noise; }
  std::uint64_t value() const { return m_value; }
  std::uint64_t reports() const { return m_reports; }
  std::uint64_t noise_count() const { return m_noise; }

 private:
  std::uint64_t m_value;
  armi::rmi_handle m_partner{};
  std::uint64_t m_calls = 0;
  std::uint64_t m_reports = 0;
  std::uint64_t m_noise = 0;
  std::vector<std::uint64_t> m_expected;
};

class beta : public armi::p_object {
 public:
  beta() : m_value(beta_value(armi::get_location_id())) {}
  void set_partner(armi::rmi_handle h) { m_partner = h; }

  std::uint64_t hop(std::uint32_t depth, std::uint64_t seed) {
    if (depth == 0) return m_value;
    splitmix64 r{seed};
    auto const next = static_cast<armi::location_id>(r() % armi::get_num_locations());
    std::uint64_t const s2 = r();
    return m_value * 31 + armi::sync_rmi(next, m_partner, &alpha::hop, depth - 1, s2);
  }

 private:
  std::uint64_t m_value;
  armi::rmi_handle m_partner{};
};

std::uint64_t alpha::hop(std::uint32_t depth, std::uint64_t seed) {
  ++m_calls;
  if (depth == 0) return m_value;
  splitmix64 r{seed};
  auto const next = static_cast<armi::location_id>(r() % armi::get_num_locations());
  std::uint64_t const s2 = r();
  // Some noise for the waiting locations to serve meanwhile.
  armi::async_rmi(static_cast<armi::location_id>(s2 % armi::get_num_locations()), get_rmi_handle(),
                  &alpha::noise);
  return m_value * 31 + armi::sync_rmi(next, m_partner, &beta::hop, depth - 1, s2);
}

}  // namespace

TEST_CASE(
    "nested_sync: chains of nested sync_rmi 3 to 8 deep across two classes from every location "
    "at once",
    "[nested_sync]") {
  armi_test::run([&] {
    alpha a;
    beta b;
    a.set_partner(b.get_rmi_handle());
    b.set_partner(a.get_rmi_handle());
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    splitmix64 rng{0x4e57ULL + 101ULL * me};
    std::size_t const iters = armi_test::scaled(400);
    for (std::size_t i = 0; i < iters; ++i) {
      auto const start = static_cast<armi::location_id>(rng() % n);
      auto const depth = static_cast<std::uint32_t>(3 + rng() % 6);
      std::uint64_t const seed = rng();
      if (i % 2 == 0) {
        std::uint64_t const r = armi::sync_rmi(start, a.get_rmi_handle(), &alpha::hop, depth, seed);
        ARMI_CHECK_EQ(r, replay(start, depth, seed, true));
      } else {
        std::uint64_t const r = armi::sync_rmi(start, b.get_rmi_handle(), &beta::hop, depth, seed);
        ARMI_CHECK_EQ(r, replay(start, depth, seed, false));
      }
    }
    armi::rmi_fence();
    // alpha::hop sends one noise request per hop that has depth > 0.
    std::uint64_t const noise =
        armi::allreduce_rmi(a.get_rmi_handle(), &alpha::noise_count, std::plus<>{});
    ARMI_CHECK(noise > 0);
    armi::rmi_fence();
  });
}

TEST_CASE("nested_sync: sync_rmi to self from the body and nested 8 deep inside methods",
          "[nested_sync]") {
  armi_test::run([&] {
    alpha a;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const h = a.get_rmi_handle();
    for (std::uint32_t depth = 0; depth <= 8; ++depth) {
      std::uint64_t expected = alpha_value(me);
      for (std::uint32_t d = 0; d < depth; ++d) expected = alpha_value(me) + 3 * expected;
      for (int rep = 0; rep < 20; ++rep)
        ARMI_CHECK_EQ(armi::sync_rmi(me, h, &alpha::self_hop, depth), expected);
    }
    armi::rmi_fence();
  });
}

// Deeper than a location's answer cells (answers.hpp: 32): the calls
// nested beyond them get their answers as reply messages.
TEST_CASE("nested_sync: sync_rmi to self nested 40 deep", "[nested_sync]") {
  armi_test::run([&] {
    alpha a;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    std::uint32_t const depth = 40;
    std::uint64_t expected = alpha_value(me);
    for (std::uint32_t d = 0; d < depth; ++d) expected = alpha_value(me) + 3 * expected;
    for (int rep = 0; rep < 5; ++rep)
      ARMI_CHECK_EQ(armi::sync_rmi(me, a.get_rmi_handle(), &alpha::self_hop, depth), expected);
    armi::rmi_fence();
  });
}

TEST_CASE("nested_sync: ping-pong nested sync_rmi between pairs of locations", "[nested_sync]") {
  for (std::uint32_t const depth : {8u, 70u}) {
    INFO("depth " << depth);
    armi_test::run([&] {
      alpha a;
      armi::rmi_fence();
      auto const me = armi::get_location_id();
      auto const n = armi::get_num_locations();
      auto const other = static_cast<armi::location_id>((me + 1) % n);
      // Starts on `other`, then origin, other, ... (values in replay order).
      std::uint64_t expected = 0;
      {
        std::vector<std::uint64_t> vals;
        armi::location_id at = other;
        for (std::uint32_t d = 0; d <= depth; ++d) {
          vals.push_back(alpha_value(at));
          at = at == me ? other : me;
        }
        expected = vals.back();
        for (std::size_t i = vals.size() - 1; i-- > 0;) expected = vals[i] + 5 * expected;
      }
      int const reps = static_cast<int>(armi_test::scaled(depth > 8 ? 20 : 200));
      for (int rep = 0; rep < reps; ++rep)
        ARMI_CHECK_EQ(armi::sync_rmi(other, a.get_rmi_handle(), &alpha::ping_pong, me, other, depth),
                      expected);
      armi::rmi_fence();
    });
  }
}

TEST_CASE("nested_sync: async_rmi targets that block in nested sync_rmi and future::get",
          "[nested_sync]") {
  armi_test::run([&] {
    alpha a;
    beta b;
    a.set_partner(b.get_rmi_handle());
    b.set_partner(a.get_rmi_handle());
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    splitmix64 rng{0xa5cULL + 31ULL * me};
    std::size_t const asks = armi_test::scaled(150);
    for (std::size_t i = 0; i < asks; ++i) {
      auto const where = static_cast<armi::location_id>(rng() % n);
      auto const start = static_cast<armi::location_id>(rng() % n);
      auto const depth = static_cast<std::uint32_t>(rng() % 6);
      std::uint64_t const seed = rng();
      std::uint64_t id = 0;
      {
        // A direct call: under --armi-progress=thread, reports may run meanwhile.
        armi::hold_requests const hold;
        id = a.expect(replay(start, depth, seed, true));
      }
      armi::async_rmi(where, a.get_rmi_handle(), &alpha::ask, me, id, start, depth, seed);
    }
    armi::rmi_fence();
    ARMI_CHECK_EQ(a.reports(), std::uint64_t{asks});
    armi::rmi_fence();
  });
}
