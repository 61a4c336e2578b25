// overlap — an allreduce overlapped with computation: opaque_allreduce_rmi
// against allreduce_rmi (issue 39's target: time close to max(compute,
// collective), not their sum).
//
// Every location but 0 computes for --delay-ms before it joins the
// allreduce, so location 0's allreduce_rmi waits that long: the collective
// takes about --delay-ms there.  Location 0 has --compute-ms of work of its
// own that does not need the result.  Timed on location 0, from a barrier:
//
//   collective alone   allreduce_rmi, nothing else
//   compute alone      the work, no armi call
//   blocking           allreduce_rmi, then the work: the sum
//   overlapped         opaque_allreduce_rmi, the work (rmi_poll every
//                      --poll-us, so the collective progresses), then get()
//
// The work is a busy loop on the clock (it stands for computation, and
// keeps a core as computation would).  The table gives medians over --reps
// and overlapped / max(compute, collective), the figure that should be
// close to 1, and blocking / overlapped.
//
//   ./overlap --armi-locations=2
//   mpiexec -bind-to core -n 2 ./overlap --armi-backend=mpi
//
// Exit status: 0 if every allreduce gave the right sum, 1 if not, 2 on a usage error.

#include "bench_common.hpp"

#include <armi/armi.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

using armi_bench::json;

struct setup {
  double compute_ms = 20;
  double delay_ms = 20;
  std::uint64_t poll_us = 50;
  std::uint64_t reps = 5;
};

class contribution : public armi::p_object {
 public:
  std::uint64_t value() const { return armi::get_location_id() + 1; }
};

// Busy for `ms` milliseconds; with polling, calls rmi_poll every poll_us.
void work(double ms, std::uint64_t poll_us, bool polling) {
  std::int64_t const start = armi_bench::now_ns();
  std::int64_t const end = start + static_cast<std::int64_t>(ms * 1e6);
  std::int64_t next_poll = start + static_cast<std::int64_t>(poll_us) * 1000;
  volatile std::uint64_t sink = 0;
  for (std::int64_t now = start; now < end; now = armi_bench::now_ns()) {
    for (int i = 0; i < 200; ++i) sink = sink + static_cast<std::uint64_t>(i) * 2654435761u;
    if (polling && now >= next_poll) {
      armi::rmi_poll();
      next_poll = now + static_cast<std::int64_t>(poll_us) * 1000;
    }
  }
}

struct times {
  std::vector<double> collective, compute, blocking, overlapped;  // ms, location 0
};

}  // namespace

int main(int argc, char** argv) {
  armi::config cfg;
  if (int const code = armi_bench::take_armi_options(argc, argv, cfg); code >= 0) return code;
  if (cfg.locations == 0 && armi::effective_backend(cfg) == "threads") cfg.locations = 2;
  setup s;
  std::string json_path;
  try {
    armi_bench::flags f(argc, argv);
    s.compute_ms = static_cast<double>(f.get_uint("compute-ms", 20));
    s.delay_ms = static_cast<double>(f.get_uint("delay-ms", 20));
    s.poll_us = f.get_uint("poll-us", s.poll_us);
    s.reps = f.get_uint("reps", s.reps);
    json_path = f.get_string("json", "");
    f.finish();
    if (s.reps == 0) throw armi_bench::usage_error("--reps must be at least 1");
    if (s.poll_us == 0) throw armi_bench::usage_error("--poll-us must be at least 1");
  } catch (armi_bench::usage_error const& e) {
    std::fprintf(stderr, "overlap: %s\n", e.what());
    return 2;
  }

  times t;
  unsigned locations = 0;
  int const rc = armi::execute(cfg, [&]() -> int {
    contribution c;
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    std::uint64_t const want = std::uint64_t{n} * (n + 1) / 2;
    auto const h = c.get_rmi_handle();
    bool ok = true;
    auto const late = [&] {
      if (me != 0) work(s.delay_ms, s.poll_us, false);
    };
    auto const timed = [&](auto&& body) {
      armi::rmi_fence();
      std::int64_t const t0 = armi_bench::now_ns();
      body();
      double const ms = static_cast<double>(armi_bench::now_ns() - t0) * 1e-6;
      armi::rmi_fence();
      return ms;
    };
    for (std::uint64_t rep = 0; rep < s.reps; ++rep) {
      double const collective = timed([&] {
        late();
        ok &= armi::allreduce_rmi(h, &contribution::value, std::plus<>{}) == want;
      });
      double const compute = timed([&] {
        if (me == 0) work(s.compute_ms, s.poll_us, false);
      });
      double const blocking = timed([&] {
        late();
        ok &= armi::allreduce_rmi(h, &contribution::value, std::plus<>{}) == want;
        if (me == 0) work(s.compute_ms, s.poll_us, false);
      });
      double const overlapped = timed([&] {
        late();
        auto sum = armi::opaque_allreduce_rmi(h, &contribution::value, std::plus<>{});
        if (me == 0) work(s.compute_ms, s.poll_us, true);
        ok &= sum.get() == want;
      });
      if (me == 0) {
        t.collective.push_back(collective);
        t.compute.push_back(compute);
        t.blocking.push_back(blocking);
        t.overlapped.push_back(overlapped);
        locations = n;
      }
    }
    return ok ? 0 : 1;
  });
  if (locations == 0) return rc;

  double const collective = armi_bench::median(t.collective), compute = armi_bench::median(t.compute);
  double const blocking = armi_bench::median(t.blocking), overlapped = armi_bench::median(t.overlapped);
  fmt::print("overlap: allreduce with {} ms of computation on location 0, the others {} ms late; {} locations ({} "
             "backend), poll every {} us, median of {}\n",
             s.compute_ms, s.delay_ms, locations, armi::effective_backend(cfg), s.poll_us, s.reps);
  fmt::print("  {:<34} {:>10}\n", "location 0", "ms");
  fmt::print("  {:<34} {:>10.2f}\n", "collective alone (allreduce_rmi)", collective);
  fmt::print("  {:<34} {:>10.2f}\n", "compute alone", compute);
  fmt::print("  {:<34} {:>10.2f}\n", "blocking: allreduce_rmi, compute", blocking);
  fmt::print("  {:<34} {:>10.2f}\n", "overlapped: opaque_allreduce_rmi", overlapped);
  double const ideal = std::max(collective, compute);
  fmt::print("  overlapped / max(compute, collective) = {:.2f}x   (sum would be {:.2f}x)\n", overlapped / ideal,
             (collective + compute) / ideal);
  fmt::print("  blocking / overlapped = {:.2f}x{}\n", blocking / overlapped, rc == 0 ? "" : "  ** WRONG SUM **");
  json const out = json::object{{"benchmark", "overlap"},
                                {"backend", armi::effective_backend(cfg)},
                                {"locations", locations},
                                {"compute_ms", s.compute_ms},
                                {"delay_ms", s.delay_ms},
                                {"poll_us", s.poll_us},
                                {"reps", s.reps},
                                {"collective_ms", collective},
                                {"compute_only_ms", compute},
                                {"blocking_ms", blocking},
                                {"overlapped_ms", overlapped},
                                {"overlapped_over_max", overlapped / ideal},
                                {"machine", armi_bench::machine_context()},
                                {"verified", rc == 0}};
  if (!armi_bench::write_json(json_path, out)) return 1;
  return rc;
}
