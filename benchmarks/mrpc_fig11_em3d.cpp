// MRPC Fig. 11: EM3D time per edge for 10/40/70/100% remote edges, in the
// three versions (examples/em3d_kernel.hpp): base (a sync_rmi per remote
// edge), ghost (a sync_rmi per distinct remote node per iteration) and bulk
// (one opaque_rmi per neighbour location per iteration).  One table, ns per
// edge (elapsed time / edges one location processes), with the ratios
// base/ghost and ghost/bulk that the paper discusses (ghost saves 87-89% of
// base at 100% remote, bulk more than 95% of ghost).  Every run is checked
// against the sequential computation; a mismatch exits 1.
//
//   mrpc_fig11_em3d --armi-locations=4 [--nodes=2000] [--degree=10] [--iters=5]
//                   [--remotes=10,40,70,100] [--reps=3] [--json=FILE]
#include "../examples/em3d_kernel.hpp"
#include "bench_common.hpp"

#include <armi/armi.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using armi_bench::json;

class reducer : public armi::p_object {
 public:
  double echo(double x) const { return x; }
  double max(double x) {
    return armi::allreduce_rmi(get_rmi_handle(), &reducer::echo, [](double a, double b) { return std::max(a, b); }, x);
  }
};

struct row {
  std::uint64_t remote_percent = 0;
  double measured_remote = 0;  // fraction of edges that are remote, as generated
  double ns[3] = {0, 0, 0};    // base, ghost, bulk
  double error = 0;
};

}  // namespace

int main(int argc, char** argv) {
  armi::config cfg;
  if (int const code = armi_bench::take_armi_options(argc, argv, cfg); code >= 0) return code;
  em3d::params base;
  std::vector<std::uint64_t> remotes;
  std::uint64_t reps = 3;
  std::string json_path;
  try {
    armi_bench::flags f(argc, argv);
    base.nodes = f.get_uint("nodes", 2000);
    base.degree = f.get_uint("degree", 10);
    base.iters = f.get_uint("iters", 5);
    base.seed = f.get_uint("seed", 1);
    remotes = f.get_uint_list("remotes", {10, 40, 70, 100});
    reps = f.get_uint("reps", 3);
    json_path = f.get_string("json", "");
    f.finish();
    if (base.nodes == 0 || base.degree == 0 || base.iters == 0 || reps == 0)
      throw armi_bench::usage_error("--nodes, --degree, --iters and --reps must be at least 1");
    for (auto r : remotes)
      if (r > 100) throw armi_bench::usage_error("--remotes: percentages from 0 to 100");
  } catch (armi_bench::usage_error const& e) {
    std::fprintf(stderr, "mrpc_fig11_em3d: %s\n", e.what());
    return 2;
  }

  std::vector<row> rows;
  armi::location_id locations = 0;
  std::size_t aggregation = 0;
  bool reporter = false;
  int const rc = armi::execute(cfg, [&]() -> int {
    reducer red;
    std::vector<row> mine;
    int bad = 0;
    for (auto percent : remotes) {
      em3d::params p = base;
      p.remote = static_cast<double>(percent) / 100.0;
      em3d::solver s(p);
      auto const reference = em3d::sequential(p, armi::get_num_locations());
      row r;
      r.remote_percent = percent;
      r.measured_remote = red.max(static_cast<double>(s.remote_edges())) / static_cast<double>(2 * p.nodes * p.degree);
      double const edges = static_cast<double>(2 * p.nodes * p.degree * p.iters);
      for (auto v : {em3d::variant::base, em3d::variant::ghost, em3d::variant::bulk}) {
        std::vector<double> t;
        for (std::uint64_t k = 0; k < reps; ++k) {
          t.push_back(red.max(s.run(v)));
          r.error = std::max(r.error, red.max(s.max_error(reference)));
        }
        r.ns[static_cast<int>(v)] = armi_bench::median(t) / edges * 1e9;
      }
      bad += r.error > 1e-12;
      mine.push_back(r);
    }
    if (armi::get_location_id() == 0) {
      rows = mine;
      locations = armi::get_num_locations();
      aggregation = armi::get_aggregation();
      reporter = true;
    }
    return bad == 0 ? 0 : 1;
  });
  if (rc == 0 && !reporter) return 0;
  if (rc != 0) {
    std::fprintf(stderr, "mrpc_fig11_em3d: FAILED (values differ from the sequential computation)\n");
    return rc;
  }

  fmt::print("MRPC Fig. 11: EM3D, {} locations ({} backend, aggregation {}), {} E + {} H nodes per location, "
             "degree {}, {} iterations; ns per edge (median of {})\n",
             locations, armi::effective_backend(cfg), armi_bench::aggregation_text(aggregation), base.nodes,
             base.nodes, base.degree, base.iters, reps);
  fmt::print("{:>8} {:>9} {:>11} {:>11} {:>11} {:>11} {:>11}\n", "remote%", "measured", "base", "ghost", "bulk",
             "base/ghost", "ghost/bulk");
  json::array out;
  for (auto const& r : rows) {
    fmt::print("{:>8} {:>8.1f}% {:>11.1f} {:>11.1f} {:>11.1f} {:>10.2f}x {:>10.2f}x\n", r.remote_percent,
               100 * r.measured_remote, r.ns[0], r.ns[1], r.ns[2], r.ns[0] / r.ns[1], r.ns[1] / r.ns[2]);
    out.push_back(json::object{{"remote_percent", r.remote_percent},
                               {"measured_remote_fraction", r.measured_remote},
                               {"ns_per_edge_base", r.ns[0]},
                               {"ns_per_edge_ghost", r.ns[1]},
                               {"ns_per_edge_bulk", r.ns[2]},
                               {"base_over_ghost", r.ns[0] / r.ns[1]},
                               {"ghost_over_bulk", r.ns[1] / r.ns[2]},
                               {"max_error", r.error}});
  }
  fmt::print("(MRPC, 4-node SP, 100% remote: ghost saves 87-89% of base, bulk more than 95% of ghost)\n");
  json summary = json::object{{"benchmark", "mrpc_fig11_em3d"},
                              {"paper", "MRPC Fig. 11: EM3D per-edge time, base/ghost/bulk"},
                              {"backend", armi::effective_backend(cfg)},
                              {"locations", static_cast<std::uint64_t>(locations)},
                              {"aggregation", armi_bench::aggregation_text(aggregation)},
                              {"nodes_per_location", base.nodes},
                              {"degree", base.degree},
                              {"iters", base.iters},
                              {"reps", reps},
                              {"machine", armi_bench::machine_context()},
                              {"rows", out},
                              {"verified", true}};
  return armi_bench::write_json(json_path, summary) ? 0 : 1;
}
