// armi::for_each(c, f) and armi::transform(c, f) / transform(in, out, f):
// element-wise pAlgorithms over any armi::distributed_container.
//
//   armi::for_each(v, [](int& x) { x *= 2; });
//   armi::for_each(v, [](std::size_t i, int& x) { x = int(i); });  // with the global index
//   armi::transform(v, [](int x) { return x + 1; });                // in place
//   armi::transform(v, w, [](int x) { return double(x) / 2; });     // into w
//
// Semantics: each location applies f to the elements it owns, in local
// order; f never runs on another location's elements.  Each ends with an
// rmi_fence, so afterwards any location reads the new values (v.get(i)) and
// every RMI that f issued has run.  transform(in, out, f) requires out to have the
// same distribution as in (compared with ==; std::invalid_argument if not)
// and writes out[i] = f(in[i]).
//
// Communication: one rmi_fence.  Work: O(local size) per location.
//
// Thread safety: collective (every location calls it, in the same order as
// its other collectives); touches only the calling location's representative.
#pragma once

#include <armi/algorithms/distributed_container.hpp>
#include <armi/hold_requests.hpp>

#include <cstddef>
#include <ranges>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace armi {

/// Collective: f(x), or f(global index, x), for every element, each on its
/// owner; ends with an rmi_fence().
template <distributed_container C, class F>
void for_each(C& c, F f) {
  hold_requests const hold;
  auto&& local = c.local();
  using E = decltype(*std::ranges::begin(local));
  if constexpr (std::is_invocable_v<F&, std::size_t, E>) {
    detail::check_consistent(c, "armi::for_each");
    location_id const me = get_location_id();
    auto const& d = c.distribution();
    std::size_t k = 0;
    for (auto&& x : local) f(d.global_index(me, k++), x);
  } else {
    static_assert(std::is_invocable_v<F&, E>,
                  "armi::for_each: f must be callable as f(element&) or f(std::size_t "
                  "global_index, element&)");
    for (auto&& x : local) f(x);
  }
  rmi_fence();
}

/// Collective: x = f(x) for every element, in place; ends with an rmi_fence().
template <distributed_container C, class F>
void transform(C& c, F f) {
  hold_requests const hold;
  for (auto&& x : c.local()) x = f(std::as_const(x));
  rmi_fence();
}

/// Collective: out[i] = f(in[i]); out must have in's distribution
/// (std::invalid_argument if not).  Ends with an rmi_fence().
template <distributed_container In, distributed_container Out, class F>
requires std::same_as<std::remove_cvref_t<decltype(std::declval<In&>().distribution())>,
                      std::remove_cvref_t<decltype(std::declval<Out&>().distribution())>>
void transform(In const& in, Out& out, F f) {
  hold_requests const hold;
  if (!(in.distribution() == out.distribution()))
    throw std::invalid_argument(
        "armi::transform: the output container has another distribution than the input");
  auto const& src = in.local();
  auto&& dst = out.local();
  if (std::ranges::size(src) != std::ranges::size(dst))
    throw std::logic_error(
        "armi::transform: the local parts differ in size (push_back without update_distribution?)");
  auto o = std::ranges::begin(dst);
  for (auto const& x : src) *o++ = f(x);
  rmi_fence();
}

}  // namespace armi
