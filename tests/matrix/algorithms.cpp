// The generic pAlgorithms (include/armi/algorithms/): for_each, transform,
// accumulate, inclusive/exclusive scans and sample_sort, each against a
// sequential reference every location computes on its own from the same
// formula, over block, cyclic and block-cyclic pvectors, empty ones, sizes
// not divisible by the location count and locations that own nothing.
#include "support/test_support.hpp"

#include <armi/algorithms/accumulate.hpp>
#include <armi/algorithms/for_each.hpp>
#include <armi/algorithms/prefix_sum.hpp>
#include <armi/algorithms/sample_sort.hpp>
#include <armi/containers/pvector.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using armi_test::mix64;

std::vector<std::size_t> const sizes = {0, 1, 3, 10, 29, armi_test::scaled(2000) + 5};

// Fills v's local part with gen(global index), without the algorithms under test.
// Fences first: other locations may still be reading the old values.
template <class V, class G>
void fill(V& v, G gen) {
  armi::rmi_fence();
  auto const me = armi::get_location_id();
  auto local = v.local();
  for (std::size_t k = 0; k < local.size(); ++k)
    local[k] = gen(v.distribution().global_index(me, k));
}

template <class G>
auto reference(std::size_t n, G gen) {
  std::vector<decltype(gen(std::size_t{0}))> r;
  for (std::size_t i = 0; i < n; ++i) r.push_back(gen(i));
  return r;
}

auto const small = [](std::size_t i) { return static_cast<std::int64_t>(mix64(i) % 2001) - 1000; };

// A 2x2 integer matrix product: associative, not commutative.
struct mat2 {
  std::int64_t a = 1, b = 0, c = 0, d = 1;
  friend bool operator==(mat2 const&, mat2 const&) = default;
};
struct mat_mul {
  mat2 operator()(mat2 const& x, mat2 const& y) const {
    // entries modulo a prime so they stay small
    constexpr std::int64_t m = 1000003;
    return {(x.a * y.a + x.b * y.c) % m, (x.a * y.b + x.b * y.d) % m, (x.c * y.a + x.d * y.c) % m,
            (x.c * y.b + x.d * y.d) % m};
  }
};
auto const matrix = [](std::size_t i) {
  std::uint64_t const h = mix64(i);
  return mat2{static_cast<std::int64_t>(h % 7), static_cast<std::int64_t>(h / 7 % 5) + 1,
              static_cast<std::int64_t>(h / 35 % 3), static_cast<std::int64_t>(h / 105 % 11)};
};

template <class V>
void check_elementwise(V& v, V& w, std::size_t n) {
  fill(v, small);
  armi::for_each(v, [](std::int64_t& x) { x *= 3; });
  armi::transform(v, [](std::int64_t x) { return x - 1; });
  armi::for_each(v, [](std::size_t i, std::int64_t& x) { x += static_cast<std::int64_t>(i); });
  armi::transform(v, w, [](std::int64_t x) { return 2 * x; });
  std::vector<std::int64_t> ref = reference(n, small);
  for (std::size_t i = 0; i < n; ++i) ref[i] = 3 * ref[i] - 1 + static_cast<std::int64_t>(i);
  ARMI_CHECK(v.gather() == ref);
  for (auto& x : ref) x *= 2;
  ARMI_CHECK(w.gather() == ref);
}

template <class V>
void check_reductions_and_scans(V& v, std::size_t n) {
  fill(v, small);
  std::vector<std::int64_t> const ref = reference(n, small);
  std::int64_t sum = 5;
  std::int64_t top = -5000;
  for (auto x : ref) {
    sum += x;
    top = std::max(top, x);
  }
  ARMI_CHECK_EQ(armi::accumulate(v, std::int64_t{5}), sum);
  ARMI_CHECK_EQ(armi::accumulate(v, std::int64_t{-5000},
                                 [](std::int64_t a, std::int64_t b) { return std::max(a, b); }),
                top);

  std::vector<std::int64_t> incl(n), excl(n);
  std::int64_t run = 0;
  for (std::size_t i = 0; i < n; ++i) {
    excl[i] = run;
    run += ref[i];
    incl[i] = run;
  }
  armi::prefix_sum(v);
  ARMI_CHECK(v.gather() == incl);
  fill(v, small);
  armi::prefix_sum(v, armi::scan_kind::exclusive);
  ARMI_CHECK(v.gather() == excl);
  fill(v, small);
  armi::exclusive_scan(v, std::int64_t{100});
  for (auto& x : excl) x += 100;
  ARMI_CHECK(v.gather() == excl);
}

// Index order matters: a non-commutative op.
template <class M>
void check_ordered_scan(M& m, std::size_t n) {
  fill(m, matrix);
  std::vector<mat2> ref = reference(n, matrix);
  std::vector<mat2> incl(n), excl(n);
  mat2 acc{2, 1, 1, 1};  // the exclusive scan's init
  mat2 inc;
  for (std::size_t i = 0; i < n; ++i) {
    excl[i] = acc;
    acc = mat_mul{}(acc, ref[i]);
    inc = i == 0 ? ref[0] : mat_mul{}(inc, ref[i]);
    incl[i] = inc;
  }
  armi::inclusive_scan(m, mat_mul{});
  ARMI_CHECK(m.gather() == incl);
  fill(m, matrix);
  armi::exclusive_scan(m, mat2{2, 1, 1, 1}, mat_mul{});
  ARMI_CHECK(m.gather() == excl);
}

// Sorts gen(0..n) with sample_sort and compares with std::sort.
template <class T, class G, class Comp = std::less<>>
void check_sort(std::size_t n, G gen, Comp comp = {}) {
  auto const me = armi::get_location_id();
  armi::pvector<T> v(n);
  fill(v, gen);
  std::vector<T> ref = reference(n, gen);
  std::sort(ref.begin(), ref.end(), comp);
  armi::sample_sort(v, comp);
  ARMI_CHECK_EQ(v.size(), n);
  ARMI_CHECK_EQ(v.local().size(), v.distribution().local_size(me));
  ARMI_CHECK(std::is_sorted(v.local().begin(), v.local().end(), comp));
  ARMI_CHECK(v.gather() == ref);
}

}  // namespace

TEST_CASE("for_each and transform, block and cyclic", "[algorithms]") {
  armi_test::run([] {
    auto const p = armi::get_num_locations();
    for (std::size_t n : sizes) {
      armi::pvector<std::int64_t> v(n), w(n);
      check_elementwise(v, w, n);
      armi::pvector<std::int64_t, armi::cyclic_distribution> c(n), d(n);
      check_elementwise(c, d, n);
      armi::pvector<std::int64_t, armi::block_cyclic_distribution> b(
          armi::block_cyclic_distribution(n, p, 3)),
          e(armi::block_cyclic_distribution(n, p, 3));
      check_elementwise(b, e, n);
    }
    // Different layouts are refused.
    armi::pvector<std::int64_t> a(10), b(11);
    bool threw = false;
    try {
      armi::transform(a, b, [](std::int64_t x) { return x; });
    } catch (std::invalid_argument const&) {
      threw = true;
    }
    ARMI_CHECK(threw);
  });
}

TEST_CASE("accumulate and prefix sums, every layout", "[algorithms]") {
  armi_test::run([] {
    auto const p = armi::get_num_locations();
    for (std::size_t n : sizes) {
      armi::pvector<std::int64_t> v(n);
      check_reductions_and_scans(v, n);
      armi::pvector<std::int64_t, armi::cyclic_distribution> c(n);
      check_reductions_and_scans(c, n);
      armi::pvector<std::int64_t, armi::block_cyclic_distribution> b(
          armi::block_cyclic_distribution(n, p, 4));
      check_reductions_and_scans(b, n);
    }
  });
}

TEST_CASE("scans follow global index order (non-commutative op)", "[algorithms]") {
  armi_test::run([] {
    auto const p = armi::get_num_locations();
    for (std::size_t n :
         {std::size_t{0}, std::size_t{3}, std::size_t{31}, armi_test::scaled(300) + 1}) {
      armi::pvector<mat2> v(n);
      check_ordered_scan(v, n);
      armi::pvector<mat2, armi::cyclic_distribution> c(n);
      check_ordered_scan(c, n);
      armi::pvector<mat2, armi::block_cyclic_distribution> b(
          armi::block_cyclic_distribution(n, p, 2));
      check_ordered_scan(b, n);
      // accumulate over a block layout folds in index order too
      fill(v, matrix);
      mat2 expect{};
      for (std::size_t i = 0; i < n; ++i) expect = mat_mul{}(expect, matrix(i));
      ARMI_CHECK(armi::accumulate(v, mat2{}, mat_mul{}) == expect);
    }
  });
}

TEST_CASE("algorithms refuse a pvector whose push_backs are not global yet", "[algorithms]") {
  armi_test::run([] {
    armi::pvector<std::int64_t> v(4);
    v.push_back(1);
    bool threw = false;
    try {
      armi::prefix_sum(v);
    } catch (std::logic_error const&) {
      threw = true;
    }
    ARMI_CHECK(threw);
    v.update_distribution();
    armi::prefix_sum(v);
    ARMI_CHECK_EQ(v.get(v.size() - 1), static_cast<std::int64_t>(armi::get_num_locations()));
  });
}

TEST_CASE("sample_sort: random, duplicates, all equal, empty, tiny, custom order", "[algorithms]") {
  armi_test::run([] {
    std::size_t const n = armi_test::scaled(4000) + 7;
    check_sort<std::int64_t>(n, [](std::size_t i) { return static_cast<std::int64_t>(mix64(i)); });
    check_sort<std::int64_t>(n,
                             [](std::size_t i) { return static_cast<std::int64_t>(mix64(i) % 5); });
    check_sort<std::int64_t>(n, [](std::size_t) { return std::int64_t{42}; });
    check_sort<std::int64_t>(0, [](std::size_t i) { return static_cast<std::int64_t>(i); });
    check_sort<std::int64_t>(3,
                             [](std::size_t i) { return static_cast<std::int64_t>(mix64(i) % 100); });
    check_sort<std::int64_t>(
        n, [](std::size_t i) { return static_cast<std::int64_t>(mix64(i) % 1000); },
        std::greater<>{});
    check_sort<std::string>(armi_test::scaled(500) + 1,
                            [](std::size_t i) { return std::to_string(mix64(i) % 10007); });
    // All equal keys still spread over the locations (round-robin over equal splitters).
    armi::pvector<int> same(n, 9);
    armi::sample_sort(same);
    auto const p = armi::get_num_locations();
    ARMI_CHECK(same.local().size() <= 2 * n / p + 2);
    // Input with push_backs not made global: sorted too.
    armi::pvector<int> grown(2, 5);
    grown.push_back(-static_cast<int>(armi::get_location_id()));
    armi::sample_sort(grown);
    std::vector<int> expect{5, 5};
    for (armi::location_id loc = 0; loc < p; ++loc) expect.push_back(-static_cast<int>(loc));
    std::sort(expect.begin(), expect.end());
    ARMI_CHECK(grown.gather() == expect);
  });
}
