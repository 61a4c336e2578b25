// The mixed backend's transport: P MPI ranks x T threads, location
// rank * T + t.  Between threads of one rank a buffer moves as on the threads
// backend (per-pair rings, rings.hpp: small ones copied, larger ones by
// pointer and back to their owner's free queue); to another rank it goes as
// one MPI message through the rank's mpi_channel, and arrives in its
// destination thread's lock-free inbox.
//
// MPI is driven by whichever of the rank's threads gets there: a thread that
// sends to another rank queues the buffer and tries the rank's MPI lock; the
// holder sends what is queued, completes sends (buffers go back to their
// owners), takes in arrivals (each to its destination thread's inbox) and
// advances the fence sum.  Nobody waits for the lock -- a thread that does not
// get it leaves the work to the holder, who looks again after unlocking --
// and nobody waits inside MPI.  Hence MPI_THREAD_SERIALIZED: any thread may
// call MPI, never two at once.
//
// A large lent view (armi::lend) to another rank goes apart, a message of
// its own from the caller's memory (apart_channel.hpp): started under the
// lock at the call, completed by the driver, received by the target's
// thread, which polls under the lock whenever it is free.
//
// The MPI tag carries what the message envelope lacks: the sending and the
// receiving thread and the sender's fence parity,
//   tag = tag_base + 2 * (sender_thread * T + receiver_thread) + parity.
//
// global_array blocks: the rank's threads reach each other's by address (the
// block directory); where a node runs several ranks, each array is also an
// MPI-3 shared window over them (node_blocks.hpp), so that every location
// reaches every block of its node by address.  Other ranks' blocks are
// reached by request, or with --armi-mpi-rma=on, gets and puts by MPI-3 RMA
// (backend/mpi/rma_windows.hpp: one window per array over the rank's
// threads' blocks, which node_blocks.hpp then makes side by side, opened by
// the last of the threads to arrive; operations started under the MPI lock,
// completed by whoever drives MPI, handed back to their thread).
//
// An idle thread spins, yields, then naps (20 us doubling to 1 ms) on a
// condition variable that local senders and a completed fence sum signal; each
// time it wakes it drives MPI, so a rank whose threads all sleep still notices
// arrivals within a nap.
//
// Thread safety: every method may be called concurrently by the rank's
// locations, each passing its own id as self.
#pragma once

#include <armi/backend/mixed/node_blocks.hpp>
#include <armi/backend/mixed/rank_meeting.hpp>
#include <armi/backend/mpi/apart_channel.hpp>
#include <armi/backend/mpi/channel.hpp>
#include <armi/backend/mpi/rma_windows.hpp>
#include <armi/backend/mpi/session.hpp>
#include <armi/backend/threads/rings.hpp>
#include <armi/core/config.hpp>
#include <armi/core/mpsc_queue.hpp>
#include <armi/core/transport.hpp>

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace armi::detail {

class mixed_transport final : public transport {
 public:
  static constexpr int tag_base = 16;

  // threads: locations per rank, the same on every rank; 0 = this node's
  // hardware threads divided among its ranks.  node_shm: the ranks of a
  // node share global_array blocks.  rma: gets and puts to blocks of other
  // ranks (not shared) by MPI RMA.  Collective over world.
  mixed_transport(MPI_Comm world, std::uint32_t threads, bool node_shm = true, bool rma = false)
      : m_channel(world), m_apart(m_channel.comm(), m_channel.tag_ub()) {
    if (threads == 0) {
      unsigned const hw = std::thread::hardware_concurrency();
      threads = std::max(1u, hw / static_cast<unsigned>(m_channel.ranks_on_node()));
    }
    int const mine = static_cast<int>(threads);
    int extremes[2] = {-mine, mine};  // -min, max
    MPI_Request r;
    MPI_Iallreduce(MPI_IN_PLACE, extremes, 2, MPI_INT, MPI_MAX, m_channel.comm(), &r);
    mpi_wait(r);
    if (-extremes[0] != extremes[1])
      throw std::invalid_argument("armi::execute: the mixed backend needs the same --armi-locations on every rank "
                                  "(ranks asked for " + std::to_string(-extremes[0]) + " to " +
                                  std::to_string(extremes[1]) + " threads)");
    long const top_tag = tag_base + 2L * threads * threads + 1;
    if (top_tag > m_channel.tag_ub())
      throw std::invalid_argument("armi::execute: the mixed backend cannot run " + std::to_string(threads) +
                                  " threads per rank: its MPI tags would reach " + std::to_string(top_tag) +
                                  ", above this MPI's MPI_TAG_UB " + std::to_string(m_channel.tag_ub()));
    m_threads = threads;
    m_first = static_cast<location_id>(m_channel.rank()) * threads;
    m_size = static_cast<location_id>(m_channel.size()) * threads;
    m_slots.reserve(threads);
    for (std::uint32_t t = 0; t < threads; ++t) m_slots.push_back(std::make_unique<slot>());
    bool const oversubscribed = mpi_oversubscribed(m_channel, threads);
    m_rings.emplace(threads, m_first, waker{&m_slots}, wake_fence{}, ring_slots_for(std::uint64_t{threads} * threads, oversubscribed));
    m_spin = mpi_spin_budget::for_rank(oversubscribed);
    m_yields = oversubscribed ? 2 : 16;
    m_polls_before_yield = oversubscribed ? 16 : 4096;
    m_blocks.emplace(m_channel.comm(), threads, node_shm, rma);
    m_meeting.emplace(threads);
    if (rma) {
      m_rma.emplace(m_channel.comm(), threads);
      m_exposing.resize(threads);
    }
  }

  mixed_transport(mixed_transport const&) = delete;
  mixed_transport& operator=(mixed_transport const&) = delete;

  // After the locations are gone (the run ended with a fence): sends what is
  // still queued, lets the sends complete, frees every buffer left here.
  ~mixed_transport() override {
    for (unsigned n = 0; !m_pending.empty() || m_outgoing.maybe_nonempty() || m_channel.sending() || m_apart.sending();
         ++n)
      if (!progress()) mpi_nap(n);
    while (auto* b = m_recv_free.pop()) m_channel.recycle(static_cast<buffer*>(b));
    for (auto& s : m_slots) {
      while (auto* b = s->inbox.pop()) delete static_cast<buffer*>(b);
      while (auto* b = s->freed.pop()) delete static_cast<buffer*>(b);
    }
  }

  std::uint32_t threads() const { return m_threads; }
  int rank() const { return m_channel.rank(); }
  int rank_on_node() const { return m_channel.rank_on_node(); }
  MPI_Comm comm() const { return m_channel.comm(); }

  location_id size() const override { return m_size; }
  location_id process_first(location_id) const override { return m_first; }
  location_id process_locations() const override { return m_threads; }
  bool layered() const override { return m_threads > 1 || m_channel.shared_nodes(); }
  std::uint32_t process_of(location_id l) const override { return l / m_threads; }
  std::uint32_t node_of(location_id l) const override {
    return static_cast<std::uint32_t>(m_channel.node_of_rank(static_cast<int>(l / m_threads)));
  }
  std::size_t remote_buffer_bytes() const override { return mpi_channel::eager_bytes; }
  std::size_t max_message_bytes() const override { return mpi_channel::max_message_bytes; }
  std::uint32_t empty_polls_before_yield() const override { return m_polls_before_yield; }

  bool shared_blocks() const override { return m_blocks->active(); }
  void* allocate_shared_block(location_id self, std::size_t bytes, void** peers) override {
    if (!m_blocks->active()) return nullptr;
    return m_blocks->allocate(self - m_first, bytes, peers, [this](auto&& f) { with_mpi_lock(f); });
  }
  void free_shared_block(location_id, void* block) override {
    if (m_blocks->active()) m_blocks->free(block, [this](auto&& f) { with_mpi_lock(f); });
  }

  bool remote_memory() const override { return m_rma.has_value(); }
  bool remote_atomics() const override { return false; }  // rma_windows.hpp says why
  void expose_block(location_id self, std::uint32_t region, void* base, std::size_t bytes,
                    std::size_t header) override {
    m_meeting->meet([&] { m_exposing[self - m_first] = {base, bytes}; },
                    [&] { with_mpi_lock([&] { m_rma->expose(region, m_exposing, header); }); });
  }
  // The last of the rank's threads to withdraw closes the array's window
  // (collective over the ranks; freed only if every thread fenced); nobody
  // waits, so a thread that unwinds without the fence holds no one up.
  bool withdraw_block(location_id, std::uint32_t region, bool collective) override {
    std::lock_guard<std::mutex> const lock(m_withdraw_mutex);
    auto& w = m_withdrawing[region];
    w.all = w.all && collective;
    if (++w.threads == m_threads) {
      bool const all = w.all;
      m_withdrawing.erase(region);
      with_mpi_lock([&] { m_rma->withdraw(region, all); });
    }
    return collective;  // (the blocks are node_blocks', freed after the window)
  }
  void start_remote(location_id self, location_id owner, remote_op const& op, std::span<std::byte const> operands,
                    remote_completion* done) override {
    with_mpi_lock([&] {
      m_rma->start(self - m_first, static_cast<int>(owner / m_threads), owner % m_threads, owner, op, operands, done);
    });
  }

  // Lent ranges to other ranks go apart (apart_channel.hpp), started and
  // received under the MPI lock; to a thread of this rank, by reference
  // (the location's own).
  std::size_t apart_min_bytes(location_id dest) const override {
    return dest - m_first < m_threads ? 0 : apart_channel::min_bytes(node_of(dest) == node_of(m_first));
  }
  std::uint64_t send_apart(location_id self, location_id dest, void const* from, std::size_t bytes,
                           std::atomic<std::uint32_t>& returned) override {
    std::uint64_t tag = 0;
    m_apart_sending.fetch_add(1, std::memory_order_seq_cst);
    with_mpi_lock([&] { tag = m_apart.send(from, bytes, static_cast<int>(dest / m_threads), {&returned, self}); });
    return tag;
  }
  // Polls under the MPI lock when free, and drives MPI for the rank's
  // other threads meanwhile.
  std::byte const* receive_apart(location_id self, location_id source, std::uint64_t tag, std::size_t bytes) override {
    slot& s = local(self);
    return m_apart.receive(static_cast<int>(source / m_threads), tag, bytes, s.apart, m_spin, [this](auto&& f) {
      if (!try_mpi_lock()) return false;
      bool const done = f();
      m_lock.store(false, std::memory_order_seq_cst);
      try_progress();
      return done;
    });
  }
  void release_apart(location_id self, std::byte const* range) override {
    slot& s = local(self);
    s.apart.release(range);
  }

  void attach(location_id self, std::vector<buffer*>& pool) override { m_rings->attach(self - m_first, pool); }
  std::size_t copy_limit() const override { return ring_slot_payload; }
  bool send_copy(location_id dest, buffer const& b) override {
    return dest - m_first < m_threads && m_rings->send_copy(b.source - m_first, dest - m_first, b);
  }

  send_path send(location_id dest, buffer* b) override {
    if (dest - m_first < m_threads) {
      m_rings->send(b->source - m_first, dest - m_first, b);
      return send_path::process;
    }
    b->dest = dest;
    m_outgoing.push(b);
    m_posted.fetch_add(1, std::memory_order_seq_cst);
    try_progress(false);  // sending: arrivals wait for the next poll
    return send_path::message;
  }

  buffer* receive(location_id self) override {
    if (m_rma && m_rma->completed(self - m_first)) m_rma->finish(self - m_first);
    if (buffer* b = m_rings->receive(self - m_first)) return b;
    slot& s = local(self);
    if (auto* b = s.inbox.pop()) return static_cast<buffer*>(b);
    if (!try_progress()) return nullptr;
    return static_cast<buffer*>(s.inbox.pop());
  }

  void release(location_id, buffer* first, buffer* last) override {
    if (first->owner - m_first < m_threads) {
      slot& s = local(first->owner);
      s.freed.push_chain(first, last);
      wake(s);
    } else {
      m_recv_free.push_chain(first, last);  // received from another rank: receive into it again
    }
  }

  buffer* reclaim(location_id self) override { return static_cast<buffer*>(local(self).freed.pop()); }

  // As on the threads backend: a buffer to a thread of this rank comes back
  // once executed, one to another rank once MPI has sent it.
  void want_service(location_id, bool on) override { m_service.change(on); }
  bool service_wanted(location_id) const override { return m_service.wanted(); }

  std::uint32_t wake_token(location_id self) const override {
    return m_slots[self - m_first]->signal.load(std::memory_order_seq_cst);
  }

  bool idle_wait(location_id self, std::uint32_t seen, answer_watch answer) override {
    slot& s = local(self);
    auto work = [&] {
      return answer.answered() || m_rings->arrived(self - m_first) || s.inbox.maybe_nonempty() ||
             s.freed.maybe_nonempty() || (m_rma && m_rma->completed(self - m_first)) ||
             s.signal.load(std::memory_order_seq_cst) != seen;
    };
    bool const found = mpi_spin(m_spin, [&] {
      try_progress();
      if (work()) return true;
      ARMI_CPU_RELAX();
      return false;
    });
    if (found) return s.naps = 0, false;
    for (unsigned i = 0; i < m_yields; ++i) {
      std::this_thread::yield();
      try_progress();
      if (work()) return s.naps = 0, false;
    }
    // A range sent apart moves only while MPI is driven (between hosts its
    // receiver asks for the bytes once the request runs): no nap.
    if (m_apart_sending.load(std::memory_order_seq_cst) != 0) return false;
    // With an overflow of its own to move on (nobody signals as a receiver
    // frees ring slots), the shortest nap.
    long const nap_us = m_rings->overflowing(self - m_first) ? 20L : std::min(20L << std::min(s.naps++, 6u), 1000L);
    std::unique_lock<std::mutex> lock(s.mutex);
    s.sleeping.store(true, std::memory_order_seq_cst);
    if (!work()) s.wakeup.wait_for(lock, std::chrono::microseconds(nap_us));
    s.sleeping.store(false, std::memory_order_relaxed);
    return true;
  }

  // Cells for the threads of this rank only: another rank's are in another process.
  answer_cell* answer_cells(location_id, location_id loc) override {
    return loc - m_first < m_threads ? local(loc).answers : nullptr;
  }
  void post_answer(location_id self, location_id loc, std::atomic<std::uint32_t>& word,
                   std::uint32_t number) override {
    transport::post_answer(self, loc, word, number);  // seq_cst: the symmetric handshake (wake_fence.hpp)
    wake(local(loc));
  }
  void post_return(location_id self, location_id loc, std::atomic<std::uint32_t>& word) override {
    transport::post_return(self, loc, word);
    wake(local(loc));
  }

  // The rank's threads add their counters here; the last of them to arrive
  // asks the MPI driver to start the MPI_Iallreduce of the rank's total.
  void sum_contribute(location_id, std::uint64_t round, std::uint64_t const (&values)[2]) override {
    m_local_sum[0].fetch_add(values[0], std::memory_order_relaxed);
    m_local_sum[1].fetch_add(values[1], std::memory_order_relaxed);
    std::uint64_t const arrived = m_contributions.fetch_add(1, std::memory_order_acq_rel) + 1;
    if (arrived == (round + 1) * m_threads) {
      m_sum_post.store(true, std::memory_order_release);
      m_posted.fetch_add(1, std::memory_order_seq_cst);
      try_progress();
    }
  }
  bool sum_ready(std::uint64_t round) const override { return m_sums_done.load(std::memory_order_acquire) > round; }
  void sum_result(std::uint64_t, std::uint64_t (&values)[2]) const override {
    values[0] = m_sum_result[0];
    values[1] = m_sum_result[1];
  }

 private:
  struct slot {  // aligned by its members, apart_bytes apart
    alignas(apart_bytes) mpsc_queue inbox;
    alignas(apart_bytes) mpsc_queue freed;
    alignas(apart_bytes) std::atomic<std::uint32_t> signal{0};
    std::atomic<bool> sleeping{false};
    unsigned naps = 0;  // naps in a row; the slot's location only
    std::mutex mutex;
    std::condition_variable wakeup;
    alignas(apart_bytes) answer_cell answers[answer_cells_per_location];  // the location's (answers.hpp)
    apart_buffers apart;  // ranges received apart that its running request reads
  };

  slot& local(location_id l) { return *m_slots[l - m_first]; }

  struct waker {
    std::vector<std::unique_ptr<slot>> const* all;
    void operator()(location_id local_dest) const { wake(*(*all)[local_dest]); }
  };

  // Wakes s's location if it sleeps (a spinning one sees its rings and
  // queues itself).  The push or ring store before and the sleeper's store
  // of `sleeping` before its last look are seq_cst: one side always sees the
  // other.
  static void wake(slot& s) {
    if (s.sleeping.load(std::memory_order_seq_cst)) {
      std::lock_guard<std::mutex> g(s.mutex);
      s.signal.fetch_add(1, std::memory_order_seq_cst);
      s.wakeup.notify_one();
    }
  }

  // Takes m_lock if no thread holds it (a load first: no write while it is held).
  bool try_mpi_lock() {
    return !m_lock.load(std::memory_order_seq_cst) && !m_lock.exchange(true, std::memory_order_seq_cst);
  }

  // Runs progress() if no other thread is; true if it did anything.  The
  // holder looks at m_posted again after unlocking, so work queued by a
  // thread that found the lock taken is never left behind.  receiving: also
  // take in arrivals (a sender leaves them to the next poll).
  bool try_progress(bool receiving = true) {
    bool any = false;
    for (;;) {
      if (!try_mpi_lock()) return any;
      std::uint64_t const seen = m_posted.load(std::memory_order_seq_cst);
      any |= progress(receiving);
      m_lock.store(false, std::memory_order_seq_cst);
      if (m_posted.load(std::memory_order_seq_cst) == seen) return any;
    }
  }

  // Runs f under m_lock, waiting for it (for a collective MPI call the
  // whole rank is in, node_blocks.hpp), then does what was queued meanwhile.
  template <class F>
  void with_mpi_lock(F&& f) {
    while (!try_mpi_lock()) std::this_thread::yield();
    f();
    m_lock.store(false, std::memory_order_seq_cst);
    try_progress();
  }

  // The MPI driver, under m_lock.  True if it moved anything.
  bool progress(bool receiving = true) {
    bool any = false;
    while (auto* b = m_recv_free.pop()) m_channel.recycle(static_cast<buffer*>(b));
    while (auto* b = m_outgoing.pop()) m_pending.push_back(static_cast<buffer*>(b));
    // Completed sends: when polling, or when no send slot is left.
    if ((receiving || !m_channel.can_send()) && m_channel.sending() && m_channel.complete_sends(m_done)) {
      for (buffer* b : m_done) {
        slot& s = local(b->owner);
        s.freed.push(b);
        wake(s);
      }
      m_done.clear();
      any = true;
    }
    while (!m_pending.empty() && m_channel.can_send()) {
      buffer* b = m_pending.front();
      m_pending.pop_front();
      int const from = static_cast<int>(b->source - m_first), to = static_cast<int>(b->dest % m_threads);
      int const tag = tag_base + 2 * (from * static_cast<int>(m_threads) + to) + static_cast<int>(b->epoch & 1);
      m_channel.send(b, static_cast<int>(b->dest / m_threads), tag);
      any = true;
    }
    if (m_sum_post.load(std::memory_order_acquire)) {
      m_sum_post.store(false, std::memory_order_relaxed);
      std::uint64_t const total[2] = {m_local_sum[0].exchange(0, std::memory_order_relaxed),
                                      m_local_sum[1].exchange(0, std::memory_order_relaxed)};
      m_channel.sum_start(total);
      m_sum_active = true;
    }
    if (m_sum_active && m_channel.sum_test()) {
      m_sum_active = false;
      m_sum_result[0] = m_channel.sum(0);
      m_sum_result[1] = m_channel.sum(1);
      m_sums_done.fetch_add(1, std::memory_order_release);
      for (auto& s : m_slots) {
        // Unconditional bump: a location still spinning must see it too.
        s->signal.fetch_add(1, std::memory_order_seq_cst);
        wake(*s);
      }
      any = true;
    }
    if (m_rma && m_rma->in_flight() && m_rma->poll([this](std::uint32_t thread) { wake(*m_slots[thread]); }))
      any = true;
    if (m_apart.sending() && m_apart.complete([this](apart_channel::loan const& l) {
          m_apart_sending.fetch_sub(1, std::memory_order_seq_cst);
          wake(local(l.lender));
        }))
      any = true;
    for (int k = 0; receiving && k < 64; ++k) {
      int tag = 0;
      buffer* b = m_channel.receive(tag);
      if (b == nullptr) break;
      int const pair = (tag - tag_base) >> 1;
      std::uint32_t const from = static_cast<std::uint32_t>(pair) / m_threads,
                          to = static_cast<std::uint32_t>(pair) % m_threads;
      b->source = b->source * m_threads + from;  // the channel set the rank
      b->owner = b->source;                      // another rank's: comes back through release()
      b->epoch = static_cast<std::uint32_t>(tag - tag_base) & 1;
      slot& s = *m_slots[to];
      s.inbox.push(b);
      wake(s);
      any = true;
    }
    return any;
  }

  mpi_channel m_channel;
  apart_channel m_apart;  // under m_lock
  std::uint32_t m_threads = 1;
  location_id m_first = 0;
  location_id m_size = 1;
  std::vector<std::unique_ptr<slot>> m_slots;
  std::optional<pair_rings<waker>> m_rings;  // between the rank's threads (set up once m_slots is)
  std::optional<node_blocks> m_blocks;       // global_array blocks shared with the node's other ranks
  std::optional<rank_meeting> m_meeting;     // the threads' collective steps for the RMA windows
  std::optional<rma_windows> m_rma;          // with --armi-mpi-rma=on
  std::vector<rma_windows::block> m_exposing;  // [thread]: its block, while the threads meet to expose
  struct withdrawal {
    std::uint32_t threads = 0;  // of the rank, that withdrew their blocks
    bool all = true;            // whether all of them fenced (collective)
  };
  std::mutex m_withdraw_mutex;
  std::unordered_map<std::uint32_t, withdrawal> m_withdrawing;  // [region]
  mpi_spin_budget m_spin;
  unsigned m_yields = 16;
  std::uint32_t m_polls_before_yield = 4096;

  // Shared by the rank's threads.
  alignas(64) std::atomic<bool> m_lock{false};
  alignas(64) std::atomic<std::uint64_t> m_posted{0};  // bumped after queueing work for the driver
  mpsc_queue m_outgoing;   // buffers for other ranks (dest set)
  mpsc_queue m_recv_free;  // executed buffers that came from other ranks
  alignas(64) std::atomic<std::uint64_t> m_local_sum[2] = {0, 0};
  std::atomic<std::uint64_t> m_contributions{0};
  std::atomic<bool> m_sum_post{false};
  std::atomic<std::uint64_t> m_sums_done{0};
  std::uint64_t m_sum_result[2] = {0, 0};  // written before m_sums_done is bumped
  service_count m_service;  // this rank's threads asking to be served
  std::atomic<std::uint32_t> m_apart_sending{0};  // ranges sent apart, in flight

  // The driver's own (under m_lock).
  std::deque<buffer*> m_pending;  // waiting for a free send slot
  std::vector<buffer*> m_done;
  bool m_sum_active = false;
};

}  // namespace armi::detail
