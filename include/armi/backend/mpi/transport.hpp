// The mpi backend's transport: one location per MPI rank (MPICH).
//
// The MPI side is an mpi_channel (channel.hpp): one non-blocking message per
// buffer, a bounded number in flight, buffers recycled, arrivals by matched
// probe, the fence sum as an MPI_Iallreduce.  Between ranks of one node
// (unless --armi-mpi-shm=off), buffers of up to a quarter of a ring (128 KiB)
// are copied through shared memory instead (node_rings.hpp), and larger ones
// go as MPI messages on the node's communicator, each announced in the
// pair's ring so that a pair's buffers arrive in the order they were sent.
// A large lent view (armi::lend) to another rank goes apart
// (apart_channel.hpp): a message of its own from the caller's memory.
// A buffer for a full ring waits in the pair's queue (counted in flight, so
// flow control bounds it) and moves on at the next send, receive or idle
// look.  When every rank shares the node, the job's communicator carries no
// buffers and is not probed.  Nothing waits inside MPI:
// MPICH's blocking calls spin a core, and on an oversubscribed machine two
// spinning ranks cost a scheduler tick per round trip, so an idle rank polls
// a few times, yields, then sleeps in short, growing naps.
//
// Global memory: blocks of the node's ranks in shared windows (with the node
// rings); with --armi-mpi-rma=on, gets and puts to other ranks by MPI-3 RMA
// (rma_windows.hpp), tested in the same polls as arrivals.
//
// Thread safety: one thread per process calls it (MPI_THREAD_FUNNELED).
#pragma once

#include <armi/backend/mpi/apart_channel.hpp>
#include <armi/backend/mpi/channel.hpp>
#include <armi/backend/mpi/node_rings.hpp>
#include <armi/backend/mpi/rma_windows.hpp>
#include <armi/backend/mpi/session.hpp>
#include <armi/core/error.hpp>
#include <armi/core/transport.hpp>
#include <armi/serialization/bulk_copies.hpp>

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace armi::detail {

class mpi_transport final : public transport {
 public:
  // Buffers travel with tag data_tag + (sender's fence epoch & 1), so the
  // receiver can hold back those sent after their sender left a fence.
  static constexpr int data_tag = 0x4152;  // "AR"

  // Collective over world.  node_shm: whether ranks of a node exchange
  // through shared memory; off on every rank if any rank asks for off (the
  // ranks agree first: a rank that built the window alone would wait for
  // the others forever).
  // rma: one-sided gets and puts to ranks without a shared window by MPI RMA.
  explicit mpi_transport(MPI_Comm world, bool node_shm = true, bool rma = false)
      : m_channel(world), m_apart(m_channel.comm(), m_channel.tag_ub()) {
    if (rma) m_rma.emplace(m_channel.comm(), 1);
    m_oversubscribed = mpi_oversubscribed(m_channel, 1);
    m_spin = mpi_spin_budget::for_rank(m_oversubscribed);
    int wanted = node_shm ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &wanted, 1, MPI_INT, MPI_MIN, m_channel.comm());  // once, at start
    if (wanted != 0 && m_channel.size() > 1) {
      m_node.emplace(m_channel.comm());
      if (m_node->peers() > 1) {
        m_queued.resize(static_cast<std::size_t>(m_node->peers()));
        m_probe_job = !m_node->whole_job();
      } else {
        m_node.reset();  // alone on its node (collective over that node only)
      }
    }
  }

  mpi_transport(mpi_transport const&) = delete;
  mpi_transport& operator=(mpi_transport const&) = delete;

  ~mpi_transport() override {
    for (buffer* b : m_done) delete b;
    for (buffer* b : m_arrived) delete b;
    for (auto& q : m_queued)
      for (buffer* b : q) delete b;
    // m_channel completes the sends still in flight and frees its buffers.
  }

  location_id size() const override { return static_cast<location_id>(m_channel.size()); }
  location_id process_first(location_id self) const override { return self; }
  location_id process_locations() const override { return 1; }
  bool layered() const override { return m_channel.shared_nodes(); }
  std::uint32_t node_of(location_id l) const override {
    return static_cast<std::uint32_t>(m_channel.node_of_rank(static_cast<int>(l)));
  }
  bool shares_memory(location_id self, location_id dest) const override {
    return self == dest || (m_node && m_node->peer_of(static_cast<int>(dest)) >= 0);
  }
  // Lent ranges go apart to every other rank (apart_channel.hpp).
  std::size_t apart_min_bytes(location_id dest) const override {
    return apart_channel::min_bytes(node_of(dest) == node_of(static_cast<location_id>(rank())));
  }
  std::uint64_t send_apart(location_id self, location_id dest, void const* from, std::size_t bytes,
                           std::atomic<std::uint32_t>& returned) override {
    return m_apart.send(from, bytes, static_cast<int>(dest), {&returned, self});
  }
  std::byte const* receive_apart(location_id, location_id source, std::uint64_t tag, std::size_t bytes) override {
    return m_apart.receive(static_cast<int>(source), tag, bytes, m_apart_buffers, m_spin, [](auto&& f) { return f(); });
  }
  void release_apart(location_id, std::byte const* range) override { m_apart_buffers.release(range); }

  std::size_t remote_buffer_bytes() const override { return mpi_channel::eager_bytes; }
  std::size_t max_message_bytes() const override { return mpi_channel::max_message_bytes; }
  int rank() const { return m_channel.rank(); }
  int rank_on_node() const { return m_channel.rank_on_node(); }
  MPI_Comm comm() const { return m_channel.comm(); }

  // Global memory: a block in an MPI-3 shared window over the node's ranks
  // (only with the node rings, --armi-mpi-shm), one window per array.
  bool shared_blocks() const override { return m_node.has_value(); }
  void* allocate_shared_block(location_id, std::size_t bytes, void** peers) override {
    if (!m_node) return nullptr;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each rank's part page-aligned
    void* base = nullptr;
    MPI_Win win = MPI_WIN_NULL;
    MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, info, m_node->node_comm(), &base, &win);
    MPI_Info_free(&info);
    for (int peer = 0; peer < m_node->peers(); ++peer) {
      MPI_Aint part = 0;
      int unit = 0;
      void* theirs = nullptr;
      MPI_Win_shared_query(win, peer, &part, &unit, &theirs);
      peers[m_node->rank_of(peer)] = theirs;
    }
    m_shared_blocks.push_back({base, win});
    return base;
  }
  void free_shared_block(location_id, void* block) override {
    for (auto it = m_shared_blocks.begin(); it != m_shared_blocks.end(); ++it)
      if (it->base == block) {
        MPI_Win_free(&it->win);
        m_shared_blocks.erase(it);
        return;
      }
  }

  bool remote_memory() const override { return m_rma.has_value(); }
  bool remote_atomics() const override { return false; }  // rma_windows.hpp says why
  void expose_block(location_id, std::uint32_t region, void* base, std::size_t bytes, std::size_t header) override {
    rma_windows::block const mine{base, bytes};
    m_rma->expose(region, {&mine, 1}, header);
  }
  bool withdraw_block(location_id, std::uint32_t region, bool collective) override {
    return m_rma->withdraw(region, collective);
  }
  void start_remote(location_id, location_id owner, remote_op const& op, std::span<std::byte const> operands,
                    remote_completion* done) override {
    m_rma->start(0, static_cast<int>(owner), 0, owner, op, operands, done);
  }

  std::size_t copy_limit() const override { return m_node ? m_node->copy_limit() : 0; }
  send_path copy_path() const override { return send_path::node; }
  void attach(location_id, std::vector<buffer*>& pool) override { m_pool = &pool; }
  bool send_copy(location_id dest, buffer const& b) override {
    int const peer = ring_peer(dest);
    return peer >= 0 && m_node->copy(peer, b);
  }
  std::byte* direct_reserve(location_id dest, std::size_t bytes) override {
    int const peer = ring_peer(dest);
    return peer >= 0 && bytes <= m_node->copy_limit() ? m_node->reserve(peer, bytes) : nullptr;
  }
  void direct_send(location_id dest, buffer const& b) override {
    m_node->commit(m_node->peer_of(static_cast<int>(dest)), b);
  }

  send_path send(location_id dest, buffer* b) override {
    if (m_node) {
      if (int const peer = m_node->peer_of(static_cast<int>(dest)); peer >= 0) {
        node_send(peer, b);
        return send_path::node;
      }
    }
    // Too many sends outstanding: wait for some to complete, taking in what
    // arrives meanwhile (a peer may be waiting for us to match its sends).
    while (!m_channel.can_send()) {
      bool const moved = collect_sent();
      bool const pulled = pull_arrival();
      if (!moved && !pulled) back_off();
    }
    m_idle = 0;
    m_channel.send(b, static_cast<int>(dest), data_tag + static_cast<int>(b->epoch & 1));
    return send_path::message;
  }

  buffer* receive(location_id) override {
    if (m_rma) {
      if (m_rma->in_flight()) m_rma->poll([](std::uint32_t) {});
      if (m_rma->completed(0)) m_rma->finish(0);
    }
    if (!m_arrived.empty()) {
      buffer* b = m_arrived.front();
      m_arrived.pop_front();
      return b;
    }
    if (m_node) {
      if (m_queued_peers != 0) drain_queues();
      if (buffer* b = node_receive()) return b;
      if (!m_probe_job) return nullptr;
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

  // A buffer waits in a queue of ours while its peer's ring is full, until
  // that peer reads it; a marked one, larger than the eager limit, until
  // the peer receives it.  So the node's other ranks are asked.  (A send to
  // another node completes without its receiver, eagerly.)
  void want_service(location_id, bool on) override {
    if (!m_node) return;
    for (int p = 0; p < m_node->peers(); ++p)
      if (p != m_node->self()) m_node->want_service(p, on);
  }
  bool service_wanted(location_id) const override { return m_node && m_node->service_wanted(); }

  std::uint32_t wake_token(location_id) const override { return 0; }

  // Polls MPI for anything that would let the location go on: an arrival, a
  // completed send, a completed fence sum.  Spins (each spin is an MPI poll;
  // with a core of its own, for mpi_spin_time at least), yields, then naps
  // with growing length while nothing happens.
  bool idle_wait(location_id, std::uint32_t, answer_watch) override {
    if (mpi_spin(m_spin, [this] { return something_happened(); })) return false;
    for (unsigned i = 0; i < 4; ++i) {
      std::this_thread::yield();
      if (something_happened()) return false;
    }
    // A range sent apart moves only while its sender calls MPI (between
    // hosts its receiver asks for the bytes once the request runs): no nap.
    if (m_apart.sending()) return false;
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

  // dest's index on this node when a buffer for it may go into its ring
  // now (the node's rings are on, dest shares them, nothing is queued for
  // it); -1 otherwise.
  int ring_peer(location_id dest) const {
    if (!m_node) return -1;
    int const peer = m_node->peer_of(static_cast<int>(dest));
    return peer >= 0 && m_queued[static_cast<std::size_t>(peer)].empty() ? peer : -1;
  }

  // A buffer for peer: copied into its ring, or sent on the node's
  // communicator and marked there; behind the buffers already queued for it.
  void node_send(int peer, buffer* b) {
    auto& q = m_queued[static_cast<std::size_t>(peer)];
    if (!q.empty()) drain_queue(peer);
    if (q.empty() && node_put(peer, b)) return;
    if (q.empty()) ++m_queued_peers;
    q.push_back(b);
  }

  // Puts b into peer's ring (a copy or a mark) if there is room; a copied b
  // is free at once and comes back through reclaim().
  bool node_put(int peer, buffer* b) {
    if (b->size <= m_node->copy_limit()) {
      if (!m_node->copy(peer, *b)) return false;
      m_done.push_back(b);
      return true;
    }
    if (!m_channel.can_send() || !m_node->room(peer)) return false;
    m_channel.send(b, peer, data_tag, m_node->node_comm());
    m_node->mark(peer, *b);
    return true;
  }

  // Moves peer's queue into its ring as far as there is room; true if any moved.
  bool drain_queue(int peer) {
    auto& q = m_queued[static_cast<std::size_t>(peer)];
    bool moved = false;
    while (!q.empty() && node_put(peer, q.front())) {
      q.pop_front();
      moved = true;
    }
    if (moved && q.empty()) --m_queued_peers;
    return moved;
  }
  bool drain_queues() {
    bool moved = false;
    for (int p = 0; p < m_node->peers() && m_queued_peers != 0; ++p) moved = drain_queue(p) || moved;
    return moved;
  }

  // The next buffer from a rank of the node, from the peers in turn, or
  // nullptr.  A marked buffer whose MPI message is still on the way holds
  // its pair back (the pair's order) but not the others.
  buffer* node_receive() {
    int const n = m_node->peers();
    for (int i = 0; i < n; ++i) {
      int const peer = m_next_peer;
      m_next_peer = peer + 1 == n ? 0 : peer + 1;
      node_rings::arrival a;
      if (peer == m_node->self() || !m_node->peek(peer, a)) continue;
      int const rank = m_node->rank_of(peer);
      buffer* b;
      if (a.mark) {
        b = m_channel.receive_from(m_node->node_comm(), peer);
        if (b == nullptr) continue;
        if (b->size != a.bytes)
          fatal_exit("armi (mpi backend): rank " + std::to_string(rank) + " announced a buffer of " +
                     std::to_string(a.bytes) + " bytes and sent " + std::to_string(b->size));
        b->owner = static_cast<location_id>(rank);  // != self: comes back through release()
      } else {
        b = take_pooled(*m_pool, a.bytes);
        std::memcpy(b->data.get(), a.data, a.bytes);
        count_copy(a.bytes);
        b->size = a.bytes;
        b->owner = static_cast<location_id>(m_channel.rank());  // the location's own: back to its pool
      }
      b->count = a.count;
      b->epoch = a.epoch;
      b->source = static_cast<location_id>(rank);
      m_node->pop(peer);
      m_idle = 0;
      m_naps = 0;
      return b;
    }
    return nullptr;
  }

  // Whether node_receive() would find a buffer (a mark counts once its
  // message has arrived: a waiter that spun on the mark alone would keep
  // the core from a sender that shares it).
  bool node_arrival() {
    int const n = m_node->peers();
    for (int peer = 0; peer < n; ++peer) {
      node_rings::arrival a;
      if (peer == m_node->self() || !m_node->peek(peer, a)) continue;
      if (!a.mark) return true;
      if (m_channel.arrived_from(m_node->node_comm(), peer)) return true;
    }
    return false;
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
    // would otherwise be tested on every look until it completes.  Unless
    // the job's communicator is not probed: then the sends' test is the only
    // MPI call a look makes, and a send by rendezvous (a buffer above the
    // eager limit) moves only while its sender calls MPI.
    bool const rare = (++m_looks & 3) == 0;
    bool happened = (m_node && (node_arrival() || (m_queued_peers != 0 && drain_queues()))) ||
                    (m_probe_job && m_channel.arrival_waiting()) || !m_arrived.empty() ||
                    ((rare || !m_probe_job) && collect_sent());
    if (!happened && m_apart.sending()) happened = m_apart.complete([](apart_channel::loan const&) {});
    if (!happened && m_rma)
      happened = m_rma->completed(0) || (m_rma->in_flight() && m_rma->poll([](std::uint32_t) {}));
    if (!happened && rare && !m_channel.sum_done()) happened = m_channel.sum_test();
    if (happened) m_idle = m_naps = 0;
    return happened;
  }

  void back_off() {
    if (++m_idle < m_spin.polls) return;
    nap();
  }

  void nap() { mpi_nap(m_naps++); }

  // mutable: sum_ready() tests the pending MPI_Iallreduce.
  mutable mpi_channel m_channel;
  apart_channel m_apart;          // lent ranges sent apart
  apart_buffers m_apart_buffers;  // and those received
  bool m_oversubscribed = false;
  mpi_spin_budget m_spin;
  unsigned m_idle = 0;
  unsigned m_naps = 0;
  unsigned m_looks = 0;
  std::vector<buffer*> m_done;    // our buffers whose sends completed
  std::deque<buffer*> m_arrived;  // taken in while a send waited, not yet handed out
  // Between the ranks of the node (none with --armi-mpi-shm=off or alone on it):
  std::optional<node_rings> m_node;
  struct shared_block {
    void* base;
    MPI_Win win;
  };
  std::vector<shared_block> m_shared_blocks;  // global_array blocks, each its window (one-sided memory)
  std::optional<rma_windows> m_rma;           // with --armi-mpi-rma=on
  bool m_probe_job = true;                   // whether buffers may come on the job's communicator (always without m_node)
  std::vector<std::deque<buffer*>> m_queued;  // [peer]: buffers waiting for room in its ring
  int m_queued_peers = 0;                     // peers with a queue
  int m_next_peer = 0;                        // where node_receive() looks first
  std::vector<buffer*>* m_pool = nullptr;     // the location's empty buffers (attach)
  std::uint64_t m_sum_round = ~std::uint64_t{0};
};

}  // namespace armi::detail
