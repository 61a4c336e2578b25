// The mixed backend's global_array blocks when a node runs several ranks:
// each array is one MPI-3 shared window over the node's ranks
// (MPI_Win_allocate_shared), each rank's part cut into one block per thread,
// so that every location of a node reaches every block of the node by
// address (transport::allocate_shared_block), as the threads of one rank do.
//
// Allocating and freeing are collective over every location: the rank's
// threads meet (a mutex and a condition variable), the last to arrive makes
// the MPI call for the rank, under the rank's MPI lock (the caller's
// with_mpi), and the others wait for it.  The array's constructor and
// destructor fence first, so no location waits on a request meanwhile.
//
// Thread safety: allocate and free are called by every thread of the rank,
// for the same arrays in the same order; the rest is set at construction.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace armi::detail {

class node_blocks {
 public:
  // Collective over comm.  threads: locations per rank.  Active when the
  // node runs more than one rank.
  node_blocks(MPI_Comm comm, std::uint32_t threads) : m_threads(threads) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &m_node);
    int peers = 1;
    MPI_Comm_size(m_node, &peers);
    if (peers == 1) {
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
  // type's alignment), and in
  // peers[l] the address of the block of every location l of the node's
  // other ranks.  with_mpi(f) runs f under the rank's MPI lock.
  template <class WithMpi>
  void* allocate(std::uint32_t thread, std::size_t bytes, void** peers, WithMpi&& with_mpi) {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_stride = std::max(m_stride, (bytes + page - 1) / page * page);
    together(lock, [&] { with_mpi([this] { open(); }); });
    window const& w = m_windows.back();  // (no thread opens or frees another before every thread is back)
    for (std::size_t p = 0; p < m_rank_of.size(); ++p) {
      if (static_cast<int>(p) == m_self) continue;
      for (std::uint32_t t = 0; t < m_threads; ++t)
        peers[static_cast<std::size_t>(m_rank_of[p]) * m_threads + t] = w.base[p] + std::size_t{t} * w.stride[p];
    }
    return w.base[static_cast<std::size_t>(m_self)] + std::size_t{thread} * w.stride[static_cast<std::size_t>(m_self)];
  }

  // Frees the window of the array whose block this thread's is.
  template <class WithMpi>
  void free(void* block, WithMpi&& with_mpi) {
    std::unique_lock<std::mutex> lock(m_mutex);
    together(lock, [&] {
      auto const mine = static_cast<std::size_t>(m_self);
      auto it = std::find_if(m_windows.begin(), m_windows.end(), [&](window const& w) {
        auto* b = static_cast<std::byte*>(block);
        return b >= w.base[mine] && b < w.base[mine] + std::size_t{m_threads} * w.stride[mine];
      });
      if (it == m_windows.end()) return;
      with_mpi([&] { MPI_Win_free(&it->win); });
      m_windows.erase(it);
    });
  }

 private:
  static constexpr std::size_t page = 4096;
  struct window {
    MPI_Win win = MPI_WIN_NULL;
    std::vector<std::byte*> base;     // [node peer]: its part, in this process
    std::vector<std::size_t> stride;  // [node peer]: bytes from one of its threads' blocks to the next
  };

  // The rank's threads meet: the last to arrive runs `last` (lock held), then all go on.
  template <class F>
  void together(std::unique_lock<std::mutex>& lock, F&& last) {
    std::uint64_t const round = m_round;
    if (++m_arrived == m_threads) {
      last();
      m_arrived = 0;
      ++m_round;
      m_all_here.notify_all();
      return;
    }
    m_all_here.wait(lock, [&] { return m_round != round; });
  }

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
    m_windows.push_back(std::move(w));
  }

  std::uint32_t m_threads;
  MPI_Comm m_node = MPI_COMM_NULL;
  int m_self = 0;             // this rank on the node
  std::vector<int> m_rank_of;  // [node peer]: its rank in comm
  std::mutex m_mutex;
  std::condition_variable m_all_here;
  std::uint32_t m_arrived = 0;
  std::uint64_t m_round = 0;
  std::size_t m_stride = 0;  // the largest block the rank's threads asked for, this round
  std::vector<window> m_windows;
};

}  // namespace armi::detail
