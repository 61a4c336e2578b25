// armi::bfs(g, source): breadth-first search levels on a pgraph, the
// example of a traversal built on armi::visit (containers/visitor.hpp).
//
// Level-synchronous: every location expands its part of the frontier,
// visiting each out-neighbour w with "reach(w, level + 1)" — a function call
// when w is local, one aggregated async_rmi to owner(w) otherwise.  The owner
// sets w's level if w has none and puts w in its next frontier.  One
// rmi_fence() ends the level; one allreduce_rmi of the frontier sizes says
// whether to go on.
//
// Returns, for each vertex of g.local() in order, its distance in edges from
// source, or bfs_unreached.  Collective: every location calls it with the
// same source (std::out_of_range if source is not a vertex).
//
// Cost: one message per remote edge leaving the reached part of the graph
// (each edge is scanned once, when its source is in the frontier), plus per
// level one fence and one allreduce: depth + 1 rounds.
// armi::bfs_parents(g, source) is the same search returning the BFS tree
// instead: for each vertex of g.local(), its parent (source's is source), or
// bfs_no_parent.  Each remote edge carries the parent with the target, one
// aggregated async_rmi; the level-synchronous loop, fence and allreduce are
// the same.  algorithms/bfs_validate.hpp checks such a tree (Graph500's
// rules).
//
// Thread safety: like every collective, call it from every location thread.
#pragma once

#include <armi/containers/visitor.hpp>
#include <armi/rmi.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

namespace armi {

/// The level bfs() gives a vertex that source does not reach.
inline constexpr std::uint64_t bfs_unreached = std::numeric_limits<std::uint64_t>::max();
/// The parent bfs_parents() gives a vertex that source does not reach.
inline constexpr std::uint64_t bfs_no_parent = std::numeric_limits<std::uint64_t>::max();

namespace detail {

template <class G>
class bfs_state : public visitable<bfs_state<G>> {
 public:
  explicit bfs_state(G const& g) : m_graph(&g), m_level(g.local_num_vertices(), bfs_unreached) {
    rmi_fence();  // registered everywhere before the first visit
  }

  location_id owner(std::uint64_t v) const { return m_graph->owner(v); }

  void reach(std::uint64_t v, std::uint64_t level) {
    std::uint64_t& l = m_level[m_graph->local_index(v)];
    if (l != bfs_unreached) return;
    l = level;
    m_next.push_back(v);
  }

  // One level: expand the frontier, fence, swap.  Returns the next level's
  // global size.
  std::uint64_t step(std::uint64_t level) {
    for (std::uint64_t v : m_frontier)
      for (auto const& e : m_graph->local_out_edges(v))
        visit(*this, e.target, [](bfs_state& s, std::uint64_t w, std::uint64_t l) { s.reach(w, l); }, level + 1);
    rmi_fence();
    m_frontier = std::exchange(m_next, {});
    return allreduce_rmi(this->get_rmi_handle(), &bfs_state::serve_frontier_size, std::plus<>{});
  }

  std::vector<std::uint64_t> take_levels() { return std::move(m_level); }
  void start(std::uint64_t source) {
    if (m_graph->is_local(source)) {
      m_level[m_graph->local_index(source)] = 0;
      m_frontier.push_back(source);
    }
  }

 private:
  std::uint64_t serve_frontier_size() const { return m_frontier.size(); }  // RMI target

  G const* m_graph;
  std::vector<std::uint64_t> m_level;
  std::vector<std::uint64_t> m_frontier, m_next;
};

// The parent-tree search: the same loop as bfs_state, the parent instead of
// the level.
template <class G>
class bfs_parent_state : public visitable<bfs_parent_state<G>> {
 public:
  explicit bfs_parent_state(G const& g) : m_graph(&g), m_parent(g.local_num_vertices(), bfs_no_parent) {
    rmi_fence();  // registered everywhere before the first visit
  }

  location_id owner(std::uint64_t v) const { return m_graph->owner(v); }

  void reach(std::uint64_t v, std::uint64_t parent) {
    std::uint64_t& p = m_parent[m_graph->local_index(v)];
    if (p != bfs_no_parent) return;
    p = parent;
    m_next.push_back(v);
  }

  std::uint64_t step() {
    for (std::uint64_t u : m_frontier)
      for (auto const& e : m_graph->local_out_edges(u))
        visit(*this, e.target, [](bfs_parent_state& s, std::uint64_t w, std::uint64_t p) { s.reach(w, p); }, u);
    rmi_fence();
    m_frontier = std::exchange(m_next, {});
    return allreduce_rmi(this->get_rmi_handle(), &bfs_parent_state::serve_frontier_size, std::plus<>{});
  }

  void start(std::uint64_t source) {
    if (m_graph->is_local(source)) {
      m_parent[m_graph->local_index(source)] = source;
      m_frontier.push_back(source);
    }
  }
  std::vector<std::uint64_t> take_parents() { return std::move(m_parent); }

 private:
  std::uint64_t serve_frontier_size() const { return m_frontier.size(); }  // RMI target

  G const* m_graph;
  std::vector<std::uint64_t> m_parent;
  std::vector<std::uint64_t> m_frontier, m_next;
};

}  // namespace detail

/// Collective: the breadth-first tree from source (the same on every
/// location; std::out_of_range if it is not a vertex): for each vertex of
/// g.local(), in order, its parent in the tree (source's parent is source),
/// or bfs_no_parent when source does not reach it.
template <class G>
std::vector<std::uint64_t> bfs_parents(G const& g, std::uint64_t source) {
  (void)g.owner(source);  // std::out_of_range on every location, before any communication
  detail::bfs_parent_state<G> state(g);
  state.start(source);
  while (state.step() != 0) {
  }
  return state.take_parents();
}

/// Collective: breadth-first levels from source (the same on every location;
/// std::out_of_range if it is not a vertex): for each vertex of g.local(), in
/// order, its distance in edges from source, or bfs_unreached.
template <class G>
std::vector<std::uint64_t> bfs(G const& g, std::uint64_t source) {
  (void)g.owner(source);  // std::out_of_range on every location, before any communication
  detail::bfs_state<G> state(g);
  state.start(source);
  for (std::uint64_t level = 0; state.step(level) != 0; ++level) {
  }
  return state.take_levels();
}

}  // namespace armi
