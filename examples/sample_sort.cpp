// sample_sort — the ARMI paper's sample sort (Fig. 3), element by element.
//
// Every location holds --n random ints.  Sample sort:
//
//   1. Sampling.  Each location draws a sorted random sample of its input
//      (oversampled: `oversampling` elements per location).  One
//      allreduce_rmi, whose operator merges two sorted vectors, hands every
//      location the whole sorted sample; the p-1 splitters are taken from it
//      at even intervals, identically everywhere.
//   2. Distribution.  Each element goes to the location owning its bucket
//      with its own async_rmi(dest, handle, &sorter::push_back, x) — the
//      fine-grain style of the shared-memory version (Fig. 1) without its
//      locks: a location runs one request at a time, and armi aggregates the
//      requests per destination (--armi-aggregation=A), which gives the
//      coarse messages of the message-passing version (Fig. 2) for free.
//      rmi_fence() returns once every element has arrived.
//   3. Each location sorts its bucket with std::sort.
//
// Then it checks the result globally: every bucket sorted, the largest
// element of a bucket <= the smallest of the next non-empty bucket, and the
// element count, sum and xor unchanged (one allreduce_rmi per check).
//
//   ./sample_sort --armi-locations=4 --n=1000000 --seed=1
//
// Exit status: 0 if every check passed, 1 if one failed, 2 on a usage error.

#include <armi/armi.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>
#include <vector>

namespace {

constexpr std::size_t oversampling = 256;  // sample elements drawn per location

// What one location reports about its bucket (trivially copyable, so it
// travels by RMI as is, alone or in a std::vector).
struct bucket_summary {
  armi::location_id location = 0;
  std::uint64_t size = 0;
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

checksum checksum_of(std::vector<int> const& v) {
  checksum c;
  for (int x : v) {
    auto const bits = static_cast<std::uint64_t>(static_cast<std::int64_t>(x));
    c.count += 1;
    c.sum += bits;
    c.xor_of ^= bits * 0x9E3779B97F4A7C15ULL;  // spread the bits so equal pairs differ from zeros
  }
  return c;
}

// One representative per location: its share of the input and its bucket.
class sorter : public armi::p_object {
 public:
  sorter(std::size_t n, std::uint64_t seed) {
    // A different stream per location, reproducible from --seed.
    std::mt19937_64 gen(seed * 0x100000001B3ULL + armi::get_location_id());
    std::uniform_int_distribution<int> dist;  // the whole range of int
    m_input.resize(n);
    for (int& x : m_input) x = dist(gen);
    m_bucket.reserve(n + n / 4);
  }

  // Step 1: a sorted random sample of the local input.
  std::vector<int> local_sample() const {
    std::vector<int> sample;
    if (m_input.empty()) return sample;
    std::mt19937_64 gen(m_input.size() + armi::get_location_id());
    std::uniform_int_distribution<std::size_t> pick(0, m_input.size() - 1);
    std::size_t const count = std::min(oversampling, m_input.size());
    for (std::size_t i = 0; i < count; ++i) sample.push_back(m_input[pick(gen)]);
    std::sort(sample.begin(), sample.end());
    return sample;
  }

  // Step 2: the target of the per-element async_rmi.
  void push_back(int x) { m_bucket.push_back(x); }

  // Step 3.
  void sort_bucket() { std::sort(m_bucket.begin(), m_bucket.end()); }

  std::vector<int> const& input() const { return m_input; }
  std::size_t bucket_size() const { return m_bucket.size(); }

  // For the checks: fingerprints before and after, and a bucket summary
  // (as a one-element vector, so that allreduce_rmi can concatenate them).
  checksum input_checksum() const { return checksum_of(m_input); }
  checksum bucket_checksum() const { return checksum_of(m_bucket); }
  std::vector<bucket_summary> summary() const {
    bucket_summary s;
    s.location = armi::get_location_id();
    s.size = m_bucket.size();
    s.sorted = std::is_sorted(m_bucket.begin(), m_bucket.end());
    if (!m_bucket.empty()) {
      auto const [lo, hi] = std::minmax_element(m_bucket.begin(), m_bucket.end());
      s.min = *lo;
      s.max = *hi;
    }
    return {s};
  }

 private:
  std::vector<int> m_input;
  std::vector<int> m_bucket;
};

// allreduce_rmi operators.
std::vector<int> merge_sorted(std::vector<int> const& a, std::vector<int> const& b) {
  std::vector<int> out;
  out.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::vector<bucket_summary> concatenate(std::vector<bucket_summary> a,
                                        std::vector<bucket_summary> const& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// p-1 splitters at even intervals of the sorted sample.  Bucket k holds the
// elements x with splitters[k-1] <= x < splitters[k].
std::vector<int> choose_splitters(std::vector<int> const& sample, armi::location_id p) {
  std::vector<int> splitters;
  if (sample.empty())
    return splitters;  // no input anywhere: everything (nothing) goes to location 0
  for (std::size_t k = 1; k < p; ++k) splitters.push_back(sample[k * sample.size() / p]);
  return splitters;
}

armi::location_id bucket_of(std::vector<int> const& splitters, int x) {
  return static_cast<armi::location_id>(std::upper_bound(splitters.begin(), splitters.end(), x) -
                                        splitters.begin());
}

struct options {
  std::size_t n = 1'000'000;
  std::uint64_t seed = 1;
};

void print_usage(std::FILE* out, char const* prog) {
  fmt::print(out,
             "usage: {} [--n=N] [--seed=S] [--armi-* options]\n"
             "  --n=N      random ints per location (default 1000000)\n"
             "  --seed=S   random seed (default 1)\n"
             "  --help     this text; --armi-help lists the armi options\n",
             prog);
}

// Parses "--name=value" into a non-negative integer; nullopt if malformed.
std::optional<std::uint64_t> parse_count(std::string_view arg, std::string_view name) {
  if (!arg.starts_with(name) || arg.size() == name.size() || arg[name.size()] != '=')
    return std::nullopt;
  std::string_view const digits = arg.substr(name.size() + 1);
  std::uint64_t value = 0;
  auto const [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

// Returns the options, or an exit status (0 for --help, 2 for a usage error).
// Only location 0 prints, so the message appears once.
std::variant<options, int> parse_args(int argc, char** argv) {
  bool const loud = armi::get_location_id() == 0;
  char const* const prog = argc > 0 ? argv[0] : "sample_sort";
  options opts;
  for (int i = 1; i < argc; ++i) {
    std::string_view const arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      if (loud) print_usage(stdout, prog);
      return 0;
    }
    if (auto const v = parse_count(arg, "--n")) {
      opts.n = static_cast<std::size_t>(*v);
      continue;
    }
    if (auto const v = parse_count(arg, "--seed")) {
      opts.seed = *v;
      continue;
    }
    if (loud) {
      fmt::print(stderr, "{}: error: unknown or malformed argument '{}'\n", prog, arg);
      print_usage(stderr, prog);
    }
    return 2;
  }
  return opts;
}

int run(int argc, char** argv) {
  auto const parsed = parse_args(argc, argv);
  if (auto const* status = std::get_if<int>(&parsed)) return *status;
  options const opts = std::get<options>(parsed);

  auto const me = armi::get_location_id();
  auto const p = armi::get_num_locations();

  sorter s(opts.n, opts.seed);  // collective: the same handle on every location
  auto const h = s.get_rmi_handle();
  checksum const before = armi::allreduce_rmi(h, &sorter::input_checksum, std::plus<>{});

  armi::rmi_fence();  // start the clock together
  auto const start = std::chrono::steady_clock::now();

  // 1. Sampling: every location gets the merged sample and picks the same splitters.
  std::vector<int> const sample = armi::allreduce_rmi(h, &sorter::local_sample, merge_sorted);
  std::vector<int> const splitters = choose_splitters(sample, p);

  // 2. Distribution: one async_rmi per element; aggregation does the coarsening.
  for (int x : s.input()) armi::async_rmi(bucket_of(splitters, x), h, &sorter::push_back, x);
  armi::rmi_fence();
  auto const distributed = std::chrono::steady_clock::now();

  // 3. Local sort.
  s.sort_bucket();
  armi::rmi_fence();
  auto const stop = std::chrono::steady_clock::now();

  // Verification.
  checksum const after = armi::allreduce_rmi(h, &sorter::bucket_checksum, std::plus<>{});
  std::vector<bucket_summary> const buckets = armi::allreduce_rmi(h, &sorter::summary, concatenate);

  int failures = 0;
  auto const fail = [&](std::string const& what) {  // every location checks, location 0 tells
    if (me == 0) fmt::print(stderr, "sample_sort: check failed: {}\n", what);
    ++failures;
  };
  if (buckets.size() != p)
    fail(fmt::format("{} bucket summaries for {} locations", buckets.size(), p));
  std::optional<int> previous_max;  // largest element of the buckets so far
  std::uint64_t largest = 0;
  for (armi::location_id k = 0; k < buckets.size(); ++k) {
    bucket_summary const& b = buckets[k];
    if (b.location != k) fail(fmt::format("summary {} came from location {}", k, b.location));
    if (!b.sorted) fail(fmt::format("bucket {} is not sorted", k));
    if (b.size == 0) continue;
    if (previous_max && *previous_max > b.min)
      fail(fmt::format("bucket {} starts at {}, below the previous bucket's max {}", k, b.min,
                       *previous_max));
    previous_max = b.max;
    largest = std::max(largest, b.size);
  }
  if (after.count != std::uint64_t{p} * opts.n)
    fail(fmt::format("{} elements after the sort, expected {}", after.count, p * opts.n));
  if (!(after == before))
    fail(fmt::format("checksum changed: count/sum/xor {}/{:#x}/{:#x} -> {}/{:#x}/{:#x}",
                     before.count, before.sum, before.xor_of, after.count, after.sum,
                     after.xor_of));

  if (me == 0) {
    std::chrono::duration<double> const total_time = stop - start;
    std::chrono::duration<double> const distribute_time = distributed - start;
    std::chrono::duration<double> const sort_time = stop - distributed;
    double const avg = static_cast<double>(after.count) / p;
    fmt::print(
        "sample_sort: {} location{} x {} ints (seed {}), {} sample elements, aggregation {}\n", p,
        p == 1 ? "" : "s", opts.n, opts.seed, sample.size(), armi::get_aggregation());
    fmt::print(
        "  time {:.3f} s (sample + distribute {:.3f} s, local sort {:.3f} s), {:.2f} M ints/s\n",
        total_time.count(), distribute_time.count(), sort_time.count(),
        total_time.count() > 0 ? static_cast<double>(after.count) / total_time.count() / 1e6 : 0.0);
    fmt::print("  bucket sizes:");
    for (bucket_summary const& b : buckets) fmt::print(" {}", b.size);
    fmt::print("\n  balance: largest bucket {} = {:.3f} x average\n", largest,
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
