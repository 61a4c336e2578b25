// Channels between the ranks of one node through shared memory (an MPI-3
// shared window), for the mpi backend: what GASNet's PSHM and Charm++'s
// shared-memory layer do for processes on one node.  Through MPICH, a small
// message between two ranks of a node takes 165-220 ns each way here
// (benchmarks/README.md, mpi_latency); a cache line written by one core and
// read by another, 50-60.
//
// Each ordered pair of a node's ranks (source, dest) has a ring of 64 slots
// of 256 bytes in dest's part of the window, written only by source and
// read only by dest, as the threads backend's rings are (rings.hpp): a slot
// holds message i once its sequence word reads i + 1; dest says how far it
// has read in its own cache line (tail), which source reads only when the
// ring seems full.  A slot carries either a small buffer's bytes (up to
// `payload`), copied in, or a mark that says "the next message of this pair
// is an MPI message of n bytes on the node communicator": a larger buffer
// travels as one MPI message (MPI copies it once through its own shared
// memory, or moves it by rendezvous), and its mark keeps the pair's messages
// in the order they were sent.  Nothing here wakes anyone: a waiting rank of
// the mpi backend polls, yields, then naps, and looks at its rings each time.
//
// The memory orders: a slot's contents are written before its sequence word
// (release) and read after it (acquire); tail likewise.
//
// Thread safety: none (one thread per process drives the mpi transport).
// Construction and destruction are collective over the communicator.
#pragma once

#include <armi/runtime/buffer.hpp>

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <numeric>
#include <vector>

namespace armi::detail {

class node_rings {
 public:
  static constexpr std::uint32_t ring_slots = 64;  // per ordered pair, a power of two
  static constexpr std::size_t slot_bytes = 256;
  static constexpr std::size_t header_bytes = 16;
  static constexpr std::size_t payload = slot_bytes - header_bytes;  // bytes a slot carries by copy

  // What the next slot from a peer holds.
  struct arrival {
    bool mark;             // the message is an MPI message of `bytes` bytes on node_comm()
    std::uint32_t bytes;   // the buffer's size
    std::uint32_t count;   // its requests
    std::uint32_t epoch;   // its sender's fence epoch
    std::byte const* data; // the copied bytes (not for a mark)
  };

  // Collective over comm (every rank of it calls this).
  explicit node_rings(MPI_Comm comm) {
    int size = 0, rank = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &m_node);
    MPI_Comm_set_errhandler(m_node, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_size(m_node, &m_count);
    MPI_Comm_rank(m_node, &m_self);
    // Which rank of comm each rank of the node is.
    MPI_Group node_group, comm_group;
    MPI_Comm_group(m_node, &node_group);
    MPI_Comm_group(comm, &comm_group);
    std::vector<int> node_ranks(static_cast<std::size_t>(m_count));
    std::iota(node_ranks.begin(), node_ranks.end(), 0);
    m_rank_of.resize(node_ranks.size());
    MPI_Group_translate_ranks(node_group, m_count, node_ranks.data(), comm_group, m_rank_of.data());
    MPI_Group_free(&node_group);
    MPI_Group_free(&comm_group);
    m_peer_of.assign(static_cast<std::size_t>(size), -1);
    for (int i = 0; i < m_count; ++i) m_peer_of[static_cast<std::size_t>(m_rank_of[static_cast<std::size_t>(i)])] = i;

    // Each rank's part: one channel per source of the node, its own included
    // (unused), and a line of slack to align it.
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    MPI_Aint const bytes = static_cast<MPI_Aint>(sizeof(channel) * static_cast<std::size_t>(m_count) + 64);
    void* base = nullptr;
    MPI_Win_allocate_shared(bytes, 1, info, m_node, &base, &m_win);
    MPI_Info_free(&info);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, m_win);
    m_in = aligned(base);
    for (int i = 0; i < m_count; ++i) new (&m_in[i]) channel;
    m_out.resize(static_cast<std::size_t>(m_count));
    for (int i = 0; i < m_count; ++i) {
      MPI_Aint part = 0;
      int unit = 0;
      void* theirs = nullptr;
      MPI_Win_shared_query(m_win, i, &part, &unit, &theirs);
      m_out[static_cast<std::size_t>(i)].ring = &aligned(theirs)[m_self];
    }
    // Every channel constructed before anyone writes into one (once, at start).
    MPI_Barrier(m_node);
  }

  // Collective over the node (MPI_Win_free).
  ~node_rings() {
    MPI_Win_unlock_all(m_win);
    MPI_Win_free(&m_win);
    MPI_Comm_free(&m_node);
  }

  node_rings(node_rings const&) = delete;
  node_rings& operator=(node_rings const&) = delete;

  // The communicator of the node's ranks, on which marked messages travel
  // (their ranks are peer indices).
  MPI_Comm node_comm() const { return m_node; }
  int peers() const { return m_count; }
  int self() const { return m_self; }
  // rank's index on this node, or -1 if it runs on another node.
  int peer_of(int rank) const { return m_peer_of[static_cast<std::size_t>(rank)]; }
  int rank_of(int peer) const { return m_rank_of[static_cast<std::size_t>(peer)]; }
  bool whole_job() const { return static_cast<std::size_t>(m_count) == m_peer_of.size(); }

  // Copies b (b.size <= payload) to peer; false if its ring is full.
  bool copy(int peer, buffer const& b) {
    outbox& o = m_out[static_cast<std::size_t>(peer)];
    slot* s = claim(o);
    if (s == nullptr) return false;
    s->bytes = static_cast<std::uint32_t>(b.size);
    s->count = b.count;
    s->epoch = b.epoch;
    std::memcpy(s->data, b.data.get(), b.size);
    publish(o, *s);
    return true;
  }

  // Tells peer that the pair's next message is the MPI message of b.size
  // bytes just started on node_comm(); false if its ring is full.
  bool mark(int peer, buffer const& b) {
    outbox& o = m_out[static_cast<std::size_t>(peer)];
    slot* s = claim(o);
    if (s == nullptr) return false;
    s->bytes = static_cast<std::uint32_t>(b.size) | mark_bit;
    s->count = b.count;
    s->epoch = b.epoch;
    publish(o, *s);
    return true;
  }

  // Whether a slot to peer is free now.
  bool room(int peer) { return claim(m_out[static_cast<std::size_t>(peer)]) != nullptr; }

  // The next message from peer, if one is there: valid until pop(peer).
  bool peek(int peer, arrival& a) const {
    channel const& c = m_in[peer];
    std::uint32_t const t = c.tail.load(std::memory_order_relaxed);
    slot const& s = c.slots[t % ring_slots];
    if (s.seq.load(std::memory_order_acquire) != t + 1) return false;
    a.mark = (s.bytes & mark_bit) != 0;
    a.bytes = s.bytes & ~mark_bit;
    a.count = s.count;
    a.epoch = s.epoch;
    a.data = s.data;
    return true;
  }
  // Frees the slot peek(peer) showed.
  void pop(int peer) {
    channel& c = m_in[peer];
    c.tail.store(c.tail.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  // Whether any peer's next message is there.
  bool arrived() const {
    for (int i = 0; i < m_count; ++i) {
      channel const& c = m_in[i];
      std::uint32_t const t = c.tail.load(std::memory_order_relaxed);
      if (c.slots[t % ring_slots].seq.load(std::memory_order_acquire) == t + 1) return true;
    }
    return false;
  }

 private:
  static constexpr std::uint32_t mark_bit = std::uint32_t{1} << 31;

  struct alignas(64) slot {
    std::atomic<std::uint32_t> seq{0};  // i + 1 once message i is in
    std::uint32_t bytes = 0;            // copied bytes, or mark_bit | the marked message's size
    std::uint32_t count = 0;
    std::uint32_t epoch = 0;
    std::byte data[payload];
  };
  static_assert(sizeof(slot) == slot_bytes);
  static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "rings between processes need lock-free atomics");

  struct channel {
    alignas(64) std::atomic<std::uint32_t> tail{0};  // written by the receiver only
    slot slots[ring_slots];
  };

  // The sender's side of one pair, in its own memory.
  struct outbox {
    channel* ring = nullptr;  // in the receiver's part of the window
    std::uint32_t head = 0;
    std::uint32_t free_seen = 0;
  };

  static channel* aligned(void* p) {
    auto const a = reinterpret_cast<std::uintptr_t>(p);
    return reinterpret_cast<channel*>((a + 63) & ~std::uintptr_t{63});
  }

  slot* claim(outbox& o) {
    if (o.head - o.free_seen >= ring_slots) {
      o.free_seen = o.ring->tail.load(std::memory_order_acquire);
      if (o.head - o.free_seen >= ring_slots) return nullptr;
    }
    return &o.ring->slots[o.head % ring_slots];
  }

  static void publish(outbox& o, slot& s) {
    s.seq.store(o.head + 1, std::memory_order_release);
    ++o.head;
  }

  MPI_Comm m_node = MPI_COMM_NULL;
  MPI_Win m_win = MPI_WIN_NULL;
  int m_count = 1;
  int m_self = 0;
  std::vector<int> m_rank_of;  // node index -> rank of comm
  std::vector<int> m_peer_of;  // rank of comm -> node index, or -1
  channel* m_in = nullptr;     // [source]: this rank's incoming channels
  std::vector<outbox> m_out;   // [dest]
};

}  // namespace armi::detail
