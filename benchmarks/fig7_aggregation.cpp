// fig7_aggregation — the ARMI paper's Fig. 7: how the aggregation factor
// changes three applications, each on its own pContainer:
//
//   random_updates  HPCC RandomAccess on a parray<uint64_t> (one async_rmi
//                   per update; the paper's pArray bandwidth test; best
//                   factor there: 4096)
//   lu              blocked LU of a pmatrix<double> (bulk blocks, two fences
//                   per step; the paper: aggregation needed, more of it
//                   neither helps nor hurts)
//   scc             strongly connected components of an R-MAT pgraph
//                   (trimming + coloring; the paper's pSCC: sweet spot 75)
//
// For every kernel and every factor (set_aggregation inside one execute, so
// every factor sees the same data and the same locations), and then under
// armi::aggregation_auto (the runtime's online choice), the kernel runs
// --reps times from the same input, the factors interleaved (each round runs
// every factor once); the table gives the median time, the
// ratio to the best fixed factor of that kernel, and the best factor.  The
// issue's goal for auto: within 1.10x of the best, never above 1.25x.  Each run is
// verified: random updates apply the stream twice and count entries not back
// to their start (must be 0), LU counts zero pivots (must be 0) and the
// residual on a few rows, SCC must give the same labels at every factor.
//
//   ./fig7_aggregation --armi-locations=2 --json=fig7.json
//   mpiexec -bind-to core -n 2 ./fig7_aggregation --json=fig7_mpi.json
//
// Exit status: 0 if every check passed, 1 if one failed, 2 on a usage error.

#include "bench_common.hpp"

#include <armi/algorithms/lu.hpp>
#include <armi/algorithms/random_updates.hpp>
#include <armi/algorithms/scc.hpp>
#include <armi/armi.hpp>
#include <armi/containers/graph_generators.hpp>
#include <armi/containers/parray.hpp>
#include <armi/containers/pgraph.hpp>
#include <armi/containers/pmatrix.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

using armi_bench::json;

struct setup {
  std::vector<std::string> kernels;
  std::vector<std::uint64_t> factors;
  std::uint64_t reps = 3;
  unsigned log_size = 18;           // random updates: table of 2^log_size words (all locations)
  std::uint64_t updates_per_entry = 1;
  std::size_t lu_n = 384, lu_block = 32;
  unsigned scc_scale = 13;          // R-MAT: 2^scale vertices
  std::uint64_t scc_edge_factor = 8;
};

// What one kernel measured: seconds[f][rep], and whether every run checked out.
struct kernel_result {
  std::string name;
  std::string input;
  std::vector<std::vector<double>> seconds;
  bool ok = true;
};

// The factors each kernel runs under: the fixed ones, then auto.
std::vector<std::size_t> with_auto(std::vector<std::uint64_t> const& factors) {
  std::vector<std::size_t> all(factors.begin(), factors.end());
  all.push_back(armi::aggregation_auto);
  return all;
}

std::string factor_name(std::size_t f) { return f == armi::aggregation_auto ? "auto" : fmt::format("{}", f); }

double elapsed(std::int64_t t0) { return static_cast<double>(armi_bench::now_ns() - t0) * 1e-9; }

// Every location gets the time of the slowest one: a kernel ends when all did.
class stopwatch : public armi::p_object {
 public:
  double mine() const { return m_seconds; }
  double slowest(double s) {
    m_seconds = s;
    return armi::allreduce_rmi(get_rmi_handle(), &stopwatch::mine, [](double a, double b) { return std::max(a, b); });
  }

 private:
  double m_seconds = 0;
};

// Runs every factor of `factors` (then auto) --reps times, interleaved: round
// r runs each factor once, so a slow spell of the machine (2 shared cores)
// lands on every factor alike instead of on one factor's block of runs.
// run() is timed and returns false if its result did not check out;
// prepare() and (after each factor's last run) check() are not timed.
template <class Prepare, class Run, class Check>
void sweep(setup const& s, stopwatch& clock, kernel_result& r, Prepare prepare, Run run, Check check) {
  std::vector<std::size_t> const factors = with_auto(s.factors);
  r.seconds.assign(factors.size(), {});
  for (std::uint64_t rep = 0; rep < s.reps; ++rep) {
    for (std::size_t i = 0; i < factors.size(); ++i) {
      armi::set_aggregation(factors[i]);
      prepare();
      armi::rmi_fence();
      auto const t0 = armi_bench::now_ns();
      bool const ok = run();
      r.seconds[i].push_back(clock.slowest(elapsed(t0)));
      if (!ok) r.ok = false;
      if (rep + 1 == s.reps && !check(factors[i])) r.ok = false;
      armi::rmi_fence();
    }
  }
}

kernel_result run_random_updates(setup const& s, stopwatch& clock) {
  kernel_result r{"random_updates", "", {}, true};
  std::size_t const size = std::size_t{1} << s.log_size;
  std::uint64_t const updates = s.updates_per_entry * size;
  r.input = fmt::format("table 2^{} words, {} updates", s.log_size, updates);
  armi::parray<std::uint64_t> table(size);
  sweep(
      s, clock, r, [&] { armi::random_updates_init(table); },
      [&] {
        armi::random_updates(table, updates);  // ends in a fence
        return true;
      },
      [&](std::size_t f) {
        // The stream applied again undoes it: every entry back to its index.
        std::uint64_t const errors = armi::random_updates_verify(table, updates);
        if (errors != 0 && armi::get_location_id() == 0)
          std::fprintf(stderr, "fig7_aggregation: random_updates at factor %s: %llu errors\n", factor_name(f).c_str(),
                       static_cast<unsigned long long>(errors));
        return errors == 0;
      });
  return r;
}

// Diagonally dominant, different in every entry: off-diagonal in [-1, 1), n + 1 added on the diagonal.
double lu_entry(std::size_t n, std::size_t i, std::size_t j) {
  armi_bench::splitmix64 g{0x9E3779B97F4A7C15ULL * (i * n + j + 1)};
  double const x = static_cast<double>(g() >> 11) / 9007199254740992.0 * 2.0 - 1.0;
  return i == j ? x + static_cast<double>(n) + 1.0 : x;
}

kernel_result run_lu(setup const& s, stopwatch& clock) {
  kernel_result r{"lu", fmt::format("{} x {} doubles, {} x {} blocks", s.lu_n, s.lu_n, s.lu_block, s.lu_block), {}, true};
  std::size_t const n = s.lu_n;
  armi::pmatrix<double> a(n, n, s.lu_block);
  sweep(
      s, clock, r, [&] { a.local_fill([n](std::size_t i, std::size_t j) { return lu_entry(n, i, j); }); },
      [&] { return armi::lu(a) == 0; },  // no zero pivots
      [&](std::size_t f) {
        // Spot check: row i of L*U equals row i of A, for a few rows (remote reads).
        bool ok = true;
        if (armi::get_location_id() == 0) {
          double worst = 0;
          for (std::size_t i : {std::size_t{0}, n / 3, n - 1}) {
            std::vector<double> lrow(n), ucol(n);
            for (std::size_t k = 0; k <= i; ++k) lrow[k] = k == i ? 1.0 : a.get(i, k);
            for (std::size_t j : {std::size_t{0}, i, n - 1}) {
              double sum = 0;
              for (std::size_t k = 0; k <= std::min(i, j); ++k) sum += lrow[k] * a.get(k, j);
              worst = std::max(worst, std::abs(sum - lu_entry(n, i, j)) / static_cast<double>(n));
            }
          }
          if (!(worst < 1e-10)) {
            std::fprintf(stderr, "fig7_aggregation: lu at factor %s: residual %g\n", factor_name(f).c_str(), worst);
            ok = false;
          }
        }
        return ok;
      });
  return r;
}

kernel_result run_scc(setup const& s, stopwatch& clock) {
  std::uint64_t const n = std::uint64_t{1} << s.scc_scale;
  std::uint64_t const m = s.scc_edge_factor * n;
  kernel_result r{"scc", fmt::format("R-MAT scale {} ({} vertices, {} edges)", s.scc_scale, n, m), {}, true};
  armi::pgraph<> g(n);
  armi::generate_rmat(g, m, 7);
  std::vector<std::uint64_t> first_labels;
  sweep(
      s, clock, r, [] {},
      [&] {
        // The same labels at every factor and every repetition.
        auto const result = armi::scc(g);
        std::vector<std::uint64_t> labels(result.labels.begin(), result.labels.end());
        if (first_labels.empty()) first_labels = labels;
        return labels == first_labels;
      },
      [](std::size_t) { return true; });
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  armi::config cfg;
  if (int const code = armi_bench::take_armi_options(argc, argv, cfg); code >= 0) return code;
  if (cfg.locations == 0 && armi::effective_backend(cfg) == "threads") cfg.locations = 2;
  setup s;
  std::string json_path;
  try {
    armi_bench::flags f(argc, argv);
    std::string const kernels = f.get_string("kernels", "random_updates,lu,scc");
    s.factors = f.get_uint_list("factors", {1, 4, 16, 64, 256, 1024, 4096});
    s.reps = f.get_uint("reps", 3);
    s.log_size = static_cast<unsigned>(f.get_uint("log-size", 18));
    s.updates_per_entry = f.get_uint("updates-per-entry", 1);
    s.lu_n = f.get_uint("lu-n", 384);
    s.lu_block = f.get_uint("lu-block", 32);
    s.scc_scale = static_cast<unsigned>(f.get_uint("scale", 13));
    s.scc_edge_factor = f.get_uint("edge-factor", 8);
    cfg.buffer_bytes = f.get_uint("buffer-bytes", 1u << 20);
    json_path = f.get_string("json", "");
    f.finish();
    for (std::size_t b = 0, e; b <= kernels.size(); b = e + 1) {
      e = kernels.find(',', b);
      if (e == std::string::npos) e = kernels.size();
      std::string const k = kernels.substr(b, e - b);
      if (k != "random_updates" && k != "lu" && k != "scc")
        throw armi_bench::usage_error("--kernels: unknown kernel '" + k + "' (random_updates, lu, scc)");
      s.kernels.push_back(k);
    }
    for (auto a : s.factors)
      if (a == 0) throw armi_bench::usage_error("--factors: a factor must be at least 1");
    if (s.reps == 0) throw armi_bench::usage_error("--reps must be at least 1");
    if (s.log_size < 4 || s.log_size > 34) throw armi_bench::usage_error("--log-size must be in 4..34");
    if (s.lu_n == 0 || s.lu_block == 0) throw armi_bench::usage_error("--lu-n and --lu-block must be at least 1");
    if (s.scc_scale < 2 || s.scc_scale > 30) throw armi_bench::usage_error("--scale must be in 2..30");
  } catch (armi_bench::usage_error const& e) {
    std::fprintf(stderr, "fig7_aggregation: %s\n", e.what());
    return 2;
  }

  std::vector<kernel_result> results;
  unsigned locations = 0;
  bool reporter = false;
  int const rc = armi::execute(cfg, [&]() -> int {
    stopwatch clock;
    std::vector<kernel_result> mine;
    for (auto const& k : s.kernels) {
      if (k == "random_updates") mine.push_back(run_random_updates(s, clock));
      if (k == "lu") mine.push_back(run_lu(s, clock));
      if (k == "scc") mine.push_back(run_scc(s, clock));
    }
    armi::rmi_fence();
    bool ok = true;
    for (auto const& r : mine) ok = ok && r.ok;
    if (armi::get_location_id() == 0) {
      results = std::move(mine);
      locations = armi::get_num_locations();
      reporter = true;
    }
    return ok ? 0 : 1;
  });
  if (!reporter) return rc;

  fmt::print("Fig. 7 (ARMI paper): kernel time vs aggregation factor, {} locations ({} backend), median of {}\n",
             locations, armi::effective_backend(cfg), s.reps);
  json::array rows;
  for (auto const& r : results) {
    std::vector<double> med;
    for (auto const& t : r.seconds) med.push_back(armi_bench::median(t));
    // Best among the fixed factors; auto (the last) is measured against it.
    std::size_t const best = static_cast<std::size_t>(std::min_element(med.begin(), med.end() - 1) - med.begin());
    fmt::print("\n{} — {}{}\n", r.name, r.input, r.ok ? "" : "  ** CHECK FAILED **");
    fmt::print("  {:>8} {:>12} {:>10}\n", "factor", "ms", "x best");
    json::object cells, ratios;
    std::vector<std::size_t> const factors = with_auto(s.factors);
    for (std::size_t i = 0; i < factors.size(); ++i) {
      fmt::print("  {:>8} {:>12.2f} {:>9.2f}x{}\n", factor_name(factors[i]), med[i] * 1e3, med[i] / med[best],
                 i == best ? "  <- best" : "");
      cells.emplace_back(factor_name(factors[i]), med[i] * 1e3);
      ratios.emplace_back(factor_name(factors[i]), med[i] / med[best]);
    }
    rows.push_back(json::object{{"kernel", r.name},
                                {"input", r.input},
                                {"ms_by_aggregation", cells},
                                {"ratio_to_best_by_aggregation", ratios},
                                {"best_aggregation", s.factors[best]},
                                {"best_ms", med[best] * 1e3},
                                {"auto_ms", med.back() * 1e3},
                                {"auto_over_best", med.back() / med[best]},
                                {"verified", r.ok}});
  }
  fmt::print("\nARMI paper: best factors differ per program — pSCC 75, pArray 4096 (20% over 64 on 64 processors),\n"
             "LU needs aggregation but gains nothing past a modest factor.\n");
  bool verified = rc == 0;
  json const out = json::object{{"benchmark", "fig7_aggregation"},
                                {"paper", "ARMI (STAPL) Fig. 7: application performance vs aggregation"},
                                {"backend", armi::effective_backend(cfg)},
                                {"locations", locations},
                                {"reps", s.reps},
                                {"buffer_bytes", cfg.buffer_bytes},
                                {"machine", armi_bench::machine_context()},
                                {"rows", rows},
                                {"verified", verified}};
  if (!armi_bench::write_json(json_path, out)) return 1;
  return rc;
}
