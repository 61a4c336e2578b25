// Channels between the ranks of one node through shared memory (an MPI-3
// shared window), for the mpi backend: what GASNet's PSHM and Charm++'s
// shared-memory layer do for processes on one node.  Through MPICH, a small
// message between two ranks of a node takes 165-220 ns each way here
// (benchmarks/README.md, mpi_latency); a cache line written by one core and
// read by another, 50-60.
//
// Each ordered pair of a node's ranks (source, dest) has a ring of 64-byte
// lines in dest's part of the window, written only by source and read only
// by dest.  A message takes whole lines: a 16-byte header (a sequence word,
// the size, the request count, the fence epoch), then the buffer's bytes,
// copied in, so a sync_rmi and its answer take one line each.  Messages
// never wrap: one that would runs past the ring's end is preceded by a skip
// to its start.  So is one of 64 lines or more that finds the ring empty
// (rewind_lines), so that a run of large round trips keeps using the same
// lines, warm in the two cores' caches.  The header of the message that
// starts at line i (counting every line ever used) holds i + 1 in its
// sequence word once the message is in, so the sender never waits for the
// receiver to clear anything; the receiver says how far it has read in its
// own cache line (tail), which the sender reads only when the ring seems
// full (or before a rewind).  The ring is 512 KiB on nodes of up to 8
// ranks, smaller above (each rank's rings in 4 MiB: 64 KiB at 64 ranks, 16
// KiB at least), and buffers up to a quarter of it are copied, or written
// there in place by the location (reserve, commit: a request of 4 KiB or
// more, location::make_direct; docs/runtime-measurements.md, "Node rings",
// has the figures).  A larger buffer travels as one MPI message on the node's
// communicator (MPI moves it through its own shared memory or by
// rendezvous), announced by a header-only mark in the ring that keeps the
// pair's messages in the order they were sent.  Nothing here wakes anyone:
// a waiting rank of the mpi backend polls, yields, then naps, and looks at
// its rings each time.
//
// Each rank's part of the window starts with its service line: the count
// of the node's ranks that ask it to take their buffers (out of a full
// ring, or a marked one from MPI: location::ask_service).  The rank reads
// it at each buffer it sends, and serves while it is not zero
// (location::flush).
//
// The memory orders: a message's lines are written before its sequence word
// (release) and read after it (acquire); tail likewise.
//
// Thread safety: none (one thread per process drives the mpi transport).
// Construction and destruction are collective over the communicator.
#pragma once

#include <armi/core/buffer.hpp>
#include <armi/serialization/bulk_copies.hpp>

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <numeric>
#include <vector>

namespace armi::detail {

class node_rings {
 public:
  static constexpr std::size_t line_bytes = 64;
  static constexpr std::size_t header_bytes = 16;

  // What a peer's next message is.
  struct arrival {
    bool mark;             // an MPI message of `bytes` bytes on node_comm()
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

    // 512 KiB rings, smaller where the node's ranks are many.
    std::size_t const lines = std::clamp<std::size_t>(
        std::bit_floor((std::size_t{4} << 20) / static_cast<std::size_t>(m_count) / line_bytes), 256, 8192);
    m_lines = static_cast<std::uint32_t>(lines);
    m_copy_limit = lines * line_bytes / 4 - header_bytes;
    m_channel_bytes = line_bytes * (1 + lines);  // tail's line, then the ring

    // Each rank's part: its service line, a channel per source of the node,
    // its own included (unused), and a line of slack to align it.
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    MPI_Aint const bytes = static_cast<MPI_Aint>(m_channel_bytes * static_cast<std::size_t>(m_count) + 2 * line_bytes);
    void* base = nullptr;
    MPI_Win_allocate_shared(bytes, 1, info, m_node, &base, &m_win);
    MPI_Info_free(&info);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, m_win);
    m_in = aligned(base);
    m_next.assign(static_cast<std::size_t>(m_count), 0);
    new (service_of(m_in)) std::atomic<std::uint32_t>(0);
    for (int i = 0; i < m_count; ++i) {
      new (tail_of(m_in, i)) std::atomic<std::uint32_t>(0);
      for (std::uint32_t l = 0; l < m_lines; ++l) {
        header* h = new (line(m_in, i, l)) header{};
        h->seq.store(l, std::memory_order_relaxed);  // a line's index until a message is in it: see release()
      }
    }
    m_out.resize(static_cast<std::size_t>(m_count));
    for (int i = 0; i < m_count; ++i) {
      MPI_Aint part = 0;
      int unit = 0;
      void* theirs = nullptr;
      MPI_Win_shared_query(m_win, i, &part, &unit, &theirs);
      m_out[static_cast<std::size_t>(i)].base = aligned(theirs);
    }
    // Every ring constructed before anyone writes into one (once, at start).
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
  // The largest buffer copy() takes.
  std::size_t copy_limit() const { return m_copy_limit; }
  // Lines of 64 bytes per ring.
  std::uint32_t lines() const { return m_lines; }

  // Copies b (b.size <= copy_limit()) to peer; false if its ring is full.
  bool copy(int peer, buffer const& b) {
    std::byte* const room = reserve(peer, b.size);
    if (room == nullptr) return false;
    std::memcpy(room, b.data.get(), b.size);
    count_copy(b.size);
    commit(peer, b);
    return true;
  }

  // Room in peer's ring for a buffer of up to `bytes` (<= copy_limit())
  // bytes, to be written there and published by commit(peer, b); nullptr
  // if the ring is full.  Nothing else goes to peer in between.
  std::byte* reserve(int peer, std::size_t bytes) {
    outbox& o = m_out[static_cast<std::size_t>(peer)];
    header* h = claim(o, lines_for(bytes));
    return h == nullptr ? nullptr : reinterpret_cast<std::byte*>(h) + header_bytes;
  }
  // Publishes b, written into the room reserve(peer, b.size or more) returned.
  void commit(int peer, buffer const& b) {
    outbox& o = m_out[static_cast<std::size_t>(peer)];
    header& h = *line(o.base, m_self, o.head % m_lines);
    publish(o, h, lines_for(b.size), static_cast<std::uint32_t>(b.size), b);
  }

  // Tells peer that the pair's next message is the MPI message of b.size
  // bytes just started on node_comm(); false if its ring is full.
  bool mark(int peer, buffer const& b) {
    outbox& o = m_out[static_cast<std::size_t>(peer)];
    header* h = claim(o, 1);
    if (h == nullptr) return false;
    publish(o, *h, 1, static_cast<std::uint32_t>(b.size) | mark_bit, b);
    return true;
  }

  // Whether a mark to peer fits now.
  bool room(int peer) {
    outbox& o = m_out[static_cast<std::size_t>(peer)];
    return free_lines(o, 1);
  }

  // Flow control: this rank asks peer to take its buffers (on) or has
  // stopped asking (off); each on is followed by one off.
  void want_service(int peer, bool on) {
    auto* w = service_of(m_out[static_cast<std::size_t>(peer)].base);
    if (on)
      w->fetch_add(1, std::memory_order_relaxed);
    else
      w->fetch_sub(1, std::memory_order_relaxed);
  }
  // Whether a rank of the node asks this one so to read its ring.
  bool service_wanted() const { return service_of(m_in)->load(std::memory_order_relaxed) != 0; }

  // The next message from peer, if one is there: valid until pop(peer).
  bool peek(int peer, arrival& a) {
    header const* h = next(peer);
    if (h == nullptr) return false;
    a.mark = (h->bytes & mark_bit) != 0;
    a.bytes = h->bytes & ~mark_bit;
    a.count = h->count;
    a.epoch = h->epoch;
    a.data = reinterpret_cast<std::byte const*>(h) + header_bytes;
    return true;
  }
  // Frees the message peek(peer) showed.
  void pop(int peer) {
    std::uint32_t const t = m_next[static_cast<std::size_t>(peer)];
    header const& h = *line(m_in, peer, t % m_lines);
    std::uint32_t const n = (h.bytes & mark_bit) != 0 ? 1 : lines_for(h.bytes);
    release(peer, n, n);
  }

 private:
  static constexpr std::uint32_t mark_bit = std::uint32_t{1} << 31;
  static constexpr std::uint32_t skip_bit = std::uint32_t{1} << 30;
  // A message of this many lines or more that finds the ring empty goes to
  // its start: a round trip of 64 KiB messages otherwise walks the whole
  // ring, as large as a core's L2 cache, and its lines come from memory
  // rather than from the other core.
  static constexpr std::uint32_t rewind_lines = 64;

  // The first 16 bytes of a message's first line.
  struct header {
    std::atomic<std::uint32_t> seq{0};  // i + 1 once the message starting at line i is in
    std::uint32_t bytes = 0;            // copied bytes; or mark_bit | the marked message's size;
                                        // or skip_bit | the lines to skip to the ring's start
    std::uint32_t count = 0;
    std::uint32_t epoch = 0;
  };
  static_assert(sizeof(header) == header_bytes);
  static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "rings between processes need lock-free atomics");

  // The sender's side of one pair, in its own memory.
  struct outbox {
    std::byte* base = nullptr;  // the receiver's part of the window
    std::uint32_t head = 0;     // lines used so far
    std::uint32_t free_seen = 0;  // the receiver's tail as last read
  };

  static std::byte* aligned(void* p) {
    auto const a = reinterpret_cast<std::uintptr_t>(p);
    return reinterpret_cast<std::byte*>((a + line_bytes - 1) & ~std::uintptr_t{line_bytes - 1});
  }
  // In the part at base: the count of ranks waiting for its owner to read
  // their rings (its first line), source's tail, and line l of source's ring.
  static std::atomic<std::uint32_t>* service_of(std::byte* base) {
    return reinterpret_cast<std::atomic<std::uint32_t>*>(base);
  }
  std::atomic<std::uint32_t>* tail_of(std::byte* base, int source) const {
    return reinterpret_cast<std::atomic<std::uint32_t>*>(base + line_bytes +
                                                         m_channel_bytes * static_cast<std::size_t>(source));
  }
  header* line(std::byte* base, int source, std::uint32_t l) const {
    return reinterpret_cast<header*>(base + line_bytes + m_channel_bytes * static_cast<std::size_t>(source) +
                                     line_bytes * (1 + std::size_t{l}));
  }

  static std::uint32_t lines_for(std::size_t bytes) {
    return static_cast<std::uint32_t>((header_bytes + bytes + line_bytes - 1) / line_bytes);
  }

  // Whether n lines are free in o's ring.
  bool free_lines(outbox& o, std::uint32_t n) {
    if (o.head + n - o.free_seen <= m_lines) return true;
    o.free_seen = tail_of(o.base, m_self)->load(std::memory_order_acquire);
    return o.head + n - o.free_seen <= m_lines;
  }

  // The first line of n contiguous free lines in o's ring, a skip written
  // before them if they would run past its end; nullptr if the ring is full.
  header* claim(outbox& o, std::uint32_t n) {
    std::uint32_t const at = o.head % m_lines;
    std::uint32_t skip = at + n > m_lines ? m_lines - at : 0;
    if (skip == 0 && n >= rewind_lines && n <= at &&
        (o.free_seen = tail_of(o.base, m_self)->load(std::memory_order_acquire)) == o.head)
      skip = m_lines - at;  // the ring is empty: back to its start
    if (!free_lines(o, skip + n)) return nullptr;
    if (skip != 0) {
      header& h = *line(o.base, m_self, at);
      h.bytes = skip_bit | skip;
      h.seq.store(o.head + 1, std::memory_order_release);
      o.head += skip;
    }
    return line(o.base, m_self, o.head % m_lines);
  }

  void publish(outbox& o, header& h, std::uint32_t n, std::uint32_t bytes, buffer const& b) {
    h.bytes = bytes;
    h.count = b.count;
    h.epoch = b.epoch;
    h.seq.store(o.head + 1, std::memory_order_release);
    o.head += n;
  }

  // peer's next message in our part, past any skip, or nullptr.
  header const* next(int peer) {
    std::uint32_t& t = m_next[static_cast<std::size_t>(peer)];
    for (;;) {
      header const* h = line(m_in, peer, t % m_lines);
      if (h->seq.load(std::memory_order_acquire) != t + 1) return nullptr;
      if ((h->bytes & skip_bit) == 0) return h;
      release(peer, h->bytes & ~skip_bit, 1);  // the sender wrote only the skip's line
    }
  }

  // Gives the next n lines from peer back to it, the first `written` of
  // which its sender wrote.  Their first words get the line's index first:
  // a header at line l reads i + 1 with i % lines == l, so a line read
  // before its next message is in never looks like one, whatever bytes it
  // held (a data line's).  A free line always holds its index so (a skip's
  // lines after the first were free, and the sender leaves them alone).
  // Writing the lines also helps the sender: here, a line that its next
  // message takes from this core's cache moves faster when this core
  // wrote it last (a 64 KiB copy: 2 us, against 7-10 when it only read it).
  void release(int peer, std::uint32_t n, std::uint32_t written) {
    std::uint32_t& t = m_next[static_cast<std::size_t>(peer)];
    for (std::uint32_t k = 0; k < written; ++k) {
      std::uint32_t const l = (t + k) % m_lines;
      line(m_in, peer, l)->seq.store(l, std::memory_order_relaxed);
    }
    t += n;
    tail_of(m_in, peer)->store(t, std::memory_order_release);
  }

  MPI_Comm m_node = MPI_COMM_NULL;
  MPI_Win m_win = MPI_WIN_NULL;
  int m_count = 1;
  int m_self = 0;
  std::uint32_t m_lines = 0;        // per ring, a power of two
  std::size_t m_copy_limit = 0;
  std::size_t m_channel_bytes = 0;  // tail's line and the ring
  std::vector<int> m_rank_of;       // node index -> rank of comm
  std::vector<int> m_peer_of;       // rank of comm -> node index, or -1
  std::byte* m_in = nullptr;        // this rank's part: its incoming rings, by source
  std::vector<std::uint32_t> m_next;  // [source]: the line our next message from it starts at
  std::vector<outbox> m_out;        // [dest]
};

}  // namespace armi::detail
