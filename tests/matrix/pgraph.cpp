// armi::pgraph (containers/pgraph.hpp), its generators, visit/bfs and scc.
//
// Every distributed result is compared with a sequential reference that each
// location computes on its own: the edge lists, a sequential BFS and a
// sequential Tarjan (iterative) on the same graph.  Sizes include an empty
// graph, vertex counts not divisible by the location count and smaller than
// it (locations that own no vertex).
#include "support/graph_reference.hpp"
#include "support/test_support.hpp"

#include <armi/algorithms/bfs.hpp>
#include <armi/algorithms/scc.hpp>
#include <armi/containers/graph_generators.hpp>
#include <armi/containers/pgraph.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using u64 = std::uint64_t;
using adjacency = std::vector<std::vector<u64>>;

// allreduce_rmi needs a p_object; this one reduces whatever it is handed.
class reducer : public armi::p_object {
 public:
  u64 echo(u64 x) const { return x; }
  u64 sum(u64 x) { return armi::allreduce_rmi(get_rmi_handle(), &reducer::echo, std::plus<>{}, x); }
};

// Order-independent fingerprint of an edge multiset (u, v, property).
u64 edge_hash(u64 u, u64 v, u64 p) {
  return armi::detail::mix64(armi::detail::mix64(u * 0x9E3779B97F4A7C15ULL + v) ^ (p + 0x632BE59BD9B4E019ULL));
}

template <class G>
u64 local_edge_checksum(G const& g) {
  u64 s = 0;
  for (auto const& vx : g.local())
    for (auto const& e : vx.out_edges()) {
      if constexpr (std::is_same_v<typename G::edge_property_type, armi::no_property>)
        s += edge_hash(vx.id, e.target, 0);
      else
        s += edge_hash(vx.id, e.target, static_cast<u64>(e.property));
    }
  return s;
}

// ---- sequential references ----------------------------------------------------


// Tarjan's algorithm without recursion; returns, per vertex, the smallest id
// of its component.
std::vector<u64> seq_scc(adjacency const& adj) {
  std::size_t const n = adj.size();
  constexpr u64 unvisited = std::numeric_limits<u64>::max();
  std::vector<u64> index(n, unvisited), low(n, 0), label(n, unvisited);
  std::vector<char> on_stack(n, 0);
  std::vector<u64> stack;
  std::vector<std::pair<u64, std::size_t>> call;  // vertex, next edge
  u64 next = 0;
  for (u64 root = 0; root < n; ++root) {
    if (index[root] != unvisited) continue;
    call.push_back({root, 0});
    index[root] = low[root] = next++;
    stack.push_back(root);
    on_stack[root] = 1;
    while (!call.empty()) {
      auto& [u, k] = call.back();
      if (k < adj[u].size()) {
        u64 const v = adj[u][k++];
        if (index[v] == unvisited) {
          index[v] = low[v] = next++;
          stack.push_back(v);
          on_stack[v] = 1;
          call.push_back({v, 0});
        } else if (on_stack[v]) {
          low[u] = std::min(low[u], index[v]);
        }
        continue;
      }
      u64 const done = u;
      call.pop_back();
      if (!call.empty()) low[call.back().first] = std::min(low[call.back().first], low[done]);
      if (low[done] == index[done]) {
        std::vector<u64> comp;
        u64 w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = 0;
          comp.push_back(w);
        } while (w != done);
        u64 const m = *std::min_element(comp.begin(), comp.end());
        for (u64 x : comp) label[x] = m;
      }
    }
  }
  return label;
}

u64 count_components(std::vector<u64> const& label) {
  u64 c = 0;
  for (std::size_t i = 0; i < label.size(); ++i) c += label[i] == i;
  return c;
}
u64 largest_component(std::vector<u64> const& label) {
  std::vector<u64> size(label.size(), 0);
  u64 best = 0;
  for (u64 l : label) best = std::max(best, ++size[l]);
  return best;
}

// The adjacency of a grid, built from coordinates (independently of
// detail::graph_gen::grid_out_edges).
adjacency grid_adjacency(u64 rows, u64 cols, bool both) {
  adjacency adj(rows * cols);
  for (u64 r = 0; r < rows; ++r)
    for (u64 c = 0; c < cols; ++c) {
      auto& out = adj[r * cols + c];
      if (c + 1 < cols) out.push_back(r * cols + c + 1);
      if (r + 1 < rows) out.push_back((r + 1) * cols + c);
      if (both && c > 0) out.push_back(r * cols + c - 1);
      if (both && r > 0) out.push_back((r - 1) * cols + c);
    }
  return adj;
}

template <class G>
adjacency adjacency_from_edges(u64 n, u64 m, G const& gen) {
  adjacency adj(n);
  for (u64 e = 0; e < m; ++e) {
    auto const [u, v] = gen(e);
    adj[u].push_back(v);
  }
  return adj;
}

u64 adjacency_checksum(adjacency const& adj) {
  u64 s = 0;
  for (u64 u = 0; u < adj.size(); ++u)
    for (u64 v : adj[u]) s += edge_hash(u, v, 0);
  return s;
}

// Checks that g holds exactly adj (per local vertex, as multisets).
template <class G>
void check_same_edges(G const& g, adjacency const& adj) {
  for (auto const& vx : g.local()) {
    std::vector<u64> got;
    for (auto const& e : vx.out_edges()) got.push_back(e.target);
    std::vector<u64> want = adj[vx.id];
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    ARMI_CHECK(got == want);
  }
}

// Runs scc on g and compares with Tarjan on adj, the same graph.
template <class G>
void check_scc(G const& g, adjacency const& adj, reducer& red) {
  auto const want = seq_scc(adj);
  auto const got = armi::scc(g);
  ARMI_CHECK_EQ(got.labels.size(), g.local_num_vertices());
  u64 bad = 0;
  for (std::size_t i = 0; i < g.local().size() && i < got.labels.size(); ++i)
    bad += got.labels[i] != want[g.local()[i].id];
  ARMI_CHECK_EQ(red.sum(bad), 0u);
  ARMI_CHECK_EQ(got.num_components, count_components(want));
  ARMI_CHECK_EQ(got.largest, largest_component(want));
}

}  // namespace

TEST_CASE("pgraph: construction, owners, edges, properties, counts", "[pgraph]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    reducer red;
    for (u64 n : {u64{0}, u64{1}, u64{5}, u64{13}, u64{200}}) {
      armi::pgraph<u64, double> g(n, 7);
      ARMI_CHECK_EQ(g.size(), n);
      ARMI_CHECK_EQ(g.num_vertices(), n);
      ARMI_CHECK(g.distribution() == armi::block_distribution(n, p));
      ARMI_CHECK_EQ(red.sum(g.local_num_vertices()), n);
      for (u64 u = 0; u < n; ++u) {
        ARMI_CHECK_EQ(g.owner(u), g.distribution().owner(u));
        ARMI_CHECK_EQ(g.is_local(u), g.owner(u) == me);
      }
      for (auto const& vx : g.local()) {
        ARMI_CHECK_EQ(g.owner(vx.id), me);
        ARMI_CHECK_EQ(vx.property, 7u);
      }
      // Edges: edge e (u, v, weight e + 0.5) is added by location e % p.
      u64 const m = n == 0 ? 0 : 3 * n + 1;
      adjacency want(n);
      auto const edge = [&](u64 e) { return std::pair{(e * 7 + 3) % n, (e * 13 + 1) % n}; };
      for (u64 e = 0; e < m; ++e) {
        auto const [u, v] = edge(e);
        want[u].push_back(v);
        if (e % p == me) g.add_edge(u, v, static_cast<double>(e) + 0.5);
      }
      ARMI_CHECK_EQ(g.num_edges(), m);  // fences
      check_same_edges(g, want);
      u64 local_edges = 0;
      for (auto const& vx : g.local()) {
        ARMI_CHECK_EQ(g.local_out_degree(vx.id), want[vx.id].size());
        local_edges += g.local_out_edges(vx.id).size();
        for (auto const& e : g.local_out_edges(vx.id)) {  // the weight names an edge with these ends
          u64 const k = static_cast<u64>(e.property);
          ARMI_CHECK(edge(k) == std::pair(vx.id, e.target));
        }
      }
      ARMI_CHECK_EQ(local_edges, g.local_num_edges());
      // Remote reads of edge lists.
      for (u64 u = me; u < n; u += 3) {
        auto got = g.get_out_edges(u);
        std::vector<u64> t;
        for (auto const& e : got) t.push_back(e.target);
        std::sort(t.begin(), t.end());
        auto w = want[u];
        std::sort(w.begin(), w.end());
        ARMI_CHECK(t == w);
      }
      // Properties: location u % p sets u's property, everyone reads all.
      for (u64 u = 0; u < n; ++u)
        if (u % p == me) g.set_vertex_property(u, u * u + 1);
      armi::rmi_fence();
      for (u64 u = 0; u < n; ++u) ARMI_CHECK_EQ(g.get_vertex_property(u), u * u + 1);
      for (auto const& vx : g.local()) ARMI_CHECK_EQ(g.local_vertex_property(vx.id), vx.id * vx.id + 1);
      // Bulk reads: every location's vertices, from every location (its own
      // answered at once), as futures and blocking.
      {
        std::vector<std::vector<u64>> ids(p);
        for (u64 u = 0; u < n; ++u) ids[g.owner(u)].push_back(u);
        std::vector<armi::future<std::vector<u64>>> replies;
        for (armi::location_id loc = 0; loc < p; ++loc) replies.push_back(g.get_vertex_properties_async(loc, ids[loc]));
        for (armi::location_id loc = 0; loc < p; ++loc) {
          auto const got = replies[loc].get();
          ARMI_CHECK_EQ(got.size(), ids[loc].size());
          for (std::size_t k = 0; k < got.size(); ++k) ARMI_CHECK_EQ(got[k], ids[loc][k] * ids[loc][k] + 1);
        }
        armi::location_id const next = static_cast<armi::location_id>((me + 1) % p);
        auto const blocking = g.get_vertex_properties(next, ids[next]);
        ARMI_CHECK_EQ(blocking.size(), ids[next].size());
        for (std::size_t k = 0; k < blocking.size(); ++k) ARMI_CHECK_EQ(blocking[k], ids[next][k] * ids[next][k] + 1);
      }
      // Local-only access to a remote vertex is an out_of_range naming it.
      for (u64 u = 0; u < n; ++u) {
        if (g.is_local(u)) continue;
        bool threw = false;
        try {
          (void)g.local_out_edges(u);
        } catch (std::out_of_range const& e) {
          threw = std::string(e.what()).find("vertex " + std::to_string(u)) != std::string::npos;
        }
        ARMI_CHECK(threw);
        break;
      }
      armi::rmi_fence();
    }
  });
}

TEST_CASE("pgraph: add_vertex makes unique ids with computable owners", "[pgraph]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    reducer red;
    u64 const n = 10;
    armi::pgraph<u64> g(n);
    // Location L adds L + 1 vertices; the k-th added on L is n + k*p + L.
    std::vector<u64> mine;
    for (u64 k = 0; k <= me; ++k) mine.push_back(g.add_vertex(1000 + me));
    for (u64 k = 0; k <= me; ++k) ARMI_CHECK_EQ(mine[k], n + k * p + me);
    u64 const added = u64{p} * (p + 1) / 2;
    ARMI_CHECK_EQ(g.num_vertices(), n + added);
    // Not-yet-added ids on this location are out of range.
    bool threw = false;
    try {
      (void)g.local_vertex_property(n + (me + 1) * p + me);
    } catch (std::out_of_range const&) {
      threw = true;
    }
    ARMI_CHECK(threw);
    // Every location knows every owner; edges from added vertices (remote
    // add_edge) and to them; a ring over all added vertices.
    std::vector<u64> all;
    for (armi::location_id l = 0; l < p; ++l)
      for (u64 k = 0; k <= l; ++k) all.push_back(n + k * p + l);
    std::sort(all.begin(), all.end());
    for (std::size_t i = 0; i < all.size(); ++i) {
      ARMI_CHECK_EQ(g.owner(all[i]), static_cast<armi::location_id>((all[i] - n) % p));
      if (i % p == me) g.add_edge(all[i], all[(i + 1) % all.size()]);
    }
    ARMI_CHECK_EQ(g.num_edges(), all.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
      ARMI_CHECK_EQ(g.get_vertex_property(all[i]), 1000u + g.owner(all[i]));
      auto const out = g.get_out_edges(all[i]);
      ARMI_CHECK(out.size() == 1 && out[0].target == all[(i + 1) % all.size()]);
    }
    // The ring is one component (plus the n singletons), labelled by its smallest id.
    auto const r = armi::scc(g);
    ARMI_CHECK_EQ(r.num_components, n + 1);
    ARMI_CHECK_EQ(r.largest, all.size());
    for (std::size_t i = 0; i < g.local().size(); ++i)
      ARMI_CHECK_EQ(r.labels[i], g.local()[i].id < n ? g.local()[i].id : all.front());
    armi::rmi_fence();
  });
}

TEST_CASE("pgraph: generators give the same graph on any number of locations", "[pgraph]") {
  armi_test::run([] {
    reducer red;
    {  // uniform random, with an edge-property function
      u64 const n = armi_test::scaled(997), m = 4 * n;
      armi::pgraph<armi::no_property, u64> g(n);
      armi::generate_uniform_random(g, m, 42, [](u64 u, u64 v, u64 e) { return u ^ v ^ (e << 20); });
      ARMI_CHECK_EQ(g.num_edges(), m);
      u64 want = 0;
      for (u64 e = 0; e < m; ++e) {
        auto const [u, v] = armi::detail::graph_gen::uniform_edge(42, n, e);
        want += edge_hash(u, v, u ^ v ^ (e << 20));
      }
      ARMI_CHECK_EQ(red.sum(local_edge_checksum(g)), want);
      for (auto const& vx : g.local())
        for (auto const& e : vx.out_edges()) ARMI_CHECK(e.target < n);
    }
    {  // grids, against an adjacency built from coordinates
      for (auto [rows, cols, both] : {std::tuple{u64{7}, u64{9}, true}, std::tuple{u64{5}, u64{1}, false},
                                      std::tuple{u64{4}, u64{6}, false}}) {
        armi::pgraph<> g(rows * cols);
        armi::generate_grid(g, rows, cols, both ? armi::grid_direction::both_ways : armi::grid_direction::one_way);
        auto const adj = grid_adjacency(rows, cols, both);
        check_same_edges(g, adj);
        ARMI_CHECK_EQ(red.sum(local_edge_checksum(g)), adjacency_checksum(adj));
      }
      armi::pgraph<> wrong(10);
      bool threw = false;
      try {
        armi::generate_grid(wrong, 3, 4, armi::grid_direction::one_way);
      } catch (std::invalid_argument const&) {
        threw = true;
      }
      ARMI_CHECK(threw);
    }
    {  // R-MAT
      unsigned const scale = 9;
      u64 const n = u64{1} << scale, m = 8 * n;
      armi::pgraph<> g(n);
      armi::generate_rmat(g, m, 7);
      auto const adj = adjacency_from_edges(
          n, m, [&](u64 e) { return armi::detail::graph_gen::rmat_edge(7, scale, armi::rmat_params{}, e); });
      ARMI_CHECK_EQ(g.num_edges(), m);
      ARMI_CHECK_EQ(red.sum(local_edge_checksum(g)), adjacency_checksum(adj));
      // Skewed: the heaviest vertex has far more than the average 8 out-edges.
      std::size_t heaviest = 0;
      for (auto const& out : adj) heaviest = std::max(heaviest, out.size());
      ARMI_CHECK(heaviest > 40);
      // The scramble is a bijection.
      std::vector<u64> img(n);
      for (u64 x = 0; x < n; ++x) img[x] = armi::detail::graph_gen::scramble(x, scale, 7);
      std::sort(img.begin(), img.end());
      ARMI_CHECK(std::adjacent_find(img.begin(), img.end()) == img.end() && img.back() == n - 1);
    }
    armi::rmi_fence();
  });
}

TEST_CASE("pgraph: visit and bfs", "[pgraph]") {
  armi_test::run([] {
    reducer red;
    {  // grid: distance from 0 is r + c
      u64 const rows = 13, cols = 11;
      armi::pgraph<> g(rows * cols);
      armi::generate_grid(g, rows, cols, armi::grid_direction::both_ways);
      auto const level = armi::bfs(g, 0);
      for (std::size_t i = 0; i < g.local().size(); ++i) {
        u64 const u = g.local()[i].id;
        ARMI_CHECK_EQ(level[i], u / cols + u % cols);
      }
    }
    {  // random graph with unreached vertices
      u64 const n = armi_test::scaled(800), m = n;
      armi::pgraph<> g(n);
      armi::generate_uniform_random(g, m, 3);
      auto const adj =
          adjacency_from_edges(n, m, [&](u64 e) { return armi::detail::graph_gen::uniform_edge(3, n, e); });
      auto const want = armi_test::sequential_bfs_levels(adj, n / 2);
      auto const level = armi::bfs(g, n / 2);
      u64 bad = 0;
      for (std::size_t i = 0; i < g.local().size(); ++i) bad += level[i] != want[g.local()[i].id];
      ARMI_CHECK_EQ(red.sum(bad), 0u);
    }
    {  // visit: a token walks a ring, counting hops in the vertex property
      u64 const n = 23;
      armi::pgraph<u64> g(n, 0);
      if (armi::get_location_id() == 0)
        armi::visit(g, 0, [](armi::pgraph<u64>& gr, u64 v, u64 hops) {
          struct walk {
            static void step(armi::pgraph<u64>& gr, u64 v, u64 hops) {
              gr.local_vertex_property(v) += hops;
              if (hops < 3 * gr.size())
                armi::visit(gr, (v + 1) % gr.size(), [](armi::pgraph<u64>& g2, u64 w, u64 h) { step(g2, w, h); },
                            hops + 1);
            }
          };
          walk::step(gr, v, hops);
        }, u64{0});
      armi::rmi_fence();
      for (auto const& vx : g.local()) {  // vertex v was visited at hops v, v + n, v + 2n, 3n (v = 0)
        u64 want = vx.id + (vx.id + n) + (vx.id + 2 * n) + (vx.id == 0 ? 3 * n : 0);
        ARMI_CHECK_EQ(vx.property, want);
      }
    }
    armi::rmi_fence();
  });
}

TEST_CASE("pgraph: scc against Tarjan", "[pgraph][scc]") {
  armi_test::run([] {
    reducer red;
    {  // empty graph, and one without edges (all singletons), fewer vertices than locations
      for (u64 n : {u64{0}, u64{3}, u64{50}}) {
        armi::pgraph<> g(n);
        auto const r = armi::scc(g);
        ARMI_CHECK_EQ(r.num_components, n);
        ARMI_CHECK_EQ(r.largest, n == 0 ? 0u : 1u);
        for (std::size_t i = 0; i < g.local().size(); ++i) ARMI_CHECK_EQ(r.labels[i], g.local()[i].id);
      }
    }
    {  // random graphs around the giant-component threshold, with self-loops and parallel edges
      for (auto [n, m, seed] : {std::tuple{armi_test::scaled(600), armi_test::scaled(600), 1},
                                std::tuple{armi_test::scaled(600), armi_test::scaled(1500), 2},
                                std::tuple{u64{37}, u64{120}, 3}}) {
        armi::pgraph<> g(n);
        armi::generate_uniform_random(g, m, seed);
        check_scc(g, adjacency_from_edges(n, m, [&](u64 e) { return armi::detail::graph_gen::uniform_edge(seed, n, e); }),
                  red);
      }
    }
    {  // grids: both ways is one component, one way is all singletons
      for (bool both : {true, false}) {
        armi::pgraph<> g(15 * 17);
        armi::generate_grid(g, 15, 17, both ? armi::grid_direction::both_ways : armi::grid_direction::one_way);
        check_scc(g, grid_adjacency(15, 17, both), red);
      }
    }
    {  // R-MAT
      unsigned const scale = 9;
      u64 const n = u64{1} << scale, m = 4 * n;
      armi::pgraph<> g(n);
      armi::generate_rmat(g, m, 11);
      check_scc(g, adjacency_from_edges(
                       n, m, [&](u64 e) { return armi::detail::graph_gen::rmat_edge(11, scale, armi::rmat_params{}, e); }),
                red);
    }
    {  // one big cycle, both orientations, with a tail hanging off it
      u64 const n = armi_test::scaled(500);
      for (bool down : {false, true}) {
        armi::pgraph<> g(n + 10);
        adjacency adj(n + 10);
        for (u64 i = 0; i < n; ++i) adj[i].push_back(down ? (i + n - 1) % n : (i + 1) % n);
        for (u64 i = n; i < n + 10; ++i) adj[i].push_back(i == n ? 0 : i - 1);
        for (u64 u = 0; u < adj.size(); ++u)
          if (g.is_local(u))
            for (u64 v : adj[u]) g.add_edge(u, v);
        armi::rmi_fence();
        check_scc(g, adj, red);
      }
    }
    {  // a vertex that reaches another root's component but is reached by
       // its own root's backward walk last: 0 <-> 1, and 2 -> 3 -> ... -> 38 -> 2
       // with 3 -> 0 (the walk from 2 meets 3 after 36 steps, the walk from 0 at once)
      u64 const n = 40;
      armi::pgraph<> g(n);
      adjacency adj(n);
      adj[0].push_back(1);
      adj[1].push_back(0);
      for (u64 i = 2; i < 38; ++i) adj[i].push_back(i + 1);
      adj[38].push_back(2);
      adj[3].push_back(0);
      for (u64 u = 0; u < n; ++u)
        if (g.is_local(u))
          for (u64 v : adj[u]) g.add_edge(u, v);
      armi::rmi_fence();
      check_scc(g, adj, red);
    }
    {  // a chain of 2-cycles, smallest ids last (the coloring method's slow case) and first;
       // reversed, each pair's larger id points into the previous pair, so the
       // backward walk from a root meets vertices of another color
      u64 const k = 12;
      for (bool reversed : {false, true}) {
        armi::pgraph<> g(2 * k);
        adjacency adj(2 * k);
        for (u64 j = 0; j < k; ++j) {
          u64 const a = 2 * j, b = 2 * j + 1;
          adj[a].push_back(b);
          adj[b].push_back(a);
          if (j + 1 < k) {
            if (reversed)
              adj[a + 3].push_back(b);
            else
              adj[b].push_back(a + 2);
          }
        }
        for (u64 u = 0; u < adj.size(); ++u)
          if (u % armi::get_num_locations() == armi::get_location_id())  // remote add_edge
            for (u64 v : adj[u]) g.add_edge(u, v);
        armi::rmi_fence();
        check_scc(g, adj, red);
      }
    }
    armi::rmi_fence();
  });
}
