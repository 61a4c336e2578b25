// An exception escaping an async_rmi or broadcast_rmi target has no caller to
// go to: the run ends (exit status 1) with one message naming the location,
// the method's type (the method itself, when named by armi::method) and the
// exception's message (docs/design.md §2, "Errors").
// No location may hang: the others are in a fence, in a sync_rmi or busy.
// Under --armi-progress=thread the failing request may run on the
// communication thread while its location computes; the message is the same.
//
// clang-format off
// CASE: async | --armi-locations=3 async | armi: location 2: exception in async_rmi target .*thrower.*boom 42
// CASE: async_agg1 | --armi-locations=3 --armi-aggregation=1 async | armi: location 2: exception in async_rmi target .*thrower.*boom 42
// CASE: async_constant | --armi-locations=3 async_constant | armi: location 2: exception in async_rmi target &.*thrower::fail_with: std::runtime_error: boom 42
// CASE: async_self | --armi-locations=3 async_self | armi: location 2: exception in async_rmi target .*thrower.*boom 42
// CASE: async_one_location | --armi-locations=1 async_self | armi: location 0: exception in async_rmi target .*thrower.*boom 42
// CASE: async_while_others_wait | --armi-locations=3 async_while_waiting | location 2: exception in async_rmi target .*thrower.*boom 42
// CASE: async_logic_error | --armi-locations=3 async_logic | location 2: exception in async_rmi target .*thrower.*logic boom
// CASE: broadcast | --armi-locations=3 broadcast | armi: location 1: exception in .*target .*thrower.*broadcast boom
// CASE: broadcast_group | --armi-locations=4 broadcast_group | armi: location 3: exception in .*target .*thrower.*broadcast boom
// RUN: no_throw | --armi-locations=3 none | async_throw: finished cleanly
// CASE: async_while_computing | --armi-locations=3 --armi-progress=thread async_while_computing | armi: location 2: exception in async_rmi target .*thrower.*boom 42
// CASE: sp2_async_while_computing | --armi-backend=sp2 --armi-locations=3 --armi-progress=thread async_while_computing | armi: location 2: exception in async_rmi target .*thrower.*boom 42
// CASE: sp2p_async | --armi-backend=sp2 --armi-sp2-mode=process --armi-locations=3 async | armi: location 2: exception in async_rmi target .*thrower.*boom 42.*armi: error: sp2 node 2 .process [0-9]+. exited with code 1 before the end of the run
// CASE: sp2p_while_others_wait | --armi-backend=sp2 --armi-sp2-mode=process --armi-locations=3 async_while_waiting | location 2: exception in async_rmi target .*thrower.*boom 42.*armi: error: sp2 node 2 .process [0-9]+. exited with code 1
// RUN: sp2p_no_throw | --armi-backend=sp2 --armi-sp2-mode=process --armi-locations=3 none | async_throw: finished cleanly
// MPI_CASE: async | 3 --armi-backend=mpi async | armi: location 2: exception in async_rmi target .*thrower.*boom 42
// MPI_CASE: async_constant | 3 --armi-backend=mpi async_constant | armi: location 2: exception in async_rmi target &.*thrower::fail_with: std::runtime_error: boom 42
// MPI_CASE: async_agg1 | 3 --armi-backend=mpi --armi-aggregation=1 async | armi: location 2: exception in async_rmi target .*thrower.*boom 42
// MPI_CASE: async_noshm | 3 --armi-backend=mpi --armi-mpi-shm=off async | armi: location 2: exception in async_rmi target .*thrower.*boom 42
// MPI_CASE: async_while_others_wait | 3 --armi-backend=mpi async_while_waiting | location 2: exception in async_rmi target .*thrower.*boom 42
// MPI_CASE: broadcast | 3 --armi-backend=mpi broadcast | armi: location 1: exception in .*target .*thrower.*broadcast boom
// MPI_RUN: no_throw | 3 --armi-backend=mpi none | async_throw: finished cleanly
// MPI_CASE: async_while_computing | 3 --armi-backend=mpi --armi-progress=thread async_while_computing | armi: location 2: exception in async_rmi target .*thrower.*boom 42
// MPI_CASE: mixed_async_while_computing | 2 --armi-backend=mixed --armi-locations=2 --armi-progress=thread async_while_computing | armi: location 2: exception in async_rmi target .*thrower.*boom 42
// MPI_CASE: mixed_async | 2 --armi-backend=mixed --armi-locations=2 async | armi: location 2: exception in async_rmi target .*thrower.*boom 42
// MPI_CASE: mixed_async_self | 2 --armi-backend=mixed --armi-locations=2 async_self | armi: location 3: exception in async_rmi target .*thrower.*boom 42
// MPI_CASE: mixed_async_while_others_wait | 2 --armi-backend=mixed --armi-locations=2 async_while_waiting | location 2: exception in async_rmi target .*thrower.*boom 42
// MPI_CASE: mixed_broadcast | 1 --armi-backend=mixed --armi-locations=3 broadcast | armi: location 1: exception in .*target .*thrower.*broadcast boom
// MPI_RUN: mixed_no_throw | 2 --armi-backend=mixed --armi-locations=2 none | async_throw: finished cleanly
// CLUSTER_CASE: mpi_h3_async | 3x1 --armi-backend=mpi async | armi: location 2: exception in async_rmi target .*thrower.*boom 42
// CLUSTER_CASE: mpi_h3_async_while_others_wait | 3x1 --armi-backend=mpi async_while_waiting | location 2: exception in async_rmi target .*thrower.*boom 42
// CLUSTER_CASE: mixed_h2_async | 2x1 --armi-backend=mixed --armi-locations=2 async | armi: location 2: exception in async_rmi target .*thrower.*boom 42
// clang-format on
#include <armi/armi.hpp>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

class thrower : public armi::p_object {
 public:
  void fail_with(int code) {
    if (code == 42) throw std::runtime_error("boom " + std::to_string(code));
    ++m_calls;
  }
  void fail_logic(std::string const& what) { throw std::logic_error(what); }
  // Throws only on location `who`.
  void broadcast_fail(armi::location_id who) {
    if (armi::get_location_id() == who)
      throw std::runtime_error("broadcast boom on " + std::to_string(who));
    ++m_calls;
  }
  int slow_answer() {
    // Keeps the caller waiting in sync_rmi while location 2 dies.
    for (int i = 0; i < 1000; ++i) armi::rmi_poll();
    return 1;
  }

 private:
  int m_calls = 0;
};

}  // namespace

int main(int argc, char** argv) {
  return armi::execute(argc, argv, [](int ac, char** av) {
    std::string const mode = ac > 1 ? av[1] : "none";
    thrower t;
    auto const h = t.get_rmi_handle();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    if (mode == "async") {
      if (me == 0) {
        for (int i = 0; i < 5; ++i) armi::async_rmi(2, h, &thrower::fail_with, i);
        armi::async_rmi(2, h, &thrower::fail_with, 42);
      }
    } else if (mode == "async_constant") {
      if (me == 0) {
        for (int i = 0; i < 5; ++i) armi::async_rmi(2, h, armi::method<&thrower::fail_with>, i);
        armi::async_rmi(2, h, armi::method<&thrower::fail_with>, 42);
      }
    } else if (mode == "async_self") {
      if (me == n - 1) armi::async_rmi(me, h, &thrower::fail_with, 42);
    } else if (mode == "async_while_waiting") {
      // Location 0 waits in a sync_rmi, location 1 keeps polling, location 2
      // gets the failing request from location 1.
      if (me == 1) {
        armi::async_rmi(2, h, &thrower::fail_with, 42);
        armi::rmi_flush();
        for (;;) armi::rmi_poll();  // never leaves on its own
      }
      if (me == 0)
        for (;;) (void)armi::sync_rmi(1, h, &thrower::slow_answer);
    } else if (mode == "async_while_computing") {
      // Location 2 computes without an armi call for up to a minute: only the
      // communication thread can run the failing request there (after the
      // fence: until its next armi call, a location that has just made a
      // p_object is left alone).
      armi::rmi_fence();
      if (me == 0) {
        armi::async_rmi(2, h, &thrower::fail_with, 42);
        armi::rmi_flush();
      }
      if (me == 2) std::this_thread::sleep_for(std::chrono::seconds(60));
    } else if (mode == "async_logic") {
      if (me == 0) armi::async_rmi(2, h, &thrower::fail_logic, std::string("logic boom"));
    } else if (mode == "broadcast") {
      if (me == 0) armi::broadcast_rmi(h, &thrower::broadcast_fail, armi::location_id{1});
    } else if (mode == "broadcast_group") {
      if (me == 0)
        armi::broadcast_rmi(armi::group(std::vector<armi::location_id>{0, 3}), h,
                            &thrower::broadcast_fail, armi::location_id{3});
    } else {
      for (armi::location_id d = 0; d < n; ++d) armi::async_rmi(d, h, &thrower::fail_with, 1);
    }
    armi::rmi_fence();
    armi::rmi_fence();
    if (me == 0) std::printf("async_throw: finished cleanly\n");
  });
}
