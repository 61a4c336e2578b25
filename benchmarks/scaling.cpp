// scaling — how the collectives' latency grows with the number of
// locations P (issue 36), under each tree arity given, against a star (every
// member sends to the first: the protocol before trees) in the same run.
//
//   allreduce   allreduce_rmi(h, value, std::plus<>) on every location
//   reduce      reduce_rmi(h, value, std::plus<>) from location 0 (one-sided)
//   broadcast   broadcast_rmi(h, stamp, t) from location 0, then a fence; its
//               latency is from t, the caller's clock at the call, to the
//               last member's clock when stamp ran (the emulated clocks share
//               one time base, as threads' wall clocks do)
//   fence       rmi_fence()
//
// Each is called once, then --calls times in a row, timed; its latency is
// the largest over the locations of (that location's time for the calls) /
// calls (broadcast: the mean over the calls of the largest delay).  On the sp2 backend the time is the node's emulated clock (the
// SP2's cost model: what the machine would have taken, whatever this
// machine's cores); on threads it is wall time, with P threads sharing this
// machine's cores (so past a few locations it measures the scheduler too).
//
// Target (issue 36, sp2): broadcast_rmi, reduce_rmi and allreduce_rmi each
// at 1024 nodes within 4x its time at 16 nodes under the default arity (a
// star takes about 64x).
//
//   ./scaling [--locations=4,16,64,256,1024] [--arities=4,star] [--calls=N] [--json=FILE] [--armi-* flags]
//
// Every result is checked (the sums); exit status 0 if all checked out
// (target met or not), 1 if one did not, 2 on a usage error.

#include "bench_common.hpp"

#include <armi/armi.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using armi_bench::json;

constexpr double target_ratio = 4.0;
constexpr std::uint64_t target_small = 16, target_large = 1024;
constexpr std::uint64_t star = 0;  // in --arities: P - 1 children at the root

// Emulated ns on sp2, wall ns otherwise.
std::int64_t clock_ns() {
  std::int64_t const emulated = armi::detail::sp2::current_clock_ns();
  return emulated >= 0 ? emulated : armi_bench::now_ns();
}

class member : public armi::p_object {
 public:
  std::uint64_t value() const { return armi::get_location_id() + 1; }
  void stamp(std::int64_t sent) {
    delays.push_back(static_cast<double>(clock_ns() - sent));
  }
  std::vector<double> delays;  // of each broadcast, in order
};

struct times {
  double allreduce = 0, reduce = 0, broadcast = 0, fence = 0;  // ns per call, largest over the locations
};
struct max_each {
  std::vector<double> operator()(std::vector<double> a, std::vector<double> const& b) const {
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) a[i] = std::max(a[i], b[i]);
    return a;
  }
};
class delays_of : public armi::p_object {
 public:
  explicit delays_of(std::vector<double> d) : m_d(std::move(d)) {}
  std::vector<double> get() const { return m_d; }

 private:
  std::vector<double> m_d;
};

class slowest : public armi::p_object {
 public:
  explicit slowest(double v) : m_v(v) {}
  double get() const { return m_v; }

 private:
  double m_v;
};
struct max_op {
  double operator()(double a, double b) const { return std::max(a, b); }
};

// One run's measurement, on every location; false if a result was wrong.
bool measure(std::uint64_t calls, times& out) {
  member m;
  auto const h = m.get_rmi_handle();
  std::uint64_t const p = armi::get_num_locations();
  std::uint64_t const expect = p * (p + 1) / 2;
  bool ok = true;
  // The locations leave a fence at different (emulated) times, up to a
  // fence's latency apart: one untimed call first lines them up as closely
  // as the collective itself does.
  auto timed = [&](auto&& body) {
    armi::rmi_fence();
    body();
    std::int64_t const t0 = clock_ns();
    for (std::uint64_t i = 0; i < calls; ++i) body();
    double const mine = static_cast<double>(clock_ns() - t0) / static_cast<double>(calls);
    armi::rmi_fence();
    slowest const s(mine);
    armi::rmi_fence();
    double const worst = armi::allreduce_rmi(s.get_rmi_handle(), &slowest::get, max_op{});
    armi::rmi_fence();
    return worst;
  };
  out.allreduce = timed([&] { ok = ok && armi::allreduce_rmi(h, &member::value, std::plus<>{}) == expect; });
  out.reduce = timed([&] {
    if (armi::get_location_id() == 0) ok = ok && armi::reduce_rmi(h, &member::value, std::plus<>{}) == expect;
  });
  out.fence = timed([] { armi::rmi_fence(); });
  // Broadcast: one call then --calls more, each followed by a fence.
  armi::rmi_fence();
  for (std::uint64_t i = 0; i <= calls; ++i) {
    if (armi::get_location_id() == 0) armi::broadcast_rmi(h, &member::stamp, clock_ns());
    armi::rmi_fence();
  }
  ok = ok && m.delays.size() == calls + 1;
  m.delays.resize(calls + 1);
  delays_of const mine(m.delays);
  armi::rmi_fence();
  std::vector<double> const worst = armi::allreduce_rmi(mine.get_rmi_handle(), &delays_of::get, max_each{});
  for (std::uint64_t i = 1; i <= calls; ++i) out.broadcast += worst[i] / static_cast<double>(calls);
  armi::rmi_fence();
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  armi::config cfg;
  if (int const code = armi_bench::take_armi_options(argc, argv, cfg); code >= 0) return code;

  std::vector<std::uint64_t> counts, arities;
  std::uint64_t calls = 0;
  std::string json_path;
  try {
    armi_bench::flags f(argc, argv);
    counts = f.get_uint_list("locations", {4, 16, 64, 256, 1024});
    std::string const a = f.get_string("arities", "4,star");
    calls = f.get_uint("calls", 20);
    json_path = f.get_string("json", "");
    f.finish();
    for (std::size_t at = 0; at <= a.size();) {
      std::size_t const comma = std::min(a.find(',', at), a.size());
      std::string const item = a.substr(at, comma - at);
      if (item == "star")
        arities.push_back(star);
      else if (!item.empty() && item.find_first_not_of("0123456789") == std::string::npos && std::stoul(item) >= 1)
        arities.push_back(std::stoul(item));
      else
        throw armi_bench::usage_error("--arities: a comma-separated list of arities (1..4096) and 'star'");
      at = comma + 1;
    }
    if (counts.empty() || calls == 0) throw armi_bench::usage_error("--locations and --calls: at least one");
    for (auto l : counts)
      if (l < 1 || l > 4096) throw armi_bench::usage_error("--locations: each count must be in [1, 4096]");
  } catch (armi_bench::usage_error const& e) {
    std::fprintf(stderr, "scaling: %s\n", e.what());
    return 2;
  }

  bool const emulated = cfg.backend == "sp2";
  fmt::print("scaling: collective latency over P locations on {} ({} time), {} calls each, largest over the "
             "locations\n",
             cfg.backend, emulated ? "emulated SP2" : "wall", calls);
  fmt::print("{:>6} {:>7} {:>14} {:>14} {:>14} {:>14}\n", "P", "arity", "allreduce us", "reduce us", "broadcast us",
             "fence us");
  json::array rows;
  // [arity index] the times at target_small and target_large locations.
  std::vector<times> small(arities.size()), large(arities.size());
  for (std::uint64_t p : counts)
    for (std::size_t ai = 0; ai < arities.size(); ++ai) {
      armi::config run_cfg = cfg;
      run_cfg.locations = static_cast<std::uint32_t>(p);
      std::uint64_t const arity = arities[ai] == star ? std::max<std::uint64_t>(p - 1, 1) : arities[ai];
      run_cfg.tree_arity = static_cast<std::uint32_t>(std::min<std::uint64_t>(arity, 4096));
      times t;
      int const rc = armi::execute(run_cfg, [&]() -> int {
        times mine;
        bool const ok = measure(calls, mine);
        if (armi::get_location_id() == 0) t = mine;
        return ok ? 0 : 1;
      });
      if (rc != 0) {
        std::fprintf(stderr, "scaling: FAILED (a result was wrong at P = %lu)\n", static_cast<unsigned long>(p));
        return 1;
      }
      std::string const arity_text = arities[ai] == star ? "star" : std::to_string(arities[ai]);
      fmt::print("{:>6} {:>7} {:>14.1f} {:>14.1f} {:>14.1f} {:>14.1f}\n", p, arity_text, t.allreduce / 1e3,
                 t.reduce / 1e3, t.broadcast / 1e3, t.fence / 1e3);
      std::fflush(stdout);
      if (p == target_small) small[ai] = t;
      if (p == target_large) large[ai] = t;
      rows.push_back(json::object{{"locations", p},
                                  {"arity", arity_text},
                                  {"allreduce_ns", t.allreduce},
                                  {"reduce_ns", t.reduce},
                                  {"broadcast_ns", t.broadcast},
                                  {"fence_ns", t.fence}});
    }

  // Each collective's growth from 16 to 1024 locations, per arity; the
  // target is judged on the emulated clock at the default arity.
  json::array growth;
  bool judged = false, met = true;
  for (std::size_t ai = 0; ai < arities.size(); ++ai) {
    if (small[ai].allreduce <= 0 || large[ai].allreduce <= 0) continue;
    std::string const arity_text = arities[ai] == star ? "star" : std::to_string(arities[ai]);
    bool const is_default = arities[ai] == cfg.tree_arity;
    for (auto [what, field] : {std::pair{"allreduce_rmi", &times::allreduce}, std::pair{"reduce_rmi", &times::reduce},
                               std::pair{"broadcast_rmi", &times::broadcast}, std::pair{"rmi_fence", &times::fence}}) {
      double const ratio = large[ai].*field / small[ai].*field;
      bool const counts = is_default && emulated && std::string_view(what) != "rmi_fence";
      fmt::print("{}, arity {}: {} locations take {:.2f}x the time of {}{}\n", what, arity_text, target_large, ratio,
                 target_small, counts ? (ratio <= target_ratio ? "  (target <= 4x: met)" : "  (target <= 4x: NOT met)")
                                      : "");
      if (counts) {
        judged = true;
        met = met && ratio <= target_ratio;
      }
      growth.push_back(json::object{{"collective", what}, {"arity", arity_text}, {"ratio", ratio}});
    }
  }
  json summary = json::object{{"benchmark", "scaling"},
                              {"what", "collective latency over P locations, tree arities against a star"},
                              {"backend", cfg.backend},
                              {"clock", emulated ? "emulated" : "wall"},
                              {"calls", calls},
                              {"machine", armi_bench::machine_context()},
                              {"rows", rows},
                              {"growth_1024_over_16", growth},
                              {"target", json::object{{"max_ratio", target_ratio},
                                                      {"met", judged ? json(met) : json(nullptr)}}},
                              {"verified", true}};
  return armi_bench::write_json(json_path, summary) ? 0 : 1;
}
