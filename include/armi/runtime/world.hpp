// Every location of a run as a group's member list, with its key: what the
// collectives without a group (broadcast_rmi(h, ...), reduce_rmi and
// allreduce_rmi over every location) run over.  Built once per process by
// its launcher and shared by its locations: at thousands of locations, a
// list built per call (group::all()) was P entries per location and call.
#pragma once

#include <armi/core/handle.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace armi::detail {

// The key that tells groups apart in collective messages (FNV-1a over the
// sorted members): equal member lists, equal keys, on every location.
inline std::uint64_t members_key(std::span<location_id const> members) {
  std::uint64_t key = 1469598103934665603ull;
  for (location_id m : members) key = (key ^ (m + 1)) * 1099511628211ull;
  return key;
}

struct world_members {
  std::vector<location_id> members;  // 0, 1, ..., P - 1
  std::uint64_t key;

  static world_members of(location_id size) {
    world_members w;
    w.members.resize(size);
    for (location_id i = 0; i < size; ++i) w.members[i] = i;
    w.key = members_key(w.members);
    return w;
  }
};

}  // namespace armi::detail
