// A job ends, with its status, soon after its locations return: every rank
// measures from the return of armi::execute to the end of MPI_Finalize (in an
// exit handler registered before armi's, so it runs after it) and fails if
// that took a second or more.  Across 3 or more hosts, MPICH 4.0 + UCX over
// TCP hung in MPI_Finalize in most runs until armi bounded its endpoint
// closes (backend/mpi/ucx_close.hpp); here a hang is the test's timeout.
// Each location sends to every other first, so that every pair of ranks has
// endpoints to close.  `status` makes location 1 return 3, which must be the
// job's status; `compute` keeps location 1 in its own code for 2.5 s, which
// heartbeats of 1 s must not take for a lost host; `long` runs for a minute
// after printing "running" (tests/cluster/faults.sh kills or cuts it off).
// clang-format off
// RUN: threads | --armi-locations=3 | job_end: rank 0 finished in 0\.[0-9]+ s
// MPI_RUN: mpi | 3 --armi-backend=mpi | job_end: rank 0 finished in 0\.[0-9]+ s
// MPI_CASE: mpi_status | 3 --armi-backend=mpi status | job_end: location 1 returns 3
// CLUSTER_RUN: mpi_h2 | 2x1 --armi-backend=mpi | job_end: rank 0 finished in 0\.[0-9]+ s
// CLUSTER_RUN: mpi_h3 | 3x1 --armi-backend=mpi | job_end: rank 0 finished in 0\.[0-9]+ s
// CLUSTER_RUN: mpi_h4 | 4x1 --armi-backend=mpi | job_end: rank 0 finished in 0\.[0-9]+ s
// CLUSTER_RUN: mpi_h4x2 | 4x2 --armi-backend=mpi | job_end: rank 0 finished in 0\.[0-9]+ s
// CLUSTER_RUN: mixed_h4 | 4x1 --armi-backend=mixed --armi-locations=2 | job_end: rank 0 finished in 0\.[0-9]+ s
// CLUSTER_RUN: mixed_h2x2 | 2x2 --armi-backend=mixed --armi-locations=2 | job_end: rank 0 finished in 0\.[0-9]+ s
// CLUSTER_CASE: mpi_h3_status | 3x1 --armi-backend=mpi status | job_end: location 1 returns 3
// CLUSTER_RUN: mpi_h3_compute | 3x1 --armi-backend=mpi --armi-heartbeat=1 compute | job_end: rank 0 finished in 0\.[0-9]+ s
// CLUSTER_RUN: mixed_h2_compute | 2x1 --armi-backend=mixed --armi-locations=2 --armi-heartbeat=1 compute | job_end: rank 0 finished in 0\.[0-9]+ s
// clang-format on
#include <armi/armi.hpp>

#if ARMI_HAS_MPI
#include <mpi.h>
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

using clock_type = std::chrono::steady_clock;
clock_type::time_point g_returned;
int g_rank = 0;

struct counter : armi::p_object {
  void add(int v) { total += v; }
  long total = 0;
};

// Runs after armi's own exit handler, which finalizes MPI.
void report_end() {
  double const s = std::chrono::duration<double>(clock_type::now() - g_returned).count();
  std::printf("job_end: rank %d finished in %.3f s\n", g_rank, s);
  std::fflush(stdout);
  if (s >= 1.0) {
    std::fprintf(stderr, "job_end: rank %d took %.3f s from the return of armi::execute to its exit\n", g_rank, s);
    std::_Exit(2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::atexit(report_end);
  int const code = armi::execute(argc, argv, [](int ac, char** av) {
    std::string const mode = ac > 1 ? av[1] : "";
    counter c;
    auto const h = c.get_rmi_handle();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    for (int round = 0; round < 100; ++round)
      for (armi::location_id d = 0; d < n; ++d) armi::async_rmi(d, h, &counter::add, 1);
    armi::rmi_fence();
    if (c.total != 100 * static_cast<long>(n)) {
      std::printf("job_end: location %u counted %ld, expected %ld\n", me, c.total, 100 * static_cast<long>(n));
      return 1;
    }
    if (mode == "status" && me == 1) {
      std::printf("job_end: location 1 returns 3\n");
      return 3;
    }
    if (mode == "compute") {
      if (me == 1) std::this_thread::sleep_for(std::chrono::milliseconds(2500));
      armi::rmi_fence();
    }
    if (mode == "long") {
      if (me == 0) {
        std::printf("job_end: running\n");
        std::fflush(stdout);
      }
      auto const end = clock_type::now() + std::chrono::seconds(60);
      while (clock_type::now() < end) {
        for (armi::location_id d = 0; d < n; ++d) armi::async_rmi(d, h, &counter::add, 1);
        armi::rmi_fence();
      }
    }
    return 0;
  });
  g_returned = clock_type::now();
#if ARMI_HAS_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
#endif
  return code;
}
