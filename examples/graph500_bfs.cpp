// graph500_bfs — the Graph500 BFS benchmark on armi: the specification's
// Kronecker graph (armi::generate_graph500: 2^SCALE vertices, edgefactor *
// 2^SCALE edges, vertex ids permuted, self-loops dropped, each edge stored
// both ways), NBFS search keys of degree >= 1 (armi::graph500_search_keys),
// for each one a BFS returning the parent tree (armi::bfs_parents), checked
// by Graph500's five rules (armi::validate_bfs_tree), and the statistics
// printed as the reference implementation prints them (harmonic mean of the
// TEPS among them).
//
//   ./graph500_bfs --armi-locations=2 --scale=14
//   mpiexec -n 2 ./graph500_bfs --armi-backend=mpi --scale=18
//
// TEPS of one search = the input edges of the key's component (each once,
// self-loops excluded; the validator counts them) / the BFS's time.  The
// generator adds the edges straight into the pgraph, so generation and
// construction are one step: graph_generation is its time and
// construction_time the time of the fence and edge count after it.
//
// Exit status: 0 if every search validated, 1 if one did not, 2 on a usage error.
#include "example_flags.hpp"
#include "graph500_output.hpp"

#include <armi/algorithms/bfs.hpp>
#include <armi/algorithms/bfs_validate.hpp>
#include <armi/armi.hpp>
#include <armi/containers/kronecker.hpp>
#include <armi/containers/pgraph.hpp>

#include <fmt/core.h>

#include <chrono>
#include <cstdint>
#include <vector>

namespace {

using u64 = std::uint64_t;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run(int argc, char** argv) {
  armi_example::flags f(argc, argv, "graph500_bfs", "the Graph500 BFS benchmark (Kronecker graph, validated BFS trees)");
  u64 const scale = f.size("scale", 14, "2^scale vertices (1..40)");
  u64 const edge_factor = f.size("edge-factor", 16, "edges per vertex (1..1024)");
  u64 const nbfs = f.size("nbfs", 64, "search keys (1..1024)");
  u64 const seed = f.size("seed", 1, "random seed of the graph and the keys");
  u64 const validate = f.size("validate", 1, "1: validate every BFS tree; 0: skip (no nedge then: not a Graph500 run)");
  if (auto const status = f.finish()) return *status;
  bool const loud = armi::get_location_id() == 0;
  auto const usage = [&](char const* what) {
    if (loud) fmt::print(stderr, "graph500_bfs: error: {}\n", what);
    return 2;
  };
  if (scale < 1 || scale > 40) return usage("--scale must be in 1..40");
  if (edge_factor < 1 || edge_factor > 1024) return usage("--edge-factor must be in 1..1024");
  if (nbfs < 1 || nbfs > 1024) return usage("--nbfs must be in 1..1024");
  if (validate > 1) return usage("--validate must be 0 or 1");

  graph500_output::run out;
  out.scale = static_cast<unsigned>(scale);
  out.edge_factor = edge_factor;
  out.processes = armi::get_num_locations();

  armi::pgraph<> g(u64{1} << scale);
  armi::rmi_fence();
  auto t0 = std::chrono::steady_clock::now();
  armi::generate_graph500(g, edge_factor, seed);
  out.graph_generation = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  u64 const stored = g.num_edges();
  out.construction_time = seconds_since(t0);

  auto const keys = armi::graph500_search_keys(g, nbfs, seed);
  if (loud && keys.size() < nbfs)
    fmt::print(stderr, "graph500_bfs: only {} vertices have an edge; {} searches\n", keys.size(), keys.size());

  int failures = 0;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    armi::rmi_fence();
    t0 = std::chrono::steady_clock::now();
    auto const parents = armi::bfs_parents(g, keys[k]);
    out.bfs_times.push_back(seconds_since(t0));
    if (validate == 0) continue;
    t0 = std::chrono::steady_clock::now();
    auto const check = armi::validate_bfs_tree(g, keys[k], parents);
    out.validate_times.push_back(seconds_since(t0));
    out.nedges.push_back(static_cast<double>(check.component_edges));
    if (!check.ok()) {
      if (loud) fmt::print(stderr, "graph500_bfs: BFS {} from {}: validation failed: {}\n", k, keys[k], check.describe());
      ++failures;
      break;  // as the reference: the rest is not run
    }
  }

  if (loud) {
    fmt::print("graph500_bfs: {} vertices, {} stored edges (both ways), {} location{}, aggregation {}\n",
               u64{1} << scale, stored, armi::get_num_locations(), armi::get_num_locations() == 1 ? "" : "s",
               armi_example::aggregation_text());
    if (validate == 0) {
      fmt::print("graph500_bfs: {} searches, not validated: no edge counts, no TEPS\n", out.bfs_times.size());
    } else if (failures == 0) {
      graph500_output::print(out, stdout);
      fmt::print("graph500_bfs: validation: {} searches OK\n", out.bfs_times.size());
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return armi::execute(argc, argv, run);
}
