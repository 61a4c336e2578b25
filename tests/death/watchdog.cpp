// --armi-watchdog=SECONDS: a location blocked that long in an armi call
// without progress makes the run print what every location of its process is
// waiting on, then end (exit non-zero; MPI_Abort under mpiexec).  Location 1
// (or the last location) "hangs" by sleeping in its own code, never polling.
//
// clang-format off
// CASE: sync_to_sleeper | --armi-locations=3 --armi-watchdog=0.5 sync | armi: watchdog: location [02] has waited 0.5 s without progress.*location 0: sync_rmi to location 1 .*int .*sleeper::.*location 1: not waiting in armi.*location 2: rmi_fence .fence #2.*no progress for 0.5 s
// CASE: get_from_sleeper | --armi-locations=2 --armi-watchdog=0.5 get | armi: watchdog: .*location 0: future::get to location 1 .*sleeper.*location 1: not waiting in armi
// CASE: fence_with_sleeper | --armi-locations=4 --armi-watchdog=0.5 fence | location 0: rmi_fence .fence #2. for [0-9.]+ s.*location 1: not waiting in armi.*location 3: rmi_fence
// CASE: collective_with_sleeper | --armi-locations=3 --armi-watchdog=0.5 collective | location 0: a collective for.*location 1: not waiting in armi.*location 2: a collective led by location 0
// CASE: nested | --armi-locations=2 --armi-watchdog=0.5 nested | location 1: sync_rmi to location 0 .*, inside rmi_fence .fence #2.
// CASE: env | ARMI_WATCHDOG=0.5 --armi-locations=2 fence | armi: watchdog: location 0 has waited 0.5 s
// CASE: cycle3 | --armi-locations=3 --armi-watchdog=0.5 cycle | location 0: future::get to location 1 .*sleeper::.*location 1: sync_rmi to location 2 .*sleeper::.*location 2: sync_rmi to location 0 .*sleeper::.*wait-for cycle: 0 -> 1 -> 2 -> 0
// CASE: cycle4 | --armi-locations=4 --armi-watchdog=0.5 cycle | wait-for cycle: 0 -> 1 -> 2 -> 3 -> 0
// CASE: sp2_cycle3 | --armi-backend=sp2 --armi-locations=3 --armi-watchdog=0.5 cycle | location 2: sync_rmi to location 0 .*sleeper::.*wait-for cycle: 0 -> 1 -> 2 -> 0
// CASE: sp2p_cycle3 | --armi-backend=sp2 --armi-sp2-mode=process --armi-locations=3 --armi-watchdog=0.5 cycle | every location of the run:.*location 0: future::get to location 1 .*location 1: sync_rmi to location 2 .*location 2: sync_rmi to location 0 .*wait-for cycle: 0 -> 1 -> 2 -> 0
// CASE: sp2_sync_to_sleeper | --armi-backend=sp2 --armi-locations=2 --armi-watchdog=0.5 sync | location 0: sync_rmi to location 1 .*sleeper::.*location 1: not waiting in armi
// RUN: short_waits_pass | --armi-locations=3 --armi-watchdog=2 short | watchdog: finished cleanly
// RUN: off_by_default | --armi-locations=2 short | watchdog: finished cleanly
// MPI_CASE: mpi_sync_to_sleeper | 2 --armi-backend=mpi --armi-watchdog=0.5 sync | armi: watchdog: location 0 has waited 0.5 s.*location 0: sync_rmi to location 1 .*sleeper
// MPI_CASE: mpi_fence_with_sleeper | 3 --armi-backend=mpi --armi-watchdog=0.5 fence | (location 0: rmi_fence .fence #2.*location 2: rmi_fence .fence #2|location 2: rmi_fence .fence #2.*location 0: rmi_fence .fence #2)
// MPI_CASE: mixed_sync_to_sleeper | 2 --armi-backend=mixed --armi-locations=2 --armi-watchdog=0.5 sync | location 0: sync_rmi to location 1 .*location 1: not waiting in armi
// MPI_CASE: mpi_cycle3 | 3 --armi-backend=mpi --armi-watchdog=0.5 cycle | wait-for cycle: 0 -> 1 -> 2 -> 0
// MPI_CASE: mixed_cycle3 | 1 --armi-backend=mixed --armi-locations=3 --armi-watchdog=0.5 cycle | wait-for cycle: 0 -> 1 -> 2 -> 0
// MPI_CASE: mixed_cycle_across_ranks | 2 --armi-backend=mixed --armi-locations=2 --armi-watchdog=0.5 cycle | wait-for cycle: 0 -> 1 -> 2 -> 3 -> 0
// CLUSTER_CASE: mpi_h3_cycle3 | 3x1 --armi-backend=mpi --armi-watchdog=0.5 cycle | wait-for cycle: 0 -> 1 -> 2 -> 0
// CLUSTER_CASE: mixed_h2_cycle | 2x1 --armi-backend=mixed --armi-locations=2 --armi-watchdog=0.5 cycle | wait-for cycle: 0 -> 1 -> 2 -> 3 -> 0
// MPI_RUN: mixed_short_waits_pass | 2 --armi-backend=mixed --armi-locations=2 --armi-watchdog=2 short | watchdog: finished cleanly
// clang-format on
#include <armi/armi.hpp>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>

namespace {

class sleeper : public armi::p_object {
 public:
  int echo(int v) { return v; }
  int value() const { return 1; }
  int call_back(int v) { return armi::sync_rmi(0, get_rmi_handle(), &sleeper::echo, v); }

  // The "cycle" mode's deadlock: location 0 waits on the future of relay on
  // location 1, which waits in sync_rmi on relay on 2, ..., and the last
  // location waits on close on location 0.  close runs on 0 inside its get()
  // and waits on that same future, whose answer needs relay on 1 to return:
  // 0 -> 1 -> ... -> n-1 -> 0, every location waiting inside armi.
  int relay() {
    auto const me = armi::get_location_id();
    auto const next = me + 1 < armi::get_num_locations() ? me + 1 : 0;
    if (next == 0) return armi::sync_rmi(0, get_rmi_handle(), &sleeper::close);
    return armi::sync_rmi(next, get_rmi_handle(), &sleeper::relay);
  }
  int close() { return m_pending->get(); }
  armi::future<int>* m_pending = nullptr;
};

// Never returns, never polls.
[[noreturn]] void hang() {
  for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

}  // namespace

int main(int argc, char** argv) {
  return armi::execute(argc, argv, [](int ac, char** av) {
    std::string const mode = ac > 1 ? av[1] : "none";
    sleeper s;
    auto const h = s.get_rmi_handle();
    auto const me = armi::get_location_id();
    armi::rmi_fence();
    if (mode == "sync") {
      if (me == 1) hang();
      if (me == 0) (void)armi::sync_rmi(1, h, &sleeper::echo, 7);
    } else if (mode == "get") {
      if (me == 1) hang();
      if (me == 0) {
        auto f = armi::opaque_rmi(1, h, &sleeper::echo, 7);
        (void)f.get();
      }
    } else if (mode == "fence") {
      if (me == 1) hang();
    } else if (mode == "collective") {
      if (me == 1) hang();
      (void)armi::allreduce_rmi(h, &sleeper::value, std::plus<>{});
    } else if (mode == "nested") {
      // Location 1 waits in the fence; a request from 0 makes it call back.
      if (me == 0) {
        armi::async_rmi(1, h, &sleeper::call_back, 1);
        armi::rmi_flush();
        hang();
      }
    } else if (mode == "cycle") {
      if (me == 0) {
        auto f = armi::opaque_rmi(1, h, &sleeper::relay);
        s.m_pending = &f;
        (void)f.get();
      }
    } else if (mode == "short") {
      // Waits well under the limit: nothing fires.
      if (me == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
      if (me == 0) (void)armi::sync_rmi(1, h, &sleeper::echo, 7);
    }
    armi::rmi_fence();
    if (me == 0) std::printf("watchdog: finished cleanly\n");
  });
}
