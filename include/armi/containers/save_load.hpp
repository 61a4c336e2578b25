// armi::save and armi::load: a container written to a directory, one file
// per location, and read back on any number of locations.
//
//   armi::save(v, "out/v");          // collective: out/v/part-<location>.armi
//   armi::pvector<double> w(0);
//   armi::load(w, "out/v");          // collective, on any number of locations
//
// For pvector, parray, pgraph and punordered_map.  A save fences first (every
// update issued before it is in the files), then each location writes its
// part: the elements with their global indices (in runs), the vertices with
// their properties and out-edges, or the key-value pairs.  A load gives part
// j to location j mod P, checks every part (the format's header and
// checksums, detail/part_file.hpp), decodes every record, and only then
// applies them: one aggregated RMI per element to its new owner (so any
// distribution and any number of locations can load it), then a fence.
//
// What a load requires and does:
//   pvector        resized to the saved size, then every element set
//   parray         the saved size (a parray's size is fixed)
//   pgraph         the saved number of vertices and no edges yet; properties
//                  set, edges added in their saved order
//   punordered_map cleared, then every pair inserted
// The element types must be the ones saved (compared by name).  A missing,
// damaged, foreign or mismatched file is an armi::file_error naming it, on
// every location, and nothing is loaded.  The directory must be one that
// every location sees (a shared file system across hosts).
//
// Not saved: pvector elements push_back'ed but not made global (a save
// refuses them: call update_distribution() first), and pgraph vertices made
// by add_vertex (their ids depend on the number of locations; refused too).
#pragma once

#include <armi/containers/collective.hpp>
#include <armi/containers/detail/part_file.hpp>
#include <armi/containers/parray.hpp>
#include <armi/containers/pgraph.hpp>
#include <armi/containers/punordered_map.hpp>
#include <armi/containers/pvector.hpp>
#include <armi/core/error.hpp>
#include <armi/rmi.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

namespace armi {

/// Local: what the first part of the container saved in `directory` says: its kind,
/// element types, size and the number of locations that saved it.  Use it to size a
/// parray or pgraph before loading into it.
/// @throws file_error if the first part is missing or damaged.
inline saved_container saved_info(std::filesystem::path const& directory) {
  return detail::read_part(detail::part_path(directory, 0)).header.container;
}

namespace detail {

template <class Dist>
std::string distribution_text(Dist const& d) {
  return type_name<Dist>() + " over " + std::to_string(d.num_locations()) + " locations";
}

// This location's elements [0, local_size) of an indexed container, as runs
// of consecutive global indices: (first, count, values...) each.
template <class Dist, class Values>
std::uint64_t save_index_runs(Dist const& d, Values const& local, packer* p) {
  location_id const me = get_location_id();
  std::size_t const n = d.local_size(me);
  std::uint64_t runs = 0;
  for (std::size_t k = 0; k < n;) {
    std::uint64_t const first = d.global_index(me, k);
    std::size_t len = 1;
    while (k + len < n && d.global_index(me, k + len) == first + len) ++len;
    if (p != nullptr) {
      p->write(first);
      p->write(static_cast<std::uint64_t>(len));
      for (std::size_t i = 0; i < len; ++i) p->write(local[k + i]);
    }
    ++runs;
    k += len;
  }
  return runs;
}

// Collective: the indexed container c (pvector or parray) saved as `kind`.
template <class C>
void save_indexed(C const& c, std::string const& kind, std::filesystem::path const& dir) {
  using T = typename C::value_type;
  part_header h;
  h.container = {kind, type_name<T>(), c.size(), 0, distribution_text(c.distribution())};
  h.records = save_index_runs(c.distribution(), c.local(), nullptr);
  save_parts(dir, std::move(h), [&](packer& p) { save_index_runs(c.distribution(), c.local(), &p); });
}

// Collective: the (index, value) records of an indexed container saved in
// dir, and its description; check as load_parts takes it.
template <class T, class Check>
std::pair<std::vector<std::pair<std::uint64_t, T>>, saved_container> load_indexed(std::string const& kind,
                                                                                  std::filesystem::path const& dir,
                                                                                  Check&& check) {
  return load_parts<std::pair<std::uint64_t, T>>(
      dir, kind, type_name<T>(), std::forward<Check>(check),
      [](saved_container const& c, unpacker& u, std::vector<std::pair<std::uint64_t, T>>& out) {
        auto const first = u.read<std::uint64_t>();
        auto const count = u.read<std::uint64_t>();
        if (first > c.size || count > c.size - first)
          throw decode_error("indices " + std::to_string(first) + " + " + std::to_string(count) + " past the size " +
                             std::to_string(c.size));
        for (std::uint64_t i = 0; i < count; ++i) out.emplace_back(first + i, u.read<T>());
      });
}

// A check that accepts every saved container.
inline std::string accept_any(saved_container const&) { return {}; }

}  // namespace detail

/// Collective: saves v's elements [0, v.size()) into `directory` (created if needed),
/// one file per location.  Fences first.
/// @throws std::logic_error (on every location) if a location holds push_back'ed
/// elements not made global by update_distribution().
/// @throws file_error (on every location) if a file cannot be written.
template <class T, distribution D>
void save(pvector<T, D> const& v, std::filesystem::path const& directory) {
  rmi_fence();
  std::size_t const pending = v.local_size() - v.distribution().local_size(get_location_id());
  if (detail::allreduce_value(pending, std::plus<>{}) != 0)
    throw std::logic_error("armi::save: the pvector has elements push_back'ed but not made global; call "
                           "update_distribution() before saving it");
  detail::save_indexed(v, "pvector", directory);
}

/// Collective: v becomes the pvector saved in `directory` (on any number of
/// locations), resized to its size and distributed by v's own distribution type.
/// @throws file_error (on every location, before v changes) if a part is missing,
/// damaged, or holds another kind of container or element type.
template <class T, distribution D>
void load(pvector<T, D>& v, std::filesystem::path const& directory) {
  rmi_fence();
  auto const [records, info] = detail::load_indexed<T>("pvector", directory, detail::accept_any);
  v.resize(info.size);
  for (auto const& [i, x] : records) v.set(i, x);
  rmi_fence();
}

/// Collective: saves a's elements into `directory` (created if needed), one file
/// per location.  Fences first.
/// @throws file_error (on every location) if a file cannot be written.
template <class T, distribution D>
void save(parray<T, D> const& a, std::filesystem::path const& directory) {
  rmi_fence();
  detail::save_indexed(a, "parray", directory);
}

/// Collective: a's elements become those of the parray saved in `directory` (on
/// any number of locations), which must have a.size() elements.
/// @throws file_error (on every location, before a changes) if a part is missing,
/// damaged, or holds another kind of container, element type or size.
template <class T, distribution D>
void load(parray<T, D>& a, std::filesystem::path const& directory) {
  rmi_fence();
  std::uint64_t const size = a.size();
  auto const [records, info] = detail::load_indexed<T>("parray", directory, [&](saved_container const& c) {
    return c.size == size ? std::string()
                          : "holds a parray of " + std::to_string(c.size) + " elements, loading into one of " +
                                std::to_string(size);
  });
  for (auto const& [i, x] : records) a.set(i, x);
  rmi_fence();
}

/// Collective: saves g's vertices (properties and out-edges) into `directory`
/// (created if needed), one file per location.  Fences first.
/// @throws std::logic_error (on every location) if g has vertices made by add_vertex.
/// @throws file_error (on every location) if a file cannot be written.
template <class VP, class EP, distribution D>
void save(pgraph<VP, EP, D> const& g, std::filesystem::path const& directory) {
  rmi_fence();
  location_id const me = get_location_id();
  std::size_t const own = g.distribution().local_size(me);
  if (detail::allreduce_value(g.local_num_vertices() - own, std::plus<>{}) != 0)
    throw std::logic_error("armi::save: the pgraph has vertices made by add_vertex, whose ids depend on the number "
                           "of locations; it cannot be saved");
  detail::part_header h;
  h.container = {"pgraph", detail::type_name<VP>() + ", " + detail::type_name<EP>(), g.size(), 0,
                 detail::distribution_text(g.distribution())};
  h.records = own;
  detail::save_parts(directory, std::move(h), [&](packer& p) {
    for (std::size_t k = 0; k < own; ++k) {
      auto const& vx = g.local()[k];
      p.write(vx.id);
      p.write(vx.property);
      p.write(static_cast<std::uint64_t>(vx.edges.size()));
      for (auto const& e : vx.edges) {
        p.write(e.target);
        p.write(e.property);
      }
    }
  });
}

/// Collective: g gets the vertex properties and edges of the pgraph saved in
/// `directory` (on any number of locations).  g must have the saved number of
/// vertices, none made by add_vertex, and no edges yet.
/// @throws file_error (on every location, before g changes) if a part is missing,
/// damaged, or holds another kind of container, other types or another size.
template <class VP, class EP, distribution D>
void load(pgraph<VP, EP, D>& g, std::filesystem::path const& directory) {
  std::uint64_t const edges = g.num_edges();  // fences first
  std::uint64_t const vertices = g.num_vertices();
  std::uint64_t const size = g.size();
  struct vertex_record {
    std::uint64_t id;
    VP property;
    std::vector<graph_edge<EP>> edges;
  };
  auto const [records, info] = detail::load_parts<vertex_record>(
      directory, "pgraph", detail::type_name<VP>() + ", " + detail::type_name<EP>(),
      [&](saved_container const& c) -> std::string {
        if (c.size != size)
          return "holds a pgraph of " + std::to_string(c.size) + " vertices, loading into one of " + std::to_string(size);
        if (vertices != size || edges != 0) return "the pgraph to load into must have no edges and no added vertices";
        return {};
      },
      [](saved_container const& c, unpacker& u, std::vector<vertex_record>& out) {
        vertex_record r{u.read<std::uint64_t>(), u.read<VP>(), {}};
        if (r.id >= c.size) throw decode_error("vertex " + std::to_string(r.id) + " past the size " + std::to_string(c.size));
        auto const degree = u.read<std::uint64_t>();
        if (degree > u.remaining()) throw decode_error("out-degree " + std::to_string(degree) + " past the file's end");
        for (std::uint64_t i = 0; i < degree; ++i) {
          graph_edge<EP> e;
          e.target = u.read<std::uint64_t>();
          e.property = u.read<EP>();
          if (e.target >= c.size) throw decode_error("edge target " + std::to_string(e.target) + " past the size");
          r.edges.push_back(std::move(e));
        }
        out.push_back(std::move(r));
      });
  for (auto const& r : records) {
    g.set_vertex_property(r.id, r.property);
    for (auto const& e : r.edges) g.add_edge(r.id, e.target, e.property);
  }
  rmi_fence();
}

/// Collective: saves m's key-value pairs into `directory` (created if needed), one
/// file per location.  Fences first.
/// @throws file_error (on every location) if a file cannot be written.
template <class K, class V, class Hash>
void save(punordered_map<K, V, Hash> const& m, std::filesystem::path const& directory) {
  std::size_t const size = m.size();  // fences first
  detail::part_header h;
  h.container = {"punordered_map", detail::type_name<K>() + " -> " + detail::type_name<V>(), size, 0,
                 "hashed over " + std::to_string(get_num_locations()) + " locations"};
  h.records = m.local().size();
  detail::save_parts(directory, std::move(h), [&](packer& p) {
    for (auto const& [k, v] : m.local()) {
      p.write(k);
      p.write(v);
    }
  });
}

/// Collective: m becomes the punordered_map saved in `directory` (on any number
/// of locations): cleared, then every saved pair inserted.
/// @throws file_error (on every location, before m changes) if a part is missing,
/// damaged, or holds another kind of container or other types.
template <class K, class V, class Hash>
void load(punordered_map<K, V, Hash>& m, std::filesystem::path const& directory) {
  rmi_fence();
  auto const [records, info] = detail::load_parts<std::pair<K, V>>(
      directory, "punordered_map", detail::type_name<K>() + " -> " + detail::type_name<V>(), detail::accept_any,
      [](saved_container const&, unpacker& u, std::vector<std::pair<K, V>>& out) {
        K k = u.read<K>();
        out.emplace_back(std::move(k), u.read<V>());
      });
  m.clear();
  for (auto const& [k, v] : records) m.insert_or_assign(k, v);
  rmi_fence();
}

}  // namespace armi
