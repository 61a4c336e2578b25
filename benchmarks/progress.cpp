// progress — --armi-progress=poll against --armi-progress=thread, both in
// this run (issue 39's targets), on location 0 and 1 of --armi-locations
// (threads) or of the ranks (mpiexec, --armi-backend=mpi):
//
//   served while computing  location 1 computes for --compute-ms without an
//                           armi call; --head-ms after it starts, location 0
//                           sends it a sync_rmi and times the answer.  poll:
//                           about compute - head; thread: about one
//                           --armi-progress-interval.
//   sync_rmi round trip     location 0 makes --trips sync_rmis to 1, which
//                           waits in rmi_fence (it polls: the communication
//                           thread has nothing to do); us per round trip.
//   message rate            every location sends --messages async_rmis to the
//                           next, then fences; million requests/s overall.
//
// The last two are the thread's cost when every location polls anyway: the
// ratio thread / poll should be close to 1.  Medians over --reps.
//
//   ./progress --armi-locations=2
//   mpiexec -bind-to core -n 2 ./progress --armi-backend=mpi
//
// Exit status: 0 if every answer was right, 1 if not, 2 on a usage error.

#include "bench_common.hpp"

#include <armi/armi.hpp>

#include <fmt/core.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace {

using armi_bench::json;

struct setup {
  std::uint64_t compute_ms = 200;
  std::uint64_t head_ms = 10;
  std::uint64_t trips = 20000;
  std::uint64_t messages = 1'000'000;
  std::uint64_t reps = 3;
};

class peer : public armi::p_object {
 public:
  std::uint64_t echo(std::uint64_t x) const { return x + 1; }
  void add(std::uint64_t x) { m_sum += x; }

 private:
  std::uint64_t m_sum = 0;
};

// Busy for `ms` milliseconds without an armi call (stands for computation).
void compute(std::uint64_t ms) {
  std::int64_t const end = armi_bench::now_ns() + static_cast<std::int64_t>(ms) * 1'000'000;
  volatile std::uint64_t sink = 0;
  while (armi_bench::now_ns() < end)
    for (int i = 0; i < 200; ++i) sink = sink + static_cast<std::uint64_t>(i) * 2654435761u;
}

struct measures {
  double served_ms = 0, trip_us = 0, rate_mps = 0;
};

// One run of the three measures under cfg (out: on location 0's process);
// false if an answer was wrong or the run failed.
bool measure(armi::config const& cfg, setup const& s, measures& out, unsigned& locations) {
  std::vector<double> served, trip, rate;
  int const rc = armi::execute(cfg, [&]() -> int {
    peer p;
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = p.get_rmi_handle();
    bool ok = true;
    for (std::uint64_t rep = 0; rep < s.reps; ++rep) {
      armi::rmi_fence();
      if (me == 1) compute(s.compute_ms);
      if (me == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(s.head_ms));
        std::int64_t const t0 = armi_bench::now_ns();
        ok &= armi::sync_rmi(1, h, &peer::echo, rep) == rep + 1;
        served.push_back(static_cast<double>(armi_bench::now_ns() - t0) * 1e-6);
      }
      armi::rmi_fence();
      if (me == 0) {
        std::int64_t const t0 = armi_bench::now_ns();
        for (std::uint64_t i = 0; i < s.trips; ++i) ok &= armi::sync_rmi(1, h, &peer::echo, i) == i + 1;
        trip.push_back(static_cast<double>(armi_bench::now_ns() - t0) * 1e-3 / static_cast<double>(s.trips));
      }
      armi::rmi_fence();
      std::int64_t const t0 = armi_bench::now_ns();
      for (std::uint64_t i = 0; i < s.messages; ++i) armi::async_rmi((me + 1) % n, h, &peer::add, i);
      armi::rmi_fence();
      if (me == 0)
        rate.push_back(static_cast<double>(s.messages * n) * 1e3 / static_cast<double>(armi_bench::now_ns() - t0));
    }
    if (me == 0) locations = n;
    return ok ? 0 : 1;
  });
  if (!served.empty()) out = {armi_bench::median(served), armi_bench::median(trip), armi_bench::median(rate)};
  return rc == 0;
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
    s.compute_ms = f.get_uint("compute-ms", s.compute_ms);
    s.head_ms = f.get_uint("head-ms", s.head_ms);
    s.trips = f.get_uint("trips", s.trips);
    s.messages = f.get_uint("messages", s.messages);
    s.reps = f.get_uint("reps", s.reps);
    json_path = f.get_string("json", "");
    f.finish();
    if (s.reps == 0 || s.trips == 0) throw armi_bench::usage_error("--reps and --trips must be at least 1");
    if (s.head_ms >= s.compute_ms) throw armi_bench::usage_error("--head-ms must be less than --compute-ms");
  } catch (armi_bench::usage_error const& e) {
    std::fprintf(stderr, "progress: %s\n", e.what());
    return 2;
  }

  std::array<char const*, 2> const modes{"poll", "thread"};
  std::array<measures, 2> m;
  unsigned locations = 0;
  bool ok = true;
  for (std::size_t i = 0; i < modes.size(); ++i) {
    armi::config c = cfg;
    c.progress = modes[i];
    ok &= measure(c, s, m[i], locations);
  }
  if (locations == 0) return ok ? 0 : 1;  // not location 0's process
  if (locations < 2) {
    std::fprintf(stderr, "progress: needs at least 2 locations\n");
    return 2;
  }

  fmt::print("progress: --armi-progress=poll against thread ({} locations, {} backend, interval {} us), median of "
             "{}\n",
             locations, armi::effective_backend(cfg), cfg.progress_interval_ns / 1000, s.reps);
  fmt::print("  {:<46} {:>10} {:>10} {:>13}\n", "", "poll", "thread", "thread/poll");
  auto row = [](char const* what, double poll, double thread) {
    fmt::print("  {:<46} {:>10.2f} {:>10.2f} {:>12.2f}x\n", what, poll, thread, thread / poll);
  };
  std::string const served = fmt::format("sync_rmi to a location computing {} ms (ms)", s.compute_ms);
  row(served.c_str(), m[0].served_ms, m[1].served_ms);
  row("sync_rmi round trip, both polling (us)", m[0].trip_us, m[1].trip_us);
  row("message rate, all locations (M requests/s)", m[0].rate_mps, m[1].rate_mps);
  if (!ok) fmt::print("  ** A WRONG ANSWER **\n");

  auto mode_json = [](measures const& x) {
    return json::object{{"served_ms", x.served_ms}, {"round_trip_us", x.trip_us}, {"rate_mps", x.rate_mps}};
  };
  json const out = json::object{{"benchmark", "progress"},
                                {"backend", armi::effective_backend(cfg)},
                                {"locations", locations},
                                {"compute_ms", s.compute_ms},
                                {"head_ms", s.head_ms},
                                {"interval_us", cfg.progress_interval_ns / 1000},
                                {"reps", s.reps},
                                {"poll", mode_json(m[0])},
                                {"thread", mode_json(m[1])},
                                {"machine", armi_bench::machine_context()},
                                {"verified", ok}};
  if (!armi_bench::write_json(json_path, out)) return 1;
  return ok ? 0 : 1;
}
