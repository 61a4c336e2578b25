// Global memory between MPI ranks by MPI-3 RMA (--armi-mpi-rma=on): each
// rank holds `blocks` blocks of every global_array (one per location: 1 on
// mpi, its threads' on mixed, there side by side in one allocation); the
// blocks of all ranks form one window over the job (MPI_Win_create,
// collective when the array is constructed), open to every rank at once
// (passive target: MPI_Win_lock_all), and a one-sided get or put to another
// rank is an MPI request that the rank tests in its polls, never waits on.
//
//   get   MPI_Rget of the bytes.
//   put   MPI_Raccumulate(MPI_REPLACE) of the bytes, then MPI_Rget_accumulate
//         (MPI_NO_OP) of their last byte.  Accumulates from one origin to
//         one location apply in order (MPI's default accumulate_ordering),
//         so the second completes only after the put has landed: a put's
//         future means visible at the owner.  MPI_Rput's completion means
//         only that its buffer may be reused, and MPI_Win_flush waits
//         inside MPI.
//
// Each operation also reads the block's live word (the window starts at the
// block's header), so that one on an array its owner destroyed without the
// collective fence fails with an error instead of reading freed memory.
// Atomics are not offered (transport::remote_atomics): MPI's accumulates are
// atomic only with one another, not with the std::atomic_ref operations
// that the owner and its node peers apply to the same block by address.
// Operations complete in the order they started; each is handed back to
// its caller (a block index) in finish(caller).
//
// Thread safety: expose, withdraw, start and poll by one thread at a time,
// the one that may call MPI (MPI_THREAD_FUNNELED, or SERIALIZED under the
// rank's MPI lock); finish(c) and completed(c) by caller c, concurrently.
#pragma once

#include <armi/core/remote_memory.hpp>

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace armi::detail {

class rma_windows {
 public:
  // blocks: blocks (locations) per rank, the same on every rank.
  rma_windows(MPI_Comm comm, std::uint32_t blocks) : m_comm(comm), m_blocks(blocks), m_done(blocks) {
    MPI_Comm_size(comm, &m_ranks);
  }
  rma_windows(rma_windows const&) = delete;
  rma_windows& operator=(rma_windows const&) = delete;
  // A window still open here was left by an array destroyed while an
  // exception unwound: freeing it is collective, and the other ranks may
  // never come; MPI_Finalize takes it.
  ~rma_windows() = default;

  // A block of this rank: its elements' bytes at base, after `header`
  // bytes whose first word says the block is live.
  struct block {
    void* base;
    std::size_t bytes;
  };

  // Collective over the communicator, every rank for the same region in the
  // same order (an array's constructor, after a fence): opens region's
  // window over this rank's blocks (`blocks` of them, in location order,
  // each with its header before it), from the first byte of any to the last.
  void expose(std::uint32_t region, std::span<block const> mine, std::size_t header) {
    windows w;
    w.header = header;
    std::byte* first = nullptr;
    std::byte* last = nullptr;
    for (block const& b : mine) {
      auto* start = static_cast<std::byte*>(b.base) - header;
      auto* end = static_cast<std::byte*>(b.base) + b.bytes;
      first = first == nullptr ? start : std::min(first, start);
      last = last == nullptr ? end : std::max(last, end);
    }
    std::vector<std::uint64_t> placed;  // per block: its header's displacement, its bytes
    for (block const& b : mine) {
      placed.push_back(static_cast<std::uint64_t>(static_cast<std::byte*>(b.base) - header - first));
      placed.push_back(b.bytes);
    }
    w.placed.resize(std::size_t{static_cast<std::size_t>(m_ranks)} * m_blocks * 2);
    MPI_Allgather(placed.data(), static_cast<int>(2 * m_blocks), MPI_UINT64_T, w.placed.data(),
                  static_cast<int>(2 * m_blocks), MPI_UINT64_T, m_comm);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ops", "same_op_no_op");  // MPI_REPLACE and MPI_NO_OP only
    MPI_Win_create(first, static_cast<MPI_Aint>(last - first), 1, info, m_comm, &w.win);
    MPI_Info_free(&info);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, w.win);
    m_windows[region] = std::move(w);
  }

  // Closes region's window, after every operation on it has completed (the
  // array's destructor fenced), and returns true: the blocks may be freed.
  // Not collective (unwinding): the window stays open, other ranks may
  // still reach the blocks (and find them gone by their live words), so
  // they must stay; false.
  bool withdraw(std::uint32_t region, bool collective) {
    auto it = m_windows.find(region);
    if (it == m_windows.end()) return true;
    if (collective) {
      MPI_Win_unlock_all(it->second.win);
      MPI_Win_free(&it->second.win);
    }
    m_windows.erase(it);
    return collective;
  }

  // Starts op (a get or a put) on block `index` of rank `rank` (location
  // `owner`), for caller `caller`, who is told in finish(caller).
  void start(std::uint32_t caller, int rank, std::uint32_t index, std::uint32_t owner, remote_op const& op,
             std::span<std::byte const> operands, remote_completion* done) {
    operation o;
    o.done = done;
    o.caller = caller;
    o.owner = owner;
    o.region = op.region;
    auto it = m_windows.find(op.region);
    std::uint64_t bytes = operands.size();
    if (op.code == remote_code::get) std::memcpy(&bytes, operands.data(), sizeof bytes);
    if (it == m_windows.end()) {
      o.error_type = "armi::unknown_handle";
      o.error = "no global_array with handle index " + std::to_string(op.region) + " is open for MPI RMA here";
    } else if (std::uint64_t const size =
                   it->second.placed[(static_cast<std::size_t>(rank) * m_blocks + index) * 2 + 1];
               op.offset > size || bytes > size - op.offset) {
      o.error_type = "std::out_of_range";
      o.error = "location " + std::to_string(owner) + ": a one-sided operation on bytes [" + std::to_string(op.offset) +
                ", " + std::to_string(op.offset + bytes) + ") of a block of " + std::to_string(size) + " bytes";
    } else {
      MPI_Win const win = it->second.win;
      auto const live_word =
          static_cast<MPI_Aint>(it->second.placed[(static_cast<std::size_t>(rank) * m_blocks + index) * 2]);
      MPI_Aint const at = live_word + static_cast<MPI_Aint>(it->second.header + op.offset);
      bool const get = op.code == remote_code::get;
      // data: a get's bytes, or a put's and one for its last byte read back
      // after them; then the live word.
      std::uint64_t const tail = get ? bytes : bytes + 1;
      // (assign, not memcpy of `bytes`: GCC 12's -Wstringop-overflow cannot
      // tell that bytes == operands.size() here)
      if (!get) o.data.assign(operands.begin(), operands.end());
      o.data.resize(tail + sizeof(std::uint32_t));
      o.result_bytes = get ? bytes : 0;
      chunks(bytes, [&](std::uint64_t from, int count) {
        o.requests.emplace_back();
        if (get)
          MPI_Rget(o.data.data() + from, count, MPI_BYTE, rank, at + static_cast<MPI_Aint>(from), count, MPI_BYTE, win,
                   &o.requests.back());
        else
          MPI_Raccumulate(o.data.data() + from, count, MPI_BYTE, rank, at + static_cast<MPI_Aint>(from), count,
                          MPI_BYTE, MPI_REPLACE, win, &o.requests.back());
      });
      if (!get && bytes > 0) {
        o.requests.emplace_back();
        MPI_Rget_accumulate(nullptr, 0, MPI_BYTE, o.data.data() + bytes, 1, MPI_BYTE, rank,
                            at + static_cast<MPI_Aint>(bytes - 1), 1, MPI_BYTE, MPI_NO_OP, win, &o.requests.back());
      }
      o.requests.emplace_back();
      MPI_Rget(o.data.data() + tail, sizeof(std::uint32_t), MPI_BYTE, rank, live_word, sizeof(std::uint32_t), MPI_BYTE,
               win, &o.requests.back());
      o.live_at = tail;
    }
    m_in_flight.push_back(std::move(o));
  }

  bool in_flight() const { return !m_in_flight.empty(); }

  // Tests the oldest operations in flight (each test is also MPI progress)
  // and hands the completed ones to their callers, calling
  // completed_for(caller) for each; true if any completed.
  template <class F>
  bool poll(F&& completed_for) {
    bool any = false;
    while (!m_in_flight.empty()) {
      operation& o = m_in_flight.front();
      int complete = 1;
      if (!o.requests.empty())
        MPI_Testall(static_cast<int>(o.requests.size()), o.requests.data(), &complete, MPI_STATUSES_IGNORE);
      if (complete == 0) break;
      std::uint32_t live = 1;
      if (o.error_type.empty()) std::memcpy(&live, o.data.data() + o.live_at, sizeof live);
      if (live == 0) {
        o.error_type = "armi::unknown_handle";
        o.error = "location " + std::to_string(o.owner) + ": a one-sided operation on the global_array with " +
                  "handle index " + std::to_string(o.region) + ", which has no block there: was it destroyed " +
                  "before an rmi_fence, or never constructed there?";
      }
      std::uint32_t const caller = o.caller;
      {
        done_list& d = m_done[caller];
        std::lock_guard<std::mutex> const lock(d.mutex);
        d.operations.push_back(std::move(o));
        d.count.store(d.operations.size(), std::memory_order_seq_cst);
      }
      m_in_flight.pop_front();
      completed_for(caller);
      any = true;
    }
    return any;
  }

  // Whether caller has completed operations to be told (finish).
  bool completed(std::uint32_t caller) const { return m_done[caller].count.load(std::memory_order_seq_cst) != 0; }

  // Tells caller's completed operations, oldest first (a callback may
  // start operations, or wait: each is taken off the list first).
  void finish(std::uint32_t caller) {
    done_list& d = m_done[caller];
    while (d.count.load(std::memory_order_seq_cst) != 0) {
      operation o;
      {
        std::lock_guard<std::mutex> const lock(d.mutex);
        o = std::move(d.operations.front());
        d.operations.pop_front();
        d.count.store(d.operations.size(), std::memory_order_seq_cst);
      }
      if (o.error_type.empty())
        o.done->done(std::span<std::byte const>(o.data.data(), o.result_bytes));
      else
        o.done->failed(o.error_type, o.error, o.owner);
    }
  }

 private:
  struct windows {
    MPI_Win win = MPI_WIN_NULL;
    std::size_t header = 0;             // bytes before each block: the live word first
    std::vector<std::uint64_t> placed;  // [(rank * blocks + index) * 2]: the block's header's displacement, its bytes
  };
  struct operation {
    remote_completion* done = nullptr;
    std::uint32_t caller = 0;
    std::uint32_t owner = 0;  // the location, for messages
    std::uint32_t region = 0;
    std::vector<MPI_Request> requests;
    std::vector<std::byte> data;     // a get's result; a put's bytes while they go (on the heap: o moves)
    std::uint64_t result_bytes = 0;  // of data, for the caller
    std::uint64_t live_at = 0;       // where in data the owner's live word arrives
    std::string error_type, error;   // refused at the call: completes with this error
  };
  struct done_list {
    std::mutex mutex;
    std::deque<operation> operations;
    std::atomic<std::size_t> count{0};  // operations.size(), read without the mutex (seq_cst: the wake handshake)
  };

  // Splits [0, bytes) into pieces an MPI count (int) can say.
  template <class F>
  static void chunks(std::uint64_t bytes, F&& each) {
    constexpr std::uint64_t most = std::uint64_t{1} << 30;
    for (std::uint64_t at = 0; at < bytes; at += most) each(at, static_cast<int>(std::min(most, bytes - at)));
  }

  MPI_Comm m_comm;
  int m_ranks = 1;
  std::uint32_t m_blocks;
  std::unordered_map<std::uint32_t, windows> m_windows;
  std::deque<operation> m_in_flight;
  std::vector<done_list> m_done;  // [caller]
};

}  // namespace armi::detail
