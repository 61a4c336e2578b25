// The watchdog's exchange of innermost waits between MPI ranks
// (core/watchdog.hpp): a watchdog that fires sends its rank's innermost
// waits to every other rank and gathers theirs, so it can print a wait-for
// cycle that crosses ranks ("0 -> 1 -> 2 -> 0").  In a hang the ranks'
// watchdogs fire within moments of each other; a rank whose location is not
// waiting inside armi never fires and never sends, and the others stop
// listening after their budget.
//
// It runs on the watchdog's thread, alongside the location's own MPI calls,
// on a communicator of its own: that needs MPI_THREAD_MULTIPLE, which armi
// asks for when --armi-watchdog is on.  Where MPI provides less (a program
// that initialized MPI itself), usable() is false and the watchdog reports
// this rank's waits only.
#pragma once

#include <armi/backend/mpi/session.hpp>
#include <armi/core/handle.hpp>
#include <armi/core/watchdog.hpp>

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace armi::detail {

class mpi_wait_exchange {
  static_assert(sizeof(location_id) == sizeof(std::uint32_t), "waits travel as MPI_UINT32_T pairs");

 public:
  // Collective over comm.
  explicit mpi_wait_exchange(MPI_Comm comm) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    m_usable = provided == MPI_THREAD_MULTIPLE;
    MPI_Request r;
    MPI_Comm_idup(comm, &m_comm, &r);
    mpi_wait(r);
  }
  mpi_wait_exchange(mpi_wait_exchange const&) = delete;
  mpi_wait_exchange& operator=(mpi_wait_exchange const&) = delete;
  ~mpi_wait_exchange() { MPI_Comm_free(&m_comm); }

  bool usable() const { return m_usable; }

  // Sends mine to every other rank; returns what the others sent within
  // budget_ns.  Called at most once, just before the run is aborted: the
  // sends are left in flight.
  wait_edges operator()(wait_edges const& mine, std::int64_t budget_ns) {
    int rank = 0, ranks = 1;
    MPI_Comm_rank(m_comm, &rank);
    MPI_Comm_size(m_comm, &ranks);
    for (auto const& [from, to] : mine) {
      m_out.push_back(from);
      m_out.push_back(to);
    }
    m_sends.resize(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r)
      if (r != rank)
        MPI_Isend(m_out.data(), static_cast<int>(m_out.size()), MPI_UINT32_T, r, tag, m_comm,
                  &m_sends[static_cast<std::size_t>(r)]);
    wait_edges theirs;
    int heard = 0;
    std::int64_t const deadline = steady_ns() + budget_ns;
    while (heard < ranks - 1 && steady_ns() < deadline) {
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, tag, m_comm, &flag, &status);
      if (flag == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      int count = 0;
      MPI_Get_count(&status, MPI_UINT32_T, &count);
      std::vector<std::uint32_t> in(static_cast<std::size_t>(count));
      MPI_Recv(in.data(), count, MPI_UINT32_T, status.MPI_SOURCE, tag, m_comm, MPI_STATUS_IGNORE);
      for (std::size_t i = 0; i + 1 < in.size(); i += 2) theirs.emplace_back(in[i], in[i + 1]);
      ++heard;
    }
    return theirs;
  }

 private:
  static constexpr int tag = 1;
  MPI_Comm m_comm = MPI_COMM_NULL;
  bool m_usable = false;
  std::vector<std::uint32_t> m_out;  // in flight until the abort
  std::vector<MPI_Request> m_sends;
};

}  // namespace armi::detail
