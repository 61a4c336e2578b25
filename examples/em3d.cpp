// em3d — MRPC's EM3D (§5.2): E and H field values on a bipartite graph, each
// node updated from a weighted sum of its neighbours, in three versions that
// differ only in how they read remote values (see em3d_kernel.hpp):
//
//   base   one sync_rmi per remote edge
//   ghost  one sync_rmi per distinct remote node per iteration, then local
//   bulk   one opaque_rmi per neighbour location per iteration, then local
//
// Every location owns --nodes E and --nodes H nodes of --degree dependencies
// each, a fraction --remote of them on other locations.  Each version's
// values are compared with a sequential computation (each location
// regenerates the whole graph and checks its own nodes); the program prints
// the largest difference and the time per edge: elapsed time divided by the
// edges one location processes (iters x 2 x nodes x degree).
//
//   ./em3d --armi-locations=4 --remote=0.4 --variant=all
//
// Exit status: 0 if every version matched, 1 if one did not, 2 on a usage error.
#include "example_flags.hpp"
#include "em3d_kernel.hpp"

#include <armi/armi.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

class reducer : public armi::p_object {
 public:
  double echo(double x) const { return x; }
  double max(double x) {
    return armi::allreduce_rmi(get_rmi_handle(), &reducer::echo, [](double a, double b) { return std::max(a, b); }, x);
  }
  double sum(double x) { return armi::allreduce_rmi(get_rmi_handle(), &reducer::echo, std::plus<>{}, x); }
};

int run(int argc, char** argv) {
  armi_example::flags f(argc, argv, "em3d", "MRPC's EM3D in three versions (base, ghost, bulk)");
  em3d::params p;
  p.nodes = f.size("nodes", 2000, "E nodes (and H nodes) per location");
  p.degree = f.size("degree", 10, "dependencies per node");
  p.remote = f.real("remote", 0.4, "fraction of dependencies on other locations (0..1)");
  p.iters = f.size("iters", 10, "iterations (each updates E, then H)");
  p.seed = f.size("seed", 1, "random seed");
  auto const which = f.choice("variant", "all", {"all", "base", "ghost", "bulk"}, "version to run");
  if (auto const status = f.finish()) return *status;
  bool const loud = armi::get_location_id() == 0;
  if (p.nodes == 0 || p.remote < 0 || p.remote > 1) {
    if (loud) fmt::print(stderr, "em3d: error: --nodes must be >= 1 and --remote within [0, 1]\n");
    return 2;
  }
  auto const locs = armi::get_num_locations();

  reducer red;
  em3d::solver s(p);
  auto const reference = em3d::sequential(p, locs);
  double const remote_edges = red.sum(static_cast<double>(s.remote_edges()));
  double const ghosts = red.sum(static_cast<double>(s.ghost_count()));
  double const edges_per_loc = static_cast<double>(2 * p.nodes * p.degree);
  if (loud)
    fmt::print("em3d: {} location{}, {} E + {} H nodes each, degree {}, {} iterations, aggregation {}\n"
               "  remote edges {:.1f}% (asked {:.1f}%), {:.2f} ghost nodes per location per half-step\n",
               locs, locs == 1 ? "" : "s", p.nodes, p.nodes, p.degree, p.iters, armi_example::aggregation_text(),
               100.0 * remote_edges / (edges_per_loc * locs), 100.0 * p.remote, ghosts / locs / 2);

  int failures = 0;
  for (auto v : {em3d::variant::base, em3d::variant::ghost, em3d::variant::bulk}) {
    if (which != "all" && which != em3d::name(v)) continue;
    double const seconds = red.max(s.run(v));
    double const err = red.max(s.max_error(reference));
    bool const ok = err <= 1e-12;
    failures += !ok;
    if (loud)
      fmt::print("  em3d-{:<5}  {:9.3f} ms  {:9.1f} ns/edge  max error {:.3g}  {}\n", em3d::name(v), seconds * 1e3,
                 seconds / (edges_per_loc * static_cast<double>(p.iters)) * 1e9, err, ok ? "OK" : "FAILED");
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return armi::execute(argc, argv, run);
}
