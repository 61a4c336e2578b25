// detail::mix64: splitmix64's finalizer, a bijection of 64-bit words whose
// every output bit depends on every input bit.  Used where a key or a seed
// must become a well-spread number: the owner of a hashed key (std::hash of
// an integer is the integer itself), fault draws, generated graphs.
#pragma once

#include <cstdint>

namespace armi::detail {

constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace armi::detail
