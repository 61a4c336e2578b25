// sample_sort — the ARMI paper's sample sort (Fig. 3) on an armi::pvector.
//
// The input is a block-distributed armi::pvector<int> of --n random ints per
// location.  armi::sample_sort (include/armi/algorithms/sample_sort.hpp):
//
//   1. Sampling.  Each location draws a sorted random sample of its part
//      (oversampled: --oversampling elements per location); one allreduce
//      merges the samples, and every location takes the same p-1 splitters
//      at even intervals of the merged sample.
//   2. Distribution.  Each element goes to the location owning its bucket
//      with its own async_rmi(dest, buckets, &pvector<int>::push_back, x) —
//      the fine-grain style of the shared-memory version (Fig. 1) without its
//      locks: a location runs one request at a time, and armi aggregates the
//      requests per destination (--armi-aggregation=A), which gives the
//      coarse messages of the message-passing version (Fig. 2) for free.
//      rmi_fence() returns once every element has arrived.
//   3. Each location sorts its bucket with std::sort; the buckets become the
//      pvector, whose distribution is now the bucket sizes.
//
// Then it checks the result globally: every location's part sorted, the
// largest element of a part <= the smallest of the next non-empty part, the
// distribution matching the parts, and the element count, sum and xor
// unchanged.
//
//   ./sample_sort --armi-locations=4 --n=1000000 --seed=1
//
// Exit status: 0 if every check passed, 1 if one failed, 2 on a usage error.

#include <armi/algorithms/sample_sort.hpp>
#include <armi/armi.hpp>
#include <armi/containers/pvector.hpp>

#include "example_flags.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace {

// What one location reports about its part (trivially copyable, so it
// travels by RMI as is, alone or in a std::vector).
struct part_summary {
  armi::location_id location = 0;
  std::uint64_t size = 0;
  std::uint64_t distribution_size = 0;  // what the distribution says it owns
  bool sorted = true;
  int min = 0;  // meaningful only if size > 0
  int max = 0;
};

// Order-independent fingerprint of a multiset of ints.
struct checksum {
  std::uint64_t count = 0;
  std::uint64_t sum = 0;  // modulo 2^64
  std::uint64_t xor_of = 0;

  friend checksum operator+(checksum a, checksum const& b) {
    return {a.count + b.count, a.sum + b.sum, a.xor_of ^ b.xor_of};
  }
  friend bool operator==(checksum const&, checksum const&) = default;
};

checksum checksum_of(std::span<int const> v) {
  checksum c;
  for (int x : v) {
    auto const bits = static_cast<std::uint64_t>(static_cast<std::int64_t>(x));
    c.count += 1;
    c.sum += bits;
    c.xor_of ^= bits * 0x9E3779B97F4A7C15ULL;  // spread the bits so equal pairs differ from zeros
  }
  return c;
}

// Looks at one pvector's local part on every location, for the checks: its
// methods answer allreduce_rmi.
class inspector : public armi::p_object {
 public:
  explicit inspector(armi::pvector<int> const& v) : m_v(v) {}

  checksum fingerprint() const { return checksum_of(m_v.local()); }
  std::vector<part_summary> summary() const {
    auto const local = m_v.local();
    part_summary s;
    s.location = armi::get_location_id();
    s.size = local.size();
    s.distribution_size = m_v.distribution().local_size(s.location);
    s.sorted = std::is_sorted(local.begin(), local.end());
    if (!local.empty()) {
      auto const [lo, hi] = std::minmax_element(local.begin(), local.end());
      s.min = *lo;
      s.max = *hi;
    }
    return {s};
  }

 private:
  armi::pvector<int> const& m_v;
};

std::vector<part_summary> concatenate(std::vector<part_summary> a,
                                      std::vector<part_summary> const& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

int run(int argc, char** argv) {
  armi_example::flags f(argc, argv, "sample_sort",
                        "sorts random ints with armi::sample_sort on an armi::pvector");
  std::uint64_t const n = f.size("n", 1'000'000, "random ints per location");
  std::uint64_t const seed = f.size("seed", 1, "random seed");
  std::uint64_t const oversampling =
      f.size("oversampling", 1024, "sample elements drawn per location");
  if (auto const status = f.finish()) return *status;

  auto const me = armi::get_location_id();
  auto const p = armi::get_num_locations();

  // The input: n random ints per location, a different reproducible stream each.
  armi::pvector<int> v(static_cast<std::size_t>(n) * p);  // collective: even blocks of n
  {
    std::mt19937_64 gen(seed * 0x100000001B3ULL + me);
    std::uniform_int_distribution<int> dist;  // the whole range of int
    for (int& x : v.local()) x = dist(gen);
  }
  inspector look(v);
  auto const h = look.get_rmi_handle();
  checksum const before = armi::allreduce_rmi(h, &inspector::fingerprint, std::plus<>{});

  armi::rmi_fence();  // start the clock together
  auto const start = std::chrono::steady_clock::now();
  armi::sample_sort(v, std::less<>{},
                    static_cast<std::size_t>(std::max<std::uint64_t>(oversampling, 1)));
  armi::rmi_fence();
  auto const stop = std::chrono::steady_clock::now();

  // Verification.
  checksum const after = armi::allreduce_rmi(h, &inspector::fingerprint, std::plus<>{});
  std::vector<part_summary> const parts = armi::allreduce_rmi(h, &inspector::summary, concatenate);

  int failures = 0;
  auto const fail = [&](std::string const& what) {  // every location checks, location 0 tells
    if (me == 0) fmt::print(stderr, "sample_sort: check failed: {}\n", what);
    ++failures;
  };
  if (parts.size() != p) fail(fmt::format("{} part summaries for {} locations", parts.size(), p));
  std::optional<int> previous_max;  // largest element of the parts so far
  std::uint64_t largest = 0;
  for (armi::location_id k = 0; k < parts.size(); ++k) {
    part_summary const& b = parts[k];
    if (b.location != k) fail(fmt::format("summary {} came from location {}", k, b.location));
    if (!b.sorted) fail(fmt::format("location {}'s part is not sorted", k));
    if (b.size != b.distribution_size)
      fail(fmt::format("location {} holds {} elements, its distribution says {}", k, b.size,
                       b.distribution_size));
    if (b.size == 0) continue;
    if (previous_max && *previous_max > b.min)
      fail(fmt::format("location {}'s part starts at {}, below the previous part's max {}", k,
                       b.min, *previous_max));
    previous_max = b.max;
    largest = std::max(largest, b.size);
  }
  if (v.size() != n * p)
    fail(fmt::format("the pvector has size {} after the sort, expected {}", v.size(), n * p));
  if (after.count != n * p)
    fail(fmt::format("{} elements after the sort, expected {}", after.count, n * p));
  if (!(after == before))
    fail(fmt::format("checksum changed: count/sum/xor {}/{:#x}/{:#x} -> {}/{:#x}/{:#x}",
                     before.count, before.sum, before.xor_of, after.count, after.sum,
                     after.xor_of));
  // A few global reads through the pvector's index map: in order.
  if (v.size() >= 2) {
    std::size_t const mid = v.size() / 2;
    if (v.get(mid - 1) > v.get(mid)) fail("v[mid-1] > v[mid] through get()");
    if (v.get(0) > v.get(v.size() - 1)) fail("v[0] > v[last] through get()");
  }

  if (me == 0) {
    std::chrono::duration<double> const total_time = stop - start;
    double const avg = static_cast<double>(after.count) / p;
    fmt::print("sample_sort: {} location{} x {} ints (seed {}), oversampling {}, aggregation {}\n",
               p, p == 1 ? "" : "s", n, seed, oversampling, armi_example::aggregation_text());
    fmt::print(
        "  time {:.3f} s, {:.2f} M ints/s\n", total_time.count(),
        total_time.count() > 0 ? static_cast<double>(after.count) / total_time.count() / 1e6 : 0.0);
    fmt::print("  part sizes (the pvector's distribution):");
    for (part_summary const& b : parts) fmt::print(" {}", b.size);
    fmt::print("\n  balance: largest part {} = {:.3f} x average\n", largest,
               avg > 0 ? static_cast<double>(largest) / avg : 1.0);
    fmt::print("  {} elements, checksum {:#018x} / {:#018x}: {}\n", after.count, after.sum,
               after.xor_of, failures == 0 ? "sorted across all locations, OK" : "FAILED");
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return armi::execute(argc, argv, run);
}
