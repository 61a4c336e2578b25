// Method identity across processes.  A request names its method by index
// in its method type's table, and indices differ between processes: a
// sender tells each destination in another process what an index means
// (a define request, once per destination and method) before the first
// request that uses it; a receiver keeps, per source, the translation of
// the sender's indices into its own.
#pragma once

#include <armi/core/buffer.hpp>
#include <armi/core/handle.hpp>
#include <armi/runtime/location_errors.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace armi::detail {

class method_identity {
 public:
  // same_process(d): whether location d shares our method tables.
  template <class SameProcess>
  method_identity(location_id self, location_id size, SameProcess const& same_process)
      : m_self(self), m_size(size) {
    bool all_here = true;
    for (location_id d = 0; d < size && all_here; ++d) all_here = same_process(d);
    // All in this process (threads): one entry, mask 0, for every
    // destination: no array of P entries per location.
    m_told_index = all_here ? 0u : ~0u;
    m_told.resize(all_here ? 1 : size);
    for (location_id d = 0; d < m_told.size(); ++d) m_told[d] = {no_word, same_process(d) ? 0u : ~0u};
  }

  // Sender: true when dest needs no definition for `word`, because it shares
  // our method tables (same process) or was last found told it.  One load
  // and no branch of its own: a same-process destination's mask is 0, so its
  // compare always holds (a branch on same_process mispredicts on random
  // destinations; docs/runtime-measurements.md).
  [[gnu::always_inline]] bool told(location_id dest, std::uint32_t word) const {
    told_entry const t = m_told[dest & m_told_index];
    return ((t.word ^ word) & t.mask) == 0;
  }
  // Asked where told said no: true when the request must be preceded by its
  // method's definition (dest has not been told what key() means); marks it
  // told.  The word becomes dest's last, so a run of requests for one method
  // passes told with one compare.
  template <class Key>
  bool needs_definition(location_id dest, std::uint32_t word, Key const& key) {
    m_told[dest & m_told_index].word = word;
    if (m_described.empty()) m_described.resize(m_size);
    auto& told = m_described[dest];
    std::uint32_t const k = key();
    if (k < told.size() && told[k]) return false;
    if (k >= told.size()) told.resize(k + 1, false);
    told[k] = true;
    return true;
  }

  // Receiver: source's method index `remote` of method table `type` is our
  // index `local`.
  void set_translation(location_id source, std::uint32_t type, std::uint32_t remote, std::uint32_t local) {
    if (m_xlate.empty()) m_xlate.resize(m_size);
    auto& per_type = m_xlate[source];
    if (type >= per_type.size()) per_type.resize(type + 1);
    auto& indices = per_type[type];
    if (remote >= indices.size()) indices.resize(remote + 1, 0);
    indices[remote] = local + 1;
    m_last_xlate = {};
  }

  // Another process's handler word -> ours.  The last translation answers
  // a run of requests for one method, inline.
  [[gnu::always_inline]] std::uint32_t translate(location_id source, buffer const& b, std::uint32_t word,
                                                 std::uint32_t type) {
    if (word == m_last_xlate.remote && source == m_last_xlate.source) [[likely]]
      return m_last_xlate.local;
    return translate_table(source, b, word, type);
  }

 private:
  [[gnu::noinline]] std::uint32_t translate_table(location_id source, buffer const& b, std::uint32_t word,
                                                  std::uint32_t type) {
    std::uint32_t const id = word & handler_mask, remote = word >> handler_bits;
    if (source < m_xlate.size()) {
      auto const& per_type = m_xlate[source];
      if (type < per_type.size() && remote < per_type[type].size() && per_type[type][remote] != 0) {
        m_last_xlate = {source, word, id | ((per_type[type][remote] - 1) << handler_bits)};
        return m_last_xlate.local;
      }
    }
    errors::malformed(m_self, b.source, b.cursor, b.size,
                      "method index " + std::to_string(remote) + " of handler " + std::to_string(id) +
                          " was never defined by that location");
  }

  // The handler word of the last request found told per destination
  // (no_word: none; no handler id has all of the low 20 bits set), and the
  // bits of it that told() compares: none for a destination in this process.
  static constexpr std::uint32_t no_word = ~0u;
  struct told_entry {
    std::uint32_t word, mask;
  };
  struct translation {
    location_id source = 0;
    std::uint32_t remote = no_word;  // handler word as sent
    std::uint32_t local = 0;         // ... as we run it
  };

  location_id m_self, m_size;
  std::vector<told_entry> m_told;  // per destination, or one for all (m_told_index 0)
  std::uint32_t m_told_index;      // ~0, or 0 where every destination is in this process
  std::vector<std::vector<bool>> m_described;                    // per destination, per method key
  std::vector<std::vector<std::vector<std::uint32_t>>> m_xlate;  // per source, method type, index: ours + 1
  translation m_last_xlate;
};

}  // namespace armi::detail
