// The threads backend's transport: locations are threads of one process,
// and buffers move between them through per-pair rings (rings.hpp: small
// buffers by copy, larger ones by pointer, back to their owner through the
// owner's lock-free free queue once executed).
//
// An idle location spins briefly, yields, then sleeps on a futex
// (std::atomic::wait) that senders bump: on an oversubscribed machine two
// spinning partners on one core cost a scheduler tick per round trip.
// Where each location has a core, senders publish without a locked
// instruction and a location about to sleep pays for the handshake instead
// (wake_fence.hpp); where they outnumber the cores, sleeps are too frequent
// for that.
//
// Thread safety: every method may be called concurrently by the locations,
// each passing its own id as self (send's self is b->source).
#pragma once

#include <armi/backend/threads/rings.hpp>
#include <armi/core/config.hpp>
#include <armi/core/transport.hpp>
#include <armi/core/wake_fence.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace armi::detail {

class threads_transport final : public transport {
 public:
  // slots_per_ring: a power of two; 0 chooses for `pairs` locations that
  // talk (ring_slots_for; 0: all n^2 of them).
  explicit threads_transport(location_id n, std::uint32_t slots_per_ring = 0, std::uint64_t pairs = 0)
      : m_size(n),
        m_slots(make_slots(n)),
        m_fence(wake_fence::choose(!outnumber_cores(n))),
        m_rings(n, 0, waker{&m_slots}, m_fence,
                slots_per_ring != 0 ? slots_per_ring
                                    : ring_slots_for(pairs != 0 ? pairs : std::uint64_t{n} * n, outnumber_cores(n))),
        m_sums{std::vector<sum_slot>(n), std::vector<sum_slot>(n)} {
    // Where locations outnumber cores, the partner a location waits on is
    // mostly not running: spinning then only delays the yield that lets it
    // run.  7 locations on 2 cores, aggregation 1: 4 spins instead of 64
    // took test_ordering's sync_rmi case from 0.036-0.051 s to 0.021-0.030,
    // and 10 million async_rmis (test_stress) from 0.67 s to 0.58-0.60; 0
    // and 16 spins did as well as 4, and no yields (straight to sleep)
    // worse than 64 spins.
    bool const oversubscribed = outnumber_cores(n);
    m_spins = oversubscribed ? 4 : 4000;
    m_yields = oversubscribed ? 2 : 64;
    m_polls_before_yield = oversubscribed ? 64 : 8192;
  }

  std::uint32_t empty_polls_before_yield() const override { return m_polls_before_yield; }

  location_id size() const override { return m_size; }

  void attach(location_id self, std::vector<buffer*>& pool) override { m_rings.attach(self, pool); }
  std::size_t copy_limit() const override { return ring_slot_payload; }
  std::uint32_t ring_slots() const { return m_rings.slots_per_ring(); }
  bool send_copy(location_id dest, buffer const& b) override { return m_rings.send_copy(b.source, dest, b); }
  send_path send(location_id dest, buffer* b) override {
    m_rings.send(b->source, dest, b);
    return send_path::process;
  }
  buffer* receive(location_id self) override { return m_rings.receive(self); }

  void release(location_id, buffer* first, buffer* last) override {
    slot& s = *m_slots[first->owner];
    s.freed.push_chain(first, last);
    wake(s);
  }
  buffer* reclaim(location_id self) override { return static_cast<buffer*>(m_slots[self]->freed.pop()); }

  // A buffer comes back once its receiver has executed it: a location with
  // many in flight asks all the others to serve (which of them hold its
  // buffers, it does not know).
  void want_service(location_id, bool on) override { m_service.change(on); }
  bool service_wanted(location_id) const override { return m_service.wanted(); }

  std::uint32_t wake_token(location_id self) const override {
    return m_slots[self]->signal.load(std::memory_order_seq_cst);
  }

  bool idle_wait(location_id self, std::uint32_t seen, answer_watch answer) override {
    slot& s = *m_slots[self];
    auto work = [&] {
      return answer.answered() || m_rings.arrived(self) || s.freed.maybe_nonempty() ||
             s.signal.load(std::memory_order_seq_cst) != seen;
    };
    for (unsigned i = 0; i < m_spins; ++i) {
      if (work()) return false;
      ARMI_CPU_RELAX();
    }
    for (unsigned i = 0; i < m_yields; ++i) {
      if (work()) return false;
      std::this_thread::yield();
    }
    if (m_rings.overflowing(self)) {
      // A receiver has a full ring of ours to work through and will not
      // signal as it frees slots: nap, and let the caller receive (which
      // moves the overflow on) again.
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      return true;
    }
    s.sleeping.store(true, std::memory_order_seq_cst);
    m_fence.before_sleep();
    if (!work()) s.signal.wait(seen, std::memory_order_seq_cst);
    s.sleeping.store(false, std::memory_order_relaxed);
    return true;
  }

  answer_cell* answer_cells(location_id, location_id loc) override { return m_slots[loc]->answers; }
  void post_answer(location_id, location_id loc, std::atomic<std::uint32_t>& word, std::uint32_t number) override {
    m_fence.publish(word, number);
    wake(*m_slots[loc]);
  }
  void post_return(location_id self, location_id loc, std::atomic<std::uint32_t>& word) override {
    transport::post_return(self, loc, word);
    wake(*m_slots[loc]);
  }

  // The fence's sum: each location writes its slot; the last to arrive adds
  // them up once (not every location: that would read P slots each, P^2 in
  // all) and then wakes everyone.
  void sum_contribute(location_id self, std::uint64_t round, std::uint64_t const (&values)[2]) override {
    sum_slot& mine = m_sums[round & 1][self];
    mine.values[0] = values[0];
    mine.values[1] = values[1];
    std::uint64_t const arrived = m_arrived.fetch_add(1, std::memory_order_acq_rel) + 1;
    if (arrived != (round + 1) * m_size) return;
    sum_slot& total = m_totals[round & 1];
    total.values[0] = total.values[1] = 0;
    for (auto const& s : m_sums[round & 1]) {
      total.values[0] += s.values[0];
      total.values[1] += s.values[1];
    }
    m_summed.store(round + 1, std::memory_order_release);
    for (auto& s : m_slots) {
      // Unconditional bump: a location still spinning must see it too.
      s->signal.fetch_add(1, std::memory_order_seq_cst);
      if (s->sleeping.load(std::memory_order_seq_cst)) s->signal.notify_one();
    }
  }
  bool sum_ready(std::uint64_t round) const override { return m_summed.load(std::memory_order_acquire) > round; }
  void sum_result(std::uint64_t round, std::uint64_t (&values)[2]) const override {
    values[0] = m_totals[round & 1].values[0];
    values[1] = m_totals[round & 1].values[1];
  }

 private:
  struct slot {  // aligned by its members, apart_bytes apart
    alignas(apart_bytes) mpsc_queue freed;
    alignas(apart_bytes) std::atomic<std::uint32_t> signal{0};
    std::atomic<bool> sleeping{false};
    alignas(apart_bytes) answer_cell answers[answer_cells_per_location];  // the location's (answers.hpp)
  };
  struct alignas(64) sum_slot {
    std::uint64_t values[2]{};
  };
  using slots = std::vector<std::unique_ptr<slot>>;
  struct waker {
    slots const* all;
    void operator()(location_id dest) const { wake(*(*all)[dest]); }
  };
  using rings = pair_rings<waker>;

  static slots make_slots(location_id n) {
    slots s(n);
    for (auto& p : s) p = std::make_unique<slot>();
    return s;
  }

  // After a message, a release or an answer for s's location: wakes it if it sleeps
  // (a spinning one sees its rings and queue itself).  The message's or the
  // answer's publishing store (m_fence.publish) or the release's exchange
  // before, and the sleeper's store of `sleeping` and m_fence.before_sleep()
  // before its last look: one side always sees the other.
  static void wake(slot& s) {
    if (s.sleeping.load(std::memory_order_seq_cst)) {
      s.signal.fetch_add(1, std::memory_order_seq_cst);
      s.signal.notify_one();
    }
  }

  location_id m_size;
  slots m_slots;
  wake_fence m_fence;
  rings m_rings;
  std::vector<sum_slot> m_sums[2];
  sum_slot m_totals[2];                                 // by round parity, written by the last to arrive
  alignas(64) std::atomic<std::uint64_t> m_arrived{0};
  alignas(64) std::atomic<std::uint64_t> m_summed{0};  // rounds whose total is in m_totals
  unsigned m_spins;
  unsigned m_yields;
  std::uint32_t m_polls_before_yield;
  service_count m_service;  // locations asking to be served
};

}  // namespace armi::detail
