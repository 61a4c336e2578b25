// lu — blocked LU factorization without pivoting of a dense n x n matrix held
// in an armi::pmatrix (2-D block-cyclic), the SPLASH-2 LU kernel of the ARMI
// and MRPC papers.
//
// The matrix is diagonally dominant and random (off-diagonal entries in
// [-1, 1), n + 1 added to the diagonal), generated in place by each location
// for its own blocks.  armi::lu factors it; then location 0 gathers L and U
// and checks the residual with a random vector x:
//
//     || A x - L (U x) || / (||A||_F ||x||)  <  1e-12      (O(n^2) work)
//
// --reps=R factors R times (refilling the matrix) and reports the fastest;
// --baseline=yes also times a sequential blocked LU of the same matrix on
// location 0 (the same block kernels, armi::detail::lu_kernels, no communication),
// checks that both factorizations agree, and prints the speed-up.
//
//   ./lu --armi-locations=2 --n=1024 --block=64
//
// Exit status: 0 if the checks passed, 1 if one failed, 2 on a usage error.

#include <armi/algorithms/lu.hpp>
#include <armi/armi.hpp>
#include <armi/containers/pmatrix.hpp>

#include "example_flags.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double entry(std::size_t n, std::uint64_t seed, std::size_t i, std::size_t j) {
  double const r = static_cast<double>(mix(seed * 0x100000001B3ULL + i * n + j) >> 11) / 9007199254740992.0;
  return (i == j ? static_cast<double>(n) + 1.0 : 0.0) + 2.0 * r - 1.0;
}

// The sequential baseline: the same blocked right-looking LU on one core,
// blocks stored contiguously like pmatrix's.  Returns the matrix row-major.
std::vector<double> sequential_blocked_lu(std::size_t n, std::size_t b, std::uint64_t seed, double& seconds) {
  std::size_t const nb = (n + b - 1) / b;
  auto const len = [&](std::size_t k) { return std::min(b, n - k * b); };
  std::vector<std::vector<double>> blocks(nb * nb);
  for (std::size_t bi = 0; bi < nb; ++bi)
    for (std::size_t bj = 0; bj < nb; ++bj) {
      auto& blk = blocks[bi * nb + bj];
      blk.resize(len(bi) * len(bj));
      for (std::size_t r = 0; r < len(bi); ++r)
        for (std::size_t c = 0; c < len(bj); ++c) blk[r * len(bj) + c] = entry(n, seed, bi * b + r, bj * b + c);
    }
  auto const start = std::chrono::steady_clock::now();
  for (std::size_t k = 0; k < nb; ++k) {
    auto& diag = blocks[k * nb + k];
    armi::detail::lu_kernels::factor(diag, len(k));
    for (std::size_t j = k + 1; j < nb; ++j) armi::detail::lu_kernels::solve_lower_unit(diag, len(k), blocks[k * nb + j], len(j));
    for (std::size_t i = k + 1; i < nb; ++i) armi::detail::lu_kernels::solve_upper_right(diag, len(k), blocks[i * nb + k], len(i));
    for (std::size_t i = k + 1; i < nb; ++i)
      for (std::size_t j = k + 1; j < nb; ++j)
        armi::detail::lu_kernels::subtract_product(blocks[i * nb + j], blocks[i * nb + k], blocks[k * nb + j], len(i), len(k),
                                           len(j));
  }
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> out(n * n);
  for (std::size_t bi = 0; bi < nb; ++bi)
    for (std::size_t bj = 0; bj < nb; ++bj)
      for (std::size_t r = 0; r < len(bi); ++r)
        for (std::size_t c = 0; c < len(bj); ++c)
          out[(bi * b + r) * n + bj * b + c] = blocks[bi * nb + bj][r * len(bj) + c];
  return out;
}

// || A x - L (U x) || / (||A||_F ||x||) for a random x; lu row-major.
double residual(std::vector<double> const& lu, std::size_t n, std::uint64_t seed) {
  std::vector<double> x(n), ux(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>(mix(i + 77) >> 11) / 9007199254740992.0 - 0.5;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i; j < n; ++j) ux[i] += lu[i * n + j] * x[j];
  double diff = 0, a_norm = 0, x_norm = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double lux = ux[i];  // unit diagonal of L
    for (std::size_t j = 0; j < i; ++j) lux += lu[i * n + j] * ux[j];
    double ax = 0;
    for (std::size_t j = 0; j < n; ++j) {
      double const a = entry(n, seed, i, j);
      ax += a * x[j];
      a_norm += a * a;
    }
    diff += (ax - lux) * (ax - lux);
    x_norm += x[i] * x[i];
  }
  return a_norm == 0 ? std::sqrt(diff) : std::sqrt(diff) / (std::sqrt(a_norm) * std::sqrt(x_norm));
}

int run(int argc, char** argv) {
  armi_example::flags f(argc, argv, "lu", "blocked LU without pivoting of a diagonally dominant pmatrix");
  auto const n = f.size("n", 512, "matrix order");
  auto const b = f.size("block", 32, "block size (blocks are b x b)");
  auto const seed = f.size("seed", 1, "random seed of the matrix");
  auto const reps = f.size("reps", 1, "factor this many times (refilling the matrix), report the fastest");
  auto const baseline = f.choice("baseline", "yes", {"yes", "no"}, "also time a sequential blocked LU on location 0");
  if (auto const status = f.finish()) return *status;
  if (b == 0 || reps == 0) {
    if (armi::get_location_id() == 0) fmt::print(stderr, "lu: --block and --reps must be at least 1\n");
    return 2;
  }

  auto const me = armi::get_location_id();
  auto const p = armi::get_num_locations();
  armi::pmatrix<double> a(n, n, b);  // collective; ends with a fence
  double seconds = 0;
  std::size_t zero_pivots = 0;
  for (std::uint64_t rep = 0; rep < reps; ++rep) {
    a.local_fill([&](std::size_t i, std::size_t j) { return entry(n, seed, i, j); });
    armi::rmi_fence();
    auto const start = std::chrono::steady_clock::now();
    zero_pivots = armi::lu(a);
    double const t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    seconds = rep == 0 ? t : std::min(seconds, t);
  }

  std::vector<double> const factored = a.gather();  // collective; small matrices only
  int failures = 0;
  if (me == 0) {
    double const flops = armi::detail::lu_kernels::flops(n);
    auto const grid = a.grid();
    fmt::print("lu: {} location{} ({}x{} grid), n = {}, block {} ({} x {} blocks), aggregation {}, best of {}\n", p,
               p == 1 ? "" : "s", grid.rows, grid.cols, n, b, a.block_rows(), a.block_cols(),
               armi_example::aggregation_text(), reps);
    fmt::print("  armi::lu            {:.4f} s  {:9.1f} MFLOP/s\n", seconds,
               seconds > 0 ? flops / seconds / 1e6 : 0.0);
    double const r = residual(factored, n, seed);
    bool const ok = zero_pivots == 0 && r < 1e-12;
    fmt::print("  residual ||Ax - LUx|| / (||A|| ||x||) = {:.3e}, {} zero pivots: {}\n", r, zero_pivots,
               ok ? "OK" : "FAILED");
    failures += ok ? 0 : 1;
    if (baseline == "yes") {
      double seq_seconds = 0;
      std::vector<double> seq;
      for (std::uint64_t rep = 0; rep < reps; ++rep) {
        double t = 0;
        seq = sequential_blocked_lu(n, b, seed, t);
        seq_seconds = rep == 0 ? t : std::min(seq_seconds, t);
      }
      double worst = 0;
      for (std::size_t t = 0; t < seq.size(); ++t)
        worst = std::max(worst, std::abs(seq[t] - factored[t]) / std::max(1.0, std::abs(seq[t])));
      bool const same = worst < 1e-10;
      fmt::print("  sequential blocked  {:.4f} s  {:9.1f} MFLOP/s   armi/sequential speed-up {:.2f}x\n", seq_seconds,
                 seq_seconds > 0 ? flops / seq_seconds / 1e6 : 0.0, seconds > 0 ? seq_seconds / seconds : 0.0);
      fmt::print("  largest difference from the sequential LU {:.3e}: {}\n", worst, same ? "OK" : "FAILED");
      failures += same ? 0 : 1;
    }
  }
  armi::rmi_fence();
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return armi::execute(argc, argv, run);
}
