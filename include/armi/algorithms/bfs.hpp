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
// the same.  Local targets cost no division when the location's ids are
// consecutive (block distributions).  algorithms/bfs_validate.hpp checks such a tree (Graph500's
// rules).
//
// Thread safety: like every collective, call it from every location thread.
#pragma once

#include <armi/containers/visitor.hpp>
#include <armi/hold_requests.hpp>
#include <armi/p_object.hpp>
#include <armi/rmi.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace armi {

/// The level bfs() gives a vertex that source does not reach.
inline constexpr std::uint64_t bfs_unreached = std::numeric_limits<std::uint64_t>::max();
/// The parent bfs_parents() gives a vertex that source does not reach.
inline constexpr std::uint64_t bfs_no_parent = std::numeric_limits<std::uint64_t>::max();
/// bfs_parents' default: (vertex, parent) pairs per async_rmi.
inline constexpr std::size_t bfs_default_batch = 4096;

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

// The parent-tree search: bfs_state's loop with the parent instead of the
// level, and tuned for the Graph500 kernel (perf showed the per-edge
// owner() and local_index() calls, each a division, as much time as the
// loop itself): when this location's vertices have consecutive ids (any
// block distribution without added vertices) a target is local iff
// w - first < count and its index is w - first; the frontier holds local
// indices; a remote edge is one async_rmi naming the method as a constant.
template <class G>
class bfs_parent_state : public p_object {
 public:
  bfs_parent_state(G const& g, std::size_t batch)
      : m_graph(&g), m_parent(g.local_num_vertices(), bfs_no_parent), m_batch(batch) {
    if (batch != 0) {
      m_out.assign(get_num_locations(), std::vector<std::uint64_t>(2 * batch));
      m_fill.assign(get_num_locations(), 0);
    }
    auto const local = g.local();
    m_first = local.empty() ? 0 : local[0].id;
    for (std::size_t i = 0; i < local.size() && m_consecutive; ++i) m_consecutive = local[i].id == m_first + i;
    rmi_fence();  // registered everywhere before the first RMI
  }

  // One level; returns the next level's global size.
  std::uint64_t step() {
    auto const local = m_graph->local();
    order_frontier();
    std::size_t const count = m_frontier.size();
    for (std::size_t f = 0; f < count; ++f) {
      std::size_t const i = m_frontier[f];
      // Each vertex's edges are a heap block of their own, a cache miss the
      // hardware cannot foresee: ask for the ones a few vertices ahead.
      if (f + prefetch_distance < count) prefetch(local[m_frontier[f + prefetch_distance]].edges.data());
      std::uint64_t const u = local[i].id;
      for (auto const& e : local[i].edges) {
        std::uint64_t const w = e.target;
        if (m_consecutive) {
          if (w - m_first < m_parent.size()) {
            claim(static_cast<std::size_t>(w - m_first), u);
            continue;
          }
        } else if (m_graph->is_local(w)) {
          claim(m_graph->local_index(w), u);
          continue;
        }
        location_id const dest = m_graph->owner(w);
        if (m_batch == 0) {
          async_rmi(dest, this->get_rmi_handle(), armi::method<&bfs_parent_state::reach>, w, u);
          continue;
        }
        std::size_t& fill = m_fill[dest];
        m_out[dest][fill] = w;
        m_out[dest][fill + 1] = u;
        if ((fill += 2) == m_out[dest].size()) send_batch(dest);
      }
    }
    for (location_id dest = 0; dest < m_out.size(); ++dest)
      if (m_fill[dest] != 0) send_batch(dest);
    rmi_fence();
    m_frontier = std::exchange(m_next, {});
    return allreduce_rmi(this->get_rmi_handle(), &bfs_parent_state::serve_frontier_size, std::plus<>{});
  }

  void start(std::uint64_t source) {
    if (m_graph->is_local(source)) claim(m_graph->local_index(source), source);
    m_frontier = std::exchange(m_next, {});
  }
  std::vector<std::uint64_t> take_parents() { return std::move(m_parent); }

 private:
  static constexpr std::size_t prefetch_distance = 4;
  static void prefetch(void const* p) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
  }
  // A large frontier is scanned in vertex order: the vertices (and, mostly,
  // their edge lists) are then read front to back instead of at random; perf
  // showed the first touch of each frontier vertex as a sixth of the loop.
  // A byte per vertex and two passes, no sort.
  void order_frontier() {
    if (m_frontier.size() < m_parent.size() / 64) return;
    m_mark.assign(m_parent.size(), 0);
    for (std::size_t i : m_frontier) m_mark[i] = 1;
    m_frontier.clear();
    for (std::size_t i = 0; i < m_mark.size(); ++i)
      if (m_mark[i]) m_frontier.push_back(i);
  }
  void claim(std::size_t i, std::uint64_t parent) {
    if (m_parent[i] != bfs_no_parent) return;
    m_parent[i] = parent;
    m_next.push_back(i);
  }
  void reach(std::uint64_t v, std::uint64_t parent) {  // RMI target: re-checks that v is a vertex here
    std::size_t const i = m_consecutive ? static_cast<std::size_t>(v - m_first) : m_graph->local_index(v);
    if (i >= m_parent.size())
      throw std::out_of_range("armi::bfs_parents: vertex " + std::to_string(v) + " is not on location " +
                              std::to_string(get_location_id()));
    claim(i, parent);
  }
  void reach_all(std::vector<std::uint64_t> const& pairs) {  // RMI target: (vertex, parent) pairs
    for (std::size_t k = 0; k + 1 < pairs.size(); k += 2) reach(pairs[k], pairs[k + 1]);
  }
  // Sends dest's pairs; the vector keeps its full size (a partial batch is
  // cut for the send and grown back), so filling it is two stores a pair.
  void send_batch(location_id dest) {
    auto& out = m_out[dest];
    if (m_fill[dest] != out.size()) out.resize(m_fill[dest]);
    async_rmi(dest, this->get_rmi_handle(), armi::method<&bfs_parent_state::reach_all>, out);
    out.resize(2 * m_batch);
    m_fill[dest] = 0;
  }
  std::uint64_t serve_frontier_size() const { return m_frontier.size(); }  // RMI target

  G const* m_graph;
  std::vector<std::uint64_t> m_parent;
  std::uint64_t m_first = 0;
  bool m_consecutive = true;
  std::vector<std::size_t> m_frontier, m_next;  // local indices
  std::vector<std::uint8_t> m_mark;              // order_frontier's scratch
  std::size_t m_batch;                           // pairs per batch; 0: one async_rmi per edge
  std::vector<std::vector<std::uint64_t>> m_out;  // per destination: (vertex, parent) pairs not yet sent
  std::vector<std::size_t> m_fill;               // per destination: words of m_out in use
};

}  // namespace detail

/// Collective: the breadth-first tree from source (the same on every
/// location; std::out_of_range if it is not a vertex): for each vertex of
/// g.local(), in order, its parent in the tree (source's parent is source),
/// or bfs_no_parent when source does not reach it.
///
/// batch: N > 0 (default bfs_default_batch) collects N (vertex, parent)
/// pairs per destination and sends them as one async_rmi of a vector (the
/// rest at the end of each level); 0 sends each edge to a remote vertex as
/// its own async_rmi, aggregated by the runtime.  The batches are faster:
/// fine-grain requests fill the runtime's window of buffers in flight
/// (runtime/flow_control.hpp) long before a level ends, so a sender waits
/// whenever its partner is busy scanning (in graph500_mpi_bfs at SCALE 18
/// on 2 ranks, those waits were most of the fine-grain form's extra time).
template <class G>
std::vector<std::uint64_t> bfs_parents(G const& g, std::uint64_t source, std::size_t batch = bfs_default_batch) {
  hold_requests const hold;
  (void)g.owner(source);  // std::out_of_range on every location, before any communication
  detail::bfs_parent_state<G> state(g, batch);
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
  hold_requests const hold;
  (void)g.owner(source);  // std::out_of_range on every location, before any communication
  detail::bfs_state<G> state(g);
  state.start(source);
  for (std::uint64_t level = 0; state.step(level) != 0; ++level) {
  }
  return state.take_levels();
}

}  // namespace armi
