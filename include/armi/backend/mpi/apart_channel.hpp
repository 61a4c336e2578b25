// Lent ranges sent apart (armi::lend; serialization/view.hpp), for the mpi
// and mixed transports: a large lent range to another rank goes at the call
// as an MPI message of its own, from the caller's memory, on a communicator
// of its own, with a tag from a per-rank counter; the request that names it
// carries the tag.  The receiving location takes the range by (rank, tag)
// when the request runs, into a buffer of its own pool that it holds until
// the call returns; the loan is back once the send completes.  The tag, not
// arrival order, pairs a request with its range, so a request run out of
// order still finds its own.
//
// Thread safety: none; the transports call it as they call MPI (the mpi
// transport from its one thread, the mixed one under its MPI lock).  An
// apart_buffers belongs to one receiving location.
#pragma once

#include <armi/backend/mpi/session.hpp>
#include <armi/core/buffer.hpp>
#include <armi/core/error.hpp>
#include <armi/core/handle.hpp>
#include <armi/serialization/packer.hpp>

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace armi::detail {

// A receiving location's buffers for ranges sent apart: those its running
// requests read (held, until release) and empty ones to receive into.
class apart_buffers {
 public:
  apart_buffers() = default;
  apart_buffers(apart_buffers const&) = delete;
  apart_buffers& operator=(apart_buffers const&) = delete;
  ~apart_buffers() {
    for (buffer* b : m_pool) delete b;
    for (buffer* b : m_held) delete b;
  }

  // An empty buffer of at least `bytes`.
  buffer* take(std::size_t bytes) { return take_pooled(m_pool, bytes); }
  // b holds a range the running request reads; b goes back by release.
  void hold(buffer* b) { m_held.push_back(b); }
  // b was taken and is not held (its range failed a check).
  void give_back(buffer* b) { m_pool.push_back(b); }
  // The buffer that holds range goes back to the pool.
  void release(std::byte const* range) {
    for (std::size_t i = m_held.size(); i-- > 0;)
      if (m_held[i]->data.get() == range) {
        m_pool.push_back(m_held[i]);
        m_held.erase(m_held.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
  }

 private:
  std::vector<buffer*> m_pool;
  std::vector<buffer*> m_held;
};

class apart_channel {
 public:
  // Whose loan a send ends: the word to bump and the lender to wake.
  struct loan {
    std::atomic<std::uint32_t>* returned = nullptr;
    location_id lender = 0;
  };

  // A range's smallest size to go apart.  Within a node from 12 KiB,
  // through the node's rings or not: MPI (UCX) moves the range in one copy,
  // where a ring copies it in and out; at 8 KiB the extra message cost about
  // what the copy saved, at 12 KiB it saved a fifth to a third.  To another
  // node from 64 KiB: over TCP a 16 KiB range apart took 1.17x as long, a
  // 64 KiB one 0.97x, 1 MiB 0.88x (madeleine_fig8;
  // docs/runtime-measurements.md).
  static constexpr std::size_t min_bytes_node = 12288;
  static constexpr std::size_t min_bytes_network = 65536;
  // A range not here this long after its request ran never will come.
  static constexpr std::chrono::seconds patience{60};

  // Collective over comm (MPI_Comm_dup); tag_ub: its MPI_TAG_UB (mpi_channel::tag_ub).
  apart_channel(MPI_Comm comm, int tag_ub) : m_tags(static_cast<std::uint64_t>(tag_ub) + 1) {
    MPI_Comm_dup(comm, &m_comm);
    MPI_Comm_set_errhandler(m_comm, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_rank(m_comm, &m_rank);
  }
  // Every range sent apart was received by then: each loan ends by a flush point.
  ~apart_channel() { MPI_Comm_free(&m_comm); }

  apart_channel(apart_channel const&) = delete;
  apart_channel& operator=(apart_channel const&) = delete;

  static std::size_t min_bytes(bool same_node) { return same_node ? min_bytes_node : min_bytes_network; }

  // Starts sending [from, from + bytes) to rank; returns its tag.
  std::uint64_t send(void const* from, std::size_t bytes, int rank, loan l) {
    std::uint64_t const tag = m_sent++ % m_tags;
    MPI_Request r;
    MPI_Isend(from, static_cast<int>(bytes), MPI_BYTE, rank, static_cast<int>(tag), m_comm, &r);
    m_requests.push_back(r);
    m_loans.push_back(l);
    return tag;
  }
  bool sending() const { return !m_requests.empty(); }
  // Ends the loans whose sends completed: bumps each word, then done(loan).
  template <class Done>
  bool complete(Done&& done) {
    return mpi_complete_some(m_requests, m_loans, m_indices, [&done](loan const& l) {
      l.returned->fetch_add(1, std::memory_order_seq_cst);
      done(l);
    });
  }

  // The range of `bytes` bytes that rank sent with `tag`, received into a
  // buffer that `into` holds (until its release).  with_mpi(f) calls
  // f() where this thread may call MPI and returns its result, or returns
  // false when it may not now.  The wait serves nothing (the request that
  // asks is half decoded: serving would break the pair's order).  The
  // range left before its request: it is on its way or here, and one not
  // matched in a minute never will be (a malformed tag), a clear end.  Once
  // matched no nap: over TCP its bytes move only while both ends call MPI
  // (a nap cost a 64 KiB range between hosts 4 times its transfer).
  template <class WithMpi>
  std::byte const* receive(int rank, std::uint64_t tag, std::size_t bytes, apart_buffers& into, mpi_spin_budget spin,
                           WithMpi&& with_mpi) {
    if (tag >= m_tags || bytes > INT_MAX)
      throw decode_error("armi: a view sent apart names a tag or length out of range");
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st;
    auto arrived = [&] {
      return with_mpi([&] {
        int flag = 0;
        MPI_Improbe(rank, static_cast<int>(tag), m_comm, &flag, &m, &st);
        return flag != 0;
      });
    };
    auto const since = std::chrono::steady_clock::now();
    for (unsigned n = 0; !mpi_spin(spin, arrived); ++n) {
      if (n < 64) {
        std::this_thread::yield();
        continue;
      }
      mpi_nap(n - 64);
      if (std::chrono::steady_clock::now() - since > patience)
        fatal_exit("armi: rank " + std::to_string(m_rank) + " waited " + std::to_string(patience.count()) +
                   " s for the view sent apart (tag " + std::to_string(tag) + ", " + std::to_string(bytes) +
                   " bytes) that a request from rank " + std::to_string(rank) + " names; it never came");
    }
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    buffer* b = into.take(static_cast<std::size_t>(std::max(count, 1)));
    MPI_Request r = MPI_REQUEST_NULL;
    while (!with_mpi([&] { return MPI_Imrecv(b->data.get(), count, MPI_BYTE, &m, &r) == MPI_SUCCESS; }))
      std::this_thread::yield();
    auto received = [&] {
      return with_mpi([&] {
        int flag = 0;
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        return flag != 0;
      });
    };
    // Matched: the range exists and its sender lives (a dead rank ends the
    // job through mpiexec or the heartbeat); its bytes come as the sender
    // calls MPI, however long it computes in between.
    while (!mpi_spin(spin, received)) std::this_thread::yield();
    if (static_cast<std::size_t>(count) != bytes) {
      into.give_back(b);
      throw decode_error("armi: rank " + std::to_string(rank) + " sent a view apart of " + std::to_string(count) +
                         " bytes for a request that names " + std::to_string(bytes));
    }
    into.hold(b);
    return b->data.get();
  }

 private:
  MPI_Comm m_comm = MPI_COMM_NULL;
  int m_rank = 0;
  std::uint64_t m_tags;  // 0 .. MPI_TAG_UB
  std::uint64_t m_sent = 0;
  std::vector<MPI_Request> m_requests;  // sends in flight
  std::vector<loan> m_loans;            // [i]: whose loan m_requests[i] ends
  std::vector<int> m_indices;
};

}  // namespace armi::detail
