// EM3D (MRPC §5.2, after Culler et al.'s Split-C version) on an armi::pgraph,
// shared by examples/em3d.cpp and benchmarks/mrpc_fig11_em3d.cpp.  Not part of
// armi's API.
//
// The graph is bipartite: every location owns `nodes` E nodes and `nodes` H
// nodes (vertex L*2N + k is E node k of location L, L*2N + N + k its H node
// k).  Each node depends on `degree` nodes of the other kind; each
// dependency is on another location with probability `remote` (uniform over
// the other locations), else on this one.  A node's out-edges are its
// dependencies, with their weights as edge properties; the value is the
// vertex property.  One iteration updates every E node from the H values,
//   e -= sum_j w_j * h_j,
// fences, then every H node from the E values, and fences.  Everything is a
// pure function of (seed, location, node, j), so the sequential reference
// regenerates it.
//
// Three ways to read the remote values (MRPC's three versions):
//   base   one sync_rmi per remote edge, every time (g.get_vertex_property)
//   ghost  per iteration, fetch each distinct remote node once (one sync_rmi
//          per ghost node) into a local copy, then compute locally
//   bulk   per iteration, one opaque_rmi per neighbour location carrying the
//          ids of all ghost nodes there (g.get_vertex_properties_async), all in
//          flight at once, then compute locally
// All three sum in the same order, so they agree with the sequential
// reference to the last bit.
#pragma once

#include <armi/containers/graph_generators.hpp>
#include <armi/containers/pgraph.hpp>
#include <armi/rmi.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace em3d {

using u64 = std::uint64_t;
using graph = armi::pgraph<double, double>;

struct params {
  u64 nodes = 2000;  // E nodes (and H nodes) per location
  u64 degree = 10;
  double remote = 0.4;
  u64 iters = 10;
  u64 seed = 1;
};

enum class variant { base, ghost, bulk };
inline std::string_view name(variant v) { return v == variant::base ? "base" : v == variant::ghost ? "ghost" : "bulk"; }

inline u64 vertex_of(params const& p, u64 loc, u64 kind, u64 k) { return loc * 2 * p.nodes + kind * p.nodes + k; }

inline double initial_value(params const& p, u64 v) {
  return armi::detail::graph_gen::unit(armi::detail::graph_gen::hash(p.seed, v, 1)) + 0.5;
}

// Dependency j of node (loc, kind, k): the node it reads and the weight.
struct dependency {
  u64 target;
  double weight;
};
inline dependency dependency_of(params const& p, u64 locations, u64 loc, u64 kind, u64 k, u64 j) {
  using armi::detail::graph_gen::hash;
  using armi::detail::graph_gen::unit;
  u64 const v = vertex_of(p, loc, kind, k);
  u64 const e = v * p.degree + j;
  u64 other = loc;
  if (locations > 1 && unit(hash(p.seed, e, 2)) < p.remote) other = (loc + 1 + hash(p.seed, e, 3) % (locations - 1)) % locations;
  u64 const idx = hash(p.seed, e, 4) % p.nodes;
  double const w = (0.5 + unit(hash(p.seed, e, 5))) * 0.1 / static_cast<double>(p.degree);
  return {vertex_of(p, other, 1 - kind, idx), w};
}

// One location's part: the graph (collective) plus the ghost bookkeeping.
class solver {
 public:
  explicit solver(params const& p)
      : m_p(p), m_me(armi::get_location_id()), m_locs(armi::get_num_locations()), m_g(2 * p.nodes * m_locs) {
    for (u64 kind = 0; kind < 2; ++kind)
      for (u64 k = 0; k < p.nodes; ++k) {
        u64 const v = vertex_of(p, m_me, kind, k);
        for (u64 j = 0; j < p.degree; ++j) {
          auto const d = dependency_of(p, m_locs, m_me, kind, k, j);
          m_g.add_edge(v, d.target, d.weight);  // local: v is ours
        }
      }
    // Ghosts per kind of node updated: distinct remote targets, grouped by location.
    for (u64 kind = 0; kind < 2; ++kind) {
      auto& gh = m_ghosts[kind];
      std::vector<std::vector<u64>> by_loc(m_locs);
      std::unordered_map<u64, u64> seen;
      for (u64 k = 0; k < p.nodes; ++k)
        for (auto const& e : m_g.local_out_edges(vertex_of(p, m_me, kind, k)))
          if (!m_g.is_local(e.target) && seen.emplace(e.target, 0).second) by_loc[m_g.owner(e.target)].push_back(e.target);
      for (armi::location_id l = 0; l < m_locs; ++l) {
        if (by_loc[l].empty()) continue;
        gh.first.push_back(gh.ids.size());
        gh.locations.push_back(l);
        for (u64 id : by_loc[l]) {
          gh.slot[id] = gh.ids.size();
          gh.ids.push_back(id);
        }
      }
      gh.first.push_back(gh.ids.size());
      gh.values.assign(gh.ids.size(), 0.0);
      // Each edge's source of a value: a local vertex or a ghost slot.
      for (u64 k = 0; k < p.nodes; ++k)
        for (auto const& e : m_g.local_out_edges(vertex_of(p, m_me, kind, k)))
          gh.edge_slot.push_back(m_g.is_local(e.target) ? local_tag | m_g.local_index(e.target) : gh.slot[e.target]);
    }
  }

  void reset() {
    for (auto& vx : m_g.local()) vx.property = initial_value(m_p, vx.id);
    armi::rmi_fence();
  }

  // Runs iters iterations; returns the seconds they took (fences included).
  double run(variant how) {
    reset();
    auto const start = std::chrono::steady_clock::now();
    for (u64 it = 0; it < m_p.iters; ++it)
      for (u64 kind = 0; kind < 2; ++kind) {
        half_step(how, kind);
        armi::rmi_fence();
      }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  u64 ghost_count() const { return m_ghosts[0].ids.size() + m_ghosts[1].ids.size(); }
  u64 remote_edges() const {
    u64 n = 0;
    for (auto const& vx : m_g.local())
      for (auto const& e : vx.out_edges()) n += !m_g.is_local(e.target);
    return n;
  }
  graph const& g() const { return m_g; }

  // Largest |value - sequential value| over this location's nodes.
  double max_error(std::vector<double> const& reference) const {
    double err = 0;
    for (auto const& vx : m_g.local()) err = std::max(err, std::abs(vx.property - reference[vx.id]));
    return err;
  }

 private:
  static constexpr u64 local_tag = u64{1} << 63;

  struct ghosts {
    std::vector<u64> ids;                       // remote ids, grouped by location
    std::vector<armi::location_id> locations;   // the locations, in order
    std::vector<std::size_t> first;             // ids of locations[i]: [first[i], first[i+1])
    std::unordered_map<u64, u64> slot;
    std::vector<u64> edge_slot;                 // per edge: local_tag|local index, or ghost slot
    std::vector<double> values;
  };

  void half_step(variant how, u64 kind) {
    auto& gh = m_ghosts[kind];
    if (how == variant::ghost) {
      for (std::size_t i = 0; i < gh.ids.size(); ++i) gh.values[i] = m_g.get_vertex_property(gh.ids[i]);
    } else if (how == variant::bulk) {
      std::vector<armi::future<std::vector<double>>> replies;
      for (std::size_t i = 0; i < gh.locations.size(); ++i)
        replies.push_back(m_g.get_vertex_properties_async(
            gh.locations[i], std::vector<u64>(gh.ids.begin() + static_cast<std::ptrdiff_t>(gh.first[i]),
                                              gh.ids.begin() + static_cast<std::ptrdiff_t>(gh.first[i + 1]))));
      for (std::size_t i = 0; i < replies.size(); ++i) {
        auto const vals = replies[i].get();
        std::copy(vals.begin(), vals.end(), gh.values.begin() + static_cast<std::ptrdiff_t>(gh.first[i]));
      }
    }
    auto vertices = m_g.local();
    u64 edge = 0;
    for (u64 k = 0; k < m_p.nodes; ++k) {
      auto& vx = vertices[kind * m_p.nodes + k];
      double sum = 0;
      for (auto const& e : vx.out_edges()) {
        u64 const s = gh.edge_slot[edge++];
        double value;
        if (s & local_tag)
          value = vertices[s & ~local_tag].property;
        else if (how == variant::base)
          value = m_g.get_vertex_property(e.target);  // one sync_rmi per remote edge
        else
          value = gh.values[s];
        sum += e.property * value;
      }
      vx.property -= sum;
    }
  }

  params m_p;
  armi::location_id m_me;
  armi::location_id m_locs;
  graph m_g;
  ghosts m_ghosts[2];
};

// The sequential computation over every location's nodes; value per vertex id.
inline std::vector<double> sequential(params const& p, u64 locations) {
  u64 const n = 2 * p.nodes * locations;
  std::vector<double> val(n);
  for (u64 v = 0; v < n; ++v) val[v] = initial_value(p, v);
  for (u64 it = 0; it < p.iters; ++it)
    for (u64 kind = 0; kind < 2; ++kind)
      for (u64 loc = 0; loc < locations; ++loc)
        for (u64 k = 0; k < p.nodes; ++k) {
          double sum = 0;
          for (u64 j = 0; j < p.degree; ++j) {
            auto const d = dependency_of(p, locations, loc, kind, k, j);
            sum += d.weight * val[d.target];
          }
          val[vertex_of(p, loc, kind, k)] -= sum;
        }
  return val;
}

}  // namespace em3d
