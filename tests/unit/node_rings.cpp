// The mpi backend's shared-memory rings between the ranks of a node
// (backend/mpi/node_rings.hpp), on their own: one process, writing to and
// reading from its own channel (a node of one rank still has one).  Checked:
// every message comes out once, in order, with its bytes, count and epoch,
// across many wraps of the ring with skips; a full ring refuses and then
// takes again once read; marks carry their size; and a line read before the
// next message is in never looks like a header, even when the bytes it held
// in the previous lap read exactly as the header that will be there; a
// large message into an empty ring goes back to its start; a message
// written in place (reserve, commit) keeps its order; the service count
// (flow control's "read my ring") counts and stays apart from the messages.
// Without MPI (a build without armi::mpi), there is nothing to test.
#include <catch2/catch.hpp>

#if ARMI_WITH_MPI
#include <armi/backend/mpi/node_rings.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <deque>
#include <memory>
#include <random>
#include <utility>

namespace {

namespace d = armi::detail;

// MPI for the whole program (a singleton: no mpiexec needed).
void ensure_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  std::atexit([] { MPI_Finalize(); });
}

// A buffer of `bytes` bytes that spell out `number`.
std::unique_ptr<d::buffer> make_message(std::uint64_t number, std::size_t bytes) {
  auto b = std::make_unique<d::buffer>();
  b->reserve(bytes + 8);
  b->size = bytes;
  b->count = static_cast<std::uint32_t>(number % 5 + 1);
  b->epoch = static_cast<std::uint32_t>(number % 2);
  for (std::size_t i = 0; i < bytes; ++i) b->data[i] = static_cast<std::byte>((number * 7 + i) & 0xff);
  return b;
}

bool intact(d::node_rings::arrival const& a, std::uint64_t number, std::size_t bytes) {
  if (a.mark || a.bytes != bytes || a.count != number % 5 + 1 || a.epoch != number % 2) return false;
  for (std::size_t i = 0; i < bytes; ++i)
    if (a.data[i] != static_cast<std::byte>((number * 7 + i) & 0xff)) return false;
  return true;
}

}  // namespace

TEST_CASE("node_rings: messages of every size come out once, in order, across many wraps", "[node_rings]") {
  ensure_mpi();
  d::node_rings rings(MPI_COMM_WORLD);
  int const self = rings.self();
  REQUIRE(rings.peer_of(0) == self);
  REQUIRE(rings.copy_limit() == rings.lines() * 64 / 4 - 16);
  std::mt19937_64 rng(42);
  std::deque<std::pair<std::uint64_t, std::size_t>> in_flight;  // (number, bytes; ~0 = a mark)
  std::uint64_t sent = 0, received = 0, refused = 0;
  constexpr std::size_t mark = ~std::size_t{0};
  std::uint64_t const total = 20000;
  while (received < total) {
    // Send while the ring takes them (a few at a time), then read some.
    for (int burst = static_cast<int>(rng() % 8); burst >= 0 && sent < total; --burst) {
      std::size_t bytes = rng() % 4 == 0 ? rng() % (rings.copy_limit() + 1) : rng() % 200;
      auto const b = make_message(sent, bytes);
      bool const as_mark = rng() % 10 == 0;
      bool const ok = as_mark ? rings.mark(self, *b) : rings.copy(self, *b);
      if (!ok) {
        ++refused;
        break;
      }
      in_flight.emplace_back(sent++, as_mark ? mark : bytes);
    }
    for (int reads = static_cast<int>(rng() % 8); reads >= 0; --reads) {
      d::node_rings::arrival a{};
      bool const there = rings.peek(self, a);
      REQUIRE(there == !in_flight.empty());
      if (!there) break;
      auto const [number, bytes] = in_flight.front();
      if (bytes == mark) {
        REQUIRE(a.mark);
        REQUIRE(a.count == number % 5 + 1);
        REQUIRE(a.epoch == number % 2);
      } else {
        REQUIRE(intact(a, number, bytes));
      }
      rings.pop(self);
      in_flight.pop_front();
      ++received;
    }
  }
  d::node_rings::arrival a{};
  REQUIRE_FALSE(rings.peek(self, a));
  REQUIRE(refused > 0);  // the ring did fill up, and took messages again once read
}

TEST_CASE("node_rings: a line whose old bytes read as the next header is not taken for one", "[node_rings]") {
  ensure_mpi();
  d::node_rings rings(MPI_COMM_WORLD);
  int const self = rings.self();
  std::uint32_t const lines = rings.lines();
  // A message of 8 lines at the ring's start (lines 0-7): its header and 7
  // data lines.  The first word of data line j holds what the header of a
  // message that starts there one lap later will hold: j + lines + 1.
  auto const first = make_message(0, 8 * 64 - 16);
  for (std::uint32_t j = 1; j < 8; ++j) {
    std::uint32_t const fake = j + lines + 1;
    std::memcpy(first->data.get() + 64 * j - 16, &fake, sizeof fake);
  }
  REQUIRE(rings.copy(self, *first));
  d::node_rings::arrival a{};
  REQUIRE(rings.peek(self, a));
  REQUIRE(a.bytes == first->size);
  rings.pop(self);
  // One-line messages up to line `lines` (line 0 of the next lap), each read
  // at once: the next message would start on line 1 of the second lap, where
  // the first message's data line 1 is.
  for (std::uint64_t n = 1; n <= lines - 7; ++n) {
    REQUIRE(rings.copy(self, *make_message(n, 8)));
    REQUIRE(rings.peek(self, a));
    REQUIRE(intact(a, n, 8));
    rings.pop(self);
  }
  // Nothing has been sent: nothing is there.
  REQUIRE_FALSE(rings.peek(self, a));
  // And what is sent next comes out as sent.
  REQUIRE(rings.copy(self, *make_message(99, 100)));
  REQUIRE(rings.peek(self, a));
  REQUIRE(intact(a, 99, 100));
  rings.pop(self);
  REQUIRE_FALSE(rings.peek(self, a));
}

TEST_CASE("node_rings: a large message that finds the ring empty goes back to its start", "[node_rings]") {
  ensure_mpi();
  d::node_rings rings(MPI_COMM_WORLD);
  int const self = rings.self();
  std::uint32_t const lines = rings.lines();
  std::size_t const big = 100 * 64 - 16;  // 100 lines with its header
  d::node_rings::arrival a{};
  auto read_one = [&](std::uint64_t number, std::size_t bytes) {
    REQUIRE(rings.peek(self, a));
    REQUIRE(intact(a, number, bytes));
    std::byte const* at = a.data;
    rings.pop(self);
    return at;
  };
  // At the ring's start, then 150 one-line messages: the ring is empty, its
  // head at line 250.
  REQUIRE(rings.copy(self, *make_message(0, big)));
  std::byte const* const start = read_one(0, big);
  for (std::uint64_t n = 1; n <= 150; ++n) {
    REQUIRE(rings.copy(self, *make_message(n, 8)));
    read_one(n, 8);
  }
  // Large, into the empty ring: at the start again.
  REQUIRE(rings.copy(self, *make_message(151, big)));
  REQUIRE(read_one(151, big) == start);
  // Large, but behind a message not yet read: after it, not at the start.
  REQUIRE(rings.copy(self, *make_message(152, 8)));
  REQUIRE(rings.copy(self, *make_message(153, big)));
  REQUIRE(read_one(152, 8) == start + 100 * 64);
  REQUIRE(read_one(153, big) == start + 101 * 64);
  // Small, into the empty ring: where the head is.
  REQUIRE(rings.copy(self, *make_message(154, 8)));
  REQUIRE(read_one(154, 8) == start + 201 * 64);
  // Large, with the head past its length: the start again.
  REQUIRE(rings.copy(self, *make_message(155, big)));
  REQUIRE(read_one(155, big) == start);
  // Larger than the head's distance from the start: where the head is.
  std::size_t const bigger = 150 * 64 - 16;
  REQUIRE(rings.copy(self, *make_message(156, bigger)));
  REQUIRE(read_one(156, bigger) == start + 100 * 64);
  REQUIRE(rings.copy(self, *make_message(157, big)));
  REQUIRE(read_one(157, big) == start);
  // Laps of one-line messages after all that: nothing read that was not sent.
  for (std::uint64_t n = 158; n < 158 + 3 * std::uint64_t{lines}; ++n) {
    REQUIRE(rings.copy(self, *make_message(n, 8)));
    read_one(n, 8);
    REQUIRE_FALSE(rings.peek(self, a));
  }
}

TEST_CASE("node_rings: a message written in place (reserve, commit) comes out between the copies around it",
          "[node_rings]") {
  ensure_mpi();
  d::node_rings rings(MPI_COMM_WORLD);
  int const self = rings.self();
  std::mt19937_64 rng(7);
  d::node_rings::arrival a{};
  std::uint64_t n = 0;
  for (int round = 0; round < 200; ++round) {
    // A copy, a message written where reserve() said (its room asked a
    // little larger than it turns out), a copy; then all three read.
    std::size_t const before = rng() % 200, bytes = rng() % rings.copy_limit(), after = rng() % 200;
    REQUIRE(rings.copy(self, *make_message(n, before)));
    auto const b = make_message(n + 1, bytes);
    std::byte* room = rings.reserve(self, std::min(bytes + rng() % 64, rings.copy_limit()));
    REQUIRE(room != nullptr);
    std::memcpy(room, b->data.get(), bytes);
    rings.commit(self, *b);
    REQUIRE(rings.copy(self, *make_message(n + 2, after)));
    for (std::uint64_t k = 0; k < 3; ++k) {
      REQUIRE(rings.peek(self, a));
      REQUIRE(intact(a, n + k, k == 0 ? before : k == 1 ? bytes : after));
      rings.pop(self);
    }
    REQUIRE_FALSE(rings.peek(self, a));
    n += 3;
  }
  // A full ring refuses a reservation.
  while (rings.copy(self, *make_message(n, 1000))) ++n;
  REQUIRE(rings.reserve(self, 1000) == nullptr);
}

TEST_CASE("node_rings: the service count has its own line: asking neither touches messages nor is touched by them",
          "[node_rings]") {
  ensure_mpi();
  d::node_rings rings(MPI_COMM_WORLD);
  int const self = rings.self();
  REQUIRE_FALSE(rings.service_wanted());
  rings.want_service(self, true);
  rings.want_service(self, true);
  REQUIRE(rings.service_wanted());
  // A full ring of messages, and a full lap read back, while asked twice.
  std::uint64_t n = 0;
  while (rings.copy(self, *make_message(n, 100))) ++n;
  REQUIRE(n > 0);
  REQUIRE(rings.service_wanted());
  d::node_rings::arrival a{};
  for (std::uint64_t i = 0; i < n; ++i) {
    REQUIRE(rings.peek(self, a));
    REQUIRE(intact(a, i, 100));
    rings.pop(self);
  }
  REQUIRE_FALSE(rings.peek(self, a));
  // Each "on" is undone by one "off".
  rings.want_service(self, false);
  REQUIRE(rings.service_wanted());
  rings.want_service(self, false);
  REQUIRE_FALSE(rings.service_wanted());
  REQUIRE(rings.copy(self, *make_message(7, 40)));
  REQUIRE(rings.peek(self, a));
  REQUIRE(intact(a, 7, 40));
  rings.pop(self);
}

#else
TEST_CASE("node_rings: needs MPI", "[node_rings]") { SUCCEED("built without armi::mpi"); }
#endif
