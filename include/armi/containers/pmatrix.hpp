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
// Element access (get, get_async, set, apply, update by (i, j)) is the shared
// piece detail::element_access; get_async and get_block_async answer at once
// (a ready future) when this location owns what they read.
//
// Complexity: get/get_block one round trip (sync_rmi), set/put_block one
// aggregated async_rmi; get_block moves b^2 elements.  gather() is collective
// and moves the whole matrix to every location: small matrices and tests.
#pragma once

#include <armi/containers/collective.hpp>
#include <armi/containers/detail/element_access.hpp>
#include <armi/containers/distribution.hpp>
#include <armi/containers/operations.hpp>
#include <armi/future.hpp>
#include <armi/hold_requests.hpp>
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

/// A pr x pc arrangement of locations; location (r, c) is r * cols + c.
struct processor_grid {
  location_id rows = 1;  ///< Grid rows (pr).
  location_id cols = 1;  ///< Grid columns (pc).

  /// The factorization p = rows * cols with rows <= cols and rows largest.
  static processor_grid near_square(location_id p) {
    detail::check_locations("armi::processor_grid::near_square", p);
    location_id r = 1;
    for (location_id d = 1; d * d <= p; ++d)
      if (p % d == 0) r = d;
    return {r, static_cast<location_id>(p / r)};
  }

  /// The number of locations, rows * cols.
  location_id size() const noexcept { return rows * cols; }
  /// The location at grid position (r, c).
  location_id location(location_id r, location_id c) const noexcept { return r * cols + c; }
  /// The grid row of location loc.
  location_id row_of(location_id loc) const noexcept { return loc / cols; }
  /// The grid column of location loc.
  location_id col_of(location_id loc) const noexcept { return loc % cols; }

  /// Same shape.
  friend bool operator==(processor_grid const&, processor_grid const&) = default;
};

/// Where block (bi, bj) and element (i, j) of a rows x cols matrix live:
/// blocks of block_size() dealt 2-D block-cyclically over a processor_grid.
/// A small value, the same on every location; no member communicates.
class matrix_distribution {
 public:
  /// An empty 0 x 0 distribution.
  matrix_distribution() = default;
  /// rows x cols elements in blocks of block x block over grid
  /// (std::invalid_argument for an empty grid or block 0).
  matrix_distribution(std::size_t rows, std::size_t cols, std::size_t block, processor_grid grid)
      : m_rows(rows, check_grid(grid).rows, block), m_cols(cols, grid.cols, block), m_grid(grid) {}

  /// The number of rows.
  std::size_t rows() const noexcept { return m_rows.size(); }
  /// The number of columns.
  std::size_t cols() const noexcept { return m_cols.size(); }
  /// The block edge b (the last block row and column may be shorter).
  std::size_t block_size() const noexcept { return m_rows.block_size(); }
  /// The processor grid.
  processor_grid grid() const noexcept { return m_grid; }
  /// The number of locations of the grid.
  location_id num_locations() const noexcept { return m_grid.size(); }
  /// The 1-D map of row indices over grid rows.
  block_cyclic_distribution const& row_distribution() const noexcept { return m_rows; }
  /// The 1-D map of column indices over grid columns.
  block_cyclic_distribution const& col_distribution() const noexcept { return m_cols; }

  /// The number of block rows.
  std::size_t block_rows() const noexcept { return blocks(rows()); }
  /// The number of block columns.
  std::size_t block_cols() const noexcept { return blocks(cols()); }
  /// The height of block row bi (std::out_of_range past the last).
  std::size_t block_height(std::size_t bi) const {
    check_block_row(bi);
    return std::min(block_size(), rows() - bi * block_size());
  }
  /// The width of block column bj (std::out_of_range past the last).
  std::size_t block_width(std::size_t bj) const {
    check_block_col(bj);
    return std::min(block_size(), cols() - bj * block_size());
  }

  /// The location that owns element (i, j) (std::out_of_range outside the matrix).
  location_id owner(std::size_t i, std::size_t j) const {
    check_element(i, j);
    return m_grid.location(m_rows.owner(i), m_cols.owner(j));
  }
  /// The location that owns block (bi, bj) (std::out_of_range outside the matrix).
  location_id block_owner(std::size_t bi, std::size_t bj) const {
    check_block_row(bi);
    check_block_col(bj);
    return block_owner_unchecked(bi, bj);
  }

  /// How many block rows location loc holds.
  std::size_t local_block_rows(location_id loc) const {
    return count_of(block_rows(), m_grid.rows, m_grid.row_of(check_location(loc)));
  }
  /// How many block columns location loc holds.
  std::size_t local_block_cols(location_id loc) const {
    return count_of(block_cols(), m_grid.cols, m_grid.col_of(check_location(loc)));
  }
  /// How many blocks location loc holds: local_block_rows(loc) x local_block_cols(loc).
  std::size_t num_local_blocks(location_id loc) const { return local_block_rows(loc) * local_block_cols(loc); }
  /// The number of block (bi, bj) at its owner (row-major over its blocks).
  std::size_t local_block_index(std::size_t bi, std::size_t bj) const {
    location_id const loc = block_owner(bi, bj);
    return (bi / m_grid.rows) * local_block_cols(loc) + bj / m_grid.cols;
  }
  /// The inverse of local_block_index: (bi, bj) of location loc's k-th block.
  std::pair<std::size_t, std::size_t> global_block(location_id loc, std::size_t k) const {
    std::size_t const n = num_local_blocks(loc);
    if (k >= n) detail::index_out_of_range("armi::matrix_distribution::global_block", k, n);
    std::size_t const lc = local_block_cols(loc);
    return {(k / lc) * m_grid.rows + m_grid.row_of(loc), (k % lc) * m_grid.cols + m_grid.col_of(loc)};
  }

  /// Throws std::out_of_range unless (i, j) is in the matrix.
  void check_element(std::size_t i, std::size_t j) const {
    if (i >= rows()) detail::index_out_of_range("armi::pmatrix: row", i, rows());
    if (j >= cols()) detail::index_out_of_range("armi::pmatrix: column", j, cols());
  }
  /// Throws std::out_of_range unless bi is a block row.
  void check_block_row(std::size_t bi) const {
    if (bi >= block_rows()) detail::index_out_of_range("armi::pmatrix: block row", bi, block_rows());
  }
  /// Throws std::out_of_range unless bj is a block column.
  void check_block_col(std::size_t bj) const {
    if (bj >= block_cols()) detail::index_out_of_range("armi::pmatrix: block column", bj, block_cols());
  }
  /// block_owner without the range checks, for loops that stay in range.
  location_id block_owner_unchecked(std::size_t bi, std::size_t bj) const noexcept {
    return m_grid.location(static_cast<location_id>(bi % m_grid.rows), static_cast<location_id>(bj % m_grid.cols));
  }

  /// Same shape, blocks and grid.
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

/// One block held by this location: rows() x cols() elements, row-major.
/// Its shape is fixed; its elements are the matrix's.  Local only.
template <class T>
class matrix_block {
 public:
  /// Its block row bi.
  std::size_t block_row() const noexcept { return m_bi; }
  /// Its block column bj.
  std::size_t block_col() const noexcept { return m_bj; }
  /// Its height.
  std::size_t rows() const noexcept { return m_height; }
  /// Its width.
  std::size_t cols() const noexcept { return m_width; }
  /// The global row index of its row 0.
  std::size_t first_row() const noexcept { return m_first_row; }
  /// The global column index of its column 0.
  std::size_t first_col() const noexcept { return m_first_col; }

  /// Its elements, row-major.
  std::span<T> data() noexcept { return m_data; }
  /// Its elements, row-major, read-only.
  std::span<T const> data() const noexcept { return m_data; }
  /// Element (r, c) of the block (unchecked).
  T& operator()(std::size_t r, std::size_t c) noexcept { return m_data[r * m_width + c]; }
  /// Element (r, c) of the block, read-only (unchecked).
  T const& operator()(std::size_t r, std::size_t c) const noexcept { return m_data[r * m_width + c]; }

 private:
  friend class pmatrix<T>;
  matrix_block(std::size_t bi, std::size_t bj, std::size_t height, std::size_t width, std::size_t b, T const& init)
      : m_bi(bi), m_bj(bj), m_height(height), m_width(width), m_first_row(bi * b), m_first_col(bj * b),
        m_data(height * width, init) {}

  std::size_t m_bi, m_bj, m_height, m_width, m_first_row, m_first_col;
  std::vector<T> m_data;
};

namespace detail {
// The slot of one element at its owner: the local block and the offset in it.
struct matrix_slot {
  std::size_t block = 0;
  std::size_t offset = 0;
};
}  // namespace detail

/// A dense distributed matrix in square blocks, dealt 2-D block-cyclically.
///
/// Construction, destruction and gather are Collective.  get / get_async /
/// set / apply / update by (i, j) come from detail::element_access: local
/// elements directly, remote ones by one RMI to the owner.
template <class T>
class pmatrix : public detail::element_access<pmatrix<T>, T, detail::matrix_slot, std::size_t, std::size_t> {
  static_assert(!std::is_same_v<T, bool>, "armi::pmatrix<bool> has no contiguous blocks; use std::uint8_t");
  friend class detail::element_access<pmatrix, T, detail::matrix_slot, std::size_t, std::size_t>;

 public:
  using value_type = T;                ///< The element type.
  using block_type = matrix_block<T>;  ///< A block as a location holds it.

  /// Collective: rows x cols elements equal to init, blocks of block x block
  /// over the near-square grid of the current locations.
  pmatrix(std::size_t rows, std::size_t cols, std::size_t block, T const& init = T{})
      : pmatrix(rows, cols, block, processor_grid::near_square(get_num_locations()), init) {}

  /// Collective, with an explicit grid of exactly get_num_locations()
  /// locations (std::invalid_argument otherwise, or for block 0).
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

  /// Collective: fences first, so every RMI to this container has run before
  /// any representative goes away (not while an exception unwinds through
  /// it: the other locations may never get here).
  ~pmatrix() override {
    if (std::uncaught_exceptions() == m_uncaught) rmi_fence();
  }

  /// The number of rows.  Local only.
  std::size_t rows() const noexcept { return m_dist.rows(); }
  /// The number of columns.  Local only.
  std::size_t cols() const noexcept { return m_dist.cols(); }
  /// rows() * cols().  Local only.
  std::size_t size() const noexcept { return rows() * cols(); }
  /// The block edge b.  Local only.
  std::size_t block_size() const noexcept { return m_dist.block_size(); }
  /// The number of block rows.  Local only.
  std::size_t block_rows() const noexcept { return m_dist.block_rows(); }
  /// The number of block columns.  Local only.
  std::size_t block_cols() const noexcept { return m_dist.block_cols(); }
  /// The height of block row bi.  Local only.
  std::size_t block_height(std::size_t bi) const { return m_dist.block_height(bi); }
  /// The width of block column bj.  Local only.
  std::size_t block_width(std::size_t bj) const { return m_dist.block_width(bj); }
  /// The distribution (the same on every location).  Local only.
  matrix_distribution const& distribution() const noexcept { return m_dist; }
  /// The processor grid.  Local only.
  processor_grid grid() const noexcept { return m_dist.grid(); }
  /// The location that owns element (i, j).  Local only.
  location_id owner(std::size_t i, std::size_t j) const { return m_dist.owner(i, j); }
  /// The location that owns block (bi, bj).  Local only.
  location_id block_owner(std::size_t bi, std::size_t bj) const { return m_dist.block_owner(bi, bj); }

  // ---- whole blocks (row-major, block_height(bi) x block_width(bj)) ----

  /// A copy of block (bi, bj); blocks for one sync_rmi unless it is local.
  std::vector<T> get_block(std::size_t bi, std::size_t bj) const {
    hold_requests const hold;
    location_id const loc = m_dist.block_owner(bi, bj);
    if (loc == m_me) return serve_get_block(bi, bj);
    return sync_rmi(loc, this->get_rmi_handle(), &pmatrix::serve_get_block, bi, bj);
  }
  /// A copy of block (bi, bj) later: returns a future, ready at once when the
  /// block is local, else answered by one opaque_rmi.
  future<std::vector<T>> get_block_async(std::size_t bi, std::size_t bj) const {
    hold_requests const hold;
    location_id const loc = m_dist.block_owner(bi, bj);
    if (loc == m_me) return detail::ready_future(serve_get_block(bi, bj), "armi::pmatrix::get_block_async");
    return opaque_rmi(loc, this->get_rmi_handle(), &pmatrix::serve_get_block, bi, bj);
  }
  /// Block (bi, bj) becomes values (row-major; std::invalid_argument if the
  /// size is wrong); fire-and-forget (one async_rmi unless local).
  void put_block(std::size_t bi, std::size_t bj, std::vector<T> const& values) {
    hold_requests const hold;
    location_id const loc = m_dist.block_owner(bi, bj);
    std::size_t const expected = m_dist.block_height(bi) * m_dist.block_width(bj);
    if (values.size() != expected)
      throw std::invalid_argument("armi::pmatrix::put_block: block (" + std::to_string(bi) + ", " +
                                  std::to_string(bj) + ") has " + std::to_string(expected) + " elements, given " +
                                  std::to_string(values.size()));
    if (loc == m_me)
      std::copy(values.begin(), values.end(), local_block(bi, bj).data().begin());
    else
      async_rmi(loc, this->get_rmi_handle(), &pmatrix::serve_put_block, bi, bj, values);
  }

  // ---- this location's part ----

  /// The blocks this location holds, in local order (block rows of its grid
  /// row, then block columns of its grid column); maybe none.  Local only.
  std::span<block_type> local() noexcept { return m_blocks; }
  /// The blocks this location holds, read-only.  Local only.
  std::span<block_type const> local() const noexcept { return m_blocks; }

  /// True when this location holds block (bi, bj).  Local only.
  bool is_local_block(std::size_t bi, std::size_t bj) const { return m_dist.block_owner(bi, bj) == m_me; }
  /// Block (bi, bj), which this location must hold (std::out_of_range if not).  Local only.
  block_type& local_block(std::size_t bi, std::size_t bj) { return m_blocks[local_index(bi, bj, "local_block")]; }
  /// Block (bi, bj), read-only.  Local only.
  block_type const& local_block(std::size_t bi, std::size_t bj) const {
    return m_blocks[local_index(bi, bj, "local_block")];
  }

  /// Sets every local element (i, j) to f(i, j); local only.  Other
  /// locations see the values after the next rmi_fence().
  template <class F>
  void local_fill(F&& f) {
    hold_requests const hold;
    for (block_type& blk : m_blocks)
      for (std::size_t r = 0; r < blk.rows(); ++r)
        for (std::size_t c = 0; c < blk.cols(); ++c) blk(r, c) = f(blk.first_row() + r, blk.first_col() + c);
  }

  /// Collective: the whole matrix, row-major, on every location.  One
  /// allgather moving every element to every location; for small matrices.
  std::vector<T> gather() const {
    hold_requests const hold;
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

  // For element_access: (i, j) -> owner and slot, checked; a slot here, checked.
  detail::element_location<detail::matrix_slot> locate_element(char const* method, std::size_t i,
                                                               std::size_t j) const {
    if (i >= rows()) detail::element_out_of_range("armi::pmatrix", method, "row", i, rows());
    if (j >= cols()) detail::element_out_of_range("armi::pmatrix", method, "column", j, cols());
    std::size_t const b = block_size(), bi = i / b, bj = j / b;
    return {m_dist.block_owner_unchecked(bi, bj),
            {m_dist.local_block_index(bi, bj), (i % b) * m_dist.block_width(bj) + j % b}};
  }
  T& local_element(char const* method, detail::matrix_slot s) {
    return detail::local_slot(detail::local_slot(m_blocks, "armi::pmatrix", method, s.block).m_data, "armi::pmatrix",
                              method, s.offset);
  }
  T const& local_element(char const* method, detail::matrix_slot s) const {
    return detail::local_slot(detail::local_slot(m_blocks, "armi::pmatrix", method, s.block).m_data, "armi::pmatrix",
                              method, s.offset);
  }

  // RMI targets (owner side); they re-check what they are given.
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
