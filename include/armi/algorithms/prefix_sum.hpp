// Scans in global index order over any armi::distributed_container, in place:
//
//   armi::prefix_sum(v);                          // inclusive: v[i] = v[0] + ... + v[i]
//   armi::prefix_sum(v, armi::scan_kind::exclusive); // v[i] = v[0] + ... + v[i-1], v[0] = T{}
//   armi::inclusive_scan(v, op);                  // v[i] = v[0] op ... op v[i]
//   armi::exclusive_scan(v, init, op);            // v[i] = init op v[0] op ... op v[i-1]
//
// op must be associative (it is applied in index order, with a different
// parenthesization); no identity element is needed for inclusive_scan.
//
// How: a location's part splits into runs of consecutive global indices (one
// run per location for a block distribution, one per block for block-cyclic,
// one per element for cyclic).  Each location folds each of its runs, one
// allgather hands every location all runs' (first index, total), and each
// location folds the totals of the runs before each of its own into an
// offset, then rescans its runs locally from those offsets.
//
// Communication: one rmi_fence and one allgather of the run totals: p values in all for block
// distributions (the classic local scan + exclusive scan of location totals),
// n/b for block-cyclic with blocks of b, n for cyclic (correct, but every
// location then receives the whole vector's worth of totals: prefer block
// for large scans).  Work: O(local size + runs) per location.
//
// Thread safety: collective (every location calls it, in the same order as
// its other collectives).  The container must be consistent (see
// distributed_container.hpp).
#pragma once

#include <armi/algorithms/distributed_container.hpp>
#include <armi/containers/collective.hpp>
#include <armi/hold_requests.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace armi {

/// Which sum prefix_sum computes.
enum class scan_kind {
  inclusive,  ///< v[i] = v[0] + ... + v[i]
  exclusive   ///< v[i] = v[0] + ... + v[i-1], v[0] = T{}
};

namespace detail {

template <class C, class T, class Op>
void scan(C& c, std::optional<T> init, Op op, bool exclusive) {
  hold_requests const hold;
  check_consistent(c, exclusive ? "armi::exclusive_scan" : "armi::inclusive_scan");
  location_id const me = get_location_id();
  auto const& d = c.distribution();
  auto&& local = c.local();
  std::size_t const m = static_cast<std::size_t>(std::ranges::size(local));
  auto const at = [&](std::size_t k) -> decltype(auto) {
    return std::ranges::begin(local)[static_cast<std::ptrdiff_t>(k)];
  };

  // My runs (first local, count), first global index and total of each.
  struct run {
    std::size_t local_first, count, global_first;
  };
  std::vector<run> runs;
  std::vector<std::pair<std::size_t, T>> totals;
  for (std::size_t k = 0; k < m;) {
    std::size_t const g = d.global_index(me, k);
    std::size_t e = k + 1;
    T total = at(k);
    while (e < m && d.global_index(me, e) == g + (e - k)) total = op(std::move(total), at(e++));
    runs.push_back({k, e - k, g});
    totals.emplace_back(g, std::move(total));
    k = e;
  }

  // Everyone's runs, in global order; the offset of each of mine is the fold
  // of all totals before it.
  std::vector<std::pair<std::size_t, T>> all;
  for (auto& part : allgather_value(std::move(totals)))
    all.insert(all.end(), std::make_move_iterator(part.begin()),
               std::make_move_iterator(part.end()));
  std::sort(all.begin(), all.end(), [](auto const& a, auto const& b) { return a.first < b.first; });
  std::sort(runs.begin(), runs.end(),
            [](run const& a, run const& b) { return a.global_first < b.global_first; });

  std::optional<T> acc = std::move(init);  // init op (totals so far)
  std::size_t mine = 0;
  for (auto& [first, total] : all) {
    if (mine < runs.size() && runs[mine].global_first == first) {
      run const& r = runs[mine++];
      std::optional<T> a = acc;  // rescan this run from the offset
      for (std::size_t k = r.local_first; k < r.local_first + r.count; ++k) {
        auto&& x = at(k);
        if (exclusive) {
          T next = a ? op(*a, std::as_const(x)) : T(x);
          x = std::move(*a);  // exclusive scans always have init
          a = std::move(next);
        } else {
          a = a ? op(std::move(*a), std::as_const(x)) : T(x);
          x = *a;
        }
      }
    }
    acc = acc ? op(std::move(*acc), std::move(total)) : std::move(total);
  }
  rmi_fence();
}

}  // namespace detail

/// Collective: v[i] = v[0] op ... op v[i] in global index order, in place
/// (op associative).
template <distributed_container C, class Op = std::plus<>>
void inclusive_scan(C& c, Op op = {}) {
  using T = container_value_t<C>;
  detail::scan<C, T>(c, std::nullopt, std::move(op), false);
}

/// Collective: v[i] = init op v[0] op ... op v[i-1] in global index order,
/// in place (op associative).
template <distributed_container C, class T, class Op = std::plus<>>
void exclusive_scan(C& c, T init, Op op = {}) {
  using V = container_value_t<C>;
  detail::scan<C, V>(c, std::optional<V>(V(std::move(init))), std::move(op), true);
}

/// Collective: sums, inclusive, or exclusive starting from a
/// value-initialized element, in place.
template <distributed_container C>
void prefix_sum(C& c, scan_kind kind = scan_kind::inclusive) {
  using T = container_value_t<C>;
  if (kind == scan_kind::inclusive)
    inclusive_scan(c, std::plus<>{});
  else
    exclusive_scan(c, T{}, std::plus<>{});
}

}  // namespace armi
