// group: a subset of the locations, like an MPI communicator's group, for
// broadcast_rmi, reduce_rmi and allreduce_rmi.
//
// Thread safety: a group is a value; distinct objects safe, shared const safe.
#pragma once

#include <armi/runtime/location.hpp>
#include <armi/runtime/world.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace armi {

/// A set of locations, like an MPI communicator's group, for broadcast_rmi, reduce_rmi and
/// allreduce_rmi.
///
/// A value: copy it, compare it, send it.  Every member of a collective must use an equal
/// group.  Distinct objects may be used concurrently; a shared one only through const
/// members.  Constructing one asks the calling location how many locations the run has,
/// so construct it inside armi::execute.
class group {
 public:
  /// All locations of the current run.
  group() : group(all_members()) {}

  /// The given locations, sorted, duplicates removed.
  /// @throws std::invalid_argument if members is empty or names a location that does not exist.
  explicit group(std::vector<location_id> members) : m_members(std::move(members)) {
    std::sort(m_members.begin(), m_members.end());
    m_members.erase(std::unique(m_members.begin(), m_members.end()), m_members.end());
    if (m_members.empty()) throw std::invalid_argument("armi::group: a group needs at least one location");
    location_id const n = detail::current("group").size();
    if (m_members.back() >= n)
      throw std::invalid_argument("armi::group: location " + std::to_string(m_members.back()) +
                                  " does not exist (there are " + std::to_string(n) + ")");
    m_key = detail::members_key(m_members);
  }

  /// All locations of the current run; the same as group().
  static group all() { return group(); }

  /// The number of locations in the group.
  std::size_t size() const { return m_members.size(); }
  /// True when location l is a member.
  bool contains(location_id l) const { return std::binary_search(m_members.begin(), m_members.end(), l); }
  /// The members in increasing order.
  std::vector<location_id> const& members() const { return m_members; }
  /// The position of l in members(), or size() if l is not a member.
  std::size_t rank_of(location_id l) const {
    auto it = std::lower_bound(m_members.begin(), m_members.end(), l);
    return it != m_members.end() && *it == l ? std::size_t(it - m_members.begin()) : size();
  }
  /// A hash of the members that tells groups apart in collective messages; the same on
  /// every location for equal groups.
  std::uint64_t key() const { return m_key; }

  /// Groups are equal when they have the same members.
  friend bool operator==(group const& a, group const& b) { return a.m_members == b.m_members; }

 private:
  static std::vector<location_id> all_members() {
    location_id const n = detail::current("group").size();
    std::vector<location_id> v(n);
    for (location_id i = 0; i < n; ++i) v[i] = i;
    return v;
  }
  std::vector<location_id> m_members;
  std::uint64_t m_key = 0;
};

}  // namespace armi
