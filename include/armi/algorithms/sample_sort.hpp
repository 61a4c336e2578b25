// armi::sample_sort(v[, comp[, oversampling]]): sorts a block-distributed
// armi::pvector in place, in global index order — the ARMI paper's sample
// sort (Fig. 3), element by element.
//
//   armi::pvector<int> v(n);  ... fill v.local() ...
//   armi::sample_sort(v);                      // ascending
//   armi::sample_sort(v, std::greater<>{});    // any strict weak order
//
// Steps (collective; every location calls it):
//   0. rmi_fence(): every set/push_back issued before has landed.  Elements
//      push_back'ed but not yet made global are sorted too (the input is
//      every location's local() part).
//   1. Sampling: each location draws `oversampling` random elements of its
//      part (all of them if it has fewer), sorts them; one allreduce merges
//      the samples, and every location picks the same p-1 splitters at even
//      intervals of the merged sample.  The default, 1024 per location,
//      puts a splitter within about 1% of n of its place (standard error
//      of a quantile of p * 1024 samples) for a sample that costs little.
//   2. Distribution: one async_rmi per element to the location owning its
//      bucket, naming pvector<T>::push_back on a temporary bucket pvector
//      (elements of the caller's own bucket are appended directly).  armi
//      aggregates the requests per destination (--armi-aggregation), which
//      gives the coarse messages of a message-passing sample sort without
//      writing them.  An element equal to one or more splitters may go to
//      any of the buckets those splitters bound; they are dealt round-robin
//      over them, so many equal keys (all equal, even) still spread evenly.
//      The bucket search is branch-free, and so is the choice between
//      appending and sending: the elements are taken 256 at a time, their
//      buckets found first, then this location's appended and the others'
//      sent, each in input order (random keys would mispredict a branch).
//   3. rmi_fence(), then each location sorts its bucket with std::sort.
// On one location the steps reduce to sorting local() in place.
// Afterwards location k's local() is bucket k, and v's distribution is
// block_distribution::from_counts(bucket sizes) — blocks of uneven length
// (a location can own nothing), in the sorted order.  Call v.rebalance() for
// even blocks (that moves elements again).
//
// Communication: 1 allreduce of p * oversampling elements, n/p per-element
// async_rmis per location (n/(p*aggregation) messages), 2 fences and one
// allgather of p counts.  Work: O((n/p) log(n/p)) per location with
// balanced buckets.  Not stable.
//
// Thread safety: collective; touches only the calling location's
// representative of v.  comp is used on the calling location only.
#pragma once

#include <armi/containers/collective.hpp>
#include <armi/containers/pvector.hpp>
#include <armi/hold_requests.hpp>
#include <armi/rmi.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <random>
#include <span>
#include <vector>

namespace armi {
namespace detail {
// The number of leading elements of sorted `s` for which before(e) holds
// (before must be true on a prefix): a binary search whose steps select
// with a conditional move instead of a branch, so that random keys cost no
// mispredicted branches.
template <class T, class Before>
[[gnu::always_inline]] inline std::size_t branchless_bound(std::vector<T> const& s, Before before) {
  std::size_t n = s.size();
  if (n == 0) return 0;
  T const* base = s.data();
  while (n > 1) {
    std::size_t const half = n / 2;
    base = before(base[half - 1]) ? base + half : base;
    n -= half;
  }
  return static_cast<std::size_t>(base - s.data()) + (before(*base) ? 1 : 0);
}

// Step 1's sample of location `me`'s part: min(oversampling, size) elements
// drawn with replacement by a generator seeded from (me, size), sorted by
// comp.  The same input on the same location gives the same sample, so a
// program that compares itself with sample_sort (fig6_sample_sort's
// hand-written MPI sort) can use the very same splitters.
template <class T, class Comp>
std::vector<T> draw_sample(std::span<T const> input, std::size_t oversampling, location_id me, Comp comp) {
  std::vector<T> sample;
  if (input.empty()) return sample;
  std::size_t const count = std::min(oversampling, input.size());
  std::mt19937_64 gen(0x5a4d'9e37'79b9'7f4aULL ^ (std::uint64_t{me} << 32) ^ input.size());
  std::uniform_int_distribution<std::size_t> pick(0, input.size() - 1);
  sample.reserve(count);
  for (std::size_t i = 0; i < count; ++i) sample.push_back(input[pick(gen)]);
  std::sort(sample.begin(), sample.end(), comp);
  return sample;
}
}  // namespace detail

/// Collective: sorts the block-distributed v in place, in global index order,
/// by comp (a strict weak order); afterwards v's distribution is the bucket
/// sizes (call v.rebalance() for even blocks).  Not stable.
template <class T, class Comp = std::less<>>
void sample_sort(pvector<T>& v, Comp comp = {}, std::size_t oversampling = 1024) {
  hold_requests const hold;
  rmi_fence();
  location_id const me = get_location_id();
  location_id const p = get_num_locations();
  auto const input = v.local();
  if (p == 1) {
    // One bucket, this location's: no sample, no copy into a bucket vector.
    std::sort(input.begin(), input.end(), comp);
    v.update_distribution();
    return;
  }

  // 1. Sampling.
  std::vector<T> sample = detail::draw_sample(std::span<T const>(input), oversampling, me, comp);
  std::vector<T> const merged = detail::allreduce_value(
      std::move(sample), [&comp](std::vector<T> a, std::vector<T> const& b) {
        std::vector<T> out;
        out.reserve(a.size() + b.size());
        std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out), comp);
        return out;
      });
  std::vector<T> splitters;  // bucket k holds x with splitters[k-1] <= x <= splitters[k]
  if (!merged.empty())
    for (std::size_t k = 1; k < p; ++k) splitters.push_back(merged[k * merged.size() / p]);

  // 2. Distribution into the buckets.
  pvector<T> buckets(0);  // collective, like every pvector
  buckets.local_reserve(input.size() + input.size() / 8);
  auto const h = buckets.get_rmi_handle();
  std::size_t deal = me;  // round-robin over the buckets an element may go to
  constexpr std::size_t chunk = 256;
  location_id dest[chunk];
  std::uint32_t mine_at[chunk], theirs_at[chunk];
  for (std::size_t start = 0; start < input.size(); start += chunk) {
    std::size_t const n = std::min(chunk, input.size() - start);
    T const* const xs = input.data() + start;
    // Each element's bucket, and whose it is, without a branch on either.
    std::size_t mine = 0, theirs = 0;
    for (std::size_t i = 0; i < n; ++i) {
      T const& x = xs[i];
      std::size_t const lo = detail::branchless_bound(splitters, [&](T const& s) { return comp(s, x); });
      std::size_t const hi = detail::branchless_bound(splitters, [&](T const& s) { return !comp(x, s); });
      std::size_t const span = hi - lo;
      location_id const d = static_cast<location_id>(lo + (span == 0 ? 0 : deal++ % (span + 1)));
      dest[i] = d;
      mine_at[mine] = static_cast<std::uint32_t>(i);
      theirs_at[theirs] = static_cast<std::uint32_t>(i);
      mine += d == me;
      theirs += d != me;
    }
    for (std::size_t k = 0; k < mine; ++k) buckets.push_back(xs[mine_at[k]]);
    for (std::size_t k = 0; k < theirs; ++k) {
      std::uint32_t const i = theirs_at[k];
      async_rmi(dest[i], h, armi::method<&pvector<T>::push_back>, xs[i]);
    }
  }
  rmi_fence();

  // 3. Local sort; the buckets become v.
  auto mine = buckets.local();
  std::sort(mine.begin(), mine.end(), comp);
  v.swap(buckets);
  v.update_distribution();
}

}  // namespace armi
