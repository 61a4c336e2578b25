// armi::pvector (include/armi/containers/pvector.hpp): every operation
// against a sequential reference that each location computes on its own:
// construction, get/get_async/set/operator[]/apply, local(), owner,
// out-of-range indices, push_back + update_distribution/rebalance, resize
// (grow, shrink, to and from empty), get_range/gather/for_each_global,
// swap; block, cyclic and block-cyclic layouts; pvector<std::vector<int>>;
// sizes not divisible by the location count and locations that own nothing.
#include "support/test_support.hpp"

#include <armi/containers/pvector.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using armi_test::mix64;

// True iff f() throws std::out_of_range whose message names index and size.
template <class F>
bool throws_out_of_range(F f, std::size_t index, std::size_t size) {
  try {
    f();
  } catch (std::out_of_range const& e) {
    std::string const what = e.what();
    return what.find("index " + std::to_string(index)) != std::string::npos &&
           what.find("size " + std::to_string(size)) != std::string::npos;
  } catch (...) {
    return false;
  }
  return false;
}

struct add_to {
  void operator()(std::uint64_t& x, std::uint64_t by) const { x += by; }
};

// The sizes every layout is tried with: empty, fewer than 7 locations,
// not divisible by 2, 4 or 7, and larger.
std::vector<std::size_t> const sizes = {0, 1, 3, 10, 29, armi_test::scaled(1000) + 3};

// Writes (set / operator[] / apply from every location), reads back
// (get / get_async / operator[] / gather / for_each_global) against the
// reference value(i).
template <class V>
void exercise(V& v, std::size_t n) {
  auto const me = armi::get_location_id();
  auto const p = armi::get_num_locations();
  auto const value = [](std::size_t i) { return mix64(i) % 1000000; };

  ARMI_CHECK_EQ(v.size(), n);
  ARMI_CHECK_EQ(v.local().size(), v.distribution().local_size(me));
  for (auto x : v.local()) ARMI_CHECK_EQ(x, std::uint64_t{42});

  // Writers are spread: index i is written by location i % p, alternating the way.
  for (std::size_t i = me; i < n; i += p) {
    if (i % 3 == 0)
      v.set(i, value(i));
    else if (i % 3 == 1)
      v[i] = value(i);
    else
      v.set(i, value(i) - 5);
  }
  armi::rmi_fence();
  for (std::size_t i = me; i < n; i += p)
    if (i % 3 == 2) v.apply(i, add_to{}, std::uint64_t{5});
  armi::rmi_fence();

  // The local part holds exactly the owned indices, in local order.
  auto const local = v.local();
  for (std::size_t k = 0; k < local.size(); ++k)
    ARMI_CHECK_EQ(local[k], value(v.distribution().global_index(me, k)));

  // Reads of every index from every location, in three ways.
  std::vector<armi::future<std::uint64_t>> futures;
  for (std::size_t i = 0; i < n; ++i) futures.push_back(v.get_async((i + me) % n));
  for (std::size_t i = 0; i < n; ++i) ARMI_CHECK_EQ(futures[i].get(), value((i + me) % n));
  // (sync reads one at a time are round trips: a sample of ~60 indices, the last one included)
  std::size_t const stride = n / 60 + 1;
  for (std::size_t i = n == 0 ? 0 : (n - 1 - me) % stride; i < n; i += stride) {
    ARMI_CHECK_EQ(v.get(i), value(i));
    std::uint64_t const via_proxy = v[i];
    ARMI_CHECK_EQ(via_proxy, value(i));
    ARMI_CHECK_EQ(v.owner(i), v.distribution().owner(i));
  }
  auto const all = v.gather();
  ARMI_CHECK_EQ(all.size(), n);
  for (std::size_t i = 0; i < all.size(); ++i) ARMI_CHECK_EQ(all[i], value(i));
  if (n >= 4) {
    auto const part = v.get_range(1, n - 2);
    ARMI_CHECK_EQ(part.size(), n - 3);
    for (std::size_t i = 0; i < part.size(); ++i) ARMI_CHECK_EQ(part[i], value(i + 1));
  }
  std::size_t expect = 0;
  v.for_each_global(
      [&](std::size_t i, std::uint64_t x) {
        ARMI_CHECK_EQ(i, expect);
        ARMI_CHECK_EQ(x, value(i));
        ++expect;
      },
      7);
  ARMI_CHECK_EQ(expect, n);

  // Out of range: the caller gets std::out_of_range naming index and size.
  ARMI_CHECK(throws_out_of_range([&] { (void)v.get(n); }, n, n));
  ARMI_CHECK(throws_out_of_range([&] { (void)v.get_async(n + 5); }, n + 5, n));
  ARMI_CHECK(throws_out_of_range([&] { v.set(n, 1); }, n, n));
  ARMI_CHECK(throws_out_of_range([&] { v[n + 1] = 1; }, n + 1, n));
  ARMI_CHECK(throws_out_of_range([&] { (void)v.owner(n); }, n, n));
  ARMI_CHECK(throws_out_of_range([&] { (void)v.get_range(0, n + 1); }, n + 1, n));
  armi::rmi_fence();
}

// resize(n) against the reference: kept prefix, new elements = fill.
template <class V>
void check_resize(V& v, std::vector<std::uint64_t>& ref, std::size_t n, std::uint64_t fill) {
  ref.resize(n, fill);
  v.resize(n, fill);
  ARMI_CHECK_EQ(v.size(), n);
  ARMI_CHECK_EQ(v.local().size(), v.distribution().local_size(armi::get_location_id()));
  ARMI_CHECK(v.gather() == ref);
}

template <class V>
void resize_sequence(V& v, std::size_t n0) {
  std::vector<std::uint64_t> ref(n0, 42);
  for (std::size_t i = armi::get_location_id(); i < n0; i += armi::get_num_locations())
    v.set(i, mix64(i));
  for (std::size_t i = 0; i < n0; ++i) ref[i] = mix64(i);
  for (std::size_t n : {n0 + 13, n0 / 2, std::size_t{3}, std::size_t{0}, std::size_t{8}, n0})
    check_resize(v, ref, n, n + 1000);
}

}  // namespace

TEST_CASE("pvector: block layout, every access path, every size", "[pvector]") {
  armi_test::run([] {
    for (std::size_t n : sizes) {
      armi::pvector<std::uint64_t> v(n, 42);
      exercise(v, n);
    }
  });
}

TEST_CASE("pvector: cyclic and block-cyclic layouts", "[pvector]") {
  armi_test::run([] {
    auto const p = armi::get_num_locations();
    for (std::size_t n : sizes) {
      armi::pvector<std::uint64_t, armi::cyclic_distribution> c(n, 42);
      exercise(c, n);
      armi::pvector<std::uint64_t, armi::block_cyclic_distribution> b(
          armi::block_cyclic_distribution(n, p, 4), 42);
      exercise(b, n);
    }
  });
}

TEST_CASE("pvector: a size smaller than the location count leaves locations empty", "[pvector]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    armi::pvector<std::uint64_t> v(3, 42);
    if (armi::get_num_locations() >= 3) {
      ARMI_CHECK_EQ(v.local().size(), me < 3 ? std::size_t{1} : std::size_t{0});
      if (me < 3) ARMI_CHECK_EQ(v.owner(me), me);
    }
    exercise(v, 3);
  });
}

TEST_CASE("pvector: resize keeps the prefix, moves elements, fills the rest", "[pvector]") {
  armi_test::run([] {
    auto const p = armi::get_num_locations();
    armi::pvector<std::uint64_t> v(armi_test::scaled(500) + 1, 42);
    resize_sequence(v, v.size());
    armi::pvector<std::uint64_t, armi::cyclic_distribution> c(37, 42);
    resize_sequence(c, 37);
    armi::pvector<std::uint64_t, armi::block_cyclic_distribution> b(
        armi::block_cyclic_distribution(41, p, 3), 42);
    resize_sequence(b, 41);
    ARMI_CHECK_EQ(b.distribution().block_size(), std::size_t{3});
    // Default fill value, and a size every location agrees on.
    armi::pvector<std::uint64_t> e;
    ARMI_CHECK_EQ(e.size(), std::size_t{0});
    e.resize(5);
    ARMI_CHECK(e.gather() == std::vector<std::uint64_t>(5, 0));
    bool threw = false;
    try {
      e.resize(10 + armi::get_location_id() % 2);
    } catch (std::invalid_argument const&) {
      threw = true;
    }
    ARMI_CHECK_EQ(threw, p > 1);
    armi::rmi_fence();
  });
}

TEST_CASE("pvector: push_back, then update_distribution or rebalance", "[pvector]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    auto const elem = [](armi::location_id loc, std::size_t j) {
      return std::uint64_t{loc} * 1000 + j;
    };
    // Location loc ends up with loc % 3 * 2 own elements, then one from each
    // of the other locations' remote push_backs (which run in issue order).
    armi::pvector<std::uint64_t> v;
    for (std::size_t j = 0; j < me % 3 * 2; ++j) v.push_back(elem(me, j));
    for (armi::location_id d = 0; d < p; ++d)
      if (d != me)
        armi::async_rmi(d, v.get_rmi_handle(), &armi::pvector<std::uint64_t>::push_back,
                        elem(me, 500));
    ARMI_CHECK_EQ(v.size(), std::size_t{0});  // not global yet
    ARMI_CHECK(throws_out_of_range([&] { (void)v.get(0); }, 0, 0));
    v.update_distribution();

    std::size_t total = 0;
    for (armi::location_id loc = 0; loc < p; ++loc) total += loc % 3 * 2 + (p - 1);
    ARMI_CHECK_EQ(v.size(), total);
    ARMI_CHECK_EQ(v.local().size(), me % 3 * 2 + (p - 1));
    ARMI_CHECK_EQ(v.distribution().local_size(me), v.local().size());
    // Each location's own elements come first, in push order; then the
    // remote ones in some order.  Check the own prefix globally and the
    // multiset of each part.
    auto const all = v.gather();
    ARMI_CHECK_EQ(all.size(), total);
    std::size_t at = 0;
    for (armi::location_id loc = 0; loc < p; ++loc) {
      for (std::size_t j = 0; j < loc % 3 * 2; ++j) ARMI_CHECK_EQ(all.at(at + j), elem(loc, j));
      std::vector<std::uint64_t> remote(
          all.begin() + static_cast<std::ptrdiff_t>(at + loc % 3 * 2),
          all.begin() + static_cast<std::ptrdiff_t>(at + loc % 3 * 2 + p - 1));
      std::sort(remote.begin(), remote.end());
      std::vector<std::uint64_t> expect;
      for (armi::location_id d = 0; d < p; ++d)
        if (d != loc) expect.push_back(elem(d, 500));
      ARMI_CHECK(remote == expect);
      at += loc % 3 * 2 + p - 1;
    }
    // rebalance: same sequence, even blocks.
    v.push_back(elem(me, 999));
    v.rebalance();
    ARMI_CHECK_EQ(v.size(), total + p);
    ARMI_CHECK(v.distribution() == armi::block_distribution(total + p, p));
    auto const again = v.gather();
    std::vector<std::uint64_t> expect_again;
    at = 0;
    for (armi::location_id loc = 0; loc < p; ++loc) {
      std::size_t const len = loc % 3 * 2 + p - 1;
      expect_again.insert(expect_again.end(), all.begin() + static_cast<std::ptrdiff_t>(at),
                          all.begin() + static_cast<std::ptrdiff_t>(at + len));
      expect_again.push_back(elem(loc, 999));
      at += len;
    }
    ARMI_CHECK(again == expect_again);
  });
}

TEST_CASE("pvector<std::vector<int>>: the paper's buckets", "[pvector]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    armi::pvector<std::vector<int>> buckets(p);  // one bucket per location
    ARMI_CHECK_EQ(buckets.local().size(), std::size_t{1});
    // Every location appends me*10 + j to bucket (me + j) % p, j < 3p.
    for (std::size_t j = 0; j < 3 * p; ++j)
      buckets.apply((me + j) % p, [](std::vector<int>& b, int x) { b.push_back(x); },
                          static_cast<int>(me * 10 + j));
    armi::rmi_fence();
    auto expected_bucket = [&](armi::location_id b) {
      std::vector<int> e;
      for (armi::location_id src = 0; src < p; ++src)
        for (std::size_t j = 0; j < 3 * p; ++j)
          if ((src + j) % p == b) e.push_back(static_cast<int>(src * 10 + j));
      std::sort(e.begin(), e.end());
      return e;
    };
    for (armi::location_id b = 0; b < p; ++b) {
      std::vector<int> got = buckets.get(b);
      std::sort(got.begin(), got.end());
      ARMI_CHECK(got == expected_bucket(b));
    }
    armi::rmi_fence();
    // set a whole bucket remotely, read it back through the proxy and a future.
    buckets[(me + 1) % p] =
        std::vector<int>(static_cast<std::size_t>(me) + 1, static_cast<int>(me));
    armi::rmi_fence();
    armi::location_id const from = (me + p - 1) % p;
    std::vector<int> const got = buckets[me];
    ARMI_CHECK(got == std::vector<int>(static_cast<std::size_t>(from) + 1, static_cast<int>(from)));
    ARMI_CHECK(buckets.get_async((me + 1) % p).get() ==
               std::vector<int>(me + 1, static_cast<int>(me)));
    // push_back of whole vectors, resize with a vector fill.
    buckets.push_back({1, 2, static_cast<int>(me)});
    buckets.update_distribution();
    ARMI_CHECK_EQ(buckets.size(), std::size_t{2} * p);
    ARMI_CHECK(buckets.get(2 * p - 1) == std::vector<int>({1, 2, static_cast<int>(p - 1)}));
    buckets.resize(3 * p + 1, std::vector<int>{7});
    auto const all = buckets.gather();
    ARMI_CHECK_EQ(all.size(), std::size_t{3} * p + 1);
    ARMI_CHECK(all.back() == std::vector<int>{7});
    ARMI_CHECK(all[1] == std::vector<int>({1, 2, 0}));  // location 0's second element
  });
}

TEST_CASE("pvector: swap exchanges contents; construction checks the layout", "[pvector]") {
  armi_test::run([] {
    auto const p = armi::get_num_locations();
    armi::pvector<std::uint64_t> a(10, 1);
    armi::pvector<std::uint64_t> b(3, 2);
    a.swap(b);
    ARMI_CHECK(a.gather() == std::vector<std::uint64_t>(3, 2));
    ARMI_CHECK(b.gather() == std::vector<std::uint64_t>(10, 1));
    bool threw = false;
    try {
      armi::pvector<std::uint64_t> bad(armi::block_distribution(10, p + 1));
    } catch (std::invalid_argument const&) {
      threw = true;
    }
    ARMI_CHECK(threw);
    armi::rmi_fence();
  });
}
