// The mpi backend's transport: one location per MPI rank (MPICH).
//
// A filled aggregation buffer leaves as ONE non-blocking message (MPI_Isend of
// the whole buffer: a request's header and body never travel apart, the
// Madeleine paper's lesson); at most `max_in_flight` sends are outstanding,
// and a buffer goes back to its location's pool when its send completes.
// Arrivals are found by MPI_Improbe and taken with MPI_Mrecv into recycled
// buffers.  Nothing waits inside MPI: MPICH's blocking calls spin a core, and
// on an oversubscribed machine two spinning ranks cost a scheduler tick per
// round trip, so an idle rank polls a few times, yields, then sleeps in short,
// growing naps.  The fence's sum is an MPI_Iallreduce tested in the same loop.
//
// Thread safety: one thread per process calls it (MPI_THREAD_FUNNELED).
#pragma once

#include <armi/backend/mpi/session.hpp>
#include <armi/runtime/error.hpp>
#include <armi/runtime/transport.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <thread>
#include <vector>

namespace armi::detail {

class mpi_transport final : public transport {
 public:
  // Buffers travel with tag data_tag + (sender's fence epoch & 1), so the
  // receiver can hold back those sent after their sender left a fence.
  static constexpr int data_tag = 0x4152;  // "AR"

  explicit mpi_transport(MPI_Comm world) {
    MPI_Comm_dup(world, &m_comm);
    MPI_Comm_set_errhandler(m_comm, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_rank(m_comm, &m_rank);
    MPI_Comm_size(m_comm, &m_size);
    // Ranks on this node: more of them than cores means oversubscribed.
    MPI_Comm node;
    MPI_Comm_split_type(m_comm, MPI_COMM_TYPE_SHARED, m_rank, MPI_INFO_NULL, &node);
    int on_node = 1;
    MPI_Comm_size(node, &on_node);
    MPI_Comm_free(&node);
    unsigned const hw = std::thread::hardware_concurrency();
    m_oversubscribed = hw != 0 && static_cast<unsigned>(on_node) > hw;
    m_spins = m_oversubscribed ? 16 : 2000;
  }

  mpi_transport(mpi_transport const&) = delete;
  mpi_transport& operator=(mpi_transport const&) = delete;

  ~mpi_transport() override {
    // Every send has been matched (the run ended with a fence); complete them.
    while (!m_in_flight.empty()) {
      if (!progress_sends()) nap();
    }
    for (buffer* b : m_done) delete b;
    for (buffer* b : m_arrived) delete b;
    for (buffer* b : m_recv_pool) delete b;
    MPI_Comm_free(&m_comm);
  }

  location_id size() const override { return static_cast<location_id>(m_size); }
  location_id process_first(location_id self) const override { return self; }
  location_id process_locations() const override { return 1; }
  int rank() const { return m_rank; }
  MPI_Comm comm() const { return m_comm; }

  void send(location_id dest, buffer* b) override {
    // Too many sends outstanding: wait for some to complete, taking in what
    // arrives meanwhile (a peer may be waiting for us to match its sends).
    while (m_in_flight.size() >= max_in_flight) {
      bool const moved = progress_sends();
      bool const pulled = pull_arrival();
      if (!moved && !pulled) back_off();
    }
    m_idle = 0;
    MPI_Request r;
    MPI_Isend(b->data.get(), static_cast<int>(b->size), MPI_BYTE, static_cast<int>(dest),
              data_tag + static_cast<int>(b->epoch & 1), m_comm, &r);
    m_in_flight.push_back(r);
    m_in_flight_buffers.push_back(b);
  }

  buffer* receive(location_id) override {
    if (!m_arrived.empty()) {
      buffer* b = m_arrived.front();
      m_arrived.pop_front();
      return b;
    }
    return probe_and_receive();
  }

  void release(location_id, buffer* first, buffer* last) override {
    for (buffer* b = first;; b = static_cast<buffer*>(b->next.load(std::memory_order_relaxed))) {
      m_recv_pool.push_back(b);
      if (b == last) break;
    }
  }

  buffer* reclaim(location_id) override {
    if (m_done.empty() && !m_in_flight.empty()) progress_sends();
    if (m_done.empty()) return nullptr;
    buffer* b = m_done.back();
    m_done.pop_back();
    return b;
  }

  std::uint32_t wake_token(location_id) const override { return 0; }

  // Polls MPI for anything that would let the location go on: an arrival, a
  // completed send, a completed fence sum.  Spins (each spin is an MPI poll),
  // yields, then naps with growing length while nothing happens.
  bool idle_wait(location_id, std::uint32_t) override {
    for (unsigned i = 0; i < m_spins; ++i)
      if (something_happened()) return false;
    for (unsigned i = 0; i < 4; ++i) {
      std::this_thread::yield();
      if (something_happened()) return false;
    }
    nap();
    return true;
  }

 private:
  buffer* probe_and_receive() {
    int flag = 0;
    MPI_Message msg;
    MPI_Status st;
    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, m_comm, &flag, &msg, &st);
    if (!flag) return nullptr;
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    buffer* b;
    if (!m_recv_pool.empty()) {
      b = m_recv_pool.back();
      m_recv_pool.pop_back();
    } else {
      b = new buffer;
    }
    b->reset();
    b->reserve(static_cast<std::size_t>(std::max(count, 1)));
    MPI_Mrecv(b->data.get(), count, MPI_BYTE, &msg, &st);
    b->size = static_cast<std::size_t>(count);
    b->source = static_cast<std::uint32_t>(st.MPI_SOURCE);
    b->epoch = static_cast<std::uint32_t>(st.MPI_TAG - data_tag);
    b->owner = static_cast<std::uint32_t>(st.MPI_SOURCE);  // != self: comes back through release()
    m_idle = 0;
    m_naps = 0;
    return b;
  }

  bool pull_arrival() {
    buffer* b = probe_and_receive();
    if (b == nullptr) return false;
    m_arrived.push_back(b);
    return true;
  }

 public:
  std::uint32_t empty_polls_before_yield() const override { return m_oversubscribed ? 16 : 4096; }

  void sum_contribute(location_id, std::uint64_t round, std::uint64_t const (&values)[2]) override {
    m_sum_in[0] = values[0];
    m_sum_in[1] = values[1];
    m_sum_round = round;
    m_sum_done = false;
    MPI_Iallreduce(m_sum_in, m_sum_out, 2, MPI_UINT64_T, MPI_SUM, m_comm, &m_sum_request);
  }
  bool sum_ready(std::uint64_t round) const override {
    if (round != m_sum_round) return false;
    if (!m_sum_done) {
      int flag = 0;
      MPI_Test(&m_sum_request, &flag, MPI_STATUS_IGNORE);
      m_sum_done = flag != 0;
    }
    return m_sum_done;
  }
  void sum_result(std::uint64_t, std::uint64_t (&values)[2]) const override {
    values[0] = m_sum_out[0];
    values[1] = m_sum_out[1];
  }

 private:
  static constexpr std::size_t max_in_flight = 64;

  // Moves completed sends to m_done; true if any completed.
  bool progress_sends() {
    if (m_in_flight.empty()) return false;
    int n = 0;
    m_indices.resize(m_in_flight.size());
    MPI_Testsome(static_cast<int>(m_in_flight.size()), m_in_flight.data(), &n, m_indices.data(),
                 MPI_STATUSES_IGNORE);
    if (n == MPI_UNDEFINED || n == 0) return false;
    for (int i = 0; i < n; ++i) {
      std::size_t const k = static_cast<std::size_t>(m_indices[static_cast<std::size_t>(i)]);
      m_done.push_back(m_in_flight_buffers[k]);
      m_in_flight_buffers[k] = nullptr;
    }
    std::size_t out = 0;
    for (std::size_t k = 0; k < m_in_flight.size(); ++k) {
      if (m_in_flight_buffers[k] == nullptr) continue;
      m_in_flight[out] = m_in_flight[k];
      m_in_flight_buffers[out] = m_in_flight_buffers[k];
      ++out;
    }
    m_in_flight.resize(out);
    m_in_flight_buffers.resize(out);
    return true;
  }

  bool something_happened() {
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, m_comm, &flag, MPI_STATUS_IGNORE);
    bool happened = flag != 0 || !m_arrived.empty() || progress_sends();
    if (!happened && !m_sum_done) happened = sum_ready(m_sum_round);
    if (happened) m_idle = m_naps = 0;
    return happened;
  }

  void back_off() {
    if (++m_idle < m_spins) return;
    nap();
  }

  void nap() { mpi_nap(m_naps++); }

  MPI_Comm m_comm = MPI_COMM_NULL;
  int m_rank = 0;
  int m_size = 1;
  bool m_oversubscribed = false;
  unsigned m_spins = 2000;
  unsigned m_idle = 0;
  unsigned m_naps = 0;
  std::vector<MPI_Request> m_in_flight;
  std::vector<buffer*> m_in_flight_buffers;
  std::vector<int> m_indices;
  std::vector<buffer*> m_done;       // our buffers whose sends completed
  std::vector<buffer*> m_recv_pool;  // buffers to receive into
  std::deque<buffer*> m_arrived;     // taken in while a send waited, not yet handed out
  // The fence's sum (one round at a time).
  std::uint64_t m_sum_in[2] = {0, 0};
  std::uint64_t m_sum_out[2] = {0, 0};
  std::uint64_t m_sum_round = ~std::uint64_t{0};
  mutable MPI_Request m_sum_request = MPI_REQUEST_NULL;
  mutable bool m_sum_done = true;
};

}  // namespace armi::detail
