// --armi-progress=thread (docs/design.md §2 Progress, Atomicity): a location
// that computes outside armi is still served by its process's communication
// thread; armi::hold_requests keeps requests off while it is held.  Under
// poll (the default) the cases that need the thread check only that
// has_progress_thread() says so: a location that never calls armi is never
// served there.
#include "support/test_support.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

bool threaded_progress() { return armi_test::run_config().progress == "thread"; }

// Spins without calling armi until pred() holds or `limit` passes; whether
// it held.  A location in here is computing, as far as armi can tell.
template <class Pred>
bool compute_until(Pred pred, std::chrono::seconds limit = std::chrono::seconds(60)) {
  auto const end = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

std::uint64_t answer_of(armi::location_id at, std::uint64_t x) { return x * 31 + at; }

class worker : public armi::p_object {
 public:
  std::uint64_t answer(std::uint64_t x) { return answer_of(armi::get_location_id(), x); }
  void release() { m_released.store(true, std::memory_order_release); }
  bool released() const { return m_released.load(std::memory_order_acquire); }

  // The sum of the ids of this location and the next `hops` ones, each
  // asked by a sync_rmi from the one before (nested waits).
  std::uint64_t chain(std::uint32_t hops) {
    armi::location_id const me = armi::get_location_id();
    if (hops == 0) return me;
    return me + armi::sync_rmi((me + 1) % armi::get_num_locations(), get_rmi_handle(), &worker::chain, hops - 1);
  }

  // Plain counters: only hold_requests keeps the location's reads of them
  // apart from the requests' writes.
  void add(std::uint64_t x) {
    m_sum += x;
    ++m_count;
  }
  std::uint64_t sum() const { return m_sum; }
  std::uint64_t count() const { return m_count; }

 private:
  std::atomic<bool> m_released{false};
  std::uint64_t m_sum = 0;
  std::uint64_t m_count = 0;
};

// Location 0 runs drive(w, n) while the others compute until it releases
// them (an async_rmi each, which only a communication thread can run).
template <class Drive>
void drive_while_others_compute(Drive drive) {
  worker w;
  armi::rmi_fence();
  armi::location_id const n = armi::get_num_locations();
  if (armi::get_location_id() == 0) {
    drive(w, n);
    for (armi::location_id d = 1; d < n; ++d) armi::async_rmi(d, w.get_rmi_handle(), &worker::release);
    armi::rmi_flush();
  } else {
    ARMI_CHECK(compute_until([&w] { return w.released(); }));
  }
  armi::rmi_fence();
}

// Every location but 0 sends it `count` adds (1, 2, ..., count if numbered,
// else 1 each) and flushes them.
void send_adds_to_0(worker& w, std::uint64_t count, bool numbered) {
  for (std::uint64_t i = 1; i <= count; ++i) armi::async_rmi(0, w.get_rmi_handle(), &worker::add, numbered ? i : 1);
  armi::rmi_flush();
}

}  // namespace

TEST_CASE("progress: has_progress_thread reports the mode", "[progress]") {
  bool const expected = threaded_progress();
  armi_test::run([expected] { ARMI_CHECK_EQ(armi::has_progress_thread(), expected); });
}

TEST_CASE("progress: sync_rmi and opaque_rmi to locations that compute outside armi are answered",
          "[progress]") {
  if (!threaded_progress()) return;
  armi_test::run([] {
    drive_while_others_compute([](worker& w, armi::location_id n) {
      for (armi::location_id d = 1; d < n; ++d)
        ARMI_CHECK_EQ(armi::sync_rmi(d, w.get_rmi_handle(), &worker::answer, std::uint64_t{d}), answer_of(d, d));
      std::vector<armi::future<std::uint64_t>> answers;
      for (armi::location_id d = 1; d < n; ++d)
        answers.push_back(armi::opaque_rmi(d, w.get_rmi_handle(), &worker::answer, std::uint64_t{7}));
      for (armi::location_id d = 1; d < n; ++d) ARMI_CHECK_EQ(answers[d - 1].get(), answer_of(d, 7));
    });
  });
}

TEST_CASE("progress: a nested sync_rmi chain through locations that all compute outside armi", "[progress]") {
  if (!threaded_progress()) return;
  armi_test::run([] {
    drive_while_others_compute([](worker& w, armi::location_id n) {
      if (n < 2) return;
      // 1 asks 2, ..., n - 1 answers: every hop served by a communication thread.
      std::uint64_t const got = armi::sync_rmi(1, w.get_rmi_handle(), &worker::chain, n - 2);
      ARMI_CHECK_EQ(got, std::uint64_t{n} * (n - 1) / 2);
    });
  });
}

TEST_CASE("progress: async_rmi requests to a computing location run without its help, all of them once",
          "[progress]") {
  if (!threaded_progress()) return;
  armi_test::run([] {
    worker w;
    armi::rmi_fence();
    armi::location_id const me = armi::get_location_id(), n = armi::get_num_locations();
    std::uint64_t const per_sender = armi_test::scaled(20000);
    if (me != 0) {
      send_adds_to_0(w, per_sender, true);
    } else {
      // Computes until every request has run here: the communication thread
      // runs them; reading the counter is the location's own code, so it holds.
      std::uint64_t const expected = per_sender * (n - 1);
      ARMI_CHECK(compute_until([&w, expected] {
        armi::hold_requests const hold;
        return w.count() == expected;
      }));
      armi::hold_requests const hold;
      ARMI_CHECK_EQ(w.sum(), (n - 1) * per_sender * (per_sender + 1) / 2);
    }
    armi::rmi_fence();
  });
}

TEST_CASE("progress: no request runs while the location holds them", "[progress]") {
  armi_test::run([] {
    worker w;
    armi::rmi_fence();
    armi::location_id const me = armi::get_location_id(), n = armi::get_num_locations();
    std::uint64_t const per_sender = armi_test::scaled(5000);
    if (me != 0) {
      send_adds_to_0(w, per_sender, false);
    } else {
      // Under thread, requests keep arriving while location 0 computes; none
      // may run inside a hold (the counter stays put across one).
      // Between holds it computes for a few of the thread's intervals, so
      // that requests do run there.
      std::uint64_t changed_inside = 0, ran_between = 0;
      for (int round = 0; round < 100; ++round) {
        {
          armi::hold_requests const hold;
          std::uint64_t const before = w.count();
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          if (w.count() != before) ++changed_inside;
          ran_between = before;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(2500));
      }
      ARMI_CHECK_EQ(changed_inside, std::uint64_t{0});
      if (threaded_progress() && n > 1) ARMI_CHECK(ran_between > 0);
    }
    armi::rmi_fence();
    if (me == 0) ARMI_CHECK_EQ(w.count(), per_sender * (n - 1));
  });
}

TEST_CASE("progress: a continuation runs once, on its location, while that location computes", "[progress]") {
  if (!threaded_progress()) return;
  armi_test::run([] {
    worker w;
    armi::rmi_fence();
    armi::location_id const me = armi::get_location_id(), n = armi::get_num_locations();
    if (n > 1) {
      std::atomic<int> ran{0};
      std::atomic<std::uint64_t> value{0};
      armi::future<void> done = armi::opaque_rmi((me + 1) % n, w.get_rmi_handle(), &worker::answer, std::uint64_t{3})
                                    .then([&ran, &value, me](std::uint64_t v) {
                                      ARMI_CHECK_EQ(armi::get_location_id(), me);
                                      value.store(v);
                                      ran.fetch_add(1);
                                    });
      armi::rmi_flush();
      // The answer comes while this location computes; the communication
      // thread takes it in and runs the continuation.
      ARMI_CHECK(compute_until([&ran] { return ran.load() != 0; }));
      done.get();
      ARMI_CHECK_EQ(ran.load(), 1);
      ARMI_CHECK_EQ(value.load(), answer_of((me + 1) % n, 3));
    }
    armi::rmi_fence();
  });
}

namespace {

// Its constructor signals (through memory: threads backend only) once the
// base has registered it, then computes before its last member is ready.
std::atomic<int> g_registered{0};

class built_slowly : public armi::p_object {
 public:
  built_slowly() {
    if (armi::get_location_id() == 1) {
      g_registered.store(1, std::memory_order_release);
      std::this_thread::sleep_for(std::chrono::milliseconds(30));  // several of the thread's intervals
    }
    m_ready.store(true, std::memory_order_release);
  }
  void check() { ARMI_CHECK(m_ready.load(std::memory_order_acquire)); }

 private:
  std::atomic<bool> m_ready{false};
};

}  // namespace

TEST_CASE("progress: no request runs on an object whose constructor has not finished", "[progress]") {
  if (!threaded_progress() || armi::effective_backend(armi_test::run_config()) != "threads") return;
  g_registered.store(0);
  armi_test::run([] {
    armi::location_id const me = armi::get_location_id();
    if (me == 0 && armi::get_num_locations() > 1) {
      // Registered on 1 (the same handle as ours, made first), still being built.
      while (g_registered.load(std::memory_order_acquire) == 0) std::this_thread::yield();
    }
    built_slowly b;
    if (me == 0 && armi::get_num_locations() > 1) {
      armi::async_rmi(1, b.get_rmi_handle(), &built_slowly::check);
      armi::rmi_flush();
    }
    armi::rmi_fence();
  });
}

TEST_CASE("progress: requests to an object a computing location has not constructed yet wait for it",
          "[progress]") {
  armi_test::run([&] {
    armi::location_id const me = armi::get_location_id(), n = armi::get_num_locations();
    armi::rmi_fence();
    if (me == 0) {
      // Computes before constructing: under thread, the communication thread
      // serves location 0 meanwhile, and the others' requests to the object
      // below arrive before it exists here.
      auto const until = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
      ARMI_CHECK(compute_until([until] { return std::chrono::steady_clock::now() >= until; }));
    }
    worker w;  // the same handle everywhere; location 0's is constructed last
    if (me != 0) {
      armi::async_rmi(0, w.get_rmi_handle(), &worker::add, std::uint64_t{me});
      armi::rmi_flush();
      ARMI_CHECK_EQ(armi::sync_rmi(0, w.get_rmi_handle(), &worker::answer, std::uint64_t{7}), answer_of(0, 7));
    }
    armi::rmi_fence();
    if (me == 0) ARMI_CHECK_EQ(w.sum(), std::uint64_t{n} * (n - 1) / 2);
    armi::rmi_fence();
  });
}
