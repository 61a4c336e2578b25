// The handshake between a sender and a location about to sleep
// (core/wake_fence.hpp), on its own and in the threads backend.
//
// On its own: the store-buffering litmus test.  In each round a sender
// publishes a word and then loads the sleeper's flag, while the sleeper
// stores its flag, runs before_sleep() and then loads the word; at least one
// of the two must see the other's store of that round, or a sleeper could
// sleep on a message whose sender saw no one asleep.  Both ways (symmetric,
// and asymmetric where the process has membarrier) are checked.  Without
// any fence this outcome occurs on x86 as soon as the two sides' stores
// overlap in time, which each round's small skew (a few pauses, different
// on each side) makes happen now and then: the same loop with a release
// store and no membarrier saw both sides miss in up to 1.7% of rounds here
// (3 to 335 of 20000; with no skew, 0 to 2), so the check can fail (with
// before_sleep() emptied, this test failed 3 runs of 3: 55, 2 and 1).
//
// In the threads backend: two locations (one per core where there are two,
// so the asymmetric handshake), one of which keeps going to sleep while the
// other calls it after naps of random length, past the spinning and
// yielding: every call must wake it.
#include <armi/armi.hpp>
#include <armi/core/config.hpp>
#include <armi/core/wake_fence.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <thread>

namespace {

namespace d = armi::detail;

// Rounds of the litmus test in which both sides missed the other's store.
std::uint32_t both_missed(d::wake_fence fence, std::uint32_t rounds) {
  struct alignas(64) line {
    std::atomic<std::uint32_t> value{0};
  };
  line word, sleeping, start, done;
  std::uint32_t missed = 0;
  // Both threads start round r when `start` reads r, and the sleeper starts
  // it once the sender has finished r - 1 (`done`): spinning, then yielding,
  // so that two tests sharing a core still progress.
  auto wait_for = [](std::atomic<std::uint32_t> const& a, std::uint32_t v) {
    for (unsigned spin = 0; a.load(std::memory_order_acquire) < v; ++spin)
      if (spin > 1000) std::this_thread::yield();
  };
  // 0-15 pauses, from a hash of the round.
  auto skew = [](std::uint32_t h) {
    for (std::uint32_t k = h & 15; k > 0; --k) ARMI_CPU_RELAX();
  };
  std::thread sender([&] {
    for (std::uint32_t r = 1; r <= rounds; ++r) {
      wait_for(start.value, r);
      skew(r * 2654435761u >> 28);
      fence.publish(word.value, r);
      std::uint32_t const seen = sleeping.value.load(std::memory_order_seq_cst);
      if (seen < r) done.value.store(2 * r, std::memory_order_release);  // missed: the sleeper must not
      else done.value.store(2 * r + 1, std::memory_order_release);
    }
  });
  for (std::uint32_t r = 1; r <= rounds; ++r) {
    start.value.store(r, std::memory_order_release);
    skew(r * 40503u >> 12);
    sleeping.value.store(r, std::memory_order_seq_cst);
    fence.before_sleep();
    std::uint32_t const seen = word.value.load(std::memory_order_seq_cst);
    wait_for(done.value, 2 * r);
    bool const sender_missed = done.value.load(std::memory_order_acquire) == 2 * r;
    if (seen < r && sender_missed) ++missed;
  }
  sender.join();
  return missed;
}

}  // namespace

TEST_CASE("a sender's word and a sleeper's flag, stored at once: one side always sees the other") {
  SECTION("symmetric (seq_cst on both sides)") { CHECK(both_missed(d::wake_fence{false}, 20000) == 0); }
  SECTION("asymmetric where the process has membarrier") {
    d::wake_fence const fence = d::wake_fence::choose(true);
    INFO("membarrier " << (fence.asymmetric ? "available" : "not available: symmetric again"));
    CHECK(both_missed(fence, 20000) == 0);
  }
  SECTION("choose(false) is symmetric whatever the process has") {
    CHECK_FALSE(d::wake_fence::choose(false).asymmetric);
    CHECK(d::wake_fence::choose(true).asymmetric == d::process_barrier_available());
  }
}

namespace {

class napper : public armi::p_object {
 public:
  std::uint64_t call(std::uint64_t x) { return x + ++m_calls; }
  std::uint64_t calls() const { return m_calls; }

 private:
  std::uint64_t m_calls = 0;
};

}  // namespace

TEST_CASE("threads: a location that keeps falling asleep is woken by every call") {
  armi::config cfg;
  cfg.locations = 2;
  constexpr std::uint64_t rounds = 200;
  std::uint64_t sum = 0, served = 0;
  int const rc = armi::execute(cfg, [&] {
    napper n;
    auto const h = n.get_rmi_handle();
    if (armi::get_location_id() == 0) {
      std::mt19937 gen(7);
      std::uniform_int_distribution<int> nap_us(0, 1500);  // the sleeper spins ~100 us, then yields, then sleeps
      for (std::uint64_t r = 0; r < rounds; ++r) {
        std::this_thread::sleep_for(std::chrono::microseconds(nap_us(gen)));
        sum += armi::sync_rmi(1, h, &napper::call, r);
      }
    }
    armi::rmi_fence();  // location 1 sleeps in here between calls
    if (armi::get_location_id() == 1) served = n.calls();
  });
  CHECK(rc == 0);
  CHECK(served == rounds);
  CHECK(sum == rounds * (rounds - 1) / 2 + rounds * (rounds + 1) / 2);
}
