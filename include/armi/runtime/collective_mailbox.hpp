// The collectives' mailbox: contributions and results that arrived for a
// group collective, kept until the collective call here picks them up, and
// the per-group sequence numbers that tell one collective from the next.
#pragma once

#include <armi/core/handle.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace armi::detail {

class collective_mailbox {
 public:
  using key = std::tuple<std::uint64_t, std::uint64_t, std::uint32_t>;  // group, sequence, phase
  // One member's contribution to a collective, or the leader's result: a
  // packed value, or (failed) the packed error that ends the collective.
  struct message {
    location_id from;
    bool failed;
    std::vector<std::byte> bytes;
  };

  std::map<key, std::vector<message>>& messages() { return m_messages; }
  std::uint64_t next_sequence(std::uint64_t group_key) { return m_sequence[group_key]++; }

 private:
  std::map<key, std::vector<message>> m_messages;
  std::map<std::uint64_t, std::uint64_t> m_sequence;
};

}  // namespace armi::detail
