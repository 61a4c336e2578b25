// message_rate — how many fine-grain 8-byte requests per second armi moves,
// next to a hand-written lock-free handoff of the same payloads.
//
//   armi         every location sends --n async_rmi with a uint64 payload to
//                uniformly random locations (itself included); the target
//                adds the payload to a per-location sum.  Timed from an
//                rmi_fence to the rmi_fence after the last send.  Twice: the
//                method named as a constant, armi::method<&sink::add> (the
//                "armi" column, the target's), and by a method pointer,
//                &sink::add (the "pointer" column).
//   hand-written the same payloads and destinations (same generator) between
//                std::threads: each producer fills a batch of B payloads per
//                destination in place, in a slot of a lock-free SPSC ring per
//                (source, destination) pair, and publishes it with one store;
//                consumers sum each batch.  Payloads to oneself fill a
//                batch of their own, summed when full: like armi, the
//                sender never branches on "to me?" per payload (a random
//                destination makes that branch mispredict every other
//                payload on 2 threads).  B = the aggregation factor of the
//                armi row.
//
// Both verify per-location sums and counts against what the senders sent.
// Each rate is the median of --reps repetitions (interleaved).  Printed: RMIs/s
// for each locations x aggregation, the hand-written rate, and armi / hand-written
// (the target: at least 25%).
//
//   ./message_rate [--n=N] [--locations=2,4] [--aggregations=64,256,1024] [--reps=N]
//                  [--json=FILE] [--no-pin] [--armi-* flags]
//   taskset -c 0,1 ./message_rate --n=2000000 --json=message_rate.json
//
// Threads are pinned one per CPU when there are enough CPUs (not for 4
// locations on a 2-core machine).  Exit status: 0 if every sum checked out,
// 1 if one did not, 2 on a usage error.

#include "bench_common.hpp"

#include <armi/armi.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using armi_bench::json;

constexpr double target_fraction = 0.25;

std::uint64_t seed_of(std::uint32_t location) { return 0x5EED0000ull + 7919ull * location; }

// ---- hand-written baseline ----------------------------------------------------------

// One (source, destination) pair: `slots` batches of `batch` payloads.  The
// producer fills the slot at head in place and publishes it by advancing head;
// the consumer reads slots up to head and frees them by advancing tail.
struct ring {
  ring(std::size_t slots, std::size_t batch) : data(slots * batch), count(slots) {}
  alignas(64) std::atomic<std::uint64_t> head{0};
  alignas(64) std::atomic<std::uint64_t> tail{0};
  alignas(64) std::vector<std::uint64_t> data;
  std::vector<std::uint64_t> count;  // payloads in the slot; bit 63: the producer's last batch
};

constexpr std::uint64_t last_bit = std::uint64_t{1} << 63;

struct handoff_result {
  double seconds = 0;
  bool ok = true;
};

handoff_result hand_written(std::uint32_t threads, std::uint64_t n, std::size_t batch, bool pin) {
  std::size_t const slots = 8;
  std::vector<std::unique_ptr<ring>> rings(std::size_t{threads} * threads);
  for (auto& r : rings) r = std::make_unique<ring>(slots, batch);
  auto at = [&](std::uint32_t src, std::uint32_t dst) -> ring& { return *rings[std::size_t{src} * threads + dst]; };

  std::vector<std::uint64_t> sent_sum(std::size_t{threads} * threads, 0), sent_count(sent_sum.size(), 0);
  std::vector<std::uint64_t> recv_sum(threads, 0), recv_count(threads, 0);
  std::atomic<std::uint32_t> ready{0};
  std::atomic<bool> go{false};

  auto body = [&](std::uint32_t me) {
    armi_bench::pin_guard pinned(pin, me);
    armi_bench::splitmix64 rng{seed_of(me)};
    std::uint64_t* my_sent_sum = &sent_sum[std::size_t{me} * threads];
    std::uint64_t* my_sent_count = &sent_count[std::size_t{me} * threads];
    std::uint64_t sum = 0, count = 0;
    std::uint32_t done = 0;  // sources whose last batch arrived

    struct writer {
      std::uint64_t* slot = nullptr;
      std::size_t fill = 0;
    };
    std::vector<writer> w(threads);
    std::vector<std::uint64_t> own(batch);  // the batch of payloads to oneself

    auto drain = [&]() -> bool {
      bool progress = false;
      for (std::uint32_t src = 0; src < threads; ++src) {
        if (src == me) continue;
        ring& r = at(src, me);
        std::uint64_t t = r.tail.load(std::memory_order_relaxed);
        std::uint64_t const h = r.head.load(std::memory_order_acquire);
        if (t == h) continue;
        for (; t != h; ++t) {
          std::size_t const s = t % slots;
          std::uint64_t const c = r.count[s];
          std::uint64_t const k = c & ~last_bit;
          std::uint64_t const* d = &r.data[s * batch];
          for (std::uint64_t i = 0; i < k; ++i) sum += d[i];
          count += k;
          if (c & last_bit) ++done;
        }
        r.tail.store(t, std::memory_order_release);
        progress = true;
      }
      return progress;
    };
    auto open = [&](std::uint32_t dst) {
      w[dst].fill = 0;
      if (dst == me) {
        w[dst].slot = own.data();
        return;
      }
      ring& r = at(me, dst);
      std::uint64_t const h = r.head.load(std::memory_order_relaxed);
      while (h - r.tail.load(std::memory_order_acquire) >= slots)
        if (!drain()) std::this_thread::yield();  // the ring is full: serve our own inbox meanwhile
      w[dst].slot = &r.data[(h % slots) * batch];
    };
    auto publish = [&](std::uint32_t dst, bool last) {
      if (dst == me) {
        for (std::size_t i = 0; i < w[dst].fill; ++i) sum += own[i];
        count += w[dst].fill;
        w[dst].slot = nullptr;
        return;
      }
      ring& r = at(me, dst);
      std::uint64_t const h = r.head.load(std::memory_order_relaxed);
      r.count[h % slots] = w[dst].fill | (last ? last_bit : 0);
      r.head.store(h + 1, std::memory_order_release);
      w[dst].slot = nullptr;
    };

    ready.fetch_add(1);
    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();

    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint64_t const v = rng();
      std::uint32_t const dst = rng.below(threads);
      my_sent_sum[dst] += v;
      ++my_sent_count[dst];
      if (w[dst].slot == nullptr) open(dst);
      w[dst].slot[w[dst].fill++] = v;
      if (w[dst].fill == batch) publish(dst, false);
    }
    for (std::uint32_t dst = 0; dst < threads; ++dst) {
      if (w[dst].slot == nullptr) open(dst);
      publish(dst, true);
    }
    while (done < threads - 1)
      if (!drain()) std::this_thread::yield();
    recv_sum[me] = sum;
    recv_count[me] = count;
  };

  std::vector<std::thread> pool;
  for (std::uint32_t t = 0; t < threads; ++t) pool.emplace_back(body, t);
  while (ready.load() != threads) std::this_thread::yield();
  auto const t0 = armi_bench::now_ns();
  go.store(true, std::memory_order_release);
  for (auto& t : pool) t.join();
  auto const t1 = armi_bench::now_ns();

  handoff_result res;
  res.seconds = static_cast<double>(t1 - t0) / 1e9;
  std::uint64_t total = 0;
  for (std::uint32_t d = 0; d < threads; ++d) {
    std::uint64_t want_sum = 0, want_count = 0;
    for (std::uint32_t s = 0; s < threads; ++s) {
      want_sum += sent_sum[std::size_t{s} * threads + d];
      want_count += sent_count[std::size_t{s} * threads + d];
    }
    total += recv_count[d];
    if (want_sum != recv_sum[d] || want_count != recv_count[d]) {
      std::fprintf(stderr, "message_rate: hand-written, thread %u: received %llu payloads, expected %llu%s\n", d,
                   static_cast<unsigned long long>(recv_count[d]), static_cast<unsigned long long>(want_count),
                   want_sum != recv_sum[d] ? " (sum differs)" : "");
      res.ok = false;
    }
  }
  if (total != std::uint64_t{threads} * n) res.ok = false;
  return res;
}

// ---- armi -----------------------------------------------------------------------------

class sink : public armi::p_object {
 public:
  void add(std::uint64_t v) {
    m_sum += v;
    ++m_count;
  }
  void expect(std::uint64_t sum, std::uint64_t count) {
    m_want_sum += sum;
    m_want_count += count;
  }
  void reset() { m_sum = m_count = m_want_sum = m_want_count = 0; }
  bool ok() const { return m_sum == m_want_sum && m_count == m_want_count; }
  void set_wire(std::pair<std::uint64_t, std::uint64_t> w) { m_wire = w; }
  std::uint64_t wire_bytes() const { return m_wire.first; }
  std::uint64_t wire_requests() const { return m_wire.second; }
  std::uint64_t count() const { return m_count; }
  std::uint64_t want_count() const { return m_want_count; }

 private:
  std::uint64_t m_sum = 0, m_count = 0, m_want_sum = 0, m_want_count = 0;
  std::pair<std::uint64_t, std::uint64_t> m_wire{};
};

// Runs on every location: one timed run per aggregation factor.  Location 0
// fills seconds[i] and wire[i] (bytes on the wire per request, over every
// location) for aggregations[i].  Constant: the method named as
// armi::method<&sink::add>; else &sink::add.
template <bool Constant>
int armi_run(std::uint64_t n, std::vector<std::uint64_t> const& aggregations, bool pin, std::vector<double>& seconds,
             std::vector<double>& wire) {
  armi::location_id const me = armi::get_location_id();
  armi::location_id const locs = armi::get_num_locations();
  armi_bench::pin_guard pinned(pin, me);
  sink s;
  armi::rmi_handle const h = s.get_rmi_handle();
  int rc = 0;
  seconds.clear();
  wire.clear();
  std::vector<std::uint64_t> sent_sum(locs), sent_count(locs);
  for (std::uint64_t agg : aggregations) {
    armi::set_aggregation(agg);
    s.reset();
    std::fill(sent_sum.begin(), sent_sum.end(), 0);
    std::fill(sent_count.begin(), sent_count.end(), 0);
    armi_bench::splitmix64 rng{seed_of(me)};
    armi::rmi_fence();

    armi_bench::wire_meter const meter;
    auto const t0 = armi_bench::now_ns();
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint64_t const v = rng();
      std::uint32_t const dst = rng.below(locs);
      sent_sum[dst] += v;
      ++sent_count[dst];
      if constexpr (Constant)
        armi::async_rmi(dst, h, armi::method<&sink::add>, v);
      else
        armi::async_rmi(dst, h, &sink::add, v);
    }
    armi::rmi_fence();
    auto const t1 = armi_bench::now_ns();
    s.set_wire(meter.since());
    auto const bytes = armi::allreduce_rmi(h, &sink::wire_bytes, std::plus<>{});
    auto const requests = armi::allreduce_rmi(h, &sink::wire_requests, std::plus<>{});
    if (me == 0) {
      seconds.push_back(static_cast<double>(t1 - t0) / 1e9);
      wire.push_back(static_cast<double>(bytes) / static_cast<double>(std::max<std::uint64_t>(requests, 1)));
    }

    // Verification (not timed): tell every location what it should have got.
    for (armi::location_id d = 0; d < locs; ++d) armi::async_rmi(d, h, &sink::expect, sent_sum[d], sent_count[d]);
    armi::rmi_fence();
    if (!s.ok()) {
      std::fprintf(stderr,
                   "message_rate: armi (method %s), location %u, aggregation %llu: received %llu payloads, "
                   "expected %llu%s\n",
                   Constant ? "constant" : "pointer", me, static_cast<unsigned long long>(agg), static_cast<unsigned long long>(s.count()),
                   static_cast<unsigned long long>(s.want_count()),
                   s.count() == s.want_count() ? " (sum differs)" : "");
      rc = 1;
    }
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  armi::config cfg;
  if (int const code = armi_bench::take_armi_options(argc, argv, cfg); code >= 0) return code;

  std::uint64_t n = 0, reps = 0;
  std::vector<std::uint64_t> location_counts, aggregations;
  std::string json_path;
  bool no_pin = false;
  try {
    armi_bench::flags f(argc, argv);
    n = f.get_uint("n", 2000000);
    reps = f.get_uint("reps", 3);
    location_counts = f.get_uint_list("locations", {2, 4});
    aggregations = f.get_uint_list("aggregations", {64, 256, 1024});
    json_path = f.get_string("json", "");
    no_pin = f.get_switch("no-pin");
    f.finish();
    if (n == 0 || reps == 0) throw armi_bench::usage_error("--n and --reps must be at least 1");
    for (auto l : location_counts)
      if (l < 1 || l > 4096) throw armi_bench::usage_error("--locations: each count must be in [1, 4096]");
    for (auto a : aggregations)
      if (a < 1) throw armi_bench::usage_error("--aggregations: each factor must be at least 1");
  } catch (armi_bench::usage_error const& e) {
    std::fprintf(stderr, "message_rate: %s\n", e.what());
    return 2;
  }

  fmt::print("message rate: random-destination 8-byte async_rmi, {} per location, median of {} reps\n", n, reps);
  fmt::print("armi: {}; pointer: {}\n", armi_bench::rate_form_constant, armi_bench::rate_form_pointer);
  fmt::print("{:>9} {:>6} {:>7} {:>14} {:>14} {:>16} {:>9} {:>11} {:>7} {:>8}\n", "locations", "agg", "pinned",
             "armi RMIs/s", "pointer/s", "hand-written/s", "armi/hw", "pointer/hw", "target", "B/RMI");
  json::array rows;
  bool ok = true, all_met = true;
  for (std::uint64_t locs : location_counts) {
    bool const pin = !no_pin && armi_bench::default_pinning(locs);
    std::vector<std::vector<double>> armi_rate(aggregations.size()), pointer_rate(aggregations.size()),
        hw_rate(aggregations.size()), wire(aggregations.size());
    for (std::uint64_t rep = 0; rep < reps && ok; ++rep) {
      for (std::size_t a = 0; a < aggregations.size(); ++a) {
        handoff_result const r = hand_written(static_cast<std::uint32_t>(locs), n, aggregations[a], pin);
        ok = ok && r.ok;
        hw_rate[a].push_back(static_cast<double>(locs * n) / r.seconds);
      }
      armi::config c = cfg;
      c.locations = static_cast<std::uint32_t>(locs);
      std::vector<double> seconds, pointer_seconds, bytes;
      int const rc = armi::execute(c, [&]() -> int {
        std::vector<double> mine, mine_pointer, mine_bytes, pointer_bytes;
        int const r = armi_run<true>(n, aggregations, pin, mine, mine_bytes);
        int const rp = armi_run<false>(n, aggregations, pin, mine_pointer, pointer_bytes);
        if (armi::get_location_id() == 0) {
          seconds = mine;
          pointer_seconds = mine_pointer;
          bytes = mine_bytes;
        }
        return r != 0 ? r : rp;
      });
      if (rc != 0 || seconds.size() != aggregations.size() || pointer_seconds.size() != aggregations.size()) {
        ok = false;
        break;
      }
      for (std::size_t a = 0; a < aggregations.size(); ++a) {
        armi_rate[a].push_back(static_cast<double>(locs * n) / seconds[a]);
        pointer_rate[a].push_back(static_cast<double>(locs * n) / pointer_seconds[a]);
        wire[a].push_back(bytes[a]);
      }
    }
    if (!ok) break;
    for (std::size_t a = 0; a < aggregations.size(); ++a) {
      double const ar = armi_bench::median(armi_rate[a]), hr = armi_bench::median(hw_rate[a]);
      double const ap = armi_bench::median(pointer_rate[a]);
      double const frac = ar / hr;
      bool const met = frac >= target_fraction;
      all_met = all_met && met;
      double const bytes = armi_bench::median(wire[a]);
      fmt::print("{:>9} {:>6} {:>7} {:>14.4g} {:>14.4g} {:>16.4g} {:>8.1f}% {:>10.1f}% {:>7} {:>8.2f}\n", locs,
                 aggregations[a], pin ? "yes" : "no", ar, ap, hr, 100 * frac, 100 * ap / hr, met ? "met" : "NOT MET",
                 bytes);
      rows.push_back(json::object{{"locations", locs},
                                  {"aggregation", aggregations[a]},
                                  {"pinned", pin},
                                  {"armi_rmis_per_s", ar},
                                  {"armi_pointer_rmis_per_s", ap},
                                  {"hand_written_per_s", hr},
                                  {"armi_fraction_of_hand_written", frac},
                                  {"armi_pointer_fraction_of_hand_written", ap / hr},
                                  {"target_met", met},
                                  {"armi_wire_bytes_per_rmi", bytes},
                                  {"armi_samples", json::array(armi_rate[a].begin(), armi_rate[a].end())},
                                  {"armi_pointer_samples", json::array(pointer_rate[a].begin(), pointer_rate[a].end())},
                                  {"hand_written_samples", json::array(hw_rate[a].begin(), hw_rate[a].end())}});
    }
  }
  if (!ok) {
    std::fprintf(stderr, "message_rate: FAILED (a sum or count did not check out)\n");
    return 1;
  }
  fmt::print("target: armi (method constant) >= {:.0f}% of the hand-written rate in every row: {}\n",
             100 * target_fraction, all_met ? "MET" : "NOT MET");

  json summary = json::object{{"benchmark", "message_rate"},
                              {"what", "random-destination 8-byte async_rmi vs batched SPSC handoff"},
                              {"forms", json::object{{"armi", armi_bench::rate_form_constant},
                                                     {"armi_pointer", armi_bench::rate_form_pointer}}},
                              {"backend", cfg.backend},
                              {"per_location", n},
                              {"reps", reps},
                              {"machine", armi_bench::machine_context()},
                              {"rows", rows},
                              {"target", json::object{{"min_fraction", target_fraction}, {"met", all_met}}},
                              {"verified", true}};
  return armi_bench::write_json(json_path, summary) ? 0 : 1;
}
