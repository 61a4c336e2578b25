// Buffers between the threads of one process: the threads backend's whole
// transport, and the mixed backend's between the threads of a rank.
//
// Each ordered pair of the process's locations (source, dest) that has
// exchanged a message has a channel: a ring of one-cache-line slots that
// only the source writes and only dest reads.  Nothing is kept for a pair
// that never talks: the sender finds its channels in a map by destination
// (core/location_map.hpp); a new channel joins its receiver's list, and the
// receiver copies the list into an array of its own, which it scans (an
// array: the looks at its channels go out together, where walking the list
// waits for each node in turn; 1,024 locations all-to-all ran 2.5 times as
// long).  Thousands of locations that each talk to a few cost what they
// use (under --armi-routing=grid, about 2 sqrt(P) partners each).
//
// A slot carries either a small buffer's bytes (up to ring_slot_payload:
// a sync_rmi and its answer, a lone async_rmi), copied in, or a pointer to a
// larger buffer, which then moves without a copy (its owner gets it back
// through the transport's release path once it has run).  Copying the small
// ones is what makes a round trip cheap: the receiver reads one line the
// sender wrote, and the sender finds its buffer free at once, where handing
// the buffer over moves its header line, its data line and a queue's lines
// between the two cores, and later the free queue's.
//
// A slot holds message i when its sequence word reads i + 1, so the sender
// never waits for the receiver to clear it; the receiver says how far it has
// read in its own cache line (tail), which the sender reads only when the
// ring seems full.  A full ring never blocks the sender: the buffer joins an
// overflow list of the sender's, by pointer (the location counts it in
// flight, so flow control bounds the list), which moves into the ring as the
// receiver frees slots, at the sender's next send to that destination or
// its next receive().  Messages of one pair stay in order; while a pair has
// an overflow, its sends join the list.
//
// Locations are numbered here from 0 within the process (the transport's
// location `first + i` is i); a copied message arrives with its global
// source and owner.  After publishing a message for dest, the rings call
// wake(dest): the transport wakes dest if it sleeps.  The slot's sequence
// store is published with the transport's wake_fence, so a sleeper that
// stores its flag (seq_cst), runs the fence's before_sleep() and then looks
// at arrived() never misses a message whose sender missed the flag.
//
// Thread safety: location i calls send_copy/send as source i, and receive,
// arrived and overflowing as self i, from its own thread.
// A new channel joins its receiver's list with a compare-and-swap, the one
// place where senders to one receiver meet.
#pragma once

#include <armi/core/buffer.hpp>
#include <armi/core/config.hpp>
#include <armi/core/handle.hpp>
#include <armi/core/location_map.hpp>
#include <armi/core/wake_fence.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace armi::detail {

inline constexpr std::size_t ring_slot_payload = 48;  // bytes a slot carries by copy

// Slots per ring (a power of two), from the number of pairs expected to
// talk (P^2 when every location sends to every other; P times the partners
// of a location under routing).  Where each location has a core, 64: a
// receiver drains its rings as they fill.  Where locations outnumber cores,
// a receiver runs only in its time slices, and a sender that fills its ring
// meanwhile overflows, then sits in flow control until the receiver runs
// again: there, up to 512 slots (32 KiB a ring), as long as all the rings
// stay within 8 MiB (docs/runtime-measurements.md, "Ring slots").
//
// Either way, all rings stay within 128 MiB, slots and 128-byte headers,
// where 4 slots a ring allow it: that keeps 64 slots up to 31,775 pairs (178
// locations all-to-all), and beyond it a pair's share of a location's
// traffic is small.  Under grid routing, 4,096 locations talk in 516,096
// pairs: 4 slots, 198 MiB.  (2 slots took from 1.5 to 10 times as long
// there: a sender naps while its overflow waits for a slot.)
inline constexpr std::uint32_t ring_slots = 64;
inline constexpr std::uint32_t crowded_ring_slots = 512;
inline constexpr std::uint32_t min_ring_slots = 4;
inline constexpr std::size_t crowded_rings_bytes = std::size_t{8} << 20;
inline constexpr std::size_t all_rings_bytes = std::size_t{128} << 20;
inline constexpr std::size_t ring_slot_bytes = 64;     // one cache line (checked at ring_slot)
inline constexpr std::size_t ring_header_bytes = 128;  // apart_bytes (checked at channel)

inline std::uint32_t ring_slots_for(std::uint64_t pairs, bool oversubscribed) {
  auto const within = [pairs](std::uint32_t slots, std::uint32_t least, std::size_t bytes, std::size_t header) {
    while (slots > least && pairs * (header + slots * ring_slot_bytes) > bytes) slots /= 2;
    return slots;
  };
  std::uint32_t const slots =
      oversubscribed ? within(crowded_ring_slots, ring_slots, crowded_rings_bytes, 0) : ring_slots;
  return within(slots, min_ring_slots, all_rings_bytes, ring_header_bytes);
}

template <class Wake>
class pair_rings {
 public:
  // count locations, the first of them the transport's location `first`;
  // slots per ring: a power of two (ring_slots_for).
  pair_rings(location_id count, location_id first, Wake wake, wake_fence fence = {},
             std::uint32_t slots = ring_slots)
      : m_first(first),
        m_slots(slots),
        m_wake(std::move(wake)),
        m_fence(fence),
        m_ends(count) {
    for (auto& e : m_ends) e = std::make_unique<endpoint>();
  }
  ~pair_rings() {
    for (auto& e : m_ends)
      for (channel* c = e->incoming.load(std::memory_order_relaxed); c != nullptr;) destroy(std::exchange(c, c->next));
  }
  pair_rings(pair_rings const&) = delete;
  pair_rings& operator=(pair_rings const&) = delete;

  // Where copies for self land: empty buffers that self owns, taken from
  // `pool` (self's thread only; the location puts them back once executed).
  // Required before self receives.
  void attach(location_id self, std::vector<buffer*>& pool) { m_ends[self]->pool = &pool; }

  // Copies b for dest and returns true, or returns false (b too big, the
  // ring full, or an overflow waiting): then send b with send().
  bool send_copy(location_id src, location_id dest, buffer const& b) {
    ring_end& o = m_ends[src]->out[dest];
    if (o.overflow_first != nullptr || b.size > ring_slot_payload) return false;
    ring_slot* s = claim(o, src, dest);
    if (s == nullptr) return false;
    s->bytes = static_cast<std::uint32_t>(b.size);
    s->count = b.count;
    s->epoch = b.epoch;
    // All of the payload room, whatever the size: a copy of constant size
    // is a few vector moves where one of b.size bytes is a call to memcpy,
    // and every buffer holds at least ring_slot_payload bytes.
    std::memcpy(s->data, b.data.get(), ring_slot_payload);
    publish(o, *s, dest);
    return true;
  }

  // Hands b to dest by pointer, through the ring or, when it is full, the overflow.
  void send(location_id src, location_id dest, buffer* b) {
    endpoint& me = *m_ends[src];
    ring_end& o = me.out[dest];
    if (o.overflow_first != nullptr) drain_to(me, o, src, dest);
    if (o.overflow_first == nullptr) {
      if (ring_slot* s = claim(o, src, dest)) {
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

  // Moves self's overflow on, then returns the next message for self (from
  // its channels in turn), or nullptr.
  buffer* receive(location_id self) {
    endpoint& me = *m_ends[self];
    if (me.overflowing != 0) drain(self);
    see_new_channels(me);
    std::size_t const n = me.in.size();
    for (std::size_t k = 0; k < n; ++k) {
      std::size_t const i = me.next_look;
      me.next_look = i + 1 == n ? 0 : i + 1;
      channel& c = *me.in[i];
      std::uint32_t const t = c.tail.load(std::memory_order_relaxed);
      ring_slot& s = c.slot(t & (m_slots - 1));
      if (s.seq.load(std::memory_order_acquire) == t + 1) return take(me, self, c, s, t);
    }
    return nullptr;
  }

  // Whether a message waits for self (seq_cst: see the top of the file).  A
  // channel that joined since the last receive counts: its first message is
  // on its way (the sender joins, then publishes).
  bool arrived(location_id self) const {
    endpoint const& me = *m_ends[self];
    if (me.incoming.load(std::memory_order_seq_cst) != me.seen_front) return true;
    for (channel const* c : me.in) {
      std::uint32_t const t = c->tail.load(std::memory_order_relaxed);
      if (c->slot(t & (m_slots - 1)).seq.load(std::memory_order_seq_cst) == t + 1) return true;
    }
    return false;
  }

  // Whether self has an overflow to move on (self's thread only).  Nobody
  // signals self when a receiver frees a slot: a location that waits with
  // one naps and receives again.
  bool overflowing(location_id self) const { return m_ends[self]->overflowing != 0; }

  std::uint32_t slots_per_ring() const { return m_slots; }

 private:
  static constexpr std::uint32_t pointer_marker = ~std::uint32_t{0};

  // Message i of a channel, in slot i % m_slots: seq == i + 1 once written.
  struct alignas(64) ring_slot {
    std::atomic<std::uint32_t> seq{0};
    std::uint32_t bytes = 0;  // copied bytes, or pointer_marker
    std::uint32_t count = 0;
    std::uint32_t epoch = 0;
    union {
      buffer* pointer;
      alignas(8) std::byte data[ring_slot_payload];
    };
  };
  static_assert(sizeof(ring_slot) == ring_slot_bytes);
  static_assert(std::is_trivially_destructible_v<ring_slot>);  // destroy() runs no slot destructors

  // A channel's header, its m_slots slots right after it in one block.
  struct alignas(apart_bytes) channel {
    std::atomic<std::uint32_t> tail{0};  // written by the receiver only
    location_id source = 0;              // set before the channel joins its receiver's list
    channel* next = nullptr;             // the receiver's next channel (older), likewise
    ring_slot& slot(std::uint32_t i) { return std::launder(reinterpret_cast<ring_slot*>(this + 1))[i]; }
    ring_slot const& slot(std::uint32_t i) const {
      return std::launder(reinterpret_cast<ring_slot const*>(this + 1))[i];
    }
  };
  static_assert(sizeof(channel) % alignof(ring_slot) == 0 && sizeof(channel) == ring_header_bytes);

  channel* make_channel(location_id src) const {
    void* block = ::operator new(sizeof(channel) + std::size_t{m_slots} * sizeof(ring_slot),
                                 std::align_val_t{alignof(channel)});
    channel* c = new (block) channel;
    c->source = src;
    std::uninitialized_default_construct_n(reinterpret_cast<ring_slot*>(c + 1), m_slots);
    return c;
  }
  static void destroy(channel* c) {  // slots and header are trivially destructible
    c->~channel();
    ::operator delete(static_cast<void*>(c), std::align_val_t{alignof(channel)});
  }

  // A sender's side of one channel, touched by the sender only.
  struct ring_end {
    channel* ring = nullptr;
    std::uint32_t head = 0;       // next message's number
    std::uint32_t free_seen = 0;  // the receiver's tail as last read
    buffer* overflow_first = nullptr;
    buffer* overflow_last = nullptr;
  };

  // One location's own state, and the front of the list of channels into it.
  struct alignas(apart_bytes) endpoint {
    location_map<ring_end> out;     // per destination it has sent to
    std::uint32_t overflowing = 0;  // ring ends with an overflow list
    std::vector<channel*> in;       // the channels into it, as far as it has seen the list
    channel* seen_front = nullptr;  // the list's front when `in` was last brought up to date
    std::size_t next_look = 0;      // the index in `in` where receive() looks first
    std::vector<buffer*>* pool = nullptr;  // set by attach()
    alignas(apart_bytes) std::atomic<channel*> incoming{nullptr};  // newest first; pushed by senders
  };

  // The slot for the sender's next message to dest, or nullptr if the ring
  // is full.  A channel comes into being at its first message.
  ring_slot* claim(ring_end& o, location_id src, location_id dest) {
    if (o.ring == nullptr) o.ring = join(make_channel(src), *m_ends[dest]);
    if (o.head - o.free_seen >= m_slots) {
      o.free_seen = o.ring->tail.load(std::memory_order_acquire);
      if (o.head - o.free_seen >= m_slots) return nullptr;
    }
    return &o.ring->slot(o.head & (m_slots - 1));
  }

  void publish(ring_end& o, ring_slot& s, location_id dest) {
    m_fence.publish(s.seq, o.head + 1);
    ++o.head;
    m_wake(dest);
  }

  void put_pointer(ring_end& o, ring_slot& s, location_id dest, buffer* b) {
    s.bytes = pointer_marker;
    s.pointer = b;
    publish(o, s, dest);
  }

  // c, new, joins the front of to's list of channels.
  static channel* join(channel* c, endpoint& to) {
    channel* front = to.incoming.load(std::memory_order_relaxed);
    do {
      c->next = front;
    } while (!to.incoming.compare_exchange_weak(front, c, std::memory_order_release, std::memory_order_relaxed));
    return c;
  }

  // Adds the channels that joined me's list since the last look to `in`
  // (the list grows at its front only).
  static void see_new_channels(endpoint& me) {
    channel* const front = me.incoming.load(std::memory_order_acquire);
    if (front == me.seen_front) return;
    for (channel* c = front; c != me.seen_front; c = c->next) me.in.push_back(c);
    me.seen_front = front;
  }

  // The message in slot s (number t) of c, for self: the buffer it points
  // to, or a copy in one of self's.  Frees the slot.
  buffer* take(endpoint& me, location_id self, channel& c, ring_slot& s, std::uint32_t t) const {
    buffer* b;
    if (s.bytes == pointer_marker) {
      b = s.pointer;
    } else {
      b = spare(me, self);
      std::memcpy(b->data.get(), s.data, ring_slot_payload);  // constant size, as in send_copy
      b->size = s.bytes;
      b->count = s.count;
      b->epoch = s.epoch;
      b->source = m_first + c.source;
    }
    c.tail.store(t + 1, std::memory_order_release);
    return b;
  }

  void drain(location_id self) {
    endpoint& me = *m_ends[self];
    me.out.for_each([&](location_id dest, ring_end& o) {
      if (o.overflow_first != nullptr) drain_to(me, o, self, dest);
    });
  }
  // Moves o's overflow into its ring, as far as the ring has room.
  void drain_to(endpoint& me, ring_end& o, location_id self, location_id dest) {
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

  // An empty buffer of self's for a copied message, from the attached pool
  // (whose buffers are all self's) or new.
  buffer* spare(endpoint& me, location_id self) const {
    buffer* b = take_pooled(*me.pool, ring_slot_payload);
    b->owner = m_first + self;
    return b;
  }

  location_id m_first;
  std::uint32_t m_slots;
  Wake m_wake;
  wake_fence m_fence;
  std::vector<std::unique_ptr<endpoint>> m_ends;
};

}  // namespace armi::detail
