// Graph500's statistics and output lines, shared by examples/graph500_bfs
// and benchmarks/graph500_mpi_bfs.
//
// The reference implementation prints `key: value` lines: the run's shape,
// then for the BFS times, the edge counts (nedge), the TEPS and the
// validation times the order statistics min, first quartile, median, third
// quartile, max (quartiles as the mean of the two middle elements), mean and
// sample standard deviation.  TEPS are taken from the seconds per edge,
// time / nedge: min_TEPS = 1 / max(seconds per edge), ...,
// harmonic_mean_TEPS = 1 / mean(seconds per edge) (the harmonic mean of the
// TEPS), harmonic_stddev_TEPS = stddev / (mean^2 sqrt(n - 1)) of the seconds
// per edge (Norris's standard error of a harmonic mean, as the
// specification gives it).
//
// Examples and benchmarks only; not part of armi's API.
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace graph500_output {

struct statistics {
  double min = 0, first_quartile = 0, median = 0, third_quartile = 0, max = 0, mean = 0, stddev = 0;
};

// The reference's order statistics, mean and sample standard deviation of x
// (not empty).
inline statistics statistics_of(std::vector<double> x) {
  statistics s;
  std::size_t const n = x.size();
  if (n == 0) return s;
  double sum = 0;
  for (double v : x) sum += v;
  s.mean = sum / static_cast<double>(n);
  double sq = 0;
  for (double v : x) sq += (v - s.mean) * (v - s.mean);
  s.stddev = n > 1 ? std::sqrt(sq / static_cast<double>(n - 1)) : 0.0;
  std::sort(x.begin(), x.end());
  s.min = x.front();
  s.first_quartile = (x[(n - 1) / 4] + x[n / 4]) * 0.5;
  s.median = (x[(n - 1) / 2] + x[n / 2]) * 0.5;
  s.third_quartile = (x[n - 1 - (n - 1) / 4] + x[n - 1 - n / 4]) * 0.5;
  s.max = x.back();
  return s;
}

// One Graph500 run: its shape and, per search key, the BFS time (seconds),
// the edges of the key's component (nedge) and the validation time.
struct run {
  unsigned scale = 0;
  std::uint64_t edge_factor = 0;
  std::uint64_t processes = 0;
  double graph_generation = 0;
  double construction_time = 0;
  std::vector<double> bfs_times, nedges, validate_times;
};

// The seconds per edge of each search.
inline std::vector<double> seconds_per_edge(run const& r) {
  std::vector<double> out;
  for (std::size_t i = 0; i < r.bfs_times.size(); ++i) out.push_back(r.bfs_times[i] / r.nedges[i]);
  return out;
}

// The harmonic mean of the TEPS: 1 / mean(seconds per edge).
inline double harmonic_mean_teps(run const& r) {
  return r.bfs_times.empty() ? 0.0 : 1.0 / statistics_of(seconds_per_edge(r)).mean;
}

// Prints r as the reference implementation does; `prefix` goes before each
// line (empty for the reference's exact form).
inline void print(run const& r, std::FILE* out, std::string const& prefix = "") {
  // Values start in column 33, as the reference's; its harmonic mean line
  // carries a "!  " marker before the value.
  auto line = [&](std::string const& key, std::string const& value) {
    fmt::print(out, "{}{:<{}}{}\n", prefix, key + ":", value.starts_with("!") ? 29 : 32, value);
  };
  auto g = [](double v) { return fmt::format("{:g}", v); };
  auto g11 = [](double v) { return fmt::format("{:.11g}", v); };
  std::size_t const n = r.bfs_times.size();
  line("SCALE", std::to_string(r.scale));
  line("edgefactor", std::to_string(r.edge_factor));
  line("NBFS", std::to_string(n));
  line("graph_generation", g(r.graph_generation));
  line("num_mpi_processes", std::to_string(r.processes));
  line("construction_time", g(r.construction_time));
  if (n == 0) return;
  auto const t = statistics_of(r.bfs_times);
  line("bfs  min_time", g(t.min));
  line("bfs  firstquartile_time", g(t.first_quartile));
  line("bfs  median_time", g(t.median));
  line("bfs  thirdquartile_time", g(t.third_quartile));
  line("bfs  max_time", g(t.max));
  line("bfs  mean_time", g(t.mean));
  line("bfs  stddev_time", g(t.stddev));
  auto const e = statistics_of(r.nedges);
  line("min_nedge", g11(e.min));
  line("firstquartile_nedge", g11(e.first_quartile));
  line("median_nedge", g11(e.median));
  line("thirdquartile_nedge", g11(e.third_quartile));
  line("max_nedge", g11(e.max));
  line("mean_nedge", g11(e.mean));
  line("stddev_nedge", g11(e.stddev));
  auto const s = statistics_of(seconds_per_edge(r));
  line("bfs  min_TEPS", g(1 / s.max));
  line("bfs  firstquartile_TEPS", g(1 / s.third_quartile));
  line("bfs  median_TEPS", g(1 / s.median));
  line("bfs  thirdquartile_TEPS", g(1 / s.first_quartile));
  line("bfs  max_TEPS", g(1 / s.min));
  line("bfs  harmonic_mean_TEPS", "!  " + g(1 / s.mean));
  line("bfs  harmonic_stddev_TEPS",
       g(n > 1 ? s.stddev / (s.mean * s.mean * std::sqrt(static_cast<double>(n - 1))) : 0.0));
  if (r.validate_times.size() != n) return;
  auto const v = statistics_of(r.validate_times);
  line("bfs  min_validate", g(v.min));
  line("bfs  firstquartile_validate", g(v.first_quartile));
  line("bfs  median_validate", g(v.median));
  line("bfs  thirdquartile_validate", g(v.third_quartile));
  line("bfs  max_validate", g(v.max));
  line("bfs  mean_validate", g(v.mean));
  line("bfs  stddev_validate", g(v.stddev));
}

}  // namespace graph500_output
