// armi::scc(g): strongly connected components of a pgraph.
//
// Result: for each vertex of g.local(), in order, the smallest vertex id of
// its component (so two vertices are strongly connected iff their labels are
// equal, and a component's label is one of its own vertices), plus the
// number of components, the size of the largest, and how much work each
// phase did.  Collective: every location calls it; it does not change g.
// Call it after an rmi_fence() (or a generator) has delivered every edge.
//
// Method: trimming plus the coloring method (Orzan; Slota, Rajamanickam and
// Madduri call the combination "Multistep" without its BFS step), all
// asynchronous and terminated by fences:
//   0. Reverse edges: each edge u -> v is sent to owner(v), which keeps v's
//      in-neighbours (one async_rmi per remote edge, once).  Self-loops are
//      dropped (they never change a component).
//   1. Trim: a vertex with no remaining in- or out-neighbour is a component
//      by itself.  Removing a vertex sends "one neighbour fewer" to each of
//      its neighbours, which may trim them in turn, so chains, trees and
//      other acyclic parts vanish in one cascade, ended by one fence.
//   2. Color: every remaining vertex v starts with color v; colors flow
//      forward along edges between remaining vertices, each keeping the
//      smallest it has seen.  In supersteps: each location spreads colors
//      through its own vertices smallest color first (a heap, so a vertex is
//      settled once per superstep), sends the offers that cross to other
//      locations (aggregated async_rmi), fences, and goes on while any
//      location received a better color (one allreduce a superstep; about
//      as many supersteps as location crossings on the longest path).  Vertex
//      c keeps color c exactly when nothing smaller reaches it; every vertex
//      of color c is reachable from c, and the smallest vertex of c's
//      component is c.
//   3. Backward: from each root c (color c), walk the in-edges through
//      vertices of color c; what it reaches reaches c and is reached from c:
//      the whole component of c, labelled c.  One fence.
//   4. Remove the components found (and trim what that exposes, as in 1),
//      then repeat 2-4 while vertices remain (one allreduce_rmi a round).
// Each round finds at least the component of every root: acyclic parts and
// independent cycles go at once; a chain of k components, each reaching the
// next, takes up to k rounds when its smallest ids come last (the method's
// known worst case; the DCSC pivot method shares it).
//
// Cost, in messages: one per remote edge to build the reverse edges; per
// round, one per remote edge each time its source's color improves (once
// or a few times) and one per remote in-edge inside a found component; one per
// remote edge of each removed vertex over the whole run; then one per
// vertex on a remote location for the component counts.  Synchronization:
// per round 2 fences and one allreduce plus one fence and allreduce per
// coloring superstep, plus 5 fences and 2 allreduces.
// Memory: the in-edge lists (one id per edge) and four words per vertex.
//
// Thread safety: like every collective, call it on every location thread.
#pragma once

#include <armi/hold_requests.hpp>
#include <armi/p_object.hpp>
#include <armi/rmi.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

namespace armi {

/// What scc() returns (labels for this location's vertices, the rest global).
struct scc_result {
  std::vector<std::uint64_t> labels;  ///< Per vertex of g.local(): the smallest id of its component.
  std::uint64_t num_components = 0;   ///< Components in the whole graph.
  std::uint64_t largest = 0;          ///< Vertices in the largest component (0 for an empty graph).
  std::uint64_t rounds = 0;           ///< Coloring rounds (steps 2-4).
  std::uint64_t trimmed = 0;          ///< Vertices removed by trimming, all locations.
  std::uint64_t supersteps = 0;       ///< Coloring supersteps, all rounds.
};

namespace detail {

template <class G>
class scc_state : public p_object {
  static constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();

 public:
  explicit scc_state(G const& g)
      : m_graph(&g),
        m_in(g.local_num_vertices()),
        m_in_deg(g.local_num_vertices(), 0),
        m_out_deg(g.local_num_vertices(), 0),
        m_label(g.local_num_vertices(), none),
        m_color(g.local_num_vertices(), none),
        m_size(g.local_num_vertices(), 0) {}  // here: counts may arrive before run() ends its last round

  scc_result run() {
    rmi_fence();  // every representative is registered before the first RMI
    auto const verts = m_graph->local();
    // 0. Reverse edges.
    for (std::size_t i = 0; i < verts.size(); ++i) {
      std::uint64_t const v = verts[i].id;
      for (auto const& e : verts[i].edges) {
        if (e.target == v) continue;
        ++m_out_deg[i];
        send(e.target, &scc_state::serve_add_in_edge, v);
      }
    }
    rmi_fence();
    // 1. Trim.
    for (std::size_t i = 0; i < verts.size(); ++i)
      if (m_label[i] == none && (m_in_deg[i] == 0 || m_out_deg[i] == 0)) trim(i);
    drain_removals();
    rmi_fence();

    std::uint64_t rounds = 0;
    while (true) {
      // Colors are set before the allreduce, so no location can receive an
      // offer for a vertex it has not reset yet.
      std::uint64_t remaining = 0;
      for (std::size_t i = 0; i < verts.size(); ++i) {
        if (m_label[i] == none) {
          m_color[i] = verts[i].id;
          ++remaining;
        }
      }
      if (allreduce_rmi(get_rmi_handle(), &scc_state::serve_value, std::plus<>{}, remaining) == 0) break;
      ++rounds;
      // 2. Color, in supersteps: spread locally in color order, fence (the
      // offers that crossed locations arrive), until no location has work.
      for (std::size_t i = 0; i < verts.size(); ++i)
        if (m_label[i] == none) m_heap.push({m_color[i], i});
      do {
        drain_colors();
        rmi_fence();
        ++m_supersteps;
      } while (allreduce_rmi(get_rmi_handle(), &scc_state::serve_value, std::plus<>{},
                             static_cast<std::uint64_t>(m_heap.size())) != 0);
      // 3. Backward from the roots.
      for (std::size_t i = 0; i < verts.size(); ++i) {
        if (m_label[i] == none && m_color[i] == verts[i].id) {
          m_label[i] = verts[i].id;
          m_found.push_back(i);
          m_work.push_back(i);
        }
      }
      drain_claims();
      rmi_fence();
      // 4. Remove what was found; trim what that exposes.
      for (std::size_t i : m_found) m_removals.push_back(i);
      m_found.clear();
      drain_removals();
      rmi_fence();
    }

    // Component sizes, counted at each label's owner.
    for (std::uint64_t l : m_label) send(l, &scc_state::serve_count_member, std::uint64_t{1});
    rmi_fence();
    std::array<std::uint64_t, 3> mine{0, 0, m_trimmed};  // components, largest, trimmed
    for (std::size_t i = 0; i < verts.size(); ++i) {
      if (m_label[i] == verts[i].id) ++mine[0];
      mine[1] = std::max(mine[1], m_size[i]);
    }
    auto const totals = allreduce_rmi(get_rmi_handle(), &scc_state::serve_triple,
                                      [](std::array<std::uint64_t, 3> a, std::array<std::uint64_t, 3> const& b) {
                                        return std::array<std::uint64_t, 3>{a[0] + b[0], std::max(a[1], b[1]),
                                                                            a[2] + b[2]};
                                      },
                                      mine);
    scc_result r;
    r.labels = std::move(m_label);
    r.num_components = totals[0];
    r.largest = totals[1];
    r.rounds = rounds;
    r.trimmed = totals[2];
    r.supersteps = m_supersteps;
    return r;
  }

 private:
  // A call on vertex w's owner: direct when local.  The serve_* members are
  // its targets (RMI targets, or plain calls for local vertices).
  template <class M>
  void send(std::uint64_t w, M m, std::uint64_t arg) {
    location_id const dest = m_graph->owner(w);
    if (dest == get_location_id())
      (this->*m)(w, arg);
    else
      async_rmi(dest, get_rmi_handle(), m, w, arg);
  }

  std::uint64_t serve_value(std::uint64_t x) const { return x; }
  std::array<std::uint64_t, 3> serve_triple(std::array<std::uint64_t, 3> x) const { return x; }

  void serve_add_in_edge(std::uint64_t w, std::uint64_t from) {
    std::size_t const j = m_graph->local_index(w);
    m_in[j].push_back(from);
    ++m_in_deg[j];
  }

  // ---- trimming and removal ----
  void trim(std::size_t i) {
    m_label[i] = m_graph->local()[i].id;
    ++m_trimmed;
    m_removals.push_back(i);
  }
  void serve_lost_in_edge(std::uint64_t w, std::uint64_t) {
    std::size_t const j = m_graph->local_index(w);
    if (m_label[j] != none) return;
    if (--m_in_deg[j] == 0) {
      trim(j);
      drain_removals();
    }
  }
  void serve_lost_out_edge(std::uint64_t w, std::uint64_t) {
    std::size_t const j = m_graph->local_index(w);
    if (m_label[j] != none) return;
    if (--m_out_deg[j] == 0) {
      trim(j);
      drain_removals();
    }
  }
  // Tells the neighbours of every removed vertex; re-entrant calls (a local
  // neighbour trimmed, or a request served while sending) only queue.
  void drain_removals() {
    if (m_draining) return;
    m_draining = true;
    while (!m_removals.empty()) {
      std::size_t const i = m_removals.back();
      m_removals.pop_back();
      auto const& vx = m_graph->local()[i];
      for (auto const& e : vx.edges)
        if (e.target != vx.id) send(e.target, &scc_state::serve_lost_in_edge, 0);
      for (std::uint64_t u : m_in[i]) send(u, &scc_state::serve_lost_out_edge, 0);
    }
    m_draining = false;
  }

  // ---- coloring ----
  // An offer only records the better color; drain_colors() spreads it.
  void serve_offer_color(std::uint64_t w, std::uint64_t c) {
    std::size_t const j = m_graph->local_index(w);
    if (m_label[j] != none || c >= m_color[j]) return;
    m_color[j] = c;
    m_heap.push({c, j});
  }
  // Smallest color first (as in Dijkstra's algorithm), so a vertex is
  // settled once per superstep by the best color this location knows.
  void drain_colors() {
    while (!m_heap.empty()) {
      auto const [c, i] = m_heap.top();
      m_heap.pop();
      if (c != m_color[i]) continue;  // superseded by a better color
      auto const& vx = m_graph->local()[i];
      for (auto const& e : vx.edges)
        if (e.target != vx.id) send(e.target, &scc_state::serve_offer_color, c);
    }
  }

  // ---- backward claims ----
  void serve_claim(std::uint64_t u, std::uint64_t c) {
    std::size_t const j = m_graph->local_index(u);
    if (m_label[j] != none || m_color[j] != c) return;
    m_label[j] = c;
    m_found.push_back(j);
    m_work.push_back(j);
    drain_claims();
  }
  void drain_claims() {
    if (m_draining) return;
    m_draining = true;
    while (!m_work.empty()) {
      std::size_t const i = m_work.back();
      m_work.pop_back();
      std::uint64_t const c = m_label[i];
      for (std::uint64_t u : m_in[i]) send(u, &scc_state::serve_claim, c);
    }
    m_draining = false;
  }

  void serve_count_member(std::uint64_t label, std::uint64_t k) { m_size[m_graph->local_index(label)] += k; }

  G const* m_graph;
  std::vector<std::vector<std::uint64_t>> m_in;  // in-neighbours, self-loops dropped
  std::vector<std::uint64_t> m_in_deg, m_out_deg;  // edges from/to unlabelled vertices
  std::vector<std::uint64_t> m_label;
  std::vector<std::uint64_t> m_color;
  std::priority_queue<std::pair<std::uint64_t, std::size_t>, std::vector<std::pair<std::uint64_t, std::size_t>>,
                      std::greater<>>
      m_heap;                           // coloring: (color, local index), smallest first
  std::vector<std::size_t> m_work;      // backward claims to spread (local indices)
  std::uint64_t m_supersteps = 0;
  std::vector<std::size_t> m_removals;  // labelled vertices whose neighbours are not told yet
  std::vector<std::size_t> m_found;     // labelled in this round's backward phase
  std::vector<std::uint64_t> m_size;
  std::uint64_t m_trimmed = 0;
  bool m_draining = false;
};

}  // namespace detail

/// Collective: the strongly connected components of g (call it after an
/// rmi_fence() has delivered every edge); g is not changed.
template <class G>
scc_result scc(G const& g) {
  hold_requests const hold;
  detail::scc_state<G> state(g);
  return state.run();
}

}  // namespace armi
