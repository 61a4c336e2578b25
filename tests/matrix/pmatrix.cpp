// pmatrix (grid choice, the 2-D block-cyclic map, element and block access,
// sizes not divisible by the block size or the grid, locations owning no
// block, 1x1) and lu (residual of the gathered L*U and agreement with a
// sequential unblocked LU computed here).
#include "support/test_support.hpp"

#include <armi/algorithms/lu.hpp>
#include <armi/containers/pmatrix.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using armi_test::mix64;

double value_at(std::size_t i, std::size_t j) { return static_cast<double>(i) * 1000.0 + static_cast<double>(j); }

// A diagonally dominant matrix: off-diagonal entries in [-1, 1), n + 1 added to the diagonal.
double dominant_at(std::size_t n, std::size_t i, std::size_t j) {
  double const r = static_cast<double>(mix64(i * 7919 + j) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
  return i == j ? r + static_cast<double>(n) + 1.0 : r;
}

// Doolittle LU without pivoting, one element column at a time (no blocks).
std::vector<double> sequential_lu(std::vector<double> a, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t i = k + 1; i < n; ++i) {
      a[i * n + k] /= a[k * n + k];
      for (std::size_t j = k + 1; j < n; ++j) a[i * n + j] -= a[i * n + k] * a[k * n + j];
    }
  return a;
}

// ||A - L U||_F / ||A||_F with L and U packed in lu.
double residual(std::vector<double> const& a, std::vector<double> const& lu, std::size_t n) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::size_t q = 0; q <= std::min(i, j); ++q) s += (q == i ? 1.0 : lu[i * n + q]) * lu[q * n + j];
      diff += (a[i * n + j] - s) * (a[i * n + j] - s);
      norm += a[i * n + j] * a[i * n + j];
    }
  return norm == 0 ? std::sqrt(diff) : std::sqrt(diff / norm);
}

void check_lu(std::size_t n, std::size_t b, armi::processor_grid const* grid = nullptr) {
  armi::pmatrix<double> a = grid ? armi::pmatrix<double>(n, n, b, *grid) : armi::pmatrix<double>(n, n, b);
  a.local_fill([n](std::size_t i, std::size_t j) { return dominant_at(n, i, j); });
  std::vector<double> original(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) original[i * n + j] = dominant_at(n, i, j);
  std::size_t const zero_pivots = armi::lu(a);
  ARMI_CHECK_EQ(zero_pivots, std::size_t{0});
  std::vector<double> const factored = a.gather();
  double const r = residual(original, factored, n);
  if (!(r < 1e-10))
    armi_test::failures().add("lu n=" + std::to_string(n) + " b=" + std::to_string(b) +
                              ": residual " + std::to_string(r));
  std::vector<double> const expect = sequential_lu(original, n);
  double worst = 0;
  for (std::size_t t = 0; t < n * n; ++t)
    worst = std::max(worst, std::abs(expect[t] - factored[t]) / std::max(1.0, std::abs(expect[t])));
  if (!(worst < 1e-10))
    armi_test::failures().add("lu n=" + std::to_string(n) + " b=" + std::to_string(b) +
                              ": differs from the sequential LU by " + std::to_string(worst));
  armi::rmi_fence();
}

}  // namespace

TEST_CASE("pmatrix: the near-square grid and the 2-D block-cyclic map", "[pmatrix]") {
  using g = armi::processor_grid;
  REQUIRE(g::near_square(1) == g{1, 1});
  REQUIRE(g::near_square(2) == g{1, 2});
  REQUIRE(g::near_square(4) == g{2, 2});
  REQUIRE(g::near_square(6) == g{2, 3});
  REQUIRE(g::near_square(7) == g{1, 7});
  REQUIRE(g::near_square(12) == g{3, 4});
  REQUIRE(g::near_square(16) == g{4, 4});
  for (g grid : {g{1, 1}, g{2, 2}, g{2, 3}, g{3, 1}, g{1, 7}}) {
    for (std::size_t rows : {0, 1, 5, 13}) {
      armi::matrix_distribution const d(rows, 11, 3, grid);
      std::size_t total = 0;
      for (armi::location_id loc = 0; loc < grid.size(); ++loc) {
        total += d.num_local_blocks(loc);
        for (std::size_t k = 0; k < d.num_local_blocks(loc); ++k) {
          auto const [bi, bj] = d.global_block(loc, k);
          REQUIRE(d.block_owner(bi, bj) == loc);
          REQUIRE(d.local_block_index(bi, bj) == k);
        }
      }
      REQUIRE(total == d.block_rows() * d.block_cols());
      REQUIRE(d.block_cols() == 4);
      if (rows > 0) {
        REQUIRE(d.block_height(d.block_rows() - 1) == (rows % 3 == 0 ? 3 : rows % 3));
        REQUIRE(d.owner(rows - 1, 10) == d.block_owner((rows - 1) / 3, 3));
      }
    }
  }
}

TEST_CASE("pmatrix: element set/get/get_async, local_fill and gather", "[pmatrix]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    std::size_t const n = 13, m = 10, b = 3;  // neither divisible by the block size
    armi::pmatrix<double> a(n, m, b, -1.0);
    ARMI_CHECK(a.grid() == armi::processor_grid::near_square(p));
    ARMI_CHECK_EQ(a.block_rows(), std::size_t{5});
    ARMI_CHECK_EQ(a.block_cols(), std::size_t{4});
    for (auto const& blk : a.local()) {
      ARMI_CHECK_EQ(a.block_owner(blk.block_row(), blk.block_col()), me);
      ARMI_CHECK_EQ(blk.rows(), a.block_height(blk.block_row()));
      ARMI_CHECK_EQ(blk.cols(), a.block_width(blk.block_col()));
      ARMI_CHECK_EQ(blk.first_row(), blk.block_row() * b);
    }
    ARMI_CHECK_EQ(a.local().size(), a.distribution().num_local_blocks(me));

    // Location me sets the elements with (i*m + j) % p == me: mostly remote.
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < m; ++j)
        if ((i * m + j) % p == me) a.set(i, j, value_at(i, j));
    armi::rmi_fence();
    std::vector<armi::future<double>> futures;
    for (std::size_t t = 0; t < 30; ++t) {
      std::size_t const i = mix64(me + t) % n, j = mix64(me + t + 99) % m;
      ARMI_CHECK_EQ(a.get(i, j), value_at(i, j));
      futures.push_back(a.get_async(i, j));
    }
    for (std::size_t t = 0; t < futures.size(); ++t)
      ARMI_CHECK_EQ(futures[t].get(), value_at(mix64(me + t) % n, mix64(me + t + 99) % m));
    // What this location holds is answered at once: ready futures.
    for (auto const& blk : a.local()) {
      auto f = a.get_async(blk.first_row(), blk.first_col());
      ARMI_CHECK(f.ready());
      ARMI_CHECK_EQ(f.get(), value_at(blk.first_row(), blk.first_col()));
      auto fb = a.get_block_async(blk.block_row(), blk.block_col());
      ARMI_CHECK(fb.ready());
      ARMI_CHECK(fb.get() == std::vector<double>(blk.data().begin(), blk.data().end()));
    }

    std::vector<double> const all = a.gather();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < m; ++j) wrong += all[i * m + j] != value_at(i, j);
    ARMI_CHECK_EQ(wrong, std::size_t{0});

    // local_fill writes only what this location holds; others see it after a fence.
    armi::rmi_fence();
    a.local_fill([](std::size_t i, std::size_t j) { return -value_at(i, j); });
    armi::rmi_fence();
    ARMI_CHECK_EQ(a.get(n - 1, m - 1), -value_at(n - 1, m - 1));
    ARMI_CHECK_EQ(a.get(0, 0), -value_at(0, 0));

    // Errors name the index and the size.
    bool named = false;
    try {
      (void)a.get(n, 0);
    } catch (std::out_of_range const& e) {
      named = std::string(e.what()).find("13") != std::string::npos;
    }
    ARMI_CHECK(named);
    bool threw = false;
    try {
      a.set(0, m + 5, 1.0);
    } catch (std::out_of_range const&) {
      threw = true;
    }
    ARMI_CHECK(threw);
    armi::rmi_fence();
  });
}

TEST_CASE("pmatrix: get_block, get_block_async, put_block", "[pmatrix]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    std::size_t const n = 11, m = 17, b = 4;
    armi::pmatrix<std::int64_t> a(n, m, b);
    auto const block_of = [&](std::size_t bi, std::size_t bj) {
      std::vector<std::int64_t> v(a.block_height(bi) * a.block_width(bj));
      for (std::size_t t = 0; t < v.size(); ++t) v[t] = static_cast<std::int64_t>(bi * 100000 + bj * 1000 + t);
      return v;
    };
    for (std::size_t bi = 0; bi < a.block_rows(); ++bi)
      for (std::size_t bj = 0; bj < a.block_cols(); ++bj)
        if ((bi * 3 + bj) % p == me) a.put_block(bi, bj, block_of(bi, bj));
    armi::rmi_fence();
    std::vector<armi::future<std::vector<std::int64_t>>> futures;
    for (std::size_t bi = 0; bi < a.block_rows(); ++bi)
      for (std::size_t bj = 0; bj < a.block_cols(); ++bj) {
        ARMI_CHECK(a.get_block(bi, bj) == block_of(bi, bj));
        futures.push_back(a.get_block_async(bi, bj));
      }
    for (std::size_t t = 0; t < futures.size(); ++t)
      ARMI_CHECK(futures[t].get() == block_of(t / a.block_cols(), t % a.block_cols()));
    // Elements agree with blocks: element (i, j) is entry (i % b, j % b) of block (i / b, j / b).
    for (std::size_t t = 0; t < 20; ++t) {
      std::size_t const i = mix64(t * 5 + me) % n, j = mix64(t * 7 + me) % m;
      std::int64_t const expect = block_of(i / b, j / b)[(i % b) * a.block_width(j / b) + j % b];
      ARMI_CHECK_EQ(a.get(i, j), expect);
    }

    bool wrong_size = false;
    try {
      a.put_block(0, 0, std::vector<std::int64_t>(3));
    } catch (std::invalid_argument const&) {
      wrong_size = true;
    }
    ARMI_CHECK(wrong_size);
    bool out_of_range = false;
    try {
      (void)a.get_block(a.block_rows(), 0);
    } catch (std::out_of_range const&) {
      out_of_range = true;
    }
    ARMI_CHECK(out_of_range);
    armi::rmi_fence();
  });
}

TEST_CASE("pmatrix: locations owning no block, a 1x1 and an empty matrix", "[pmatrix]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    // One block in all: only location 0 holds anything.
    armi::pmatrix<int> one(3, 2, 8, 5);
    ARMI_CHECK_EQ(one.local().size(), static_cast<std::size_t>(me == 0 ? 1 : 0));
    if (me == p - 1) one.set(2, 1, 42);
    armi::rmi_fence();
    ARMI_CHECK_EQ(one.get(2, 1), 42);
    ARMI_CHECK_EQ(one.get(0, 0), 5);

    armi::pmatrix<double> tiny(1, 1, 4, 3.0);
    ARMI_CHECK_EQ(tiny.get(0, 0), 3.0);
    ARMI_CHECK_EQ(armi::lu(tiny), std::size_t{0});
    ARMI_CHECK_EQ(tiny.get(0, 0), 3.0);

    armi::pmatrix<double> empty(0, 0, 4);
    ARMI_CHECK(empty.local().empty());
    ARMI_CHECK_EQ(armi::lu(empty), std::size_t{0});
    ARMI_CHECK(empty.gather().empty());

    // A zero pivot is counted, not hidden.
    armi::pmatrix<double> singular(3, 3, 2, 1.0);
    ARMI_CHECK(armi::lu(singular) >= std::size_t{1});

    armi::pmatrix<double> wide(2, 3, 2);
    bool threw = false;
    try {
      armi::lu(wide);
    } catch (std::invalid_argument const&) {
      threw = true;
    }
    ARMI_CHECK(threw);
    armi::rmi_fence();
  });
}

TEST_CASE("lu: residual and agreement with a sequential LU", "[pmatrix][lu]") {
  armi_test::run([] {
    auto const p = armi::get_num_locations();
    check_lu(37, 5);  // n not divisible by b, blocks not divisible by the grid
    check_lu(24, 4);  // divisible
    check_lu(5, 8);   // one block: one location works, the others own nothing
    check_lu(armi_test::scaled(64) >= 64 ? 48 : 20, 16);
    armi::processor_grid const column{p, 1};  // a p x 1 grid instead of the near-square one
    check_lu(29, 3, &column);
  });
}
