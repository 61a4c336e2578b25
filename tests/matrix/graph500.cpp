// The Graph500 pieces: generate_graph500 and its search keys
// (containers/kronecker.hpp), generate_rmat's undirected and drop_self_loops
// options, bfs_parents (algorithms/bfs.hpp) and validate_bfs_tree
// (algorithms/bfs_validate.hpp), which must accept every tree bfs_parents
// returns and reject each kind of corrupted parent array.
//
// Every location regenerates the whole (small) graph sequentially from
// detail::graph500::edge and computes the reference BFS levels itself.
#include "support/graph_reference.hpp"
#include "support/test_support.hpp"

#include <armi/algorithms/bfs.hpp>
#include <armi/algorithms/bfs_validate.hpp>
#include <armi/containers/graph_generators.hpp>
#include <armi/containers/kronecker.hpp>
#include <armi/containers/pgraph.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

using u64 = std::uint64_t;
using adjacency = std::vector<std::vector<u64>>;
constexpr u64 none = armi::bfs_no_parent;
constexpr unsigned scale = 9;
constexpr u64 edge_factor = 16;

// Gathers a per-vertex vector whose entries each location knows for its own
// vertices (none elsewhere): the element-wise minimum over all locations.
class gatherer : public armi::p_object {
 public:
  gatherer() { armi::rmi_fence(); }
  std::vector<u64> echo(std::vector<u64> const& x) const { return x; }
  std::vector<u64> all(std::vector<u64> const& mine) {
    return armi::allreduce_rmi(get_rmi_handle(), &gatherer::echo,
                               [](std::vector<u64> a, std::vector<u64> const& b) {
                                 for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::min(a[i], b[i]);
                                 return a;
                               },
                               mine);
  }
  u64 echo_u(u64 x) const { return x; }
  u64 sum(u64 x) { return armi::allreduce_rmi(get_rmi_handle(), &gatherer::echo_u, std::plus<>{}, x); }
};

template <class G>
std::vector<u64> gather(gatherer& gat, G const& g, std::vector<u64> const& local) {
  std::vector<u64> mine(g.size(), none);
  for (std::size_t i = 0; i < local.size(); ++i) mine[g.local()[i].id] = local[i];
  return gat.all(mine);
}

adjacency graph500_adjacency(u64 seed) {
  u64 const n = u64{1} << scale;
  adjacency adj(n);
  for (u64 e = 0; e < edge_factor * n; ++e) {
    auto const [u, v] = armi::detail::graph500::edge(seed, scale, e);
    if (u == v) continue;
    adj[u].push_back(v);
    adj[v].push_back(u);
  }
  return adj;
}


// The local part of a full per-vertex vector.
template <class G>
std::vector<u64> local_part(G const& g, std::vector<u64> const& full) {
  std::vector<u64> out;
  for (auto const& vx : g.local()) out.push_back(full[vx.id]);
  return out;
}

}  // namespace

TEST_CASE("graph500: the permutation is a bijection and the graph matches its edge list", "[graph500]") {
  for (unsigned s : {1u, 2u, 5u, 8u, 9u}) {
    u64 const n = u64{1} << s;
    std::vector<char> hit(n, 0);
    for (u64 x = 0; x < n; ++x) {
      u64 const y = armi::detail::graph500::permute(x, s, 77);
      REQUIRE(y < n);
      hit[y] = 1;
    }
    CHECK(std::count(hit.begin(), hit.end(), 1) == static_cast<std::ptrdiff_t>(n));
  }
  armi_test::run([] {
    gatherer gat;
    u64 const seed = 5;
    auto const adj = graph500_adjacency(seed);
    armi::pgraph<> g(u64{1} << scale);
    armi::generate_graph500(g, edge_factor, seed);
    u64 bad = 0, stored = 0, want = 0;
    for (auto const& vx : g.local()) {
      std::multiset<u64> got, expect(adj[vx.id].begin(), adj[vx.id].end());
      for (auto const& e : vx.out_edges()) got.insert(e.target);
      bad += got != expect;
      stored += vx.edges.size();
    }
    for (auto const& a : adj) want += a.size();
    ARMI_CHECK_EQ(gat.sum(bad), 0u);
    ARMI_CHECK_EQ(gat.sum(stored), want);
    // Search keys: distinct, of degree >= 1, the same everywhere, count honoured.
    auto const keys = armi::graph500_search_keys(g, 64, seed);
    ARMI_CHECK_EQ(keys.size(), 64u);
    std::set<u64> distinct(keys.begin(), keys.end());
    ARMI_CHECK_EQ(distinct.size(), keys.size());
    for (u64 k : keys) ARMI_CHECK(!adj[k].empty());
    u64 fingerprint = 0;
    for (u64 k : keys) fingerprint = fingerprint * 1000003 + k;
    ARMI_CHECK_EQ(gat.sum(fingerprint), fingerprint * armi::get_num_locations());
  });
}

TEST_CASE("graph500: generate_rmat's undirected and drop_self_loops options", "[graph500]") {
  armi_test::run([] {
    gatherer gat;
    u64 const n = 256, m = 2000, seed = 9;
    armi::rmat_params p;
    p.undirected = true;
    p.drop_self_loops = true;
    armi::pgraph<> g(n);
    armi::generate_rmat(g, m, seed, p);
    adjacency adj(n);
    for (u64 e = 0; e < m; ++e) {
      auto const [u, v] = armi::detail::graph_gen::rmat_edge(seed, 8, p, e);
      if (u == v) continue;
      adj[u].push_back(v);
      adj[v].push_back(u);
    }
    u64 bad = 0;
    for (auto const& vx : g.local()) {
      std::multiset<u64> got, expect(adj[vx.id].begin(), adj[vx.id].end());
      for (auto const& e : vx.out_edges()) got.insert(e.target);
      bad += got != expect;
    }
    ARMI_CHECK_EQ(gat.sum(bad), 0u);
  });
}

TEST_CASE("graph500: bfs_parents returns a valid BFS tree, batched and fine-grain", "[graph500]") {
  armi_test::run([] {
    gatherer gat;
    u64 const seed = 3;
    auto const adj = graph500_adjacency(seed);
    armi::pgraph<> g(u64{1} << scale);
    armi::generate_graph500(g, edge_factor, seed);
    auto const keys = armi::graph500_search_keys(g, 3, seed);
    for (u64 key : keys) {
      auto const want = armi_test::sequential_bfs_levels(adj, key);
      u64 component_edges = 0, tree = 0;
      for (u64 v = 0; v < adj.size(); ++v)
        if (want[v] != armi::bfs_unreached) {
          component_edges += adj[v].size();
          ++tree;
        }
      component_edges /= 2;
      for (std::size_t batch : {std::size_t{0}, std::size_t{3}, armi::bfs_default_batch}) {
        auto const parents = gather(gat, g, armi::bfs_parents(g, key, batch));
        // Each parent is one level up and a neighbour; the root its own parent.
        u64 bad = 0;
        for (auto const& vx : g.local()) {
          u64 const v = vx.id, p = parents[v];
          if (want[v] == armi::bfs_unreached) {
            bad += p != none;
          } else if (v == key) {
            bad += p != key;
          } else {
            bad += p == none || want[p] + 1 != want[v] ||
                   std::find(adj[v].begin(), adj[v].end(), p) == adj[v].end();
          }
        }
        ARMI_CHECK_EQ(gat.sum(bad), 0u);
        auto const check = armi::validate_bfs_tree(g, key, local_part(g, parents));
        ARMI_CHECK(check.ok());
        ARMI_CHECK_EQ(check.tree_vertices, tree);
        ARMI_CHECK_EQ(check.component_edges, component_edges);
      }
    }
  });
}

TEST_CASE("graph500: the validator rejects corrupted parent arrays", "[graph500]") {
  armi_test::run([] {
    gatherer gat;
    u64 const seed = 11, n = u64{1} << scale;
    auto const adj = graph500_adjacency(seed);
    armi::pgraph<> g(n);
    armi::generate_graph500(g, edge_factor, seed);
    u64 const key = armi::graph500_search_keys(g, 1, seed).at(0);
    auto const good = gather(gat, g, armi::bfs_parents(g, key));
    auto const level = armi_test::sequential_bfs_levels(adj, key);
    auto const adjacent = [&](u64 a, u64 b) { return std::find(adj[a].begin(), adj[a].end(), b) != adj[a].end(); };
    // Deterministic picks, the same on every location.
    u64 deep = none;  // a vertex at level 2 (its parent at level 1)
    for (u64 v = 0; v < n && deep == none; ++v)
      if (level[v] == 2) deep = v;
    u64 same_a = none, same_b = none;  // neighbours on one level >= 1
    for (u64 v = 0; v < n && same_a == none; ++v)
      if (level[v] != armi::bfs_unreached && level[v] >= 1)
        for (u64 w : adj[v])
          if (level[w] == level[v]) {
            same_a = v;
            same_b = w;
            break;
          }
    u64 far = none;  // in the tree, not a neighbour of deep, not deep's ancestor
    for (u64 v = 0; v < n && far == none; ++v)
      if (level[v] == 3 && !adjacent(deep, v)) far = v;
    u64 leaf = none;  // in the tree, no vertex has it as parent
    {
      std::vector<char> is_parent(n, 0);
      for (u64 v = 0; v < n; ++v)
        if (good[v] != none && v != key) is_parent[good[v]] = 1;
      for (u64 v = 0; v < n && leaf == none; ++v)
        if (good[v] != none && v != key && !is_parent[v]) leaf = v;
    }
    // Every location computes the same four from the same reference, so all
    // return here together if the graph lacks one.
    ARMI_CHECK(deep != none && same_a != none && far != none && leaf != none);
    if (deep == none || same_a == none || far == none || leaf == none) return;

    struct corruption {
      char const* what;
      std::vector<std::pair<u64, u64>> sets;  // (vertex, new parent)
      std::size_t rule;                       // 1..5: the rule that must report it
    };
    std::vector<corruption> const cases{
        {"the root's parent is another vertex", {{key, adj[key].at(0)}}, 1},
        {"a parent that is no vertex", {{deep, n + 5}}, 1},
        {"a cycle: a vertex's parent is its child", {{good[deep], deep}}, 1},
        {"a level gap: a parent on the vertex's own level", {{same_a, same_b}}, 3},
        {"a vertex of the component left out", {{leaf, none}}, 4},
        {"a parent not joined to the vertex by an edge", {{deep, far}}, 5},
    };
    for (auto const& c : cases) {
      auto bad = good;
      for (auto [v, p] : c.sets) bad[v] = p;
      auto const r = armi::validate_bfs_tree(g, key, local_part(g, bad));
      if (r.ok() || r.violations[c.rule - 1] == 0) {
        ARMI_CHECK(!r.ok());
        ARMI_CHECK_EQ(std::string(c.what) + " -> " + r.describe(), std::string(c.what) + " -> rule " +
                                                                       std::to_string(c.rule) + " reported");
      }
    }
    // The untouched tree passes.
    ARMI_CHECK(armi::validate_bfs_tree(g, key, local_part(g, good)).ok());
  });
}
