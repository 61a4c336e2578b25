// An exception that escapes a location's body ends the run with a non-zero
// status and a message naming the location and the exception; the other
// locations must not hang, whatever they are doing (in a fence, waiting in a
// sync_rmi or future::get on the failed location, polling).
//
// clang-format off
// CASE: others_in_fence | --armi-locations=3 others_in_fence | location 1.*uncaught boom from 1
// CASE: others_in_sync_rmi | --armi-locations=3 others_in_sync_rmi | location 2.*uncaught boom from 2
// CASE: others_in_future_get | --armi-locations=4 others_in_future_get | location 3.*uncaught boom from 3
// CASE: others_polling | --armi-locations=3 others_polling | location 0.*uncaught boom from 0
// CASE: after_rmis | --armi-locations=4 --armi-aggregation=1 after_rmis | location 2.*uncaught boom from 2
// CASE: one_location | --armi-locations=1 others_in_fence_0 | location 0.*uncaught boom from 0
// CASE: not_std_exception | --armi-locations=2 not_std | location 1.*uncaught
// CASE: logic_error | --armi-locations=2 logic | location 1.*logic_error.*bad state on 1
// RUN: no_throw | --armi-locations=3 none | uncaught: finished cleanly
// MPI_CASE: others_in_sync_rmi | 3 --armi-backend=mpi others_in_sync_rmi | location 2.*uncaught boom from 2
// MPI_CASE: mixed_others_in_sync_rmi | 2 --armi-backend=mixed --armi-locations=2 others_in_sync_rmi | location 2.*uncaught boom from 2
// MPI_CASE: mixed_others_in_fence | 2 --armi-backend=mixed --armi-locations=2 others_in_fence | location 1.*uncaught boom from 1
// clang-format on
#include <armi/armi.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace {

class peer : public armi::p_object {
 public:
  int echo(int v) { return v; }
  void add(int v) { m_sum += v; }

 private:
  int m_sum = 0;
};

[[noreturn]] void boom() {
  throw std::runtime_error("uncaught boom from " + std::to_string(armi::get_location_id()));
}

}  // namespace

int main(int argc, char** argv) {
  return armi::execute(argc, argv, [](int ac, char** av) {
    std::string const mode = ac > 1 ? av[1] : "none";
    peer p;
    auto const h = p.get_rmi_handle();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    armi::rmi_fence();
    if (mode == "others_in_fence") {
      if (me == 1) boom();
    } else if (mode == "others_in_fence_0") {
      if (me == 0) boom();
    } else if (mode == "others_in_sync_rmi") {
      if (me == 2) boom();
      // Keeps asking the failed location; it never answers.
      for (;;) (void)armi::sync_rmi(2, h, &peer::echo, 1);
    } else if (mode == "others_in_future_get") {
      if (me == 3) boom();
      auto f = armi::opaque_rmi(3, h, &peer::echo, 1);
      for (;;) (void)armi::sync_rmi(3, h, &peer::echo, f.get());
    } else if (mode == "others_polling") {
      if (me == 0) boom();
      for (;;) armi::rmi_poll();
    } else if (mode == "after_rmis") {
      for (int i = 0; i < 1000; ++i)
        armi::async_rmi((me + static_cast<armi::location_id>(i)) % n, h, &peer::add, i);
      if (me == 2) boom();
    } else if (mode == "not_std") {
      if (me == 1) throw 42;
    } else if (mode == "logic") {
      if (me == 1) throw std::logic_error("bad state on 1");
    } else {
      for (armi::location_id d = 0; d < n; ++d) armi::async_rmi(d, h, &peer::add, 1);
    }
    armi::rmi_fence();
    if (me == 0) std::printf("uncaught: finished cleanly\n");
  });
}
