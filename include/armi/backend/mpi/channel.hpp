// The MPI plumbing that the mpi and mixed transports share: a duplicated
// communicator; each aggregation buffer sent as ONE non-blocking message (a
// request's header and body never travel apart, the Madeleine paper's
// lesson), at most `max_in_flight` at a time; arrivals taken by matched probe
// (MPI_Improbe + MPI_Mrecv) into recycled buffers; and the fence's sum as an
// MPI_Iallreduce.  Nothing here blocks inside MPI: callers poll and back off.
//
// Thread safety: none.  The mpi transport calls it from its one thread
// (MPI_THREAD_FUNNELED); the mixed transport from one thread at a time
// (MPI_THREAD_SERIALIZED), under its own lock.
#pragma once

#include <armi/backend/mpi/session.hpp>
#include <armi/core/buffer.hpp>
#include <armi/core/transport.hpp>

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

namespace armi::detail {

class mpi_channel {
 public:
  static constexpr std::size_t max_in_flight = 64;
  // The largest buffer MPICH (over UCX) still sends eagerly; a larger one goes
  // by rendezvous, a handshake with the receiver per message, which cost a
  // quarter of the message rate at aggregation 1024 (benchmarks/README.md,
  // mpi_message_rate).  The byte cap of buffers to other processes unless the
  // user sets --armi-buffer-bytes.
  static constexpr std::size_t eager_bytes = 8192;
  // The largest buffer one message carries: MPI counts its bytes in an int.
  static constexpr std::size_t max_message_bytes = INT_MAX;

  explicit mpi_channel(MPI_Comm world) {
    MPI_Comm_dup(world, &m_comm);
    MPI_Comm_set_errhandler(m_comm, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_rank(m_comm, &m_rank);
    MPI_Comm_size(m_comm, &m_size);
    MPI_Comm node;
    MPI_Comm_split_type(m_comm, MPI_COMM_TYPE_SHARED, m_rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &m_ranks_on_node);
    MPI_Comm_rank(node, &m_rank_on_node);
    // Every rank's node, named by its lowest rank (once, at start).
    int leader = m_rank;
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
    m_node_of_rank.resize(static_cast<std::size_t>(m_size));
    MPI_Allgather(&leader, 1, MPI_INT, m_node_of_rank.data(), 1, MPI_INT, m_comm);
    MPI_Comm_free(&node);
    int* ub = nullptr;
    int found = 0;
    MPI_Comm_get_attr(m_comm, MPI_TAG_UB, &ub, &found);
    m_tag_ub = found && ub != nullptr ? *ub : 32767;
  }

  mpi_channel(mpi_channel const&) = delete;
  mpi_channel& operator=(mpi_channel const&) = delete;

  // Completes the sends still in flight (every one was matched: runs end with
  // a fence) and frees every buffer the channel holds, the sent ones included.
  ~mpi_channel() {
    for (unsigned n = 0; !m_in_flight.empty(); ++n) {
      std::vector<buffer*> done;
      if (!complete_sends(done)) mpi_nap(n);
      for (buffer* b : done) delete b;
    }
    if (m_matched) {  // matched, never taken (runs end with a fence, so none should be): receive and drop it
      int tag = 0;
      delete receive(tag);
    }
    if (m_side_matched) delete receive_matched(m_side_match, m_side_status);
    for (buffer* b : m_pool) delete b;
    MPI_Comm_free(&m_comm);
  }

  MPI_Comm comm() const { return m_comm; }
  int rank() const { return m_rank; }
  int size() const { return m_size; }
  int ranks_on_node() const { return m_ranks_on_node; }
  // The node of rank r (its lowest rank), and whether a node has two or more.
  int node_of_rank(int r) const { return m_node_of_rank[static_cast<std::size_t>(r)]; }
  bool shared_nodes() const {
    for (int r = 1; r < m_size; ++r)
      if (m_node_of_rank[static_cast<std::size_t>(r)] != r) return true;
    return false;
  }
  int rank_on_node() const { return m_rank_on_node; }
  int tag_ub() const { return m_tag_ub; }

  bool can_send() const { return m_in_flight.size() < max_in_flight; }
  bool sending() const { return !m_in_flight.empty(); }

  // Starts sending b to rank with tag (on comm: by default the channel's);
  // b stays ours until complete_sends hands it back.  Requires can_send().
  void send(buffer* b, int rank, int tag, MPI_Comm comm = MPI_COMM_NULL) {
    MPI_Request r;
    MPI_Isend(b->data.get(), static_cast<int>(b->size), MPI_BYTE, rank, tag, comm == MPI_COMM_NULL ? m_comm : comm,
              &r);
    m_in_flight.push_back(r);
    m_in_flight_buffers.push_back(b);
  }

  // Appends the buffers whose sends completed to done; true if any did.
  bool complete_sends(std::vector<buffer*>& done) {
    return mpi_complete_some(m_in_flight, m_in_flight_buffers, m_indices, [&done](buffer* b) { done.push_back(b); });
  }

  // The next arrived message in a recycled buffer (size and source = the
  // sender's rank filled in), its tag in tag; nullptr if none has arrived.
  buffer* receive(int& tag) {
    if (!m_matched && !match()) return nullptr;
    m_matched = false;
    buffer* b = receive_matched(m_match, m_match_status);
    b->source = static_cast<std::uint32_t>(m_match_status.MPI_SOURCE);
    tag = m_match_status.MPI_TAG;
    return b;
  }

  // Messages on another communicator than the channel's (node_rings' marked
  // buffers), taken from one rank at a time:
  // whether the next message from rank on comm has arrived.  It is matched
  // here and held for receive_from (one held at a time), so the look that
  // finds it is the probe that takes it.
  bool arrived_from(MPI_Comm comm, int rank) {
    if (m_side_matched) {
      if (m_side_rank == rank) return true;
      int flag = 0;
      MPI_Iprobe(rank, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
      return flag != 0;
    }
    int flag = 0;
    MPI_Improbe(rank, MPI_ANY_TAG, comm, &flag, &m_side_match, &m_side_status);
    m_side_matched = flag != 0;
    m_side_rank = rank;
    return m_side_matched;
  }
  // That message in a recycled buffer, its size filled in; nullptr if it
  // has not arrived.
  buffer* receive_from(MPI_Comm comm, int rank) {
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st;
    if (m_side_matched && m_side_rank == rank) {
      m_side_matched = false;
      m = m_side_match;
      st = m_side_status;
    } else {
      int flag = 0;
      MPI_Improbe(rank, MPI_ANY_TAG, comm, &flag, &m, &st);
      if (!flag) return nullptr;
    }
    return receive_matched(m, st);
  }

  // True if a message is waiting to be received.  It is matched here (and
  // held for receive()), so the poll that finds it is the probe that takes it:
  // one probe per arrival on the way from an idle wait to its execution.
  bool arrival_waiting() { return m_matched || match(); }

  // A received buffer that has been executed: receive into it again.
  void recycle(buffer* b) { m_pool.push_back(b); }

  // The fence's sum over ranks, one round at a time.
  void sum_start(std::uint64_t const (&values)[2]) {
    m_sum_in[0] = values[0];
    m_sum_in[1] = values[1];
    m_sum_done = false;
    MPI_Iallreduce(m_sum_in, m_sum_out, 2, MPI_UINT64_T, MPI_SUM, m_comm, &m_sum_request);
  }
  // True once the sum started last has completed (and when none was started).
  bool sum_test() {
    if (!m_sum_done) {
      int flag = 0;
      MPI_Test(&m_sum_request, &flag, MPI_STATUS_IGNORE);
      m_sum_done = flag != 0;
    }
    return m_sum_done;
  }
  bool sum_done() const { return m_sum_done; }
  std::uint64_t sum(int i) const { return m_sum_out[i]; }

 private:
  MPI_Comm m_comm = MPI_COMM_NULL;
  int m_rank = 0;
  int m_size = 1;
  int m_ranks_on_node = 1;
  int m_rank_on_node = 0;
  std::vector<int> m_node_of_rank;
  int m_tag_ub = 32767;
  std::vector<MPI_Request> m_in_flight;
  std::vector<buffer*> m_in_flight_buffers;
  std::vector<int> m_indices;
  std::vector<buffer*> m_pool;  // buffers to receive into
  // A message matched by arrival_waiting(), not yet received.
  bool m_matched = false;
  MPI_Message m_match = MPI_MESSAGE_NULL;
  MPI_Status m_match_status{};
  // One matched by arrived_from(), from m_side_rank, not yet received.
  bool m_side_matched = false;
  int m_side_rank = -1;
  MPI_Message m_side_match = MPI_MESSAGE_NULL;
  MPI_Status m_side_status{};

  buffer* receive_matched(MPI_Message& m, MPI_Status const& st) {
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    buffer* b = take_pooled(m_pool, static_cast<std::size_t>(std::max(count, 1)));
    MPI_Mrecv(b->data.get(), count, MPI_BYTE, &m, MPI_STATUS_IGNORE);
    b->size = static_cast<std::size_t>(count);
    return b;
  }

  bool match() {
    int flag = 0;
    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, m_comm, &flag, &m_match, &m_match_status);
    m_matched = flag != 0;
    return m_matched;
  }
  std::uint64_t m_sum_in[2] = {0, 0};
  std::uint64_t m_sum_out[2] = {0, 0};
  MPI_Request m_sum_request = MPI_REQUEST_NULL;
  bool m_sum_done = true;
};

// True when the processes on this node times `threads` each outnumber its cores.
inline bool mpi_oversubscribed(mpi_channel const& ch, unsigned threads) {
  return outnumber_cores(std::uint64_t{static_cast<unsigned>(ch.ranks_on_node())} * threads);
}

}  // namespace armi::detail
