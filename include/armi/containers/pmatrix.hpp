// armi::pmatrix<T>: a dense rows x cols matrix, cut into square blocks of
// block_size() x block_size() (the last block row and column may be
// shorter) and dealt 2-D block-cyclically over a grid of pr x pc locations,
// as ScaLAPACK and the SPLASH-2 LU kernel do:
//
//   block (bi, bj) lives on grid position (bi % pr, bj % pc),
//   i.e. location (bi % pr) * pc + (bj % pc).
//
// The default grid is the most nearly square factorization of the location
// count (processor_grid::near_square: 4 -> 2x2, 6 -> 2x3, 7 -> 1x7); give
// one explicitly to choose another.  Element (i, j) is in block
// (i / b, j / b); matrix_distribution composes two block_cyclic_distributions
// (rows over pr, columns over pc) into this 2-D map.
//
//   armi::pmatrix<double> a(n, n, 64);            // collective, zeros
//   a.local_fill([](std::size_t i, std::size_t j) { return i == j ? 2.0 : 0.0; });
//   armi::rmi_fence();                            // everyone filled
//   double x = a.get(i, j);                       // sync_rmi to the owner
//   a.set(i, j, 1.0);                             // async_rmi to the owner
//   std::vector<double> blk = a.get_block(bi, bj);   // whole block, one sync_rmi
//   a.put_block(bi, bj, blk);                     // whole block, one async_rmi
//   for (auto& blk : a.local()) ...               // this location's blocks
//
// Semantics.  Construction is collective (same order, same arguments on
// every location) and ends with an rmi_fence(), so every representative
// exists before the first request reaches one; destruction is collective too
// and starts with an rmi_fence(), so requests in flight to it run first.
// A block travels as one std::vector<T>, row-major, of
// block_height(bi) x block_width(bj) elements (bulk argument: one request,
// however large).  Accesses to what this location owns touch local memory
// and send nothing.  Ordering, visibility and atomicity are those of the
// RMIs underneath: requests from one location to one owner run in order;
// rmi_fence() makes every set/put_block visible; each set or put_block is
// applied whole, never interleaved with another request.  Out-of-range
// indices throw std::out_of_range (naming the index and the size), a block
// of the wrong size std::invalid_argument, both on the caller.
//
// Thread safety: a pmatrix representative belongs to its location's thread.
// Distinct matrices: safe.
//
// Complexity: get/get_block one round trip (sync_rmi), set/put_block one
// aggregated async_rmi; get_block moves b^2 elements.  gather() is collective
// and moves the whole matrix to every location: small matrices and tests.
#pragma once

#include <armi/containers/collective.hpp>
#include <armi/containers/distribution.hpp>
#include <armi/future.hpp>
#include <armi/p_object.hpp>
#include <armi/rmi.hpp>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace armi {

// A pr x pc arrangement of locations; location (r, c) is r * cols + c.
struct processor_grid {
  location_id rows = 1;
  location_id cols = 1;

  // The factorization p = rows * cols with rows <= cols and rows largest.
  static processor_grid near_square(location_id p) {
    detail::check_locations("armi::processor_grid::near_square", p);
    location_id r = 1;
    for (location_id d = 1; d * d <= p; ++d)
      if (p % d == 0) r = d;
    return {r, static_cast<location_id>(p / r)};
  }

  location_id size() const noexcept { return rows * cols; }
  location_id location(location_id r, location_id c) const noexcept { return r * cols + c; }
  location_id row_of(location_id loc) const noexcept { return loc / cols; }
  location_id col_of(location_id loc) const noexcept { return loc % cols; }

  friend bool operator==(processor_grid const&, processor_grid const&) = default;
};

// Where block (bi, bj) and element (i, j) of a rows x cols matrix live.
class matrix_distribution {
 public:
  matrix_distribution() = default;
  matrix_distribution(std::size_t rows, std::size_t cols, std::size_t block, processor_grid grid)
      : m_rows(rows, check_grid(grid).rows, block), m_cols(cols, grid.cols, block), m_grid(grid) {}

  std::size_t rows() const noexcept { return m_rows.size(); }
  std::size_t cols() const noexcept { return m_cols.size(); }
  std::size_t block_size() const noexcept { return m_rows.block_size(); }
  processor_grid grid() const noexcept { return m_grid; }
  location_id num_locations() const noexcept { return m_grid.size(); }
  // The 1-D maps: row index over grid rows, column index over grid columns.
  block_cyclic_distribution const& row_distribution() const noexcept { return m_rows; }
  block_cyclic_distribution const& col_distribution() const noexcept { return m_cols; }

  // Number of block rows / block columns, and the size of one.
  std::size_t block_rows() const noexcept { return blocks(rows()); }
  std::size_t block_cols() const noexcept { return blocks(cols()); }
  std::size_t block_height(std::size_t bi) const {
    check_block_row(bi);
    return std::min(block_size(), rows() - bi * block_size());
  }
  std::size_t block_width(std::size_t bj) const {
    check_block_col(bj);
    return std::min(block_size(), cols() - bj * block_size());
  }

  location_id owner(std::size_t i, std::size_t j) const {
    check_element(i, j);
    return m_grid.location(m_rows.owner(i), m_cols.owner(j));
  }
  location_id block_owner(std::size_t bi, std::size_t bj) const {
    check_block_row(bi);
    check_block_col(bj);
    return block_owner_unchecked(bi, bj);
  }

  // The blocks location loc holds: local_block_rows(loc) x local_block_cols(loc),
  // numbered row-major; local_block_index(bi, bj) is the number of (bi, bj)
  // at its owner, global_block(loc, k) the inverse.
  std::size_t local_block_rows(location_id loc) const {
    return count_of(block_rows(), m_grid.rows, m_grid.row_of(check_location(loc)));
  }
  std::size_t local_block_cols(location_id loc) const {
    return count_of(block_cols(), m_grid.cols, m_grid.col_of(check_location(loc)));
  }
  std::size_t num_local_blocks(location_id loc) const { return local_block_rows(loc) * local_block_cols(loc); }
  std::size_t local_block_index(std::size_t bi, std::size_t bj) const {
    location_id const loc = block_owner(bi, bj);
    return (bi / m_grid.rows) * local_block_cols(loc) + bj / m_grid.cols;
  }
  std::pair<std::size_t, std::size_t> global_block(location_id loc, std::size_t k) const {
    std::size_t const n = num_local_blocks(loc);
    if (k >= n) detail::index_out_of_range("armi::matrix_distribution::global_block", k, n);
    std::size_t const lc = local_block_cols(loc);
    return {(k / lc) * m_grid.rows + m_grid.row_of(loc), (k % lc) * m_grid.cols + m_grid.col_of(loc)};
  }

  void check_element(std::size_t i, std::size_t j) const {
    if (i >= rows()) detail::index_out_of_range("armi::pmatrix: row", i, rows());
    if (j >= cols()) detail::index_out_of_range("armi::pmatrix: column", j, cols());
  }
  void check_block_row(std::size_t bi) const {
    if (bi >= block_rows()) detail::index_out_of_range("armi::pmatrix: block row", bi, block_rows());
  }
  void check_block_col(std::size_t bj) const {
    if (bj >= block_cols()) detail::index_out_of_range("armi::pmatrix: block column", bj, block_cols());
  }
  location_id block_owner_unchecked(std::size_t bi, std::size_t bj) const noexcept {
    return m_grid.location(static_cast<location_id>(bi % m_grid.rows), static_cast<location_id>(bj % m_grid.cols));
  }

  friend bool operator==(matrix_distribution const&, matrix_distribution const&) = default;

 private:
  static processor_grid const& check_grid(processor_grid const& g) {
    if (g.rows == 0 || g.cols == 0)
      throw std::invalid_argument("armi::matrix_distribution: the processor grid needs at least one row and column");
    return g;
  }
  location_id check_location(location_id loc) const {
    if (loc >= num_locations()) detail::location_out_of_range("armi::matrix_distribution", loc, num_locations());
    return loc;
  }
  std::size_t blocks(std::size_t n) const noexcept { return (n + block_size() - 1) / block_size(); }
  // How many of n blocks dealt round-robin over p go to position r.
  static std::size_t count_of(std::size_t n, location_id p, location_id r) noexcept {
    return n / p + (r < n % p ? 1 : 0);
  }

  block_cyclic_distribution m_rows;
  block_cyclic_distribution m_cols;
  processor_grid m_grid;
};

template <class T>
class pmatrix;

// One block held by this location: block_height x block_width elements,
// row-major.  Its shape is fixed; its elements are the matrix's.
template <class T>
class matrix_block {
 public:
  std::size_t block_row() const noexcept { return m_bi; }
  std::size_t block_col() const noexcept { return m_bj; }
  std::size_t rows() const noexcept { return m_height; }
  std::size_t cols() const noexcept { return m_width; }
  std::size_t first_row() const noexcept { return m_first_row; }  // global index of row 0
  std::size_t first_col() const noexcept { return m_first_col; }

  std::span<T> data() noexcept { return m_data; }
  std::span<T const> data() const noexcept { return m_data; }
  T& operator()(std::size_t r, std::size_t c) noexcept { return m_data[r * m_width + c]; }
  T const& operator()(std::size_t r, std::size_t c) const noexcept { return m_data[r * m_width + c]; }

 private:
  friend class pmatrix<T>;
  matrix_block(std::size_t bi, std::size_t bj, std::size_t height, std::size_t width, std::size_t b, T const& init)
      : m_bi(bi), m_bj(bj), m_height(height), m_width(width), m_first_row(bi * b), m_first_col(bj * b),
        m_data(height * width, init) {}

  std::size_t m_bi, m_bj, m_height, m_width, m_first_row, m_first_col;
  std::vector<T> m_data;
};

template <class T>
class pmatrix : public p_object {
  static_assert(!std::is_same_v<T, bool>, "armi::pmatrix<bool> has no contiguous blocks; use std::uint8_t");

 public:
  using value_type = T;
  using block_type = matrix_block<T>;

  // Collective: rows x cols elements equal to init, blocks of block x block
  // over the near-square grid of the current locations.
  pmatrix(std::size_t rows, std::size_t cols, std::size_t block, T const& init = T{})
      : pmatrix(rows, cols, block, processor_grid::near_square(get_num_locations()), init) {}

  // Collective, with an explicit grid of exactly get_num_locations() locations.
  pmatrix(std::size_t rows, std::size_t cols, std::size_t block, processor_grid grid, T const& init = T{})
      : m_dist(rows, cols, check_block(block), grid), m_me(get_location_id()) {
    if (grid.size() != get_num_locations())
      throw std::invalid_argument("armi::pmatrix: a " + std::to_string(grid.rows) + "x" + std::to_string(grid.cols) +
                                  " grid for " + std::to_string(get_num_locations()) + " locations");
    std::size_t const n = m_dist.num_local_blocks(m_me);
    m_blocks.reserve(n);
    for (std::size_t k = 0; k < n; ++k) {
      auto const [bi, bj] = m_dist.global_block(m_me, k);
      m_blocks.push_back(block_type(bi, bj, m_dist.block_height(bi), m_dist.block_width(bj), block, init));
    }
    rmi_fence();  // registered everywhere before anyone sends to it
  }

  // Collective, like construction: fences first, so every RMI to this
  // container has run before any representative goes away.  (Not while an
  // exception unwinds through it: the other locations may never get here.)
  ~pmatrix() override {
    if (std::uncaught_exceptions() == m_uncaught) rmi_fence();
  }

  std::size_t rows() const noexcept { return m_dist.rows(); }
  std::size_t cols() const noexcept { return m_dist.cols(); }
  std::size_t size() const noexcept { return rows() * cols(); }
  std::size_t block_size() const noexcept { return m_dist.block_size(); }
  std::size_t block_rows() const noexcept { return m_dist.block_rows(); }
  std::size_t block_cols() const noexcept { return m_dist.block_cols(); }
  std::size_t block_height(std::size_t bi) const { return m_dist.block_height(bi); }
  std::size_t block_width(std::size_t bj) const { return m_dist.block_width(bj); }
  matrix_distribution const& distribution() const noexcept { return m_dist; }
  processor_grid grid() const noexcept { return m_dist.grid(); }
  location_id owner(std::size_t i, std::size_t j) const { return m_dist.owner(i, j); }
  location_id block_owner(std::size_t bi, std::size_t bj) const { return m_dist.block_owner(bi, bj); }

  // ---- elements ----
  T get(std::size_t i, std::size_t j) const {
    location_id const loc = m_dist.owner(i, j);
    if (loc == m_me) return element(i, j);
    return sync_rmi(loc, get_rmi_handle(), armi::method<&pmatrix::serve_get>, i, j);
  }
  future<T> get_async(std::size_t i, std::size_t j) const {
    return opaque_rmi(m_dist.owner(i, j), get_rmi_handle(), armi::method<&pmatrix::serve_get>, i, j);
  }
  void set(std::size_t i, std::size_t j, T const& x) {
    location_id const loc = m_dist.owner(i, j);
    if (loc == m_me)
      element(i, j) = x;
    else
      async_rmi(loc, get_rmi_handle(), armi::method<&pmatrix::serve_set>, i, j, x);
  }

  // ---- whole blocks (row-major, block_height(bi) x block_width(bj)) ----
  std::vector<T> get_block(std::size_t bi, std::size_t bj) const {
    location_id const loc = m_dist.block_owner(bi, bj);
    if (loc == m_me) {
      auto const d = local_block(bi, bj).data();
      return std::vector<T>(d.begin(), d.end());
    }
    return sync_rmi(loc, get_rmi_handle(), &pmatrix::serve_get_block, bi, bj);
  }
  future<std::vector<T>> get_block_async(std::size_t bi, std::size_t bj) const {
    return opaque_rmi(m_dist.block_owner(bi, bj), get_rmi_handle(), &pmatrix::serve_get_block, bi, bj);
  }
  void put_block(std::size_t bi, std::size_t bj, std::vector<T> const& values) {
    location_id const loc = m_dist.block_owner(bi, bj);
    std::size_t const expected = m_dist.block_height(bi) * m_dist.block_width(bj);
    if (values.size() != expected)
      throw std::invalid_argument("armi::pmatrix::put_block: block (" + std::to_string(bi) + ", " +
                                  std::to_string(bj) + ") has " + std::to_string(expected) + " elements, given " +
                                  std::to_string(values.size()));
    if (loc == m_me)
      std::copy(values.begin(), values.end(), local_block(bi, bj).data().begin());
    else
      async_rmi(loc, get_rmi_handle(), &pmatrix::serve_put_block, bi, bj, values);
  }

  // ---- this location's part ----
  // The blocks this location holds, in local order (block rows of its grid
  // row, then block columns of its grid column).  Maybe none.
  std::span<block_type> local() noexcept { return m_blocks; }
  std::span<block_type const> local() const noexcept { return m_blocks; }

  bool is_local_block(std::size_t bi, std::size_t bj) const { return m_dist.block_owner(bi, bj) == m_me; }
  block_type& local_block(std::size_t bi, std::size_t bj) { return m_blocks[local_index(bi, bj, "local_block")]; }
  block_type const& local_block(std::size_t bi, std::size_t bj) const {
    return m_blocks[local_index(bi, bj, "local_block")];
  }

  // Sets every local element (i, j) to f(i, j); sends nothing.  Other
  // locations see the values after the next rmi_fence().
  template <class F>
  void local_fill(F&& f) {
    for (block_type& blk : m_blocks)
      for (std::size_t r = 0; r < blk.rows(); ++r)
        for (std::size_t c = 0; c < blk.cols(); ++c) blk(r, c) = f(blk.first_row() + r, blk.first_col() + c);
  }

  // Collective: the whole matrix, row-major, on every location.
  std::vector<T> gather() const {
    std::vector<std::vector<T>> const parts = detail::allgather_value(packed_local());
    std::vector<T> out(size());
    for (location_id loc = 0; loc < parts.size(); ++loc) {
      std::size_t pos = 0;
      for (std::size_t k = 0; k < m_dist.num_local_blocks(loc); ++k) {
        auto const [bi, bj] = m_dist.global_block(loc, k);
        std::size_t const h = m_dist.block_height(bi), w = m_dist.block_width(bj);
        for (std::size_t r = 0; r < h; ++r)
          for (std::size_t c = 0; c < w; ++c)
            out[(bi * block_size() + r) * cols() + bj * block_size() + c] = parts[loc][pos++];
      }
    }
    return out;
  }

 private:
  int m_uncaught = std::uncaught_exceptions();  // at construction: is the destructor part of an unwinding?
  static std::size_t check_block(std::size_t b) {
    if (b == 0) throw std::invalid_argument("armi::pmatrix: the block size must be at least 1");
    return b;
  }
  std::size_t local_index(std::size_t bi, std::size_t bj, char const* who) const {
    location_id const loc = m_dist.block_owner(bi, bj);
    if (loc != m_me)
      throw std::out_of_range("armi::pmatrix::" + std::string(who) + ": block (" + std::to_string(bi) + ", " +
                              std::to_string(bj) + ") lives on location " + std::to_string(loc) + ", not on " +
                              std::to_string(m_me));
    return m_dist.local_block_index(bi, bj);
  }
  T& element(std::size_t i, std::size_t j) {
    std::size_t const b = block_size();
    return m_blocks[local_index(i / b, j / b, "element")](i % b, j % b);
  }
  T const& element(std::size_t i, std::size_t j) const {
    std::size_t const b = block_size();
    return m_blocks[local_index(i / b, j / b, "element")](i % b, j % b);
  }

  // Request targets (owner side); they re-check what they are given.
  T serve_get(std::size_t i, std::size_t j) const {
    m_dist.check_element(i, j);
    return element(i, j);
  }
  void serve_set(std::size_t i, std::size_t j, T x) {
    m_dist.check_element(i, j);
    element(i, j) = std::move(x);
  }
  std::vector<T> serve_get_block(std::size_t bi, std::size_t bj) const {
    auto const d = local_block(bi, bj).data();
    return std::vector<T>(d.begin(), d.end());
  }
  void serve_put_block(std::size_t bi, std::size_t bj, std::vector<T> values) {
    auto const d = local_block(bi, bj).data();
    if (values.size() != d.size()) throw std::invalid_argument("armi::pmatrix::put_block: wrong block size");
    std::move(values.begin(), values.end(), d.begin());
  }

  // This location's blocks, one after the other, each row-major.
  std::vector<T> packed_local() const {
    std::vector<T> all;
    for (block_type const& blk : m_blocks) all.insert(all.end(), blk.data().begin(), blk.data().end());
    return all;
  }

  matrix_distribution m_dist;
  location_id m_me;
  std::vector<block_type> m_blocks;
};

}  // namespace armi
