// armi::validate_bfs_tree(g, root, parents): Graph500's validation of one
// BFS, on an undirected pgraph (every edge stored both ways, as
// generate_graph500 and generate_rmat's undirected option make it) and a
// parent array in bfs_parents' form (per vertex of g.local(), in order; the
// root's parent is the root; bfs_no_parent outside the tree).
//
// The five rules, as the specification words them:
//   1 tree       the parents form a tree rooted at root: parent[root] ==
//                root, every parent is a vertex, and following parents from
//                any vertex of the tree reaches the root (no cycle)
//   2 tree levels  each tree edge joins vertices whose levels differ by
//                exactly one.  Levels are computed from the tree (root 0,
//                a child one more than its parent), so this holds by
//                construction; a parent placed too deep shows under rule 3
//   3 edge levels  every graph edge joins vertices whose levels differ by at
//                most one, or two vertices both outside the tree
//   4 component  the tree spans root's connected component: no graph edge
//                joins a vertex of the tree to one outside it
//   5 tree edges  each vertex and its parent are joined by a graph edge
// The result counts the violations of each rule (over all locations) and
// the TEPS numerator: the input edges of the component, each counted once
// (self-loops excluded; an undirected edge is stored twice, so half the
// stored edges leaving the tree's vertices).
//
// Collective; the same result on every location.  Cost: building the child
// lists (one aggregated async_rmi per remote tree edge), one fence-and-
// allreduce round per tree level to hand the levels down, then one async_rmi
// per remote graph edge (each undirected edge checked once, from one end
// chosen by the ids' parity, so that no location sends them all) and a
// fence; three allreduces.
// Thread safety: like every collective, call it from every location thread.
#pragma once

#include <armi/algorithms/bfs.hpp>
#include <armi/containers/visitor.hpp>
#include <armi/hold_requests.hpp>
#include <armi/rmi.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace armi {

/// What validate_bfs_tree found: violations per rule (index 0 = rule 1) and
/// the edges of root's component.
struct bfs_validation {
  std::array<std::uint64_t, 5> violations{};  ///< Violations of rules 1..5 (over all locations).
  std::uint64_t tree_vertices = 0;            ///< Vertices in the tree (root included).
  std::uint64_t component_edges = 0;          ///< Input edges with both ends in the tree, each once.

  /// True when no rule is violated.
  bool ok() const noexcept {
    for (auto v : violations)
      if (v != 0) return false;
    return true;
  }
  /// The violations in words ("" when ok()).
  std::string describe() const {
    static constexpr char const* names[5] = {
        "rule 1 (tree: parent[root] == root, parents are vertices, no cycle)",
        "rule 2 (tree edges join levels that differ by one)",
        "rule 3 (graph edges join levels that differ by at most one)",
        "rule 4 (the tree spans the root's component)", "rule 5 (a vertex and its parent share a graph edge)"};
    std::string out;
    for (std::size_t r = 0; r < 5; ++r)
      if (violations[r] != 0)
        out += (out.empty() ? "" : "; ") + std::string(names[r]) + ": " + std::to_string(violations[r]) + " violation" +
               (violations[r] == 1 ? "" : "s");
    return out;
  }
};

namespace detail {

template <class G>
class bfs_validator : public visitable<bfs_validator<G>> {
 public:
  static constexpr std::uint64_t none = bfs_no_parent;

  bfs_validator(G const& g, std::vector<std::uint64_t> const& parents)
      : m_graph(&g), m_parents(&parents), m_level(g.local_num_vertices(), none), m_children(g.local_num_vertices()) {
    rmi_fence();  // registered everywhere before the first visit
  }

  location_id owner(std::uint64_t v) const { return m_graph->owner(v); }

  bfs_validation run(std::uint64_t root) {
    auto const& parent = *m_parents;
    auto const local = m_graph->local();
    std::uint64_t const n = m_graph->size();
    // Rule 1, locally: the root's parent, parents that are no vertex.
    if (m_graph->is_local(root) && parent[m_graph->local_index(root)] != root) ++m_bad[0];
    // Child lists at the parents' owners.
    for (std::size_t i = 0; i < local.size(); ++i) {
      std::uint64_t const v = local[i].id, p = parent[i];
      if (p == none || v == root) continue;
      if (p >= n) {
        ++m_bad[0];
        continue;
      }
      visit(*this, p, [](bfs_validator& s, std::uint64_t at, std::uint64_t child) { s.add_child(at, child); }, v);
    }
    rmi_fence();
    // Levels down the tree, one level per round.
    if (m_graph->is_local(root) && parent[m_graph->local_index(root)] == root) {
      m_level[m_graph->local_index(root)] = 0;
      m_frontier.push_back(root);
    }
    for (std::uint64_t level = 0;; ++level) {
      for (std::uint64_t v : m_frontier)
        for (std::uint64_t c : m_children[m_graph->local_index(v)])
          visit(*this, c, [](bfs_validator& s, std::uint64_t w, std::uint64_t l) { s.set_level(w, l); }, level + 1);
      rmi_fence();
      m_frontier = std::exchange(m_next, {});
      if (allreduce_rmi(this->get_rmi_handle(), &bfs_validator::serve_frontier_size, std::plus<>{}) == 0) break;
    }
    // Rule 1: in the tree (a parent) but not below the root (a cycle, or
    // hanging from one).  Rule 5: the parent among the vertex's edges.
    // Rules 3 and 4: every edge, from one of its ends.
    for (std::size_t i = 0; i < local.size(); ++i) {
      std::uint64_t const v = local[i].id, p = parent[i], l = m_level[i];
      if (p != none && l == none && p < n) ++m_bad[0];
      if (l != none) {
        ++m_tree;
        if (v != root) {
          bool joined = false;
          for (auto const& e : local[i].out_edges()) joined = joined || e.target == p;
          if (!joined) ++m_bad[4];
        }
      }
      for (auto const& e : local[i].out_edges()) {
        std::uint64_t const w = e.target;
        if (w == v) continue;
        if (l != none) ++m_half_edges;
        if ((w < v) == (((v ^ w) & 1) == 0)) continue;  // one end checks: the smaller when v ^ w is odd, else the larger (balanced)
        visit(*this, w, [](bfs_validator& s, std::uint64_t at, std::uint64_t lv) { s.check_edge(at, lv); }, l);
      }
    }
    rmi_fence();
    bfs_validation r;
    auto const sums = allreduce_rmi(this->get_rmi_handle(), &bfs_validator::serve_counts,
                                    [](std::array<std::uint64_t, 7> a, std::array<std::uint64_t, 7> const& b) {
                                      for (std::size_t k = 0; k < a.size(); ++k) a[k] += b[k];
                                      return a;
                                    });
    for (std::size_t k = 0; k < 5; ++k) r.violations[k] = sums[k];
    r.tree_vertices = sums[5];
    r.component_edges = sums[6] / 2;
    return r;
  }

 private:
  void add_child(std::uint64_t at, std::uint64_t child) { m_children[m_graph->local_index(at)].push_back(child); }
  void set_level(std::uint64_t w, std::uint64_t l) {
    std::uint64_t& lw = m_level[m_graph->local_index(w)];
    if (lw != none) {  // two parents' lists hold w: cannot happen, each vertex has one parent
      ++m_bad[0];
      return;
    }
    lw = l;
    m_next.push_back(w);
  }
  void check_edge(std::uint64_t w, std::uint64_t lv) {
    if (w >= m_graph->size()) return;  // an added vertex: outside Graph500's graph
    std::uint64_t const lw = m_level[m_graph->local_index(w)];
    if ((lv == none) != (lw == none))
      ++m_bad[3];
    else if (lv != none && (lv > lw ? lv - lw : lw - lv) > 1)
      ++m_bad[2];
  }
  std::uint64_t serve_frontier_size() const { return m_frontier.size(); }  // RMI target
  std::array<std::uint64_t, 7> serve_counts() const {                     // RMI target
    return {m_bad[0], m_bad[1], m_bad[2], m_bad[3], m_bad[4], m_tree, m_half_edges};
  }

  G const* m_graph;
  std::vector<std::uint64_t> const* m_parents;
  std::vector<std::uint64_t> m_level;
  std::vector<std::vector<std::uint64_t>> m_children;
  std::vector<std::uint64_t> m_frontier, m_next;
  std::array<std::uint64_t, 5> m_bad{};
  std::uint64_t m_tree = 0, m_half_edges = 0;
};

}  // namespace detail

/// Collective: checks parents (bfs_parents' form, for g.local() in order) as
/// a BFS tree of the undirected graph g from root by Graph500's five rules;
/// the same result on every location.  std::invalid_argument if parents
/// does not have one entry per local vertex; std::out_of_range if root is
/// not a vertex.
template <class G>
bfs_validation validate_bfs_tree(G const& g, std::uint64_t root, std::vector<std::uint64_t> const& parents) {
  hold_requests const hold;
  (void)g.owner(root);
  if (parents.size() != g.local_num_vertices())
    throw std::invalid_argument("armi::validate_bfs_tree: " + std::to_string(parents.size()) + " parents for " +
                                std::to_string(g.local_num_vertices()) + " local vertices");
  detail::bfs_validator<G> v(g, parents);
  return v.run(root);
}

}  // namespace armi
