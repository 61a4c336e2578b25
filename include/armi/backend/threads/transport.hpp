// The threads backend's transport: locations are threads of one process.
//
// Each ordered pair of locations (source, dest) has a channel: a ring of
// one-cache-line slots that only the source writes and only dest reads.
// A slot carries either a small buffer's bytes (up to copy_limit(): a
// sync_rmi and its answer, a lone async_rmi), copied in, or a pointer to a
// larger buffer, which then moves without a copy and goes back to its owner
// through the owner's lock-free free queue once executed.  Copying the small
// ones is what makes a round trip cheap: the receiver reads one line the
// sender wrote, and the sender finds its buffer free at once, where handing
// the buffer over would move its header line, its data line, a queue line
// and, later, the free queue's lines between the two cores.
//
// A slot holds message i when its sequence word reads i + 1, so the sender
// never waits for the receiver to clear it; the receiver says how far it has
// read in its own cache line (tail), which the sender looks at only when the
// ring seems full.  A full ring never blocks the sender: it takes the buffer
// by pointer into an overflow list of its own (no copy: the location counts
// it in flight, so flow control bounds the list) and moves the list into the
// ring as the receiver frees slots, on its next send to that destination or
// poll.  Messages of one pair stay in order; while a pair has an overflow,
// its sends join the list.
//
// An idle location spins briefly, yields, then sleeps on a futex
// (std::atomic::wait) that senders bump: on an oversubscribed machine two
// spinning partners on one core cost a scheduler tick per round trip.
//
// Thread safety: every method may be called concurrently by the locations,
// each passing its own id as self (send's self is b->source).
#pragma once

#include <armi/config.hpp>
#include <armi/runtime/transport.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace armi::detail {

class threads_transport final : public transport {
 public:
  static constexpr std::uint32_t ring_slots = 64;  // per ordered pair, a power of two
  static constexpr std::size_t slot_payload = 48;  // bytes a slot carries by copy

  explicit threads_transport(location_id n)
      : m_size(n),
        m_slots(n),
        m_channels(std::size_t{n} * n),
        m_sums{std::vector<sum_slot>(n), std::vector<sum_slot>(n)} {
    for (auto& s : m_slots) s = std::make_unique<slot>();
    for (auto& s : m_slots) s->out.resize(n);
    unsigned const hw = std::thread::hardware_concurrency();
    bool const oversubscribed = hw != 0 && n > hw;
    m_spins = oversubscribed ? 64 : 4000;
    m_yields = oversubscribed ? 2 : 64;
    m_polls_before_yield = oversubscribed ? 64 : 8192;
  }
  ~threads_transport() override {
    for (auto& c : m_channels) delete c.load(std::memory_order_relaxed);
  }

  std::uint32_t empty_polls_before_yield() const override { return m_polls_before_yield; }

  location_id size() const override { return m_size; }

  void attach(location_id self, std::vector<buffer*>& pool) override { m_slots[self]->pool = &pool; }

  std::size_t copy_limit() const override { return slot_payload; }

  bool send_copy(location_id dest, buffer const& b) override {
    outbox& o = m_slots[b.source]->out[dest];
    if (o.overflow_first != nullptr || b.size > slot_payload) return false;
    ring_slot* s = claim(o, b.source, dest);
    if (s == nullptr) return false;
    s->bytes = static_cast<std::uint32_t>(b.size);
    s->count = b.count;
    s->epoch = b.epoch;
    std::memcpy(s->data, b.data.get(), b.size);
    publish(o, *s, dest);
    return true;
  }

  void send(location_id dest, buffer* b) override {
    slot& me = *m_slots[b->source];
    outbox& o = me.out[dest];
    if (o.overflow_first != nullptr) drain_to(me, o, b->source, dest);
    if (o.overflow_first == nullptr) {
      if (ring_slot* s = claim(o, b->source, dest)) {
        put_pointer(o, *s, dest, b);
        return;
      }
      ++me.overflowing;
      o.overflow_first = b;
    } else {
      o.overflow_last->next.store(b, std::memory_order_relaxed);
    }
    b->next.store(nullptr, std::memory_order_relaxed);
    o.overflow_last = b;
  }

  buffer* receive(location_id self) override {
    slot& me = *m_slots[self];
    if (me.overflowing != 0) drain(self);
    for (location_id i = 0; i < m_size; ++i) {
      location_id const src = me.next_source;
      me.next_source = src + 1 == m_size ? 0 : src + 1;
      channel* c = m_channels[index(src, self)].load(std::memory_order_acquire);
      if (c == nullptr) continue;
      std::uint32_t const t = c->tail.load(std::memory_order_relaxed);
      ring_slot& s = c->slots[t % ring_slots];
      if (s.seq.load(std::memory_order_acquire) != t + 1) continue;
      buffer* b;
      if (s.bytes == pointer_marker) {
        b = s.pointer;
      } else {
        b = spare(me, self);
        std::memcpy(b->data.get(), s.data, s.bytes);
        b->size = s.bytes;
        b->count = s.count;
        b->epoch = s.epoch;
        b->source = src;
      }
      c->tail.store(t + 1, std::memory_order_release);
      return b;
    }
    return nullptr;
  }

  void release(location_id, buffer* first, buffer* last) override {
    slot& s = *m_slots[first->owner];
    s.freed.push_chain(first, last);
    wake(s);
  }
  buffer* reclaim(location_id self) override { return static_cast<buffer*>(m_slots[self]->freed.pop()); }

  std::uint32_t wake_token(location_id self) const override {
    return m_slots[self]->signal.load(std::memory_order_seq_cst);
  }

  bool idle_wait(location_id self, std::uint32_t seen) override {
    slot& s = *m_slots[self];
    auto work = [&] {
      return arrived(self) || s.freed.maybe_nonempty() || s.signal.load(std::memory_order_seq_cst) != seen;
    };
    for (unsigned i = 0; i < m_spins; ++i) {
      if (work()) return false;
      ARMI_CPU_RELAX();
    }
    for (unsigned i = 0; i < m_yields; ++i) {
      if (work()) return false;
      std::this_thread::yield();
    }
    if (s.overflowing != 0) {
      // A receiver has a full ring of ours to work through; no one signals
      // when it frees a slot, so nap and let the caller poll (and move the
      // overflow on) again.
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      return true;
    }
    s.sleeping.store(true, std::memory_order_seq_cst);
    if (!work()) s.signal.wait(seen, std::memory_order_seq_cst);
    s.sleeping.store(false, std::memory_order_relaxed);
    return true;
  }

  void sum_contribute(location_id self, std::uint64_t round, std::uint64_t const (&values)[2]) override {
    sum_slot& mine = m_sums[round & 1][self];
    mine.values[0] = values[0];
    mine.values[1] = values[1];
    std::uint64_t const arrived = m_arrived.fetch_add(1, std::memory_order_acq_rel) + 1;
    if (arrived == (round + 1) * m_size)
      for (auto& s : m_slots) {
        // Unconditional bump: a location still spinning must see it too.
        s->signal.fetch_add(1, std::memory_order_seq_cst);
        if (s->sleeping.load(std::memory_order_seq_cst)) s->signal.notify_one();
      }
  }
  bool sum_ready(std::uint64_t round) const override {
    return m_arrived.load(std::memory_order_acquire) >= (round + 1) * m_size;
  }
  void sum_result(std::uint64_t round, std::uint64_t (&values)[2]) const override {
    values[0] = values[1] = 0;
    for (auto const& s : m_sums[round & 1]) {
      values[0] += s.values[0];
      values[1] += s.values[1];
    }
  }

 private:
  static constexpr std::uint32_t pointer_marker = ~std::uint32_t{0};

  // Message i of a channel, in slot i % ring_slots: seq == i + 1 once written.
  struct alignas(64) ring_slot {
    std::atomic<std::uint32_t> seq{0};
    std::uint32_t bytes = 0;  // copied bytes, or pointer_marker
    std::uint32_t count = 0;
    std::uint32_t epoch = 0;
    union {
      buffer* pointer;
      alignas(8) std::byte data[slot_payload];
    };
  };
  static_assert(sizeof(ring_slot) == 64);

  struct channel {
    alignas(64) std::atomic<std::uint32_t> tail{0};  // written by the receiver only
    ring_slot slots[ring_slots];
  };

  // A sender's side of one channel, touched by the sender only.
  struct outbox {
    channel* ring = nullptr;
    std::uint32_t head = 0;       // next message's number
    std::uint32_t free_seen = 0;  // the receiver's tail as last read
    buffer* overflow_first = nullptr;
    buffer* overflow_last = nullptr;
  };

  struct alignas(64) slot {
    mpsc_queue freed;
    alignas(64) std::atomic<std::uint32_t> signal{0};
    std::atomic<bool> sleeping{false};
    // Touched by the owner only:
    alignas(64) std::vector<outbox> out;
    std::uint32_t overflowing = 0;  // outboxes with an overflow list
    location_id next_source = 0;    // where receive() looks first
    std::vector<buffer*>* pool = nullptr;
  };
  struct alignas(64) sum_slot {
    std::uint64_t values[2]{};
  };

  std::size_t index(location_id src, location_id dest) const { return std::size_t{dest} * m_size + src; }

  // The slot for the sender's next message to dest, or nullptr if the ring
  // is full.  A channel comes into being at its first message.
  ring_slot* claim(outbox& o, location_id src, location_id dest) {
    if (o.ring == nullptr) {
      o.ring = new channel;
      m_channels[index(src, dest)].store(o.ring, std::memory_order_release);
    }
    if (o.head - o.free_seen >= ring_slots) {
      o.free_seen = o.ring->tail.load(std::memory_order_acquire);
      if (o.head - o.free_seen >= ring_slots) return nullptr;
    }
    return &o.ring->slots[o.head % ring_slots];
  }

  // Makes the claimed slot s visible to dest, and wakes dest if it sleeps.
  // (The seq store and the look at `sleeping` are both seq_cst, and so are
  // the sleeper's store of `sleeping` and its look at the rings: one of the
  // two sides always sees the other.)
  void publish(outbox& o, ring_slot& s, location_id dest) {
    s.seq.store(o.head + 1, std::memory_order_seq_cst);
    ++o.head;
    wake(*m_slots[dest]);
  }

  void put_pointer(outbox& o, ring_slot& s, location_id dest, buffer* b) {
    s.bytes = pointer_marker;
    s.pointer = b;
    publish(o, s, dest);
  }

  // Moves self's overflow lists into their rings, as far as they have room.
  void drain(location_id self) {
    slot& me = *m_slots[self];
    for (location_id dest = 0; dest < m_size && me.overflowing != 0; ++dest)
      if (me.out[dest].overflow_first != nullptr) drain_to(me, me.out[dest], self, dest);
  }
  void drain_to(slot& me, outbox& o, location_id self, location_id dest) {
    while (o.overflow_first != nullptr) {
      ring_slot* s = claim(o, self, dest);
      if (s == nullptr) return;
      buffer* b = o.overflow_first;
      o.overflow_first = static_cast<buffer*>(b->next.load(std::memory_order_relaxed));
      if (o.overflow_first == nullptr) {
        o.overflow_last = nullptr;
        --me.overflowing;
      }
      put_pointer(o, *s, dest, b);
    }
  }

  // Whether a message waits for self in some ring (seq_cst: see publish).
  bool arrived(location_id self) const {
    for (location_id src = 0; src < m_size; ++src) {
      channel const* c = m_channels[index(src, self)].load(std::memory_order_acquire);
      if (c == nullptr) continue;
      std::uint32_t const t = c->tail.load(std::memory_order_relaxed);
      if (c->slots[t % ring_slots].seq.load(std::memory_order_seq_cst) == t + 1) return true;
    }
    return false;
  }

  // An empty buffer of self's for a copied message: from the location's pool
  // (attach), where the location puts it back once executed.
  static buffer* spare(slot& me, location_id self) {
    buffer* b;
    if (me.pool != nullptr && !me.pool->empty()) {
      b = me.pool->back();
      me.pool->pop_back();
    } else {
      b = new buffer;
      b->owner = self;
      b->reserve(1024);
    }
    b->reset();
    b->reserve(slot_payload);
    return b;
  }

  // After a message or a release: wakes the owner of s if it sleeps.  A
  // spinning owner sees the ring or the queue itself.
  static void wake(slot& s) {
    if (s.sleeping.load(std::memory_order_seq_cst)) {
      s.signal.fetch_add(1, std::memory_order_seq_cst);
      s.signal.notify_one();
    }
  }

  location_id m_size;
  std::vector<std::unique_ptr<slot>> m_slots;
  std::vector<std::atomic<channel*>> m_channels;  // [dest * size + src]
  std::vector<sum_slot> m_sums[2];
  alignas(64) std::atomic<std::uint64_t> m_arrived{0};
  unsigned m_spins;
  unsigned m_yields;
  std::uint32_t m_polls_before_yield;
};

}  // namespace armi::detail
