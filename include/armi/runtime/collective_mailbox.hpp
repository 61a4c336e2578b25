// The collectives' mailbox: contributions and results that arrived for a
// group collective, kept until the collective call here picks them up, and
// the per-group sequence numbers that tell one collective from the next,
// and the arity of the trees collectives run over (--armi-tree-arity).
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
  explicit collective_mailbox(std::uint32_t tree_arity) : m_tree_arity(tree_arity) {}

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
  // A key for one reduce_rmi of location self, distinct from every other
  // location's and from self's other calls in flight.
  std::uint64_t next_call_key(location_id self) { return std::uint64_t{self} << 32 | m_calls++; }
  std::uint32_t tree_arity() const { return m_tree_arity; }

 private:
  std::map<key, std::vector<message>> m_messages;
  std::map<std::uint64_t, std::uint64_t> m_sequence;
  std::uint32_t m_calls = 0;
  std::uint32_t m_tree_arity;
};

}  // namespace armi::detail
