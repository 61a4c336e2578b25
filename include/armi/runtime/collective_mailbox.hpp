// The collectives' mailbox: contributions and results that arrived for a
// group collective, kept until the collective call here picks them up, and
// the per-group sequence numbers that tell one collective from the next,
// and the arity of the trees collectives run over (--armi-tree-arity).
//
// It also keeps the collectives this location started without waiting
// (opaque_reduce_rmi, opaque_allreduce_rmi): each is a step function that
// takes what has arrived, sends what it can, and says when it is done.
// The poll runs them whenever a collective message has arrived
// (advance_pending), so they progress inside any armi call, including
// inside one of their own continuations.
#pragma once

#include <armi/core/handle.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
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

  // A collective in progress on this location that no call waits in.
  class pending {
   public:
    virtual ~pending() = default;
    // Takes what has arrived and sends what it can; true once done (its
    // future completed).  Never blocks.
    virtual bool advance() = 0;

   private:
    friend class collective_mailbox;
    bool m_busy = false;  // inside its own advance (a continuation polled)
  };

  std::map<key, std::vector<message>>& messages() { return m_messages; }
  // A collective message was stored: the pending collectives may move.
  void arrived() { m_arrived = true; }

  // Starts keeping p, which has taken its first step and is not done.
  void add_pending(std::unique_ptr<pending> p) { m_pending.push_back(std::move(p)); }
  bool has_pending() const { return !m_pending.empty(); }

  // Steps every pending collective once more if a message arrived since the
  // last time.  Re-entrant: a continuation that polls steps the others (an
  // entry never re-enters itself); only the outermost call drops the done.
  void advance_pending() {
    if (!m_arrived || m_pending.empty()) return;
    ++m_depth;
    while (m_arrived) {
      m_arrived = false;
      for (std::size_t i = 0; i < m_pending.size(); ++i) {
        pending* p = m_pending[i].get();
        if (p == nullptr || p->m_busy) continue;
        p->m_busy = true;
        bool const done = p->advance();
        p->m_busy = false;
        if (done) m_pending[i].reset();
      }
    }
    if (--m_depth == 0) std::erase(m_pending, nullptr);
  }

  std::uint64_t next_sequence(std::uint64_t group_key) { return m_sequence[group_key]++; }
  // A key for one reduce_rmi of location self, distinct from every other
  // location's and from self's other calls in flight.
  std::uint64_t next_call_key(location_id self) { return std::uint64_t{self} << 32 | m_calls++; }
  std::uint32_t tree_arity() const { return m_tree_arity; }

 private:
  std::map<key, std::vector<message>> m_messages;
  std::vector<std::unique_ptr<pending>> m_pending;
  bool m_arrived = false;
  std::uint32_t m_depth = 0;
  std::map<std::uint64_t, std::uint64_t> m_sequence;
  std::uint32_t m_calls = 0;
  std::uint32_t m_tree_arity;
};

}  // namespace armi::detail
