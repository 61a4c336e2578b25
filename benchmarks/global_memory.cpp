// global_memory — Split-C's micro-benchmarks (the CC++ vs Split-C paper;
// MRPC Table 8's Split-C columns) with armi's one-sided operations, each
// next to a sync_rmi doing the same access in the same run, and a histogram
// of random increments with fetch_add next to async_rmi.
//
// Rows, timed on location 0 against location 1 (a round trip each, emulated
// microseconds on sp2, wall-clock microseconds elsewhere):
//   GP read            rget(p).get() of one double     | sync_rmi returning it
//   GP write           rput(p, v).get()                | sync_rmi storing it
//   bulk read 20       rget(p, span of 20).get()       | sync_rmi returning 20 doubles
//   bulk write 20      rput(p, span of 20).get()       | sync_rmi taking 20 doubles
//   prefetch 20        20 rget(p + i), then 20 get()   | 20 sync_rmi in a row
//   fetch_add          fetch_add(p, 1).get()           | sync_rmi adding and returning
// with the paper's Split-C and CC++/MRPC figures (SP2, Table 8 of the MRPC
// paper: GP 2-word R/W 57 and 92 us, BulkRead 40-word 75 and 177, BulkWrite
// 40-word 74 and 154; the prefetch figures are only in a plot, not given).
//
// Histogram: --updates increments in all (default 10 M), each location an
// equal share, to uniformly random bins of a histogram of --bins bins per
// location: fetch_add with the futures dropped, then a fence, against
// async_rmi to the owner's add, then a fence; both verified.
//
//   ./global_memory --armi-backend=sp2 --armi-aggregation=1
//   mpiexec -n 2 ./global_memory --armi-backend=mpi
//   ./global_memory                                 (threads, 2 locations)
//
// Exit status: 0 when every value read back and every histogram count
// checked out, 1 otherwise, 2 on a usage error.

#include "bench_common.hpp"

#include <armi/armi.hpp>
#if ARMI_HAS_SP2
#include <armi/backend/sp2/am.hpp>
#endif
#include <fmt/core.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace {

using armi_bench::json;
using doubles20 = std::array<double, 20>;

// The same accesses as the one-sided operations, as methods run at the owner.
class owner_side : public armi::p_object {
 public:
  explicit owner_side(armi::global_array<double>& a) : m_a(a) {}
  double read(std::uint64_t i) const { return m_a.local_data()[i]; }
  void write(std::uint64_t i, double v) { m_a.local_data()[i] = v; }
  doubles20 read20(std::uint64_t i) const {
    doubles20 out;
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = m_a.local_data()[i + k];
    return out;
  }
  void write20(std::uint64_t i, doubles20 const& v) {
    for (std::size_t k = 0; k < v.size(); ++k) m_a.local_data()[i + k] = v[k];
  }
  double add(std::uint64_t i, double v) {
    double const old = m_a.local_data()[i];
    m_a.local_data()[i] = old + v;
    return old;
  }

 private:
  armi::global_array<double>& m_a;
};

class histogram : public armi::p_object {
 public:
  explicit histogram(std::size_t bins) : m_counts(bins) {}
  void add(std::uint64_t bin) { ++m_counts[bin]; }
  std::uint64_t total() const {
    std::uint64_t s = 0;
    for (auto c : m_counts) s += c;
    return s;
  }
  void clear() { std::fill(m_counts.begin(), m_counts.end(), 0); }

 private:
  std::vector<std::uint64_t> m_counts;
};

struct row {
  std::string name;
  double one_sided_us = 0, rmi_us = 0;
  double paper_splitc_us = -1, paper_ccpp_us = -1;
};

struct results {
  std::vector<row> rows;
  double hist_fetch_add_s = 0, hist_async_s = 0;
  unsigned locations = 0;
  bool emulated = false;
};

}  // namespace

int main(int argc, char** argv) {
  armi::config cfg;
  if (int const code = armi_bench::take_armi_options(argc, argv, cfg); code >= 0) return code;
  std::string const backend = armi::effective_backend(cfg);
  if (cfg.locations == 0 && (backend == "threads" || backend == "sp2")) cfg.locations = 2;
  std::uint64_t calls = 2000, updates = 10'000'000, bins = 4096;
  std::string json_path;
  try {
    armi_bench::flags f(argc, argv);
    calls = f.get_uint("calls", calls);
    updates = f.get_uint("updates", updates);
    bins = f.get_uint("bins", bins);
    json_path = f.get_string("json", "");
    f.finish();
    if (calls == 0 || bins == 0) throw armi_bench::usage_error("--calls and --bins must be at least 1");
  } catch (armi_bench::usage_error const& e) {
    std::fprintf(stderr,
                 "global_memory: %s\nusage: global_memory [--calls=N] [--updates=N] [--bins=N] [--json=FILE] "
                 "[--armi-* options]\n",
                 e.what());
    return 2;
  }
  bool const emulated = backend == "sp2";
  auto const clock_ns = [emulated]() -> std::int64_t {
#if ARMI_HAS_SP2
    if (emulated) return armi::detail::sp2::current_clock_ns();
#endif
    return armi_bench::now_ns();
  };

  results r;
  r.emulated = emulated;
  int const rc = armi::execute(cfg, [&]() -> int {
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    if (n < 2) {
      if (me == 0) std::fprintf(stderr, "global_memory: needs at least 2 locations\n");
      return 2;
    }
    bool ok = true;
    armi::global_array<double> a(64, 0.0);
    owner_side o(a);
    if (me == 1)
      for (auto& x : a.local_data()) x = 7.0;  // what the timed gets read
    armi::rmi_fence();
    auto const h = o.get_rmi_handle();
    if (me == 0) {
      auto const p = a.pointer(1, 0);
      auto measure = [&](std::string name, double splitc, double ccpp, auto&& one_sided, auto&& rmi) {
        auto time = [&](auto&& op) {
          for (std::uint64_t i = 0; i < calls / 10 + 1; ++i) op();  // warm-up
          std::int64_t const t0 = clock_ns();
          for (std::uint64_t i = 0; i < calls; ++i) op();
          return double(clock_ns() - t0) / 1e3 / double(calls);
        };
        double const os = time(one_sided);
        double const rm = time(rmi);
        r.rows.push_back({std::move(name), os, rm, splitc, ccpp});
      };
      double v = 1.0;
      measure("GP read (double)", 57, 92, [&] { ok &= armi::rget(p + 3).get() == 7.0; },
              [&] { ok &= armi::sync_rmi(1, h, &owner_side::read, std::uint64_t{3}) == 7.0; });
      measure("GP write (double)", 57, 92, [&] { armi::rput(p + 4, v += 1).get(); },
              [&] { armi::sync_rmi(1, h, &owner_side::write, std::uint64_t{4}, v += 1); });
      std::vector<double> buf(20, 7.0);
      doubles20 arr;
      arr.fill(7.0);
      measure(
          "bulk read 20 doubles", 75, 177,
          [&] {
            armi::rget(p + 10, std::span<double>(buf)).get();
            ok &= buf[19] == 7.0;
          },
          [&] { ok &= armi::sync_rmi(1, h, &owner_side::read20, std::uint64_t{10})[19] == 7.0; });
      measure(
          "bulk write 20 doubles", 74, 154, [&] { armi::rput(p + 30, std::span<double const>(buf)).get(); },
          [&] { armi::sync_rmi(1, h, &owner_side::write20, std::uint64_t{30}, arr); });
      std::vector<armi::future<double>> pre(20);
      measure(
          "prefetch 20 doubles", -1, -1,
          [&] {
            for (std::size_t k = 0; k < 20; ++k) pre[k] = armi::rget(p + 10 + static_cast<std::int64_t>(k));
            for (auto& f : pre) ok &= f.get() == 7.0;
          },
          [&] {
            for (std::uint64_t k = 0; k < 20; ++k) ok &= armi::sync_rmi(1, h, &owner_side::read, 10 + k) == 7.0;
          });
      measure("fetch_add (double)", -1, -1, [&] { (void)armi::fetch_add(p + 50, 1.0).get(); },
              [&] { (void)armi::sync_rmi(1, h, &owner_side::add, std::uint64_t{50}, 1.0); });
    }
    armi::rmi_fence();
    if (me == 1) ok &= a.local_data()[50] == 7.0 + 2.0 * double(calls + calls / 10 + 1);

    // Histogram: random increments, fetch_add against async_rmi.
    std::uint64_t const share = updates / n + (me < updates % n ? 1 : 0);
    armi::global_array<std::uint64_t> gh(bins, 0);
    histogram rh(bins);
    armi::rmi_fence();
    auto const hh = rh.get_rmi_handle();
    auto run = [&](auto&& increment) {
      armi_bench::splitmix64 rng{0x9e37ULL + me};
      armi::rmi_fence();
      std::int64_t const t0 = clock_ns();
      for (std::uint64_t i = 0; i < share; ++i) {
        std::uint64_t const x = rng();
        increment(static_cast<armi::location_id>(x % n), (x >> 32) % bins);
      }
      armi::rmi_fence();
      return double(clock_ns() - t0) / 1e9;
    };
    double const fa = run([&](armi::location_id owner, std::uint64_t bin) {
      (void)armi::fetch_add(gh.pointer(owner, bin), std::uint64_t{1});
    });
    double const as = run([&](armi::location_id owner, std::uint64_t bin) { armi::async_rmi(owner, hh, &histogram::add, bin); });
    if (me == 0) {
      ok &= armi::reduce_rmi(hh, &histogram::total, std::plus<>{}) == updates;  // async_rmi's histogram
      std::uint64_t fetch_total = 0;
      for (armi::location_id d = 0; d < n; ++d) {
        std::vector<std::uint64_t> counts(bins);
        armi::rget(gh.pointer(d, 0), std::span<std::uint64_t>(counts)).get();
        for (auto c : counts) fetch_total += c;
      }
      ok &= fetch_total == updates;
      r.hist_fetch_add_s = fa;
      r.hist_async_s = as;
      r.locations = n;
    }
    armi::rmi_fence();
    return ok ? 0 : 1;
  });
  if (r.locations == 0) return rc;  // a process without location 0 (mpi): it reports nothing

  fmt::print("global_memory: one-sided operations vs sync_rmi, location 0 -> 1; {} backend, {} locations, "
             "aggregation {}, {} calls/row, {} us\n",
             backend, r.locations, armi_bench::aggregation_text(cfg.aggregation), calls,
             emulated ? "emulated SP2" : "wall-clock");
  fmt::print("{:<24} {:>12} {:>12} {:>8} {:>14} {:>14}\n", "", "one-sided", "sync_rmi", "ratio", "paper Split-C",
             "paper CC++");
  auto fig = [](double v) { return v < 0 ? std::string("-") : fmt::format("{:.0f}", v); };
  json::array rows;
  for (auto const& x : r.rows) {
    fmt::print("{:<24} {:>12.2f} {:>12.2f} {:>8.2f} {:>14} {:>14}\n", x.name, x.one_sided_us, x.rmi_us,
               x.one_sided_us / x.rmi_us, fig(x.paper_splitc_us), fig(x.paper_ccpp_us));
    rows.push_back(json::object{{"name", x.name},
                                {"one_sided_us", x.one_sided_us},
                                {"sync_rmi_us", x.rmi_us},
                                {"ratio", x.one_sided_us / x.rmi_us},
                                {"paper_splitc_us", x.paper_splitc_us < 0 ? json() : json(x.paper_splitc_us)},
                                {"paper_ccpp_us", x.paper_ccpp_us < 0 ? json() : json(x.paper_ccpp_us)}});
  }
  fmt::print("histogram: {} random increments over {} locations x {} bins ({} s)\n", updates, r.locations, bins,
             emulated ? "emulated" : "wall-clock");
  fmt::print("  {:<34} {:>10.3f} s  {:>8.1f} ns/update\n", "fetch_add (futures dropped), fence", r.hist_fetch_add_s,
             r.hist_fetch_add_s * 1e9 / double(updates));
  fmt::print("  {:<34} {:>10.3f} s  {:>8.1f} ns/update\n", "async_rmi to the owner, fence", r.hist_async_s,
             r.hist_async_s * 1e9 / double(updates));
  fmt::print("  fetch_add / async_rmi = {:.2f}x{}\n", r.hist_fetch_add_s / r.hist_async_s,
             rc == 0 ? "" : "  ** A VALUE OR COUNT WAS WRONG **");
  json const out = json::object{{"benchmark", "global_memory"},
                                {"backend", backend},
                                {"locations", r.locations},
                                {"emulated_clock", emulated},
                                {"calls", calls},
                                {"rows", rows},
                                {"histogram_updates", updates},
                                {"histogram_bins", bins},
                                {"histogram_fetch_add_s", r.hist_fetch_add_s},
                                {"histogram_async_rmi_s", r.hist_async_s},
                                {"machine", armi_bench::machine_context()},
                                {"verified", rc == 0}};
  if (!armi_bench::write_json(json_path, out)) return 1;
  return rc;
}
