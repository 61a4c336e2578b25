// group: a subset of the locations, like an MPI communicator's group, for
// broadcast_rmi, reduce_rmi and allreduce_rmi.
//
// Thread safety: a group is a value; distinct objects safe, shared const safe.
#pragma once

#include <armi/runtime/location.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace armi {

class group {
 public:
  // All locations of the current run.
  group() : group(all_members()) {}

  // The given locations (sorted, duplicates removed).  Throws
  // std::invalid_argument if it is empty or names a location that does not exist.
  explicit group(std::vector<location_id> members) : m_members(std::move(members)) {
    std::sort(m_members.begin(), m_members.end());
    m_members.erase(std::unique(m_members.begin(), m_members.end()), m_members.end());
    if (m_members.empty()) throw std::invalid_argument("armi::group: a group needs at least one location");
    location_id const n = detail::current("group").size();
    if (m_members.back() >= n)
      throw std::invalid_argument("armi::group: location " + std::to_string(m_members.back()) +
                                  " does not exist (there are " + std::to_string(n) + ")");
    m_key = 1469598103934665603ull;
    for (location_id m : m_members) m_key = (m_key ^ (m + 1)) * 1099511628211ull;
  }

  static group all() { return group(); }

  std::size_t size() const { return m_members.size(); }
  bool contains(location_id l) const { return std::binary_search(m_members.begin(), m_members.end(), l); }
  std::vector<location_id> const& members() const { return m_members; }
  // Position of l in members(), or size() if absent.
  std::size_t rank_of(location_id l) const {
    auto it = std::lower_bound(m_members.begin(), m_members.end(), l);
    return it != m_members.end() && *it == l ? std::size_t(it - m_members.begin()) : size();
  }
  // Identifies the group in collective messages (same on every member).
  std::uint64_t key() const { return m_key; }

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
