// A location thread that the system will not start ends the run before any
// location's body runs: on the threads and sp2 backends with exit status 2
// and one line "armi: error: could not start thread i of n (one per
// location): <reason>; run fewer locations ..."; on the mixed backend, where
// the other ranks would wait for this rank's locations forever, the whole
// job ends (MPI_Abort) with that line and the rank.  Found by running 2000
// locations under `ulimit -v 4000000`: the program died in std::terminate
// ("terminate called after throwing an instance of 'std::system_error'").
//
// --refuse-threads makes every thread started from then on ask for a 256 TiB
// stack (pthread_setattr_default_np), more address space than a process has,
// so the run's first std::thread fails; --refuse-threads-on-rank=R does so
// on MPI rank R only (the other ranks' locations start, and wait in their
// first fence for R's).  On the mixed backend the program initializes MPI
// first (MPI's own threads start normally).
// (The output matched is stdout followed by stderr; "." matches a newline.)
//
// clang-format off
// CASE: refused | --armi-locations=4 --refuse-threads | armi: error: could not start thread 1 of 4 .one per location.: .*; run fewer locations .--armi-locations.
// CASE: sp2_refused | --armi-backend=sp2 --armi-locations=3 --refuse-threads | armi: error: could not start thread 1 of 3 .one per location.
// RUN: started | --armi-locations=4 | thread_start: 4 locations ran
// MPI_CASE: mixed_refused | 2 --armi-backend=mixed --armi-locations=2 --refuse-threads | armi: rank [01]: could not start thread 1 of 2 .one per location.
// MPI_CASE: mixed_one_rank_refused | 2 --armi-backend=mixed --armi-locations=3 --refuse-threads-on-rank=1 | armi: rank 1: could not start thread 1 of 3 .one per location.
// clang-format on
#include <armi/armi.hpp>

#include <pthread.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#if ARMI_HAS_MPI
#include <mpi.h>
#endif

namespace {

bool has_arg(int argc, char** argv, char const* arg) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], arg) == 0) return true;
  return false;
}

// --refuse-threads, or --refuse-threads-on-rank=R on rank R (PMI_RANK, set by
// MPICH's mpiexec).
bool refuse_threads(int argc, char** argv) {
  if (has_arg(argc, argv, "--refuse-threads")) return true;
  char const* rank = std::getenv("PMI_RANK");
  return rank != nullptr && has_arg(argc, argv, ("--refuse-threads-on-rank=" + std::string(rank)).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (refuse_threads(argc, argv)) {
#if ARMI_HAS_MPI
    if (has_arg(argc, argv, "--armi-backend=mixed")) {
      int provided = 0;
      MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    }
#endif
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, std::size_t{1} << 48);
    if (pthread_setattr_default_np(&attr) != 0) {
      std::printf("thread_start: pthread_setattr_default_np failed\n");
      return 0;  // not the expected failure: the CASE fails
    }
    pthread_attr_destroy(&attr);
  }
  return armi::execute(argc, argv, [](int, char**) -> int {
    armi::rmi_fence();  // with a location missing, this would wait forever
    if (armi::get_location_id() == 0) {
      std::printf("thread_start: %u locations ran\n", static_cast<unsigned>(armi::get_num_locations()));
      std::fflush(stdout);
    }
    return 0;
  });
}
