// What the runtime needs from a backend.  A backend knows bytes and
// destinations, not methods or objects: it moves a filled buffer to a
// destination, gives arrived buffers back on poll, returns executed buffers to
// their owner, puts an idle location to sleep until something may have
// changed, and offers the one collective the fence needs (a sum over all
// locations that a location can wait on while it keeps serving requests).
//
// Calls are per buffer or per fence round, never per request (but for
// post_answer, once per sync_rmi answered in place), so the virtual
// dispatch costs nothing measurable.
#pragma once

#include <armi/core/answers.hpp>
#include <armi/core/buffer.hpp>
#include <armi/core/error.hpp>
#include <armi/core/handle.hpp>
#include <armi/core/remote_memory.hpp>
#include <armi/core/stats.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <thread>
#include <vector>

namespace armi::detail {

// True when `threads` busy threads outnumber this machine's hardware
// threads (never when that number is unknown): then the transports wait by
// sleeping early rather than spinning, and keep the symmetric wake
// handshake (wake_fence.hpp).
inline bool outnumber_cores(std::uint64_t threads) {
  unsigned const hw = std::thread::hardware_concurrency();
  return hw != 0 && threads > hw;
}

// The count of a process's locations that ask to be served
// (transport::want_service), for transports whose every location may hold
// another's buffers (threads, mixed): read at every buffer a location
// sends, written only as locations start and stop asking, so in a line of
// its own.
struct alignas(64) service_count {
  std::atomic<std::uint32_t> waiting{0};
  void change(bool on) {
    if (on)
      waiting.fetch_add(1, std::memory_order_relaxed);
    else
      waiting.fetch_sub(1, std::memory_order_relaxed);
  }
  bool wanted() const { return waiting.load(std::memory_order_relaxed) != 0; }
};

class transport {
 public:
  virtual ~transport() = default;

  virtual location_id size() const = 0;
  // The locations that share self's address space: [first, first + count).
  // Requests to the others travel as bytes through another process, so
  // method indices need describing (handlers.hpp, method_ref).
  virtual location_id process_first(location_id self) const {
    (void)self;
    return 0;
  }
  virtual location_id process_locations() const { return size(); }
  // Where location l runs, for trees that follow the machine (collectives):
  // its node and its process, numbers that differ between nodes and between
  // processes.  layered(): whether some node or process holds more than one
  // location in a way a tree should follow (mpi, mixed); else both are unused.
  virtual bool layered() const { return false; }
  virtual std::uint32_t node_of(location_id l) const { return l; }
  virtual std::uint32_t process_of(location_id l) const { return l; }
  // Whether a buffer from self reaches dest through memory they share (a
  // copy or a pointer), not through a network or another library's
  // messages: then a message costs little, and aggregation's auto mode
  // treats dest as it treats a location of its own process.
  virtual bool shares_memory(location_id self, location_id dest) const {
    return dest - process_first(self) < process_locations();
  }
  // The byte cap this transport wants for buffers to other processes when the
  // user gave none (--armi-buffer-bytes), or 0 for the runtime's default.
  virtual std::size_t remote_buffer_bytes() const { return 0; }
  // The most bytes one buffer to another process may hold (one request
  // larger than the byte cap travels alone in a buffer of its size); the
  // wire format's own limit (max_record_bytes) applies everywhere.
  virtual std::size_t max_message_bytes() const { return SIZE_MAX; }
  // What messages to other processes cost on the machine this transport
  // models, where it models one (sp2); zeros where a message costs only what
  // it takes here.  Aggregation's auto mode weighs its buffers with it.
  struct message_model {
    std::int64_t message_ns = 0;   // a send costs at least this (sp2: an empty bulk message, one way)
    std::size_t window_bytes = 0;  // a message larger than this waits for its receiver to take part of it
  };
  virtual message_model modeled_messages() const { return {}; }

  // Hands b (filled by location b->source) to dest, and says which way it
  // went (for --armi-stats).  Ownership moves.
  virtual send_path send(location_id dest, buffer* b) = 0;

  // Lent ranges sent apart (armi::lend, serialization/view.hpp): a range
  // that goes as a message of its own, from the lender's memory, while its
  // request names it by a tag.  The smallest range that goes to dest so, or
  // 0 where none does.
  virtual std::size_t apart_min_bytes(location_id dest) const {
    (void)dest;
    return 0;
  }
  // Starts sending [from, from + bytes) to dest apart; returns its tag.
  // Adds 1 to `returned` once it reads the range no more.  Only where
  // apart_min_bytes allows.
  virtual std::uint64_t send_apart(location_id self, location_id dest, void const* from, std::size_t bytes,
                                   std::atomic<std::uint32_t>& returned) {
    (void)self, (void)dest, (void)from, (void)bytes, (void)returned;
    fatal_exit("armi: this transport sends no lent range apart");
  }
  // The range `tag` that source sent self apart, `bytes` long: waits for
  // it (serving nothing meanwhile) and returns memory holding it, self's
  // until release_apart; nullptr where none may come from source.  Throws
  // decode_error for a range of another length.
  virtual std::byte const* receive_apart(location_id self, location_id source, std::uint64_t tag, std::size_t bytes) {
    (void)self, (void)source, (void)tag, (void)bytes;
    return nullptr;
  }
  virtual void release_apart(location_id self, std::byte const* range) { (void)self, (void)range; }
  // A transport that copies small buffers out (threads: into a ring slot)
  // says how many bytes it copies at most, and send_copy then either copies
  // b for dest and returns true (b stays the caller's, free to reuse at
  // once) or returns false (send it with send()).  Arrived copies come from
  // the pool that location self attached: empty buffers it owns, to which
  // it returns them once executed (used on self's thread only).
  virtual std::size_t copy_limit() const { return 0; }
  // Which way the copies of send_copy and direct_send go.
  virtual send_path copy_path() const { return send_path::process; }
  virtual bool send_copy(location_id dest, buffer const& b) {
    (void)dest;
    (void)b;
    return false;
  }
  // A transport that copies can also let a large request be written where
  // the copy would have gone (mpi: the receiver's ring), saving the copy:
  // direct_reserve returns room for a buffer of up to `bytes` bytes to dest
  // (or nullptr: none now, send as usual), and direct_send publishes the
  // buffer written there (b.data is that room).  Between the two the caller
  // sends nothing else to dest.
  virtual std::byte* direct_reserve(location_id dest, std::size_t bytes) {
    (void)dest;
    (void)bytes;
    return nullptr;
  }
  virtual void direct_send(location_id dest, buffer const& b) {
    (void)dest;
    (void)b;
  }
  virtual void attach(location_id self, std::vector<buffer*>& pool) {
    (void)self;
    (void)pool;
  }
  // Next buffer that arrived at self, or nullptr.
  virtual buffer* receive(location_id self) = 0;
  // self is done with the buffers first..last (linked through next), all
  // owned by the same location, first->owner.
  virtual void release(location_id self, buffer* first, buffer* last) = 0;
  // A buffer self owns that a receiver has released, or nullptr.
  virtual buffer* reclaim(location_id self) = 0;

  // Flow control (location::ask_service): self has more than half its
  // limit of buffers in flight (on; flow control waits at the limit), or is
  // back to a quarter (off); each on is followed by one off.  Where a buffer comes back only
  // once its receiver has taken it (executed it, or read it out of a ring
  // that was full), the transport tells the receivers, and
  // service_wanted(r) is then true: r, while it streams buffers out, serves
  // what has arrived after each one.  A transport whose sends complete on
  // their own (MPI between nodes, eagerly) needs neither.
  virtual void want_service(location_id self, bool on) {
    (void)self;
    (void)on;
  }
  virtual bool service_wanted(location_id self) const {
    (void)self;
    return false;
  }

  // A token for idle_wait: read it *before* checking whatever condition the
  // caller waits on, so that an event between that check and the sleep (a
  // fence round completing) is never lost.
  virtual std::uint32_t wake_token(location_id self) const = 0;
  // Blocks self until a buffer may have arrived or been released to it, or
  // something has signalled self since `token` was read, or (a sync_rmi's
  // wait) answer.answered().  Spins briefly, then yields, then sleeps.
  // Returns true if it slept.
  virtual bool idle_wait(location_id self, std::uint32_t token, answer_watch answer) = 0;

  // Answers in place (answers.hpp): the answer_cells_per_location cells of
  // location loc, when this transport keeps cells and loc shares self's
  // process; nullptr otherwise (then every answer is a reply message).
  virtual answer_cell* answer_cells(location_id self, location_id loc) {
    (void)self;
    (void)loc;
    return nullptr;
  }
  // self has written an answer into a cell of loc's: stores `number` into
  // the cell's word, then wakes loc if it sleeps (the order of the two is
  // the transport's wake handshake, wake_fence.hpp).
  virtual void post_answer(location_id self, location_id loc, std::atomic<std::uint32_t>& word,
                           std::uint32_t number) {
    (void)self;
    (void)loc;
    word.store(number, std::memory_order_seq_cst);
  }
  // A view that loc lent (armi::lend) has been read at self: adds 1 to loc's
  // count of returned loans, then wakes loc if it sleeps (the add, seq_cst,
  // comes before the look at loc's sleeping flag: wake_fence.hpp).  Loans
  // stay within a process; this default serves a location lending to itself.
  virtual void post_return(location_id self, location_id loc, std::atomic<std::uint32_t>& word) {
    (void)self;
    (void)loc;
    word.fetch_add(1, std::memory_order_seq_cst);
  }
  // How many fruitless rmi_poll() calls in a row before the location yields
  // its processor: few when locations outnumber cores (a partner may need
  // this one), many otherwise (a yield is a system call).
  virtual std::uint32_t empty_polls_before_yield() const = 0;

  // Moves self's network along without running anything of armi's above it
  // (sp2: takes in packets, sends acknowledgements); for the communication
  // thread while a send of another location it holds waits on a receiver
  // (core/send_stall.hpp).  Only by the thread that holds self.
  virtual void serve_network(location_id self) { (void)self; }

  // Global memory (global_array): blocks that locations of other processes
  // of a node reach by address.  shared_blocks(): whether this transport
  // offers them.  allocate_shared_block is collective over every location
  // (each calls it for the same array, in the same order, after a fence, so
  // none waits on a request meanwhile; it may block in the backend's
  // collective): it returns self's block of `bytes` and writes into peers[l]
  // the address in this process of location l's block, for each location
  // whose block self can reach (the others are left alone).
  // free_shared_block is collective in the same way.
  virtual bool shared_blocks() const { return false; }
  virtual void* allocate_shared_block(location_id self, std::size_t bytes, void** peers) {
    (void)self, (void)bytes, (void)peers;
    return nullptr;
  }
  virtual void free_shared_block(location_id self, void* block) { (void)self, (void)block; }

  // One-sided operations the transport carries out at the owner by itself
  // (core/remote_memory.hpp): remote_memory() says whether it does (gets
  // and puts), remote_atomics() whether the atomic codes too.  Each
  // location exposes its block of an array under the array's region
  // between the two fences of the array's constructor (collective: every
  // location, for the same arrays in the same order); the `header` bytes
  // before base belong to the block and start with its live word (a
  // std::atomic<std::uint32_t>, zero once the array is gone), which a
  // transport may read to tell an operation on a block that is gone.  It
  // withdraws the block after the destructor's fence (collective: false
  // when the destructor runs during unwinding, without the fence); the
  // block's memory may be freed then only if withdraw_block returns true
  // (else it stays, still reachable, to the end of the run).  start_remote sends op (its
  // operands follow) from self to owner; the transport calls
  // done->done(result) later in a receive(self), and a wait (idle_wait)
  // ends when a result has come.  Results from one owner come back in the
  // order their operations went.
  virtual bool remote_memory() const { return false; }
  virtual bool remote_atomics() const { return remote_memory(); }
  virtual void expose_block(location_id self, std::uint32_t region, void* base, std::size_t bytes,
                            std::size_t header) {
    (void)self, (void)region, (void)base, (void)bytes, (void)header;
  }
  virtual bool withdraw_block(location_id self, std::uint32_t region, bool collective) {
    (void)self, (void)region, (void)collective;
    return true;
  }
  virtual void start_remote(location_id self, location_id owner, remote_op const& op,
                            std::span<std::byte const> operands, remote_completion* done) {
    (void)self, (void)owner, (void)op, (void)operands, (void)done;
  }

  // Non-blocking sum over all locations of two counters, for rmi_fence.
  // Every location calls contribute for rounds 0, 1, 2, ... in order.
  virtual void sum_contribute(location_id self, std::uint64_t round, std::uint64_t const (&values)[2]) = 0;
  virtual bool sum_ready(std::uint64_t round) const = 0;
  virtual void sum_result(std::uint64_t round, std::uint64_t (&values)[2]) const = 0;
};

}  // namespace armi::detail
