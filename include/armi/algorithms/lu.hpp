// armi::lu: blocked, right-looking LU factorization without pivoting of a
// square pmatrix<double> — the SPLASH-2 LU kernel that the ARMI and MRPC
// papers use.  On return the matrix holds L (unit lower triangle, its ones
// not stored) and U (upper triangle, diagonal included): A = L U.
//
// Without pivoting the factorization exists and is stable when A is, for
// example, diagonally dominant (the SPLASH-2 input).  A zero pivot is not an
// error here: it is counted, and the result has non-finite entries.
//
// The algorithm, with N = block_rows() and blocks A(i, j):
//
//   for k = 0 .. N-1:
//     1. the owner of A(k,k) factors it (A(k,k) = L(k,k) U(k,k)) and sends it
//        (one async_rmi each) to the other owners of blocks in block row k
//        and block column k right of / below it   -- rmi_fence --
//     2. row panel:    A(k,j) <- L(k,k)^-1 A(k,j)  for j > k   (= U(k,j))
//        column panel: A(i,k) <- A(i,k) U(k,k)^-1  for i > k   (= L(i,k))
//        each panel block goes (one async_rmi each) to the other owners of
//        the trailing blocks that need it: U(k,j) down block column j,
//        L(i,k) along block row i                  -- rmi_fence --
//     3. trailing update: A(i,j) -= L(i,k) U(k,j)  for i, j > k, all local.
//
// Phase 3 of step k and phase 1 of step k+1 need no fence between them: the
// owner of A(k+1,k+1) updates it itself before factoring it, and what step
// k+1 sends lands in buffers step k no longer reads.  So 2N fences in all.
//
// Communication: with a pr x pc grid (pmatrix's near-square default), step
// k sends the diagonal block to at most pr + pc - 2 locations, and each of
// the (N-k-1) row and column panel blocks to at most pr - 1 (resp. pc - 1)
// locations: about N^2/2 (pr + pc) blocks of b^2 doubles over the whole
// factorization, against (2/3) n^3 flops.  Blocks travel as std::vector<double>
// arguments (bulk RMIs), so aggregation matters little here.
//
// Collective: every location calls lu(a) with its representative of a.
// Returns the number of zero pivots met (0 for a good factorization), the
// same on every location.  Thread safety: as pmatrix (the representative
// belongs to its location's thread).
//
// detail::lu_kernels holds the dense block kernels (row-major, contiguous);
// the LU example's sequential baseline calls the same ones.  The block
// written must not overlap the blocks read (the kernels promise the compiler
// so with __restrict).  They are kept out of line (gnu::noinline) so that a
// caller's loop nest cannot inline and vectorize them differently: armi::lu
// and a baseline then run the same code.  A call does O(b^2) to O(b^3)
// work, so the call costs nothing.
#pragma once

#include <armi/containers/pmatrix.hpp>
#include <armi/hold_requests.hpp>
#include <armi/p_object.hpp>
#include <armi/rmi.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace armi {

namespace detail::lu_kernels {

// In-place LU without pivoting of the n x n matrix a.  Returns the number of
// zero pivots.  (2/3) n^3 flops.
[[gnu::noinline]] inline std::size_t factor(std::span<double> a, std::size_t n) {
  double* const m = a.data();
  std::size_t zeros = 0;
  for (std::size_t p = 0; p < n; ++p) {
    double const* __restrict const rp = m + p * n;  // the pivot row: never ri
    double const pivot = rp[p];
    if (pivot == 0.0) ++zeros;
    for (std::size_t i = p + 1; i < n; ++i) {
      double* __restrict const ri = m + i * n;
      double const l = ri[p] / pivot;
      ri[p] = l;
      for (std::size_t j = p + 1; j < n; ++j) ri[j] -= l * rp[j];
    }
  }
  return zeros;
}

// b (n x cols) <- L^-1 b, with L the unit lower triangle of the n x n lu.
[[gnu::noinline]] inline void solve_lower_unit(std::span<double const> lu, std::size_t n, std::span<double> b, std::size_t cols) {
  double const* const l = lu.data();
  double* const x = b.data();
  for (std::size_t r = 1; r < n; ++r) {
    double* __restrict const xr = x + r * cols;
    for (std::size_t q = 0; q < r; ++q) {
      double const f = l[r * n + q];
      double const* __restrict const xq = x + q * cols;  // an earlier row: never xr
      for (std::size_t c = 0; c < cols; ++c) xr[c] -= f * xq[c];
    }
  }
}

// b (rows x n) <- b U^-1, with U the upper triangle of the n x n lu.
[[gnu::noinline]] inline void solve_upper_right(std::span<double const> lu, std::size_t n, std::span<double> b, std::size_t rows) {
  double const* const u = lu.data();
  for (std::size_t r = 0; r < rows; ++r) {
    double* __restrict const xr = b.data() + r * n;
    for (std::size_t c = 0; c < n; ++c) {
      double const f = xr[c] / u[c * n + c];
      xr[c] = f;
      double const* __restrict const uc = u + c * n;
      for (std::size_t c2 = c + 1; c2 < n; ++c2) xr[c2] -= f * uc[c2];
    }
  }
}

// c (rows x cols) -= a (rows x inner) * b (inner x cols).  2 rows inner cols flops.
[[gnu::noinline]] inline void subtract_product(std::span<double> c, std::span<double const> a, std::span<double const> b,
                             std::size_t rows, std::size_t inner, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    double* __restrict const cr = c.data() + r * cols;
    for (std::size_t q = 0; q < inner; ++q) {
      double const f = a[r * inner + q];
      double const* __restrict const bq = b.data() + q * cols;
      for (std::size_t j = 0; j < cols; ++j) cr[j] -= f * bq[j];
    }
  }
}

// Flops of an n x n LU: 2/3 n^3 - 1/2 n^2 - 1/6 n (the usual count).
inline double flops(std::size_t n) {
  double const x = static_cast<double>(n);
  return 2.0 / 3.0 * x * x * x - 0.5 * x * x - x / 6.0;
}

}  // namespace detail::lu_kernels

namespace detail {

// Where the blocks a location needs from others land during one step.
class lu_exchange : public p_object {
 public:
  explicit lu_exchange(std::size_t block_rows) : m_l(block_rows), m_u(block_rows) {}

  // Fire-and-forget: the factored diagonal block, L(i, k), U(k, j) to dest.
  void send_diagonal(location_id dest, std::vector<double> const& d) const {
    async_rmi(dest, get_rmi_handle(), &lu_exchange::serve_diagonal, d);
  }
  void send_l(location_id dest, std::size_t i, std::vector<double> const& v) const {
    async_rmi(dest, get_rmi_handle(), &lu_exchange::serve_l, i, v);
  }
  void send_u(location_id dest, std::size_t j, std::vector<double> const& v) const {
    async_rmi(dest, get_rmi_handle(), &lu_exchange::serve_u, j, v);
  }
  // Collective: the zero pivots of all locations.
  std::size_t total_zero_pivots() const {
    return allreduce_rmi(get_rmi_handle(), &lu_exchange::serve_zero_pivots, std::plus<>{});
  }

  std::vector<double> m_diagonal;
  std::vector<std::vector<double>> m_l;  // L(i, k) by i
  std::vector<std::vector<double>> m_u;  // U(k, j) by j
  std::size_t m_zero_pivots = 0;

 private:
  // RMI targets.
  void serve_diagonal(std::vector<double> d) { m_diagonal = std::move(d); }
  void serve_l(std::size_t i, std::vector<double> v) { m_l.at(i) = std::move(v); }
  void serve_u(std::size_t j, std::vector<double> v) { m_u.at(j) = std::move(v); }
  std::size_t serve_zero_pivots() const { return m_zero_pivots; }
};

// The distinct locations other than me among owner(t) for t in [first, last),
// of which at most `period` are distinct (the grid repeats).
template <class F>
void lu_destinations(std::vector<location_id>& out, std::size_t first, std::size_t last, std::size_t period,
                     location_id me, F owner) {
  for (std::size_t t = first; t < last && t < first + period; ++t) {
    location_id const loc = owner(t);
    if (loc != me && std::find(out.begin(), out.end(), loc) == out.end()) out.push_back(loc);
  }
}

}  // namespace detail

/// Collective: factors the square matrix a in place into L (unit lower, ones
/// not stored) and U (upper) without pivoting; returns the number of zero
/// pivots met (0 for a good factorization), the same on every location.
/// std::invalid_argument if a is not square.
inline std::size_t lu(pmatrix<double>& a) {
  hold_requests const hold;
  if (a.rows() != a.cols())
    throw std::invalid_argument("armi::lu: the matrix must be square, not " + std::to_string(a.rows()) + "x" +
                                std::to_string(a.cols()));
  matrix_distribution const& d = a.distribution();
  std::size_t const nb = d.block_rows();
  std::size_t const pr = d.grid().rows, pc = d.grid().cols;
  location_id const me = get_location_id();
  detail::lu_exchange x(nb);
  rmi_fence();  // x exists everywhere before step 0 sends to it
  auto const owner = [&d](std::size_t bi, std::size_t bj) { return d.block_owner_unchecked(bi, bj); };
  std::vector<location_id> dests;

  for (std::size_t k = 0; k < nb; ++k) {
    std::size_t const hk = d.block_height(k);

    // 1. The diagonal block.
    if (owner(k, k) == me) {
      auto& diag = a.local_block(k, k);
      x.m_zero_pivots += detail::lu_kernels::factor(diag.data(), hk);
      dests.clear();
      detail::lu_destinations(dests, k + 1, nb, pc, me, [&](std::size_t j) { return owner(k, j); });
      detail::lu_destinations(dests, k + 1, nb, pr, me, [&](std::size_t i) { return owner(i, k); });
      if (!dests.empty()) {
        std::vector<double> const copy(diag.data().begin(), diag.data().end());
        for (location_id dest : dests) x.send_diagonal(dest, copy);
      }
    }
    rmi_fence();

    // 2. The panels of block row k and block column k.
    std::span<double const> const diag =
        owner(k, k) == me ? std::span<double const>(a.local_block(k, k).data()) : std::span<double const>(x.m_diagonal);
    for (auto& blk : a.local()) {
      std::size_t const bi = blk.block_row(), bj = blk.block_col();
      if (bi == k && bj > k) {
        detail::lu_kernels::solve_lower_unit(diag, hk, blk.data(), blk.cols());
        dests.clear();
        detail::lu_destinations(dests, k + 1, nb, pr, me, [&](std::size_t i) { return owner(i, bj); });
        if (!dests.empty()) {
          std::vector<double> const copy(blk.data().begin(), blk.data().end());
          for (location_id dest : dests) x.send_u(dest, bj, copy);
        }
      } else if (bj == k && bi > k) {
        detail::lu_kernels::solve_upper_right(diag, hk, blk.data(), blk.rows());
        dests.clear();
        detail::lu_destinations(dests, k + 1, nb, pc, me, [&](std::size_t j) { return owner(bi, j); });
        if (!dests.empty()) {
          std::vector<double> const copy(blk.data().begin(), blk.data().end());
          for (location_id dest : dests) x.send_l(dest, bi, copy);
        }
      }
    }
    rmi_fence();

    // 3. The trailing blocks.
    for (auto& blk : a.local()) {
      std::size_t const bi = blk.block_row(), bj = blk.block_col();
      if (bi <= k || bj <= k) continue;
      std::span<double const> const l =
          owner(bi, k) == me ? std::span<double const>(a.local_block(bi, k).data()) : std::span<double const>(x.m_l[bi]);
      std::span<double const> const u =
          owner(k, bj) == me ? std::span<double const>(a.local_block(k, bj).data()) : std::span<double const>(x.m_u[bj]);
      detail::lu_kernels::subtract_product(blk.data(), l, u, blk.rows(), hk, blk.cols());
    }
  }
  return x.total_zero_pivots();
}

}  // namespace armi
