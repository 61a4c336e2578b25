// armi::pgraph<VertexProperty, EdgeProperty, Distribution>: a distributed
// directed graph.  Each vertex lives on one location with its property and
// its out-edges (target id + edge property); a location stores its vertices
// contiguously, so local() is a std::span of them.
//
// Vertex ids and owners.  The graph is built collectively with a vertex
// count n and a distribution (block by default) of the ids [0, n): vertex u
// < n lives on distribution().owner(u).  add_vertex() makes more vertices
// without communicating: the k-th vertex added on location L (of p) gets the
// id n + k*p + L, so ids are unique and owner(u) = (u - n) % p stays
// computable anywhere.  Added vertices follow the distributed ones in local().
// size() is n (the ids fixed at construction); num_vertices() counts all.
//
//   armi::pgraph<double, float> g(1000);          // collective
//   g.add_edge(3, 7, 0.5f);                       // async_rmi at owner(3)
//   armi::rmi_fence();                            // every edge has arrived
//   for (auto& v : g.local()) for (auto& e : v.out_edges()) ... e.target, e.property
//
// Operations and their communication:
//   add_vertex(p)              local; returns the new id
//   add_edge(u, v[, p])        one async_rmi to owner(u), or none when u is
//                              local; visible after the next rmi_fence().
//                              Parallel edges and self-loops are kept.  v is
//                              not checked (its owner may not know it yet).
//   get_vertex_property(u)     sync_rmi when u is remote (copy of the value)
//   set_vertex_property(u, p)  async_rmi when u is remote
//   get_vertex_properties_async(L, ids)  one opaque_rmi to L for many of
//                              its vertices' properties (a future of a
//                              vector; ready at once when L is this location)
//   get_vertex_properties(L, ids)  the same, waiting for the answer
//   get_out_edges(u)           sync_rmi when u is remote (copy of the list)
//   local_vertex_property(u), local_out_edges(u), local_out_degree(u)
//                              local u only (std::out_of_range otherwise)
//   num_vertices()             collective: one allreduce_rmi
//   num_edges()                collective: rmi_fence() then one allreduce_rmi
//   owner(u), is_local(u), size(), distribution()    no communication
//   visit(g, u, f, args...)    (visitor.hpp) work sent to owner(u)
// An id >= n names an added vertex whose existence only its owner knows: a
// remote access to one that does not exist fails on the owner (an
// armi::remote_error from sync_rmi, a fatal error from async_rmi).
//
// Properties travel by value (trivially copyable, std types or define_type).
//
// Thread safety: a pgraph representative belongs to its location's thread;
// RMIs to it run on that thread one at a time.  Distinct graphs: safe.
// Construction and destruction are collective.  The constructor ends with an
// rmi_fence(), so every location's representative is registered before any
// RMI (add_edge...) can reach it; the destructor starts with one, so RMIs
// still in flight to the graph run before it goes away.
#pragma once

#include <armi/containers/distribution.hpp>
#include <armi/containers/visitor.hpp>
#include <armi/future.hpp>
#include <armi/hold_requests.hpp>
#include <armi/p_object.hpp>
#include <armi/rmi.hpp>
#include <armi/serialization/typer.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace armi {

/// The property of a graph without vertex or edge properties.
struct no_property {
  /// All equal.
  friend bool operator==(no_property, no_property) = default;
};

/// An out-edge: its target vertex and its property.
template <class EP>
struct graph_edge {
  std::uint64_t target = 0;               ///< The target vertex id.
  [[no_unique_address]] EP property{};  ///< The edge's property.

  /// How the edge travels when EP is not trivially copyable (else as bytes).
  void define_type(typer& t)
    requires(!std::is_trivially_copyable_v<EP>)
  {
    t.local(target);
    t.local(property);
  }
  /// Same target and property.
  friend bool operator==(graph_edge const&, graph_edge const&) = default;
};

/// A vertex as a location stores it (an element of pgraph::local()).
template <class VP, class EP>
struct graph_vertex {
  std::uint64_t id = 0;               ///< The vertex id.
  VP property{};                      ///< The vertex's property.
  std::vector<graph_edge<EP>> edges;  ///< Out-edges, in arrival order.

  /// The out-edges.
  std::span<graph_edge<EP>> out_edges() noexcept { return edges; }
  /// The out-edges, read-only.
  std::span<graph_edge<EP> const> out_edges() const noexcept { return edges; }
};

/// A distributed directed graph: each vertex lives on one location with its
/// property and its out-edges.
///
/// Construction, destruction, num_vertices and num_edges are Collective.
/// Visitable: armi::visit(g, u, f, args...) runs f on owner(u).
template <class VP = no_property, class EP = no_property, distribution D = block_distribution>
class pgraph : public visitable<pgraph<VP, EP, D>> {
 public:
  using vertex_id = std::uint64_t;              ///< A vertex id.
  using vertex_property_type = VP;              ///< The vertex property type.
  using edge_property_type = EP;                ///< The edge property type.
  using edge = graph_edge<EP>;                  ///< An out-edge.
  using vertex = graph_vertex<VP, EP>;          ///< A vertex as stored.
  using distribution_type = D;                  ///< The distribution of the ids [0, size()).

  /// Collective: n vertices with property init, distributed by D(n, p).
  explicit pgraph(std::size_t n, VP const& init = VP{})
    requires std::constructible_from<D, std::size_t, location_id>
      : pgraph(D(n, get_num_locations()), init) {}

  /// Collective: the vertices [0, dist.size()) distributed by dist (the same
  /// on every location, over all locations; std::invalid_argument if not).
  explicit pgraph(D dist, VP const& init = VP{})
      : m_dist(std::move(dist)), m_me(get_location_id()), m_p(get_num_locations()) {
    if (m_dist.num_locations() != m_p)
      throw std::invalid_argument("armi::pgraph: the distribution is over " + std::to_string(m_dist.num_locations()) +
                                  " locations, the program has " + std::to_string(m_p));
    std::size_t const k = m_dist.local_size(m_me);
    m_vertices.resize(k);
    for (std::size_t i = 0; i < k; ++i) {
      m_vertices[i].id = m_dist.global_index(m_me, i);
      m_vertices[i].property = init;
    }
    m_distributed = k;
    // Every representative must be registered before any RMI can reach one.
    rmi_fence();
  }

  /// Collective: fences first, so every RMI to this container has run before
  /// any representative goes away (not while an exception unwinds through
  /// it: the other locations may never get here).
  ~pgraph() override {
    if (std::uncaught_exceptions() == m_uncaught) rmi_fence();
  }

  /// The distribution of the ids [0, size()).  Local only.
  D const& distribution() const noexcept { return m_dist; }
  /// The number of ids fixed at construction, [0, size()).  Local only.
  std::size_t size() const noexcept { return m_dist.size(); }

  /// The location that owns vertex u (also an added one).  Local only.
  location_id owner(vertex_id u) const {
    std::size_t const n = m_dist.size();
    if (u < n) return m_dist.owner(u);
    return static_cast<location_id>((u - n) % m_p);
  }
  /// True when this location owns vertex u.  Local only.
  bool is_local(vertex_id u) const { return owner(u) == m_me; }

  /// Where local vertex u sits in local() (std::out_of_range if u is not a
  /// vertex of this location).  Local only.
  std::size_t local_index(vertex_id u) const {
    std::size_t const n = m_dist.size();
    std::size_t k;
    if (u < n) {
      index_location const at = m_dist.locate(u);
      if (at.location != m_me) not_local(u, at.location);
      k = at.local;
    } else {
      if (static_cast<location_id>((u - n) % m_p) != m_me) not_local(u, owner(u));
      k = m_distributed + (u - n) / m_p;
      if (k >= m_vertices.size())
        throw std::out_of_range("armi::pgraph: vertex " + std::to_string(u) + " has not been added on location " +
                                std::to_string(m_me) + " (which has added " +
                                std::to_string(m_vertices.size() - m_distributed) + ")");
    }
    return k;
  }

  // ---- local part ---------------------------------------------------------

  /// This location's vertices: the distributed ones, then the added ones.  Local only.
  std::span<vertex> local() noexcept { return m_vertices; }
  /// This location's vertices, read-only.  Local only.
  std::span<vertex const> local() const noexcept { return m_vertices; }
  /// The number of vertices on this location.  Local only.
  std::size_t local_num_vertices() const noexcept { return m_vertices.size(); }
  /// The number of out-edges of this location's vertices.  Local only.
  std::size_t local_num_edges() const noexcept { return count_local_edges(); }

  /// The property of local vertex u (std::out_of_range if not local).  Local only.
  VP& local_vertex_property(vertex_id u) { return m_vertices[local_index(u)].property; }
  /// The property of local vertex u, read-only.  Local only.
  VP const& local_vertex_property(vertex_id u) const { return m_vertices[local_index(u)].property; }
  /// The out-edges of local vertex u (std::out_of_range if not local).  Local only.
  std::span<edge> local_out_edges(vertex_id u) { return m_vertices[local_index(u)].edges; }
  /// The out-edges of local vertex u, read-only.  Local only.
  std::span<edge const> local_out_edges(vertex_id u) const { return m_vertices[local_index(u)].edges; }
  /// The out-degree of local vertex u (std::out_of_range if not local).  Local only.
  std::size_t local_out_degree(vertex_id u) const { return m_vertices[local_index(u)].edges.size(); }

  // ---- growing ------------------------------------------------------------

  /// A new vertex on this location, with property; local only.  Its id is
  /// unique among all locations (n + k*p + location).
  vertex_id add_vertex(VP const& property = VP{}) {
    hold_requests const hold;
    vertex_id const id = m_dist.size() + (m_vertices.size() - m_distributed) * m_p + m_me;
    m_vertices.push_back(vertex{id, property, {}});
    return id;
  }

  /// Adds u -> v with property p at owner(u); fire-and-forget (one async_rmi
  /// unless u is local).  Visible everywhere after the next rmi_fence().
  void add_edge(vertex_id u, vertex_id v, EP const& p = EP{}) {
    hold_requests const hold;
    location_id const dest = owner(u);
    if (dest == m_me)
      serve_add_edge(u, v, p);
    else
      async_rmi(dest, this->get_rmi_handle(), armi::method<&pgraph::serve_add_edge>, u, v, p);
  }

  // ---- remote access ------------------------------------------------------

  /// A copy of vertex u's property; blocks for one sync_rmi unless u is local.
  VP get_vertex_property(vertex_id u) const {
    hold_requests const hold;
    location_id const dest = owner(u);
    if (dest == m_me) return local_vertex_property(u);
    return sync_rmi(dest, this->get_rmi_handle(), armi::method<&pgraph::serve_get_vertex_property>, u);
  }
  /// Vertex u's property becomes p; fire-and-forget (one async_rmi unless local).
  void set_vertex_property(vertex_id u, VP const& p) {
    hold_requests const hold;
    location_id const dest = owner(u);
    if (dest == m_me)
      local_vertex_property(u) = p;
    else
      async_rmi(dest, this->get_rmi_handle(), armi::method<&pgraph::serve_set_vertex_property>, u, p);
  }
  /// The properties of many vertices that all live on location `at`, in the
  /// order of ids; returns a future: ready at once when `at` is this
  /// location, else answered by one opaque_rmi.  An id not on `at` throws
  /// std::out_of_range (here, or there: remote_error from get()).
  future<std::vector<VP>> get_vertex_properties_async(location_id at, std::vector<vertex_id> const& ids) const {
    hold_requests const hold;
    if (at == m_me) return detail::ready_future(serve_get_vertex_properties(ids), "armi::pgraph::get_vertex_properties_async");
    return opaque_rmi(at, this->get_rmi_handle(), &pgraph::serve_get_vertex_properties, ids);
  }
  /// get_vertex_properties_async(at, ids).get(): blocks for the answer.
  std::vector<VP> get_vertex_properties(location_id at, std::vector<vertex_id> const& ids) const {
    hold_requests const hold;
    return get_vertex_properties_async(at, ids).get();
  }
  /// A copy of vertex u's out-edges; blocks for one sync_rmi unless u is local.
  std::vector<edge> get_out_edges(vertex_id u) const {
    hold_requests const hold;
    location_id const dest = owner(u);
    if (dest == m_me) return serve_get_out_edges(u);
    return sync_rmi(dest, this->get_rmi_handle(), &pgraph::serve_get_out_edges, u);
  }

  // ---- global counts ------------------------------------------------------

  /// Collective: the number of vertices on all locations (one allreduce).
  std::uint64_t num_vertices() const {
    hold_requests const hold;
    return allreduce_rmi(this->get_rmi_handle(), &pgraph::serve_num_vertices, std::plus<>{});
  }
  /// Collective: rmi_fence(), then the number of edges (one allreduce).
  std::uint64_t num_edges() const {
    hold_requests const hold;
    rmi_fence();
    return allreduce_rmi(this->get_rmi_handle(), &pgraph::serve_num_edges, std::plus<>{});
  }

 private:
  int m_uncaught = std::uncaught_exceptions();  // at construction: is the destructor part of an unwinding?
  [[noreturn]] void not_local(vertex_id u, location_id at) const {
    throw std::out_of_range("armi::pgraph: vertex " + std::to_string(u) + " lives on location " + std::to_string(at) +
                            ", not on location " + std::to_string(m_me));
  }
  std::uint64_t count_local_edges() const noexcept {
    std::uint64_t n = 0;  // counted, not kept: local() lets users edit edge lists
    for (auto const& v : m_vertices) n += v.edges.size();
    return n;
  }

  // RMI targets.
  void serve_add_edge(vertex_id u, vertex_id v, EP const& p) {
    m_vertices[local_index(u)].edges.push_back(edge{v, p});
  }
  VP serve_get_vertex_property(vertex_id u) const { return local_vertex_property(u); }
  std::vector<VP> serve_get_vertex_properties(std::vector<vertex_id> const& ids) const {
    std::vector<VP> out;
    out.reserve(ids.size());
    for (vertex_id u : ids) out.push_back(local_vertex_property(u));
    return out;
  }
  void serve_set_vertex_property(vertex_id u, VP const& p) { local_vertex_property(u) = p; }
  std::vector<edge> serve_get_out_edges(vertex_id u) const {
    auto const& e = m_vertices[local_index(u)].edges;
    return {e.begin(), e.end()};
  }
  std::uint64_t serve_num_vertices() const { return m_vertices.size(); }
  std::uint64_t serve_num_edges() const { return count_local_edges(); }

  D m_dist;
  location_id m_me;
  location_id m_p;
  std::vector<vertex> m_vertices;
  std::size_t m_distributed = 0;  // how many of m_vertices come from m_dist
};

}  // namespace armi
