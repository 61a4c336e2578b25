// detail::key_owner: the location that owns a hashed key, the placement of
// punordered_map, punordered_set and pdisjoint_set.
//
// mix64 of the key's hash, mapped onto [0, p) by a multiply-shift of its
// high half (no division on the send path): computable on any location
// without communication, even when the hash is the identity (std::hash of
// an integer), and independent of the buckets the owner's own
// std::unordered_* puts the key in (those use the hash modulo a prime).
#pragma once

#include <armi/core/handle.hpp>
#include <armi/core/mix.hpp>

#include <cstdint>

namespace armi::detail {

inline location_id key_owner(std::uint64_t hash, location_id p) noexcept {
  return static_cast<location_id>(((mix64(hash) >> 32) * p) >> 32);
}

}  // namespace armi::detail
