// armi::accumulate(c, init, op): a global reduction of a distributed
// container; every location gets the result.
//
//   long total = armi::accumulate(v, 0L);                        // sum
//   int  top   = armi::accumulate(v, INT_MIN, [](int a, int b) { return std::max(a, b); });
//
// Semantics: the result is init op x0 op x1 ... over every element, where
// each location folds its own elements in local order (starting from its
// first element, not from init) and the per-location results are combined in
// location order, then folded into init.  With a block distribution that is
// global index order, so op need only be associative; with other
// distributions (cyclic, block-cyclic) the order differs, so op must also be
// commutative.  Locations that own nothing contribute nothing (no identity
// element is needed).  The result type is init's type; it must travel by RMI.
//
// Communication: one allreduce (p-1 small messages to location 0 and p-1
// back).  Work: O(local size) per location.
//
// Thread safety: collective (every location calls it, in the same order as
// its other collectives).
#pragma once

#include <armi/algorithms/distributed_container.hpp>
#include <armi/containers/collective.hpp>
#include <armi/hold_requests.hpp>

#include <functional>
#include <optional>
#include <utility>

namespace armi {

/// Collective: init op x0 op x1 ... over every element of c, on every
/// location (op associative; also commutative unless c is block-distributed).
template <distributed_container C, class R, class Op = std::plus<>>
R accumulate(C const& c, R init, Op op = {}) {
  hold_requests const hold;
  std::optional<R> mine;
  for (auto const& x : c.local()) {
    if (mine)
      mine = op(std::move(*mine), x);
    else
      mine = R(x);
  }
  auto const total =
      detail::allreduce_value(std::move(mine), [&op](std::optional<R> a, std::optional<R> b) {
        if (!a) return b;
        if (!b) return a;
        return std::optional<R>(op(std::move(*a), std::move(*b)));
      });
  if (!total) return init;
  return op(std::move(init), *total);
}

}  // namespace armi
