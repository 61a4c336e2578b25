// The mpi backend's transport: one location per MPI rank (MPICH).
//
// The MPI side is an mpi_channel (channel.hpp): one non-blocking message per
// buffer, a bounded number in flight, buffers recycled, arrivals by matched
// probe, the fence sum as an MPI_Iallreduce.  Nothing waits inside MPI:
// MPICH's blocking calls spin a core, and on an oversubscribed machine two
// spinning ranks cost a scheduler tick per round trip, so an idle rank polls
// a few times, yields, then sleeps in short, growing naps.
//
// Thread safety: one thread per process calls it (MPI_THREAD_FUNNELED).
#pragma once

#include <armi/backend/mpi/channel.hpp>
#include <armi/backend/mpi/session.hpp>
#include <armi/runtime/transport.hpp>

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <thread>
#include <vector>

namespace armi::detail {

class mpi_transport final : public transport {
 public:
  // Buffers travel with tag data_tag + (sender's fence epoch & 1), so the
  // receiver can hold back those sent after their sender left a fence.
  static constexpr int data_tag = 0x4152;  // "AR"

  explicit mpi_transport(MPI_Comm world) : m_channel(world) {
    m_oversubscribed = mpi_oversubscribed(m_channel, 1);
    m_spins = m_oversubscribed ? 16 : 2000;
  }

  mpi_transport(mpi_transport const&) = delete;
  mpi_transport& operator=(mpi_transport const&) = delete;

  ~mpi_transport() override {
    for (buffer* b : m_done) delete b;
    for (buffer* b : m_arrived) delete b;
    // m_channel completes the sends still in flight and frees its buffers.
  }

  location_id size() const override { return static_cast<location_id>(m_channel.size()); }
  location_id process_first(location_id self) const override { return self; }
  location_id process_locations() const override { return 1; }
  std::size_t remote_buffer_bytes() const override { return mpi_channel::eager_bytes; }
  int rank() const { return m_channel.rank(); }
  MPI_Comm comm() const { return m_channel.comm(); }

  void send(location_id dest, buffer* b) override {
    // Too many sends outstanding: wait for some to complete, taking in what
    // arrives meanwhile (a peer may be waiting for us to match its sends).
    while (!m_channel.can_send()) {
      bool const moved = collect_sent();
      bool const pulled = pull_arrival();
      if (!moved && !pulled) back_off();
    }
    m_idle = 0;
    m_channel.send(b, static_cast<int>(dest), data_tag + static_cast<int>(b->epoch & 1));
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
      m_channel.recycle(b);
      if (b == last) break;
    }
  }

  buffer* reclaim(location_id) override {
    if (m_done.empty() && m_channel.sending()) collect_sent();
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

  std::uint32_t empty_polls_before_yield() const override { return m_oversubscribed ? 16 : 4096; }

  void sum_contribute(location_id, std::uint64_t round, std::uint64_t const (&values)[2]) override {
    m_sum_round = round;
    m_channel.sum_start(values);
  }
  bool sum_ready(std::uint64_t round) const override { return round == m_sum_round && m_channel.sum_test(); }
  void sum_result(std::uint64_t, std::uint64_t (&values)[2]) const override {
    values[0] = m_channel.sum(0);
    values[1] = m_channel.sum(1);
  }

 private:
  buffer* probe_and_receive() {
    int tag = 0;
    buffer* b = m_channel.receive(tag);
    if (b == nullptr) return nullptr;
    b->epoch = static_cast<std::uint32_t>(tag - data_tag);
    b->owner = b->source;  // != self: comes back through release()
    m_idle = 0;
    m_naps = 0;
    return b;
  }

  // Takes back the buffers whose sends completed.  One larger than MPICH's
  // eager limit went by rendezvous: the receiver read it in place, so its
  // cache lines now sit shared in the receiver's cache, and the next request
  // packed into it paid for taking each line back (a 64 KiB pack cost 7 us,
  // not 1.2, on a 2-core EPYC VM).  Taking them back here, with one write per
  // line that keeps its bytes, costs less (no data to read) and happens while
  // the sender waits for its reply, not while it packs the next request.
  bool collect_sent() {
    std::size_t const before = m_done.size();
    if (!m_channel.complete_sends(m_done)) return false;
    for (std::size_t i = before; i < m_done.size(); ++i) {
      buffer const& b = *m_done[i];
      if (b.size <= mpi_channel::eager_bytes) continue;
      auto* p = reinterpret_cast<unsigned char volatile*>(b.data.get());
      for (std::size_t k = 0; k < b.size; k += 64) p[k] = p[k];
    }
    return true;
  }

  bool pull_arrival() {
    buffer* b = probe_and_receive();
    if (b == nullptr) return false;
    m_arrived.push_back(b);
    return true;
  }

  bool something_happened() {
    // Completed sends and the fence's sum every 4th look: an arrival is what
    // a waiter most often waits on (a reply, a request to serve), and each
    // extra MPI poll per look delays seeing it; a sync_rmi's own request
    // would otherwise be tested on every look until it completes.
    bool const rare = (++m_looks & 3) == 0;
    bool happened = m_channel.arrival_waiting() || !m_arrived.empty() || (rare && collect_sent());
    if (!happened && rare && !m_channel.sum_done()) happened = m_channel.sum_test();
    if (happened) m_idle = m_naps = 0;
    return happened;
  }

  void back_off() {
    if (++m_idle < m_spins) return;
    nap();
  }

  void nap() { mpi_nap(m_naps++); }

  // mutable: sum_ready() tests the pending MPI_Iallreduce.
  mutable mpi_channel m_channel;
  bool m_oversubscribed = false;
  unsigned m_spins = 2000;
  unsigned m_idle = 0;
  unsigned m_naps = 0;
  unsigned m_looks = 0;
  std::vector<buffer*> m_done;    // our buffers whose sends completed
  std::deque<buffer*> m_arrived;  // taken in while a send waited, not yet handed out
  std::uint64_t m_sum_round = ~std::uint64_t{0};
};

}  // namespace armi::detail
