// Graph generators for armi::pgraph: a uniform random graph, a 2-D grid and
// an R-MAT graph.  Each is collective (every location calls it, in the same
// order as its other collectives), fills a graph constructed with the right
// vertex count, and returns after an rmi_fence(), with every edge in place.
//
// The graph is the same for any number of locations: edge number e of a
// random graph is a pure function of (seed, e) — a counter-based hash, no
// shared random stream — and location L generates the edges in its block of
// [0, m), sending each to the owner of its source (one aggregated async_rmi
// per remote edge).  The per-edge functions (detail::graph_gen::uniform_edge,
// rmat_edge, grid_out_edges) are implementation; tests and examples use them
// to regenerate any edge, or the whole graph sequentially, to check a result.
//
//   generate_uniform_random(g, m, seed)   m edges, both ends uniform in
//                                         [0, n); self-loops and parallel
//                                         edges are kept (G(n, m) with
//                                         replacement)
//   generate_grid(g, rows, cols, dir)     vertex r*cols + c; edges to the
//                                         right and down neighbours
//                                         (grid_direction::one_way, a DAG)
//                                         or to all four (both_ways)
//   generate_rmat(g, m, seed, params)     n = 2^scale; each edge picks one
//                                         quadrant per bit with
//                                         probabilities a, b, c, d = 1-a-b-c;
//                                         ids scrambled by a bijection of
//                                         [0, n) (params.scramble) so the
//                                         heavy vertices do not all land on
//                                         location 0; params.undirected
//                                         adds each edge both ways (u->v at
//                                         owner(u), v->u at owner(v)),
//                                         params.drop_self_loops skips u == v
// Each takes an optional edge-property function ep(u, v, e) -> EdgeProperty
// (e: the edge's number; for the grid, 4*u + direction), itself a pure
// function so properties too are location-count independent.
//
// Cost: the random generators send (p-1)/p of the edges as async_rmi
// (aggregated), then one fence; the grid adds every edge locally (its source
// is local) and fences.
#pragma once

#include <armi/containers/pgraph.hpp>
#include <armi/core/mix.hpp>
#include <armi/rmi.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace armi {

/// The R-MAT quadrant probabilities a, b, c (d = 1 - a - b - c) and whether
/// to scramble the vertex ids.
struct rmat_params {
  double a = 0.57;        ///< Probability of the top-left quadrant.
  double b = 0.19;        ///< Probability of the top-right quadrant.
  double c = 0.19;        ///< Probability of the bottom-left quadrant.
  bool scramble = true;   ///< Permute the ids so heavy vertices spread over the locations.
  bool undirected = false;       ///< Store each edge both ways: u->v and v->u (one u->u for a kept self-loop).
  bool drop_self_loops = false;  ///< Skip the edges u->u.
};

/// Which edges generate_grid makes.
enum class grid_direction {
  one_way,   ///< To the right and down neighbours (a DAG).
  both_ways  ///< To all four neighbours.
};

namespace detail::graph_gen {

constexpr std::uint64_t hash(std::uint64_t seed, std::uint64_t e, std::uint64_t salt) noexcept {
  return mix64(mix64(mix64(seed + 0x9E3779B97F4A7C15ULL) ^ e) + salt * 0xD6E8FEB86659FD93ULL);
}
// A double in [0, 1).
constexpr double unit(std::uint64_t bits) noexcept { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

struct edge_ends {
  std::uint64_t source = 0;
  std::uint64_t target = 0;
};

// Edge e of the uniform random graph on n > 0 vertices.
constexpr edge_ends uniform_edge(std::uint64_t seed, std::uint64_t n, std::uint64_t e) noexcept {
  return {hash(seed, e, 0) % n, hash(seed, e, 1) % n};
}

// A bijection of [0, 2^scale), seeded (the R-MAT id scramble).
constexpr std::uint64_t scramble(std::uint64_t x, unsigned scale, std::uint64_t seed) noexcept {
  if (scale == 0) return 0;
  std::uint64_t const mask = scale >= 64 ? ~0ULL : (1ULL << scale) - 1;
  unsigned const shift = (scale + 1) / 2;
  for (std::uint64_t round = 0; round < 3; ++round) {
    std::uint64_t const k = hash(seed, round, 7) | 1;  // odd: a bijection mod 2^scale
    x = (x * k + hash(seed, round, 8)) & mask;
    x ^= x >> shift;
  }
  return x;
}

// Edge e of the R-MAT graph on 2^scale vertices.
constexpr edge_ends rmat_edge(std::uint64_t seed, unsigned scale, rmat_params const& p, std::uint64_t e) noexcept {
  std::uint64_t u = 0, v = 0;
  for (unsigned bit = 0; bit < scale; ++bit) {
    double const r = unit(hash(seed, e, 16 + bit));
    std::uint64_t du = 0, dv = 0;
    if (r < p.a) {
    } else if (r < p.a + p.b) {
      dv = 1;
    } else if (r < p.a + p.b + p.c) {
      du = 1;
    } else {
      du = dv = 1;
    }
    u = (u << 1) | du;
    v = (v << 1) | dv;
  }
  if (p.scramble) {
    u = scramble(u, scale, seed);
    v = scramble(v, scale, seed);
  }
  return {u, v};
}

// Calls f(target, e) for each out-edge of vertex u of a rows x cols grid;
// e = 4*u + d, d: 0 right, 1 down, 2 left, 3 up.
template <class F>
constexpr void grid_out_edges(std::uint64_t rows, std::uint64_t cols, grid_direction dir, std::uint64_t u, F&& f) {
  std::uint64_t const r = u / cols, c = u % cols;
  if (c + 1 < cols) f(u + 1, 4 * u + 0);
  if (r + 1 < rows) f(u + cols, 4 * u + 1);
  if (dir == grid_direction::both_ways) {
    if (c > 0) f(u - 1, 4 * u + 2);
    if (r > 0) f(u - cols, 4 * u + 3);
  }
}

// This location's block of [0, m).
inline std::pair<std::uint64_t, std::uint64_t> my_edge_block(std::uint64_t m) {
  block_distribution const d(m, get_num_locations());
  location_id const me = get_location_id();
  return {d.first(me), d.first(me) + d.local_size(me)};
}

}  // namespace detail::graph_gen

namespace detail {
struct no_edge_property_fn {};

template <class G, class EPF>
typename G::edge_property_type make_edge_property(EPF const& ep, std::uint64_t u, std::uint64_t v, std::uint64_t e) {
  if constexpr (std::is_same_v<EPF, no_edge_property_fn>)
    return typename G::edge_property_type{};
  else
    return ep(u, v, e);
}
}  // namespace detail

/// Collective: adds m edges with both ends uniform in [0, g.size()) (self-loops
/// and parallel edges kept), the same graph for any location count; returns
/// after an rmi_fence().  ep(u, v, e), if given, makes edge e's property.
template <class G, class EPF = detail::no_edge_property_fn>
void generate_uniform_random(G& g, std::uint64_t m, std::uint64_t seed, EPF const& ep = {}) {
  std::uint64_t const n = g.size();
  if (n == 0 && m != 0)
    throw std::invalid_argument("armi::generate_uniform_random: " + std::to_string(m) +
                                " edges asked for a graph without vertices");
  auto const [first, last] = detail::graph_gen::my_edge_block(m);
  for (std::uint64_t e = first; e < last; ++e) {
    auto const [u, v] = detail::graph_gen::uniform_edge(seed, n, e);
    g.add_edge(u, v, detail::make_edge_property<G>(ep, u, v, e));
  }
  rmi_fence();
}

/// Collective: the rows x cols grid on g (g.size() must be rows * cols, else
/// std::invalid_argument): vertex r*cols + c, edges as dir says; returns
/// after an rmi_fence().  ep(u, v, e), if given, makes the edges' properties.
template <class G, class EPF = detail::no_edge_property_fn>
void generate_grid(G& g, std::uint64_t rows, std::uint64_t cols, grid_direction dir, EPF const& ep = {}) {
  if (rows * cols != g.size())
    throw std::invalid_argument("armi::generate_grid: a " + std::to_string(rows) + " x " + std::to_string(cols) +
                                " grid needs a graph of " + std::to_string(rows * cols) + " vertices, not " +
                                std::to_string(g.size()));
  for (auto& vx : g.local()) {
    std::uint64_t const u = vx.id;
    if (u >= g.size()) continue;  // an added vertex
    detail::graph_gen::grid_out_edges(rows, cols, dir, u, [&](std::uint64_t v, std::uint64_t e) {
      g.add_edge(u, v, detail::make_edge_property<G>(ep, u, v, e));
    });
  }
  rmi_fence();
}

/// Collective: adds m R-MAT edges (params) on g, whose size must be a power
/// of two; the same graph for any location count; returns after an
/// rmi_fence().  ep(u, v, e), if given, makes edge e's property (both
/// directions get the same one under params.undirected).
template <class G, class EPF = detail::no_edge_property_fn>
void generate_rmat(G& g, std::uint64_t m, std::uint64_t seed, rmat_params const& params = {}, EPF const& ep = {}) {
  std::uint64_t const n = g.size();
  if (n == 0 ? m != 0 : !std::has_single_bit(n))
    throw std::invalid_argument("armi::generate_rmat: the graph has " + std::to_string(n) +
                                " vertices; R-MAT needs a power of two");
  if (params.a < 0 || params.b < 0 || params.c < 0 || params.a + params.b + params.c > 1)
    throw std::invalid_argument("armi::generate_rmat: a, b, c must be >= 0 with a + b + c <= 1");
  unsigned const scale = n == 0 ? 0 : static_cast<unsigned>(std::countr_zero(n));
  auto const [first, last] = detail::graph_gen::my_edge_block(m);
  for (std::uint64_t e = first; e < last; ++e) {
    auto const [u, v] = detail::graph_gen::rmat_edge(seed, scale, params, e);
    if (u == v && params.drop_self_loops) continue;
    auto const p = detail::make_edge_property<G>(ep, u, v, e);
    g.add_edge(u, v, p);
    if (params.undirected && u != v) g.add_edge(v, u, p);
  }
  rmi_fence();
}

}  // namespace armi
