// detail::gather_indexed: the collective behind pvector::gather and
// parray::gather: every location's part of a 1-D container, put back in
// global index order, on every location.
#pragma once

#include <armi/containers/collective.hpp>
#include <armi/containers/distribution.hpp>
#include <armi/hold_requests.hpp>
#include <armi/rmi.hpp>

#include <cstddef>
#include <span>
#include <vector>

namespace armi::detail {

// Collective: the elements [0, d.size()) of a container laid out by d, whose
// location-local part is `mine` (at least d.local_size(me) elements; any
// beyond, such as push_backs not yet made global, are left out).  One
// allgather moving every element to every location.
template <class T, class Dist>
std::vector<T> gather_indexed(Dist const& d, std::span<T const> mine) {
  hold_requests const hold;
  std::vector<T> const own(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(d.local_size(get_location_id())));
  std::vector<std::vector<T>> const parts = allgather_value(own);
  std::vector<T> out;
  out.reserve(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) {
    index_location const at = d.locate(i);
    out.push_back(parts[at.location][at.local]);
  }
  return out;
}

}  // namespace armi::detail
