// histogram — the armi tour of docs/design.md §1, with every result checked.
//
// A `histogram` is a shared object (an armi::p_object): every location owns
// one representative with its own bins.  The program shows, in order:
//
//   1. fine-grain one-sided updates: every location sends N async_rmi add()s,
//      update i going to location (me + i) % n — the library aggregates them
//      per destination (--armi-aggregation=A requests per buffer);
//   2. rmi_fence: collective termination detection — when it returns every
//      add(), on every location, has run;
//   3. sync_rmi: a blocking remote call that returns a value;
//   4. opaque_rmi: a non-blocking remote call whose armi::future we poll with
//      ready() while serving incoming requests with rmi_poll();
//   5. reduce_rmi: one location asks all of them and combines the answers;
//   6. broadcast_rmi: one location runs add() on every location;
//   7. allreduce_rmi: every location gets the combined per-bin counts.
//
// Because the destinations of update i over all sources are a permutation of
// the locations, every location receives exactly N updates, so every count
// is known in advance and checked exactly.
//
//   ./histogram --armi-locations=4 --updates=1000000 --armi-aggregation=256
//
// Exit status: 0 if every check passed, 1 if one failed, 2 on a usage error.

#include <armi/armi.hpp>

#include <fmt/core.h>

#include "example_flags.hpp"

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <numeric>
#include <string_view>
#include <vector>

namespace {

constexpr std::size_t num_bins = 64;

// One representative per location.  Requests to one location run one at a
// time, so the bins need no lock.
class histogram : public armi::p_object {
 public:
  explicit histogram(std::size_t bins) : m_counts(bins) {}

  void add(std::size_t bin) { ++m_counts[bin]; }

  std::size_t total() const { return std::reduce(m_counts.begin(), m_counts.end()); }

  std::vector<std::size_t> counts() const { return m_counts; }

 private:
  std::vector<std::size_t> m_counts;
};

// Number of i in [0, n) with i % bins == bin.
std::size_t hits_of_bin(std::size_t n, std::size_t bins, std::size_t bin) {
  return n / bins + (bin < n % bins ? 1 : 0);
}

int run(int argc, char** argv) {
  armi_example::flags f(argc, argv, "histogram", "the docs/design.md tour: updates, fence, sync, opaque, reduce, broadcast");
  std::size_t const updates = f.size("updates", 1'000'000, "async_rmi updates sent by each location");
  if (auto const status = f.finish()) return *status;

  auto const me = armi::get_location_id();
  auto const n = armi::get_num_locations();

  histogram hist(num_bins);  // collective: the same handle on every location
  auto const h = hist.get_rmi_handle();
  int failures = 0;
  auto const check = [&](bool ok, std::string_view what, std::size_t got, std::size_t expected) {
    if (!ok) {
      fmt::print(stderr, "histogram: location {}: {} = {}, expected {} FAILED\n", me, what, got,
                 expected);
      ++failures;
    }
  };

  // 1-2. Fine-grain updates, then a fence.
  armi::rmi_fence();  // start the clock together
  auto const start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < updates; ++i)
    armi::async_rmi(static_cast<armi::location_id>((me + i) % n), h, &histogram::add, i % num_bins);
  armi::rmi_fence();
  std::chrono::duration<double> const elapsed = std::chrono::steady_clock::now() - start;

  // 3. Blocking call: location 0 received exactly N updates.
  std::size_t const at_zero = armi::sync_rmi(0, h, &histogram::total);
  check(at_zero == updates, "sync_rmi total on location 0", at_zero, updates);

  // 4. Non-blocking call: keep serving requests until the answer is there.
  armi::future<std::size_t> fut = armi::opaque_rmi(n - 1, h, &histogram::total);
  std::size_t polls = 0;
  while (!fut.ready()) {
    armi::rmi_poll();
    ++polls;
  }
  std::size_t const at_last = fut.get();
  check(at_last == updates, "opaque_rmi total on the last location", at_last, updates);

  // 5. One-sided reduction: only location 0 asks and waits; the others
  //    answer from inside the fence below.
  std::size_t const expected_total = std::size_t{n} * updates;
  std::size_t total = 0;
  if (me == 0) {
    total = armi::reduce_rmi(h, &histogram::total, std::plus<>{});
    check(total == expected_total, "reduce_rmi total", total, expected_total);
  }
  armi::rmi_fence();  // every query above is answered before the broadcast changes the bins

  // 6. One-sided broadcast: add(0) runs once on every location.
  if (me == 0) armi::broadcast_rmi(h, &histogram::add, std::size_t{0});
  armi::rmi_fence();

  // 7. Collective reduction of whole vectors: global per-bin counts.
  std::vector<std::size_t> const bins = armi::allreduce_rmi(
      h, &histogram::counts, [](std::vector<std::size_t> a, std::vector<std::size_t> const& b) {
        for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
        return a;
      });
  std::size_t const final_total = std::reduce(bins.begin(), bins.end());
  check(final_total == expected_total + n, "allreduce_rmi total after broadcast", final_total,
        expected_total + n);
  for (std::size_t b = 0; b < num_bins; ++b) {
    std::size_t const expected =
        std::size_t{n} * hits_of_bin(updates, num_bins, b) + (b == 0 ? n : 0);
    check(bins[b] == expected, fmt::format("global count of bin {}", b), bins[b], expected);
  }

  if (me == 0) {
    double const secs = elapsed.count();
    fmt::print("histogram: {} location{} x {} updates, total {} (expected {}) {}\n", n,
               n == 1 ? "" : "s", updates, total, expected_total,
               failures == 0 ? "OK" : "FAILED");
    fmt::print("  updates+fence: {:.3f} s, {:.2f} M updates/s (aggregation {})\n", secs,
               secs > 0 ? static_cast<double>(expected_total) / secs / 1e6 : 0.0,
               armi_example::aggregation_text());
    fmt::print("  sync_rmi(0) = {}, opaque_rmi({}) = {} after {} polls\n", at_zero, n - 1, at_last,
               polls);
    fmt::print("  after broadcast: total {} (expected {}), {} bins checked\n", final_total,
               expected_total + n, num_bins);
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return armi::execute(argc, argv, run);
}
