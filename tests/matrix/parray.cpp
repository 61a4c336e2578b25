// parray (get/set/get_async/update with every named op and user functors,
// distributions, errors) and random_updates (the HPCC stream and its
// verification), each against a sequential reference computed here.
#include "support/test_support.hpp"

#include <armi/algorithms/random_updates.hpp>
#include <armi/containers/parray.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using armi_test::mix64;

// A user operation: multiplication modulo 2^64 (commutative, so the order of
// updates from different locations does not matter).
struct multiply_op {
  std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const { return a * b; }
};

// Not commutative: only the order of one location's updates fixes the result.
struct fold_op {
  std::uint64_t operator()(std::uint64_t acc, std::uint64_t v) const { return acc * 31 + v; }
};

// The updates location src makes in the op tests: (index, value) pairs.
struct planned_update {
  std::size_t index;
  std::uint64_t value;
};
std::vector<planned_update> plan_of(armi::location_id src, std::size_t count, std::size_t n) {
  std::vector<planned_update> out;
  for (std::size_t t = 0; t < count; ++t) {
    std::uint64_t const r = mix64(src * 1'000'003ULL + t);
    out.push_back({static_cast<std::size_t>(r % n), (r >> 20) | 1});  // odd values, for multiply_op
  }
  return out;
}

template <class Op>
void check_update(Op op, std::uint64_t init, std::string const& name) {
  auto const me = armi::get_location_id();
  auto const p = armi::get_num_locations();
  std::size_t const n = 37 * p + 5;  // not divisible by p
  std::size_t const count = armi_test::scaled(300);
  armi::parray<std::uint64_t> a(n, init);
  for (auto const& u : plan_of(me, count, n)) a.update(u.index, op, u.value);
  armi::rmi_fence();

  std::vector<std::uint64_t> expect(n, init);
  for (armi::location_id src = 0; src < p; ++src)
    for (auto const& u : plan_of(src, count, n)) expect[u.index] = op(expect[u.index], u.value);
  std::size_t wrong = 0;
  auto const mine = a.local();
  for (std::size_t k = 0; k < mine.size(); ++k)
    if (mine[k] != expect[a.distribution().global_index(me, k)]) ++wrong;
  if (wrong != 0)
    armi_test::failures().add("update with " + name + ": " + std::to_string(wrong) + " wrong elements on location " +
                              std::to_string(me));
  armi::rmi_fence();
}

// The HPCC stream, applied sequentially to a table of 2^log_size words.
std::vector<std::uint64_t> sequential_random_updates(unsigned log_size, std::uint64_t n_updates) {
  std::vector<std::uint64_t> t(std::size_t{1} << log_size);
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = i;
  std::uint64_t v = 1;
  for (std::uint64_t j = 0; j < n_updates; ++j) {
    v = (v << 1) ^ (static_cast<std::int64_t>(v) < 0 ? 7 : 0);  // the HPCC LFSR step, written out
    t[v & (t.size() - 1)] ^= v;
  }
  return t;
}

}  // namespace

TEST_CASE("parray: size, owner, local part, set then get and get_async", "[parray]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    std::size_t const n = 53 * p + 3;
    armi::parray<std::int64_t> a(n, -1);
    ARMI_CHECK_EQ(a.size(), n);
    ARMI_CHECK_EQ(a.local().size(), a.distribution().local_size(me));
    ARMI_CHECK(a.distribution() == armi::block_distribution(n, p));
    for (std::size_t i = 0; i < n; i += 7) ARMI_CHECK_EQ(a.owner(i), a.distribution().owner(i));
    for (auto x : a.local()) ARMI_CHECK_EQ(x, std::int64_t{-1});

    // Location me writes the indices i with i % p == me: mostly remote.
    auto const value = [](std::size_t i) { return static_cast<std::int64_t>(i * i) - 17; };
    for (std::size_t i = me; i < n; i += p) a.set(i, value(i));
    armi::rmi_fence();
    std::vector<armi::future<std::int64_t>> futures;
    for (std::size_t t = 0; t < 20; ++t) {
      std::size_t const i = mix64(me * 131 + t) % n;
      ARMI_CHECK_EQ(a.get(i), value(i));
      futures.push_back(a.get_async(i));
    }
    for (std::size_t t = 0; t < futures.size(); ++t) ARMI_CHECK_EQ(futures[t].get(), value(mix64(me * 131 + t) % n));
    // A local element's get_async is answered at once: the future is ready.
    for (std::size_t k = 0; k < a.local().size(); ++k) {
      std::size_t const i = a.distribution().global_index(me, k);
      auto f = a.get_async(i);
      ARMI_CHECK(f.ready());
      ARMI_CHECK_EQ(f.get(), value(i));
    }

    // A set followed by a get from the same location sees the set (one owner, in order).
    std::size_t const mine_to_poke = (me * 7919 + 11) % n;
    armi::rmi_fence();
    if (me == p - 1) {
      a.set(mine_to_poke, 4242);
      ARMI_CHECK_EQ(a.get(mine_to_poke), std::int64_t{4242});
      a.set(mine_to_poke, value(mine_to_poke));
    }
    armi::rmi_fence();

    std::vector<std::int64_t> const all = a.gather();
    ARMI_CHECK_EQ(all.size(), n);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < all.size(); ++i) wrong += all[i] != value(i);
    ARMI_CHECK_EQ(wrong, std::size_t{0});
    armi::rmi_fence();
  });
}

TEST_CASE("parray: update with every named op, std functors and user functors", "[parray]") {
  armi_test::run([] {
    check_update(armi::plus_op{}, 5, "plus_op");
    check_update(armi::xor_op{}, 0x55, "xor_op");
    check_update(armi::min_op{}, std::numeric_limits<std::uint64_t>::max(), "min_op");
    check_update(armi::max_op{}, 0, "max_op");
    check_update(std::plus<>{}, 1, "std::plus<>");
    check_update(std::bit_xor<std::uint64_t>{}, 3, "std::bit_xor");
    check_update(multiply_op{}, 1, "multiply_op");
  });
}

TEST_CASE("parray: one location's updates of one element apply in the order issued", "[parray]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    std::size_t const n = 3 * p + 1;
    armi::parray<std::uint64_t> a(n, 7);
    // Location s folds a sequence into element (s * 3) % n, owned by anyone.
    std::size_t const target = (me * 3) % n;
    std::size_t const count = armi_test::scaled(200);
    for (std::size_t t = 0; t < count; ++t) a.update(target, fold_op{}, mix64(me + t * 977));
    armi::rmi_fence();
    std::vector<std::uint64_t> expect(n, 7);
    for (armi::location_id s = 0; s < p; ++s)
      for (std::size_t t = 0; t < count; ++t) expect[(s * 3) % n] = fold_op{}(expect[(s * 3) % n], mix64(s + t * 977));
    ARMI_CHECK(a.gather() == expect);
    armi::rmi_fence();
  });
}

TEST_CASE("parray: other element types and distributions", "[parray]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    std::size_t const n = 11 * p + 2;

    // Cyclic, double, min_op from every location.
    armi::parray<double, armi::cyclic_distribution> c(n, 1e300);
    for (std::size_t i = 0; i < n; ++i) c.update(i, armi::min_op{}, static_cast<double>(me) + 0.5 * static_cast<double>(i));
    armi::rmi_fence();
    for (std::size_t k = 0; k < c.local().size(); ++k)
      ARMI_CHECK_EQ(c.local()[k], 0.5 * static_cast<double>(k * p + me));
    ARMI_CHECK_EQ(c.get(n - 1), 0.5 * static_cast<double>(n - 1));

    // Block-cyclic from a distribution object; a string element.
    armi::parray<std::string, armi::block_cyclic_distribution> s(armi::block_cyclic_distribution(n, p, 3), "x");
    for (std::size_t i = me; i < n; i += p) s.update(i, armi::plus_op{}, std::to_string(i));
    armi::rmi_fence();
    for (std::size_t i = 0; i < n; i += 5) ARMI_CHECK(s.get(i) == "x" + std::to_string(i));

    // Blocks from counts: location 0 owns nothing.
    std::vector<std::size_t> counts(p, 4);
    counts[0] = 0;
    armi::parray<int> z(armi::block_distribution::from_counts(counts), 9);
    if (me == 0) ARMI_CHECK(z.local().empty());
    for (std::size_t i = 0; i < z.size(); ++i) z.update(i, armi::plus_op{}, 1);
    armi::rmi_fence();
    for (int x : z.local()) ARMI_CHECK_EQ(x, 9 + static_cast<int>(p));
    armi::rmi_fence();
  });
}

TEST_CASE("parray: empty arrays and index errors", "[parray]") {
  armi_test::run([] {
    auto const p = armi::get_num_locations();
    armi::parray<int> empty(0);
    ARMI_CHECK(empty.empty());
    ARMI_CHECK(empty.local().empty());
    ARMI_CHECK(empty.gather().empty());

    std::size_t const n = 2 * p + 1;
    armi::parray<int> a(n);
    auto const throws_out_of_range = [&](auto&& f) {
      try {
        f();
      } catch (std::out_of_range const& e) {
        std::string const what = e.what();
        return what.find(std::to_string(n)) != std::string::npos && what.find(std::to_string(n + 4)) != std::string::npos;
      }
      return false;
    };
    ARMI_CHECK(throws_out_of_range([&] { (void)a.get(n + 4); }));
    ARMI_CHECK(throws_out_of_range([&] { a.set(n + 4, 1); }));
    ARMI_CHECK(throws_out_of_range([&] { a.update(n + 4, armi::plus_op{}, 1); }));
    ARMI_CHECK(throws_out_of_range([&] { (void)a.get_async(n + 4); }));
    armi::rmi_fence();
  });
}

TEST_CASE("random_updates: the HPCC stream jumps ahead exactly", "[parray][random_updates]") {
  using s = armi::random_updates_stream;
  std::uint64_t v = 1;
  for (std::uint64_t n = 0; n < 2000; ++n) {
    REQUIRE(s::at(n) == v);
    v = s::step(v);
  }
  REQUIRE(s::at(1000 + 12345) == s::multiply(s::at(1000), s::at(12345)));
  // HPCC's PERIOD: the stream repeats after 1317624576693539401 steps.
  REQUIRE(s::at(1317624576693539401ULL) == 1);
  REQUIRE(s::at(1317624576693539401ULL + 77) == s::at(77));
}

TEST_CASE("random_updates: the parallel run equals the sequential stream, and verifies with 0 errors",
          "[parray][random_updates]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    unsigned const log_size = armi_test::scaled(1024) >= 1024 ? 10 : 7;
    std::uint64_t const n_updates = 4 * (std::uint64_t{1} << log_size) + 3;  // not divisible by most p
    armi::parray<std::uint64_t> t(std::size_t{1} << log_size);
    armi::random_updates_init(t);
    armi::random_updates(t, n_updates);
    std::vector<std::uint64_t> const expect = sequential_random_updates(log_size, n_updates);
    std::size_t wrong = 0;
    for (std::size_t k = 0; k < t.local().size(); ++k)
      wrong += t.local()[k] != expect[t.distribution().global_index(me, k)];
    ARMI_CHECK_EQ(wrong, std::size_t{0});
    ARMI_CHECK_EQ(armi::random_updates_verify(t, n_updates), std::uint64_t{0});
    // Verification undid everything: table[i] == i again.
    for (std::size_t k = 0; k < t.local().size(); ++k)
      ARMI_CHECK_EQ(t.local()[k], t.distribution().global_index(me, k));

    // A corrupted word is counted (the check can fail).
    armi::rmi_fence();
    if (me == 0) t.set(5, 12345);
    armi::rmi_fence();
    ARMI_CHECK_EQ(armi::random_updates_verify(t, 0), std::uint64_t{1});

    // Cyclic tables work too; fewer updates than locations as well.
    armi::parray<std::uint64_t, armi::cyclic_distribution> c(64);
    armi::random_updates_init(c);
    armi::random_updates(c, 3);
    std::vector<std::uint64_t> const expect3 = sequential_random_updates(6, 3);
    ARMI_CHECK(c.gather() == expect3);
    // Enough updates that each location applies full batches of its own words.
    armi::random_updates_init(c);
    armi::random_updates(c, 1000);
    ARMI_CHECK(c.gather() == sequential_random_updates(6, 1000));

    armi::parray<std::uint64_t> bad(6);
    bool threw = false;
    try {
      armi::random_updates(bad, 10);
    } catch (std::invalid_argument const&) {
      threw = true;
    }
    ARMI_CHECK(threw);
    armi::rmi_fence();
  });
}
