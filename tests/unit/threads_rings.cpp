// The threads backend's transport on its own: per-pair rings that carry
// small buffers by copy and larger ones by pointer, with an overflow list
// when a ring is full.  Checked: every message arrives once, in its pair's
// order, with its bytes, its count, its epoch and its sender; copies land in
// buffers from the receiver's attached pool; a full ring neither blocks nor
// reorders; pointer buffers come back to their owner when released.
#include <armi/backend/threads/transport.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace {

namespace d = armi::detail;
using armi::location_id;

// A buffer from `source` holding `bytes` bytes that spell out `number`.
d::buffer* make_message(location_id source, std::uint64_t number, std::size_t bytes) {
  auto* b = new d::buffer;
  b->owner = source;
  b->source = source;
  b->reserve(bytes);
  b->size = bytes;
  b->count = static_cast<std::uint32_t>(number % 7 + 1);
  b->epoch = static_cast<std::uint32_t>(number % 2);
  for (std::size_t i = 0; i < bytes; ++i) b->data[i] = static_cast<std::byte>((number + i) & 0xff);
  std::memcpy(b->data.get(), &number, sizeof number);
  return b;
}

// The number a received buffer spells out, after checking the rest of it.
std::uint64_t check_message(d::buffer const& b, location_id source) {
  std::uint64_t number = 0;
  REQUIRE(b.size >= sizeof number);
  std::memcpy(&number, b.data.get(), sizeof number);
  REQUIRE(b.source == source);
  REQUIRE(b.count == number % 7 + 1);
  REQUIRE(b.epoch == number % 2);
  bool intact = true;
  for (std::size_t i = sizeof number; i < b.size; ++i)
    intact = intact && b.data[i] == static_cast<std::byte>((number + i) & 0xff);
  REQUIRE(intact);
  return number;
}

// check_message for threads other than the test's (Catch2's checks are
// not thread safe): whether b is message `number` from source, intact.
bool is_message(d::buffer const& b, location_id source, std::uint64_t number) {
  std::uint64_t spelled = ~number;
  if (b.size < sizeof spelled) return false;
  std::memcpy(&spelled, b.data.get(), sizeof spelled);
  bool intact = spelled == number && b.source == source && b.count == number % 7 + 1 && b.epoch == number % 2;
  for (std::size_t i = sizeof spelled; i < b.size; ++i)
    intact = intact && b.data[i] == static_cast<std::byte>((number + i) & 0xff);
  return intact;
}

// Sends b the way a location does: a copy if the transport takes one (the
// caller keeps b), else b itself.  True if it went by copy.
bool send_like_a_location(d::threads_transport& tr, location_id dest, d::buffer* b) {
  if (b->size <= tr.copy_limit() && tr.send_copy(dest, *b)) {
    delete b;
    return true;
  }
  tr.send(dest, b);
  return false;
}

// The size of message i: mostly small enough to copy, some not.
std::size_t size_of(std::uint64_t i) { return i % 5 == 4 ? 64 + i % 200 : 8 + i % 41; }

}  // namespace

TEST_CASE("rings are 64 slots where each location has a core, up to 512 within 8 MiB where they do not, "
          "and all of them within 128 MiB",
          "[threads_rings]") {
  auto const all_to_all = [](std::uint64_t n) { return n * n; };  // the pairs that talk
  CHECK(d::ring_slots_for(all_to_all(2), false) == 64);
  CHECK(d::ring_slots_for(all_to_all(178), false) == 64);  // 31684 rings of 4 KiB of slots and a header
  CHECK(d::ring_slots_for(all_to_all(179), false) == 32);
  CHECK(d::ring_slots_for(all_to_all(256), false) == 16);
  CHECK(d::ring_slots_for(all_to_all(300), true) == 16);  // threads.ordering.np300 on 2 cores
  CHECK(d::ring_slots_for(all_to_all(512), false) == 4);
  CHECK(d::ring_slots_for(all_to_all(1000), false) == 4);
  CHECK(d::ring_slots_for(all_to_all(4096), false) == 4);  // never fewer than 4
  CHECK(d::ring_slots_for(all_to_all(3), true) == 512);
  CHECK(d::ring_slots_for(all_to_all(7), true) == 512);
  CHECK(d::ring_slots_for(all_to_all(16), true) == 512);  // 256 rings of 32 KiB
  CHECK(d::ring_slots_for(all_to_all(17), true) == 256);
  CHECK(d::ring_slots_for(all_to_all(32), true) == 128);
  CHECK(d::ring_slots_for(all_to_all(64), true) == 64);
  CHECK(d::ring_slots_for(all_to_all(178), true) == 64);  // 64 at least, where the 8 MiB cannot be kept
  CHECK(d::ring_slots_for(all_to_all(256), true) == 16);  // but within 128 MiB
  // Under grid routing a location talks to its row and its column only.
  CHECK(d::ring_slots_for(1024 * 62, true) == 16);
  CHECK(d::ring_slots_for(4096 * 126, true) == 4);
}

TEST_CASE("a full ring overflows in order, and the overflow moves in as the receiver reads", "[threads_rings]") {
  std::uint32_t const ring = GENERATE(4u, 8u, 64u, 512u);
  d::threads_transport tr(2, ring);
  REQUIRE(tr.ring_slots() == ring);
  std::vector<d::buffer*> pool0, pool1;
  tr.attach(0, pool0);
  tr.attach(1, pool1);
  for (int i = 0; i < 3; ++i) {
    auto* spare = new d::buffer;
    spare->owner = 1;
    spare->reserve(64);
    pool1.push_back(spare);
  }
  std::uint64_t const slots = tr.ring_slots();
  std::uint64_t const n = 3 * slots + 17;
  std::uint64_t copies = 0;
  for (std::uint64_t i = 0; i < n; ++i) copies += send_like_a_location(tr, 1, make_message(0, i, size_of(i)));
  // The ring took at most one message per slot; the rest waits with its sender.
  REQUIRE(copies <= slots);
  std::uint64_t next = 0;
  std::vector<d::buffer*> released;
  while (next < n) {
    d::buffer* b = tr.receive(1);
    if (b == nullptr) {
      // Empty for the receiver only once its ring is drained: the sender's
      // next poll moves its overflow in.
      REQUIRE(tr.receive(0) == nullptr);
      b = tr.receive(1);
      REQUIRE(b != nullptr);
    }
    REQUIRE(check_message(*b, 0) == next);
    if (b->owner == 1) {
      // A copy: in a buffer of the receiver's, from its pool if it had one.
      REQUIRE(b->size <= tr.copy_limit());
      delete b;
    } else {
      released.push_back(b);
    }
    ++next;
  }
  REQUIRE(pool1.empty());
  REQUIRE(tr.receive(1) == nullptr);
  REQUIRE(tr.receive(0) == nullptr);
  // Released pointer buffers come back to their owner, all of them.
  for (d::buffer* b : released) tr.release(1, b, b);
  std::size_t back = 0;
  while (d::buffer* b = tr.reclaim(0)) {
    ++back;
    delete b;
  }
  REQUIRE(back == released.size());
  REQUIRE(back == n - copies);
}

TEST_CASE("three senders stream to one receiver: each pair in order, nothing lost or doubled", "[threads_rings]") {
  constexpr location_id senders = 3;
  constexpr std::uint64_t per_sender = 60000;
  d::threads_transport tr(senders + 1);
  std::vector<std::vector<d::buffer*>> pools(senders + 1);
  for (location_id l = 0; l <= senders; ++l) tr.attach(l, pools[l]);
  location_id const receiver = senders;

  std::vector<std::thread> threads;
  std::atomic<bool> failed{false};
  for (location_id s = 0; s < senders; ++s)
    threads.emplace_back([&, s] {
      std::uint64_t in_flight = 0;
      for (std::uint64_t i = 0; i < per_sender; ++i) {
        if (!send_like_a_location(tr, receiver, make_message(s, i, size_of(i)))) ++in_flight;
        // As a location does: take back released buffers, move the overflow
        // on, and hold back when too many are out.
        for (;;) {
          while (d::buffer* b = tr.reclaim(s)) {
            delete b;
            --in_flight;
          }
          if (tr.receive(s) != nullptr) failed = true;  // no one sends to a sender
          if (in_flight < 200) break;
          tr.idle_wait(s, tr.wake_token(s), {});
        }
      }
      while (in_flight != 0) {
        if (d::buffer* b = tr.reclaim(s)) {
          delete b;
          --in_flight;
        } else {
          tr.receive(s);
          tr.idle_wait(s, tr.wake_token(s), {});
        }
      }
    });

  std::vector<std::uint64_t> next(senders, 0);
  std::uint64_t received = 0;
  std::uint64_t copies = 0;
  while (received < senders * per_sender) {
    std::uint32_t const token = tr.wake_token(receiver);
    d::buffer* b = tr.receive(receiver);
    if (b == nullptr) {
      tr.idle_wait(receiver, token, {});
      continue;
    }
    location_id const from = b->source;
    REQUIRE(from < senders);
    REQUIRE(check_message(*b, from) == next[from]);
    ++next[from];
    ++received;
    if (b->owner == receiver) {
      ++copies;
      pools[receiver].push_back(b);  // as a location returns an executed copy
    } else {
      tr.release(receiver, b, b);
    }
  }
  for (auto& t : threads) t.join();
  REQUIRE_FALSE(failed);
  REQUIRE(tr.receive(receiver) == nullptr);
  // Some went by copy (most go by pointer once a ring fills: the senders
  // outrun the receiver), and copies recycle: the receiver's pool holds at
  // most a few buffers.
  REQUIRE(copies > 0);
  REQUIRE(pools[receiver].size() <= 2);
  for (auto& p : pools)
    for (d::buffer* b : p) delete b;
}

TEST_CASE("rings exist for the pairs that talk: every location sends to a few, each pair in order", "[threads_rings]") {
  // 48 locations, each sending to its 5 successors at once from its own
  // thread: channels join their receivers' lists concurrently.
  constexpr location_id n = 48, fan = 5;
  constexpr std::uint64_t per_pair = 1000;
  d::threads_transport tr(n, 8, std::uint64_t{n} * fan);
  std::vector<std::vector<d::buffer*>> pools(n);
  for (location_id l = 0; l < n; ++l) tr.attach(l, pools[l]);
  std::atomic<bool> failed{false};
  std::atomic<std::uint64_t> done{0};
  std::vector<std::thread> threads;
  for (location_id self = 0; self < n; ++self)
    threads.emplace_back([&, self] {
      std::vector<std::uint64_t> next(n, 0);
      std::uint64_t sent = 0, received = 0, in_flight = 0;
      while (received < fan * per_pair || in_flight != 0 || sent < fan * per_pair) {
        bool const busy = sent < fan * per_pair && in_flight < 64;
        if (busy) {
          location_id const dest = (self + 1 + sent % fan) % n;
          if (!send_like_a_location(tr, dest, make_message(self, sent / fan, size_of(sent / fan)))) ++in_flight;
          ++sent;
        }
        while (d::buffer* b = tr.reclaim(self)) {
          delete b;
          --in_flight;
        }
        while (d::buffer* b = tr.receive(self)) {
          location_id const from = b->source;
          // Only the fan predecessors send here, each in its own order.
          location_id const behind = (self + n - from) % n;
          if (behind == 0 || behind > fan || !is_message(*b, from, next[from]++)) failed = true;
          ++received;
          if (b->owner == self)
            pools[self].push_back(b);
          else
            tr.release(self, b, b);
        }
        if (!busy) std::this_thread::yield();  // 48 threads on few cores: let the others run
      }
      done.fetch_add(1);
      // Stay to answer nothing more, but let the others finish first: a
      // buffer released to this location must still find it.
      while (done.load() < n) std::this_thread::yield();
      while (d::buffer* b = tr.reclaim(self)) delete b;
    });
  for (auto& t : threads) t.join();
  REQUIRE_FALSE(failed.load());
  for (auto& pool : pools)
    for (d::buffer* b : pool) delete b;
}
