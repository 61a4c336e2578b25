// The Graph500 graph and its search keys, on an armi::pgraph.
//
//   generate_graph500(g, edge_factor, seed)   g.size() = N = 2^SCALE; adds
//       the M = edge_factor * N edges of the specification's Kronecker
//       generator (initiator A, B, C, D = 0.57, 0.19, 0.19, 0.05: each edge
//       picks one quadrant per bit, R-MAT style), relabels the vertices by a
//       seeded random permutation of [0, N) (the specification's vertex
//       permutation), drops self-loops and stores every other edge both ways
//       (u->v at owner(u), v->u at owner(v)): the undirected graph that the
//       BFS kernel searches.  Duplicate edges are kept, as in the
//       specification's edge list.
//   graph500_search_keys(g, count, seed)      count distinct vertices of
//       degree >= 1 (self-loops do not count), in a seeded random order: the
//       64 search keys of the benchmark.  Fewer when fewer vertices qualify.
//
// Both are collective and location-count independent: edge e is a pure
// function of (seed, SCALE, e) (graph_generators.hpp's counter-based hash),
// so tests and baselines regenerate any edge with detail::graph500::edge.
// The specification also shuffles the edge list; the graph does not depend
// on the order, and each location generates its block of [0, M), so there is
// nothing to shuffle here.
//
// Cost: generation as generate_rmat (about 2(p-1)/p of the 2M stored edges
// travel as aggregated async_rmi, then one fence); the keys take one
// allreduce per 1024 candidates (one in all, for the usual graphs).
#pragma once

#include <armi/containers/graph_generators.hpp>
#include <armi/containers/pgraph.hpp>
#include <armi/p_object.hpp>
#include <armi/rmi.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace armi {

namespace detail::graph500 {

// The initiator, without scrambling: the permutation below relabels instead.
inline constexpr rmat_params initiator{0.57, 0.19, 0.19, false, false, false};

// A seeded random permutation of [0, 2^scale): a 4-round balanced Feistel
// network on 2h bits (h = ceil(scale / 2)), walked until the image falls in
// range (never for an even scale, under 2 steps on average for an odd one).
constexpr std::uint64_t permute(std::uint64_t x, unsigned scale, std::uint64_t seed) noexcept {
  if (scale == 0) return 0;
  unsigned const h = (scale + 1) / 2;
  std::uint64_t const half = (std::uint64_t{1} << h) - 1;
  std::uint64_t const n = scale >= 64 ? ~std::uint64_t{0} : std::uint64_t{1} << scale;
  do {
    std::uint64_t left = x >> h, right = x & half;
    for (std::uint64_t round = 0; round < 4; ++round) {
      std::uint64_t const f = graph_gen::hash(seed, right, 40 + round) & half;
      std::uint64_t const next = left ^ f;
      left = right;
      right = next;
    }
    x = (left << h) | right;
  } while (scale < 64 && x >= n);
  return x;
}

// Edge e of the Graph500 graph on 2^scale vertices, before dropping
// self-loops: Kronecker bits, then the vertex permutation.
constexpr graph_gen::edge_ends edge(std::uint64_t seed, unsigned scale, std::uint64_t e) noexcept {
  auto const [u, v] = graph_gen::rmat_edge(seed, scale, initiator, e);
  std::uint64_t const pseed = graph_gen::hash(seed, 0, 99);
  return {permute(u, scale, pseed), permute(v, scale, pseed)};
}

// Gathers, for a batch of candidate keys, which ones have degree >= 1.
class key_finder : public p_object {
 public:
  key_finder() { rmi_fence(); }  // registered everywhere before the first allreduce
  std::vector<std::uint8_t> echo(std::vector<std::uint8_t> const& x) const { return x; }
  std::vector<std::uint8_t> any(std::vector<std::uint8_t> const& mine) {
    return allreduce_rmi(get_rmi_handle(), &key_finder::echo,
                         [](std::vector<std::uint8_t> a, std::vector<std::uint8_t> const& b) {
                           for (std::size_t i = 0; i < a.size(); ++i) a[i] |= b[i];
                           return a;
                         },
                         mine);
  }
};

}  // namespace detail::graph500

/// Collective: the Graph500 graph on g (g.size() = 2^SCALE, else
/// std::invalid_argument): edge_factor * g.size() Kronecker edges, vertex ids
/// permuted, self-loops dropped, every edge stored both ways.  The same
/// graph for any location count; returns after an rmi_fence().
template <class G>
void generate_graph500(G& g, std::uint64_t edge_factor, std::uint64_t seed) {
  std::uint64_t const n = g.size();
  if (n == 0 || !std::has_single_bit(n))
    throw std::invalid_argument("armi::generate_graph500: the graph has " + std::to_string(n) +
                                " vertices; Graph500 needs 2^SCALE, SCALE >= 0");
  auto const scale = static_cast<unsigned>(std::countr_zero(n));
  auto const [first, last] = detail::graph_gen::my_edge_block(edge_factor * n);
  for (std::uint64_t e = first; e < last; ++e) {
    auto const [u, v] = detail::graph500::edge(seed, scale, e);
    if (u == v) continue;
    g.add_edge(u, v);
    g.add_edge(v, u);
  }
  rmi_fence();
}

/// Collective: up to count distinct vertices of g with at least one edge to
/// another vertex, in a seeded random order; the same list on every
/// location.  Fewer than count only when fewer vertices qualify.
template <class G>
std::vector<std::uint64_t> graph500_search_keys(G const& g, std::size_t count, std::uint64_t seed) {
  std::uint64_t const n = g.size();
  std::vector<std::uint64_t> keys;
  if (n == 0 || count == 0) return keys;
  // Candidates in the order of a permutation of [0, 2^ceil(log2 n)), ids >= n skipped.
  auto const bits = static_cast<unsigned>(std::bit_width(n - 1));
  std::uint64_t const space = std::uint64_t{1} << bits;
  std::uint64_t const kseed = detail::graph_gen::hash(seed, 1, 98);
  detail::graph500::key_finder finder;
  constexpr std::uint64_t batch = 1024;
  for (std::uint64_t start = 0; start < space && keys.size() < count; start += batch) {
    std::uint64_t const end = std::min(space, start + batch);
    std::vector<std::uint8_t> good(end - start, 0);
    for (std::uint64_t k = start; k < end; ++k) {
      std::uint64_t const v = detail::graph500::permute(k, bits, kseed);
      if (v >= n || !g.is_local(v)) continue;
      for (auto const& e : g.local_out_edges(v))
        if (e.target != v) {
          good[k - start] = 1;
          break;
        }
    }
    good = finder.any(good);
    for (std::uint64_t k = start; k < end && keys.size() < count; ++k)
      if (good[k - start]) keys.push_back(detail::graph500::permute(k, bits, kseed));
  }
  return keys;
}

}  // namespace armi
