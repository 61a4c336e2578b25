// detail::element_location: where one element of a container lives (its
// owner and the key of its slot there), and the bounds checks that find it
// with clear errors.  The locating half of element_access.hpp.
#pragma once

#include <armi/containers/distribution.hpp>
#include <armi/core/handle.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace armi::detail {

// Owner and slot of one element; Key must travel by RMI (it is what a
// remote access sends).
template <class Key>
struct element_location {
  location_id location = 0;
  Key key{};
};

// "<container>::<method>: <what> i is out of range for size n", as
// std::out_of_range.
[[noreturn]] inline void element_out_of_range(char const* container, char const* method, char const* what,
                                              std::size_t i, std::size_t n) {
  throw std::out_of_range(std::string(container) + "::" + method + ": " + what + " " + std::to_string(i) +
                          " is out of range for size " + std::to_string(n));
}

// Global index i of a 1-D container laid out by d, checked against d.size().
template <class Dist>
element_location<std::size_t> locate_index(Dist const& d, char const* container, char const* method,
                                           std::size_t i) {
  if (i >= d.size()) element_out_of_range(container, method, "index", i, d.size());
  index_location const at = d.locate(i);
  return {at.location, at.local};
}

// Slot k of a location's contiguous storage, checked against its size.
template <class Storage>
decltype(auto) local_slot(Storage& storage, char const* container, char const* method, std::size_t k) {
  if (k >= storage.size()) element_out_of_range(container, method, "local index", k, storage.size());
  return storage[k];
}

}  // namespace armi::detail
