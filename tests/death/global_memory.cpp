// A one-sided operation whose request reaches an owner where the array is
// gone (an asymmetric program: the last location left the array's scope by
// an exception, so its destructor did not fence) fails like an opaque_rmi to
// a destroyed handle: its future's get() throws armi::remote_error naming the
// owner, here uncaught, so the run ends with that message (docs/design.md
// §2, "One-sided operations"); on sp2 the owner's SP-AM handler, which
// serves the operation without armi's runtime, answers with the same kind
// of error, naming the array, and so does the caller on mpi and mixed with
// --armi-mpi-rma=on, which reads the block's live word.  Misuse the caller
// can see throws at the call instead (tests/matrix/global_memory.cpp); here
// only the owner can tell.
//
// clang-format off
// CASE: get_destroyed | --armi-locations=2 get | location 1: RMI to unknown or destroyed handle
// CASE: fetch_add_destroyed | --armi-locations=2 fetch_add | location 1: RMI to unknown or destroyed handle
// CASE: sp2_put_destroyed | --armi-backend=sp2 --armi-locations=2 put | location 1: a one-sided operation from location 0 on the global_array with handle index [0-9]+, which has no block here
// RUN: valid | --armi-locations=2 valid | global_memory: finished cleanly
// MPI_CASE: mpi_get_destroyed | 2 --armi-backend=mpi get | location 1: RMI to unknown or destroyed handle
// MPI_CASE: mpi_rma_get_destroyed | 2 --armi-backend=mpi --armi-mpi-shm=off --armi-mpi-rma=on get | location 1: a one-sided operation on the global_array with handle index [0-9]+, which has no block there
// MPI_CASE: mpi_rma_put_destroyed | 2 --armi-backend=mpi --armi-mpi-shm=off --armi-mpi-rma=on put | location 1: a one-sided operation on the global_array with handle index [0-9]+, which has no block there
// MPI_CASE: mixed_rma_put_destroyed | 2 --armi-backend=mixed --armi-locations=2 --armi-mpi-shm=off --armi-mpi-rma=on put | location 3: a one-sided operation on the global_array with handle index [0-9]+, which has no block there
// MPI_CASE: mixed_put_destroyed | 2 --armi-backend=mixed --armi-locations=2 put | location 3: RMI to unknown or destroyed handle
// clang-format on
#include <armi/armi.hpp>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace {

// Location 0 waits for the owner to say its array is gone.
class signal : public armi::p_object {
 public:
  void raise() { m_raised = true; }
  bool raised() const { return m_raised; }

 private:
  bool m_raised = false;
};

}  // namespace

int main(int argc, char** argv) {
  return armi::execute(argc, argv, [](int ac, char** av) {
    std::string const mode = ac > 1 ? av[1] : "valid";
    auto const me = armi::get_location_id();
    auto const owner = armi::get_num_locations() - 1;
    signal gone;
    if (me == owner && mode != "valid") {
      try {
        armi::global_array<std::uint64_t> a(4);
        armi::rmi_fence();  // the caller's fence below
        throw std::runtime_error("leaving the array's scope");
      } catch (std::runtime_error const&) {
      }
      armi::async_rmi(0, gone.get_rmi_handle(), &signal::raise);
      armi::rmi_fence();  // serves the request that finds the array gone
      return;
    }
    armi::global_array<std::uint64_t> a(4);
    armi::rmi_fence();
    if (me == 0) {
      if (mode != "valid")
        while (!gone.raised()) armi::rmi_wait();
      auto const p = a.pointer(owner, 1);
      if (mode == "get") std::printf("%llu\n", static_cast<unsigned long long>(armi::rget(p).get()));
      if (mode == "fetch_add") (void)armi::fetch_add(p, std::uint64_t{1}).get();
      if (mode == "put") armi::rput(p, std::uint64_t{1}).get();
      if (mode == "valid") armi::rput(p, std::uint64_t{1}).get();
    }
    armi::rmi_fence();
    if (me == 0 && mode == "valid") std::printf("global_memory: finished cleanly\n");
  });
}
