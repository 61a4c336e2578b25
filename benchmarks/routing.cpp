// routing — routed aggregation against direct (issue 36): every location
// sends random 8-byte async_rmi updates, sparse (--sparse per location) and
// dense (--dense), to uniformly random locations, under
// --armi-routing=direct and grid, in the same run, at each P of --locations.
//
// Per run, from --armi-stats' counters summed over the locations:
//   buffers/req   buffers sent per update (every hop's buffers)
//   bytes/req     bytes on the wire per update (every hop's)
//   fwd/req       updates passed on by a location on the way
//   time          from the fence before the updates to the fence after, the
//                 slowest location's: on sp2 its emulated clock (the SP2's
//                 cost model), on threads wall time (P threads on this
//                 machine's cores)
//   KB/location   the heap in use after the updates, with every buffer
//                 still held, less before the run, over P (glibc's
//                 mallinfo2: what the locations hold, whatever malloc
//                 kept from earlier runs)
//
// Targets (issue 36; sp2, 1,024 nodes, --armi-aggregation=64): sparse, grid
// sends at least 4x fewer buffers than direct and finishes at least 2x
// sooner; dense, grid takes at most 1.3x direct's time.
//
//   ./routing [--locations=16,64,256,1024] [--sparse=2000] [--dense=100000]
//             [--routings=direct,grid] [--json=FILE] [--armi-* flags]
//
// Every run is checked (each update arrives once: counts and sums); exit
// status 0 if all checked out (targets met or not), 1 if one did not, 2 on a
// usage error.

#include "bench_common.hpp"

#include <armi/armi.hpp>
#include <fmt/core.h>

#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using armi_bench::json;

constexpr std::uint64_t target_locations = 1024;
constexpr double target_fewer_buffers = 4.0, target_sparse_speedup = 2.0, target_dense_slowdown = 1.3;

std::int64_t clock_ns() {
  std::int64_t const emulated = armi::detail::sp2::current_clock_ns();
  return emulated >= 0 ? emulated : armi_bench::now_ns();
}

// The process's heap bytes in use (small blocks and mmapped ones).
std::uint64_t heap_in_use() {
  struct mallinfo2 const m = ::mallinfo2();
  return m.uordblks + m.hblkhd;
}

class sink : public armi::p_object {
 public:
  void add(std::uint64_t v) {
    sum += v;
    ++count;
  }
  std::uint64_t sum = 0, count = 0;
};

class value_of : public armi::p_object {
 public:
  explicit value_of(std::uint64_t v) : m_v(v) {}
  std::uint64_t get() const { return m_v; }

 private:
  std::uint64_t m_v;
};
// v combined over the locations with op (collective).
template <class Op>
std::uint64_t combined(std::uint64_t v, Op op) {
  value_of const x(v);
  armi::rmi_fence();
  std::uint64_t const t = armi::allreduce_rmi(x.get_rmi_handle(), &value_of::get, op);
  armi::rmi_fence();
  return t;
}
std::uint64_t total(std::uint64_t v) { return combined(v, std::plus<>{}); }
struct max_op {
  std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const { return std::max(a, b); }
};
std::uint64_t largest(std::uint64_t v) { return combined(v, max_op{}); }

struct result {
  double buffers = 0, bytes = 0, forwarded = 0;  // per update, all locations
  double time_ns = 0;                            // slowest location
  double heap_per_location = 0;                  // bytes
};

// One run's updates on every location; false if one was lost or doubled.
bool measure(std::uint64_t updates, std::uint64_t heap_before, result& out) {
  sink s;
  auto const h = s.get_rmi_handle();
  std::uint32_t const p = armi::get_num_locations();
  armi_bench::splitmix64 rng{0x5eed0000ull + armi::get_location_id()};
  auto const& stats = armi::detail::t_location->stats();
  armi::rmi_fence();
  std::uint64_t const buffers0 = stats.buffers_sent, bytes0 = stats.bytes_sent, forwarded0 = stats.requests_forwarded;
  std::int64_t const t0 = clock_ns();
  std::uint64_t sent_sum = 0;
  for (std::uint64_t i = 0; i < updates; ++i) {
    std::uint64_t const v = rng();
    sent_sum += v;
    armi::async_rmi(rng.below(p), h, armi::method<&sink::add>, v);
  }
  armi::rmi_fence();
  std::int64_t const t1 = clock_ns();
  std::uint64_t const buffers = stats.buffers_sent - buffers0, bytes = stats.bytes_sent - bytes0,
                      forwarded = stats.requests_forwarded - forwarded0;
  std::uint64_t const heap = armi::get_location_id() == 0 ? heap_in_use() : 0;
  bool const ok = total(s.count) == updates * p && total(s.sum) == total(sent_sum);
  double const all = static_cast<double>(updates) * p;
  out.buffers = static_cast<double>(total(buffers)) / all;
  out.bytes = static_cast<double>(total(bytes)) / all;
  out.forwarded = static_cast<double>(total(forwarded)) / all;
  out.time_ns = static_cast<double>(largest(static_cast<std::uint64_t>(t1 - t0)));
  out.heap_per_location = heap > heap_before ? static_cast<double>(heap - heap_before) / p : 0.0;
  return ok;
}

std::vector<std::string> split_list(std::string const& text) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at <= text.size();) {
    std::size_t const comma = std::min(text.find(',', at), text.size());
    if (comma > at) out.push_back(text.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  armi::config cfg;
  if (int const code = armi_bench::take_armi_options(argc, argv, cfg); code >= 0) return code;
  if (!armi_bench::aggregation_given(argc, argv)) cfg.aggregation = 64;

  std::vector<std::uint64_t> counts;
  std::uint64_t sparse = 0, dense = 0;
  std::vector<std::string> routings;
  std::string json_path;
  try {
    armi_bench::flags f(argc, argv);
    counts = f.get_uint_list("locations", {16, 64, 256, 1024});
    sparse = f.get_uint("sparse", 2000);
    dense = f.get_uint("dense", 100000);
    routings = split_list(f.get_string("routings", "direct,grid"));
    json_path = f.get_string("json", "");
    f.finish();
    for (auto l : counts)
      if (l < 1 || l > 4096) throw armi_bench::usage_error("--locations: each count must be in [1, 4096]");
    for (auto const& r : routings)
      if (r != "direct" && r != "grid" && r != "node")
        throw armi_bench::usage_error("--routings: a comma-separated list of direct, grid and node");
    if (routings.empty()) throw armi_bench::usage_error("--routings: at least one");
  } catch (armi_bench::usage_error const& e) {
    std::fprintf(stderr, "routing: %s\n", e.what());
    return 2;
  }

  bool const emulated = cfg.backend == "sp2";
  fmt::print("routing: random 8-byte async_rmi updates to uniform destinations on {} ({} time), aggregation {}\n",
             cfg.backend, emulated ? "emulated SP2" : "wall", armi_bench::aggregation_text(cfg.aggregation));
  fmt::print("{:>6} {:>8} {:>9} {:>8} {:>12} {:>10} {:>9} {:>12} {:>12}\n", "P", "updates", "routing", "per loc",
             "buffers/req", "bytes/req", "fwd/req", "time ms", "heap KB/loc");
  json::array rows;
  // (P, updates per location, routing) -> result
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::string>, result> seen;
  for (std::uint64_t p : counts)
    for (std::uint64_t updates : {sparse, dense}) {
      if (updates == 0) continue;
      for (auto const& routing : routings) {
        armi::config run_cfg = cfg;
        run_cfg.locations = static_cast<std::uint32_t>(p);
        run_cfg.routing = routing;
        std::uint64_t const heap_before = heap_in_use();
        result r;
        int const rc = armi::execute(run_cfg, [&]() -> int {
          result mine;
          bool const ok = measure(updates, heap_before, mine);
          if (armi::get_location_id() == 0) r = mine;
          return ok ? 0 : 1;
        });
        if (rc != 0) {
          std::fprintf(stderr, "routing: FAILED (an update was lost or doubled at P = %lu, %s)\n",
                       static_cast<unsigned long>(p), routing.c_str());
          return 1;
        }
        char const* density = updates == sparse ? "sparse" : "dense";
        fmt::print("{:>6} {:>8} {:>9} {:>8} {:>12.4f} {:>10.2f} {:>9.3f} {:>12.3f} {:>12.1f}\n", p, density, routing,
                   updates, r.buffers, r.bytes, r.forwarded, r.time_ns / 1e6, r.heap_per_location / 1024);
        std::fflush(stdout);
        seen[{p, updates, routing}] = r;
        rows.push_back(json::object{{"locations", p},
                                    {"density", density},
                                    {"updates_per_location", updates},
                                    {"routing", routing},
                                    {"buffers_per_request", r.buffers},
                                    {"bytes_per_request", r.bytes},
                                    {"forwarded_per_request", r.forwarded},
                                    {"time_ns", r.time_ns},
                                    {"heap_bytes_per_location", r.heap_per_location}});
      }
    }

  // grid against direct at each P and density; the targets at 1,024 on sp2.
  json::array ratios;
  bool judged = false, met = true;
  for (std::uint64_t p : counts)
    for (std::uint64_t updates : {sparse, dense}) {
      auto const d = seen.find({p, updates, "direct"}), g = seen.find({p, updates, "grid"});
      if (d == seen.end() || g == seen.end() || g->second.buffers <= 0 || d->second.time_ns <= 0) continue;
      double const fewer = d->second.buffers / g->second.buffers, time = g->second.time_ns / d->second.time_ns;
      bool const is_sparse = updates == sparse;
      bool const counts_here = emulated && p == target_locations && cfg.aggregation == 64;
      std::string verdict;
      if (counts_here) {
        bool const ok = is_sparse ? fewer >= target_fewer_buffers && time <= 1.0 / target_sparse_speedup
                                  : time <= target_dense_slowdown;
        judged = true;
        met = met && ok;
        verdict = is_sparse ? fmt::format("  (target >= {}x fewer, >= {}x sooner: {})", target_fewer_buffers,
                                          target_sparse_speedup, ok ? "met" : "NOT met")
                            : fmt::format("  (target <= {}x: {})", target_dense_slowdown, ok ? "met" : "NOT met");
      }
      fmt::print("P = {}, {} ({} per location): grid sends {:.2f}x fewer buffers and takes {:.2f}x direct's time{}\n",
                 p, is_sparse ? "sparse" : "dense", updates, fewer, time, verdict);
      ratios.push_back(json::object{{"locations", p},
                                    {"density", is_sparse ? "sparse" : "dense"},
                                    {"fewer_buffers", fewer},
                                    {"time_ratio", time}});
    }
  json summary = json::object{{"benchmark", "routing"},
                              {"what", "random 8-byte async_rmi updates, routed (grid) against direct"},
                              {"backend", cfg.backend},
                              {"clock", emulated ? "emulated" : "wall"},
                              {"aggregation", armi_bench::aggregation_text(cfg.aggregation)},
                              {"machine", armi_bench::machine_context()},
                              {"rows", rows},
                              {"grid_over_direct", ratios},
                              {"target", json::object{{"fewer_buffers", target_fewer_buffers},
                                                      {"sparse_speedup", target_sparse_speedup},
                                                      {"dense_slowdown", target_dense_slowdown},
                                                      {"met", judged ? json(met) : json(nullptr)}}},
                              {"verified", true}};
  return armi_bench::write_json(json_path, summary) ? 0 : 1;
}
