// The mixed backend's global_array blocks when a node runs several ranks:
// each array is one MPI-3 shared window over the node's ranks
// (MPI_Win_allocate_shared), each rank's part cut into one block per thread,
// so that every location of a node reaches every block of the node by
// address (transport::allocate_shared_block), as the threads of one rank do.
// With --armi-mpi-rma=on every rank's blocks are made here (side by side,
// for one RMA window over them), shared or not.
//
// Allocating is collective over every location: the rank's threads meet
// (rank_meeting.hpp), the last to arrive makes the MPI call for the rank,
// under the rank's MPI lock (the caller's with_mpi), and the others wait for
// it.  Freeing is done by the last thread of the rank to be done with the
// array; nobody waits.  The array's constructor and destructor fence first,
// so no location waits on a request meanwhile.
//
// Thread safety: allocate is called by every thread of the rank, for the
// same arrays in the same order; free by any thread; the rest is set at
// construction.
#pragma once

#include <armi/backend/mixed/rank_meeting.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <vector>

namespace armi::detail {

class node_blocks {
 public:
  // Collective over comm.  threads: locations per rank.  share: the node's
  // ranks share the windows (else each rank's window is its own).  Active
  // when the node's ranks share them, or with `always` (the blocks of a
  // rank side by side, for an RMA window over them: rma_windows.hpp).
  node_blocks(MPI_Comm comm, std::uint32_t threads, bool share, bool always) : m_threads(threads), m_meeting(threads) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (share)
      MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &m_node);
    else
      MPI_Comm_dup(MPI_COMM_SELF, &m_node);
    int peers = 1;
    MPI_Comm_size(m_node, &peers);
    if (peers == 1 && !always) {
      MPI_Comm_free(&m_node);
      return;
    }
    MPI_Comm_rank(m_node, &m_self);
    m_rank_of.resize(static_cast<std::size_t>(peers));
    MPI_Allgather(&rank, 1, MPI_INT, m_rank_of.data(), 1, MPI_INT, m_node);
  }
  node_blocks(node_blocks const&) = delete;
  node_blocks& operator=(node_blocks const&) = delete;
  // A window still open here was left by an array destroyed while an
  // exception unwound (freeing it is collective): MPI_Finalize takes it.
  ~node_blocks() {
    if (m_node != MPI_COMM_NULL) MPI_Comm_free(&m_node);
  }

  bool active() const { return m_node != MPI_COMM_NULL; }

  // Thread `thread`'s block of at least `bytes` (page-aligned: any element
  // type's alignment), and in peers[l] the address of the block of every
  // location l of the node's other ranks.  Every thread of the rank calls
  // it, and waits for the others.  with_mpi(f) runs f under the rank's MPI
  // lock.
  template <class WithMpi>
  void* allocate(std::uint32_t thread, std::size_t bytes, void** peers, WithMpi&& with_mpi) {
    m_meeting.meet([&] { m_stride = std::max(m_stride, (bytes + page - 1) / page * page); },
                   [&] { with_mpi([this] { open(); }); });
    window const& w = *m_opened;  // (set by the meeting's last thread; the next allocation needs this one)
    for (std::size_t p = 0; p < m_rank_of.size(); ++p) {
      if (static_cast<int>(p) == m_self) continue;
      for (std::uint32_t t = 0; t < m_threads; ++t)
        peers[static_cast<std::size_t>(m_rank_of[p]) * m_threads + t] = w.base[p] + std::size_t{t} * w.stride[p];
    }
    auto const mine = static_cast<std::size_t>(m_self);
    return w.base[mine] + std::size_t{thread} * w.stride[mine];
  }

  // This thread is done with its block: the last of the rank's threads to
  // be done frees the array's window (collective over the node's ranks).
  // Nobody waits for the others: a thread that never comes (its array
  // destroyed during unwinding) leaves the window to MPI_Finalize.
  template <class WithMpi>
  void free(void* block, WithMpi&& with_mpi) {
    std::lock_guard<std::mutex> const lock(m_mutex);
    auto const mine = static_cast<std::size_t>(m_self);
    auto* b = static_cast<std::byte*>(block);
    auto it = std::find_if(m_windows.begin(), m_windows.end(), [&](window const& w) {
      return b >= w.base[mine] && b < w.base[mine] + std::size_t{m_threads} * w.stride[mine];
    });
    if (it == m_windows.end() || ++it->done < m_threads) return;
    with_mpi([&] { MPI_Win_free(&it->win); });
    m_windows.erase(it);
  }

 private:
  static constexpr std::size_t page = 4096;
  struct window {
    MPI_Win win = MPI_WIN_NULL;
    std::vector<std::byte*> base;     // [node peer]: its part, in this process
    std::vector<std::size_t> stride;  // [node peer]: bytes from one of its threads' blocks to the next
    std::uint32_t done = 0;           // this rank's threads done with it (free)
  };

  // The window for this rank's threads' blocks (m_stride each), with every
  // node peer's part.  Collective over the node.
  void open() {
    window w;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each rank's part page-aligned
    void* mine = nullptr;
    MPI_Win_allocate_shared(static_cast<MPI_Aint>(m_stride * m_threads), 1, info, m_node, &mine, &w.win);
    MPI_Info_free(&info);
    for (std::size_t p = 0; p < m_rank_of.size(); ++p) {
      MPI_Aint part = 0;
      int unit = 0;
      void* theirs = nullptr;
      MPI_Win_shared_query(w.win, static_cast<int>(p), &part, &unit, &theirs);
      w.base.push_back(static_cast<std::byte*>(theirs));
      w.stride.push_back(static_cast<std::size_t>(part) / m_threads);
    }
    m_stride = 0;
    std::lock_guard<std::mutex> const lock(m_mutex);
    m_opened = &m_windows.emplace_back(std::move(w));
  }

  std::uint32_t m_threads;
  MPI_Comm m_node = MPI_COMM_NULL;
  int m_self = 0;              // this rank on the node
  std::vector<int> m_rank_of;  // [node peer]: its rank in comm
  rank_meeting m_meeting;
  std::size_t m_stride = 0;     // the largest block the rank's threads asked for, this round
  std::mutex m_mutex;           // m_windows
  std::list<window> m_windows;  // (a list: m_opened stays valid while others come and go)
  window const* m_opened = nullptr;
};

}  // namespace armi::detail
