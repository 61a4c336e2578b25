// Answers in place (core/answers.hpp): a sync_rmi to a location of this
// process takes one of its own answer cells, the callee writes the answer
// into it and publishes it, and the caller's wait watches the cell.  This
// component hands out a location's cells (nested waits take them in
// order) and finds the cell a request's tag names.
#pragma once

#include <armi/core/answers.hpp>
#include <armi/core/handle.hpp>
#include <armi/core/transport.hpp>
#include <armi/runtime/location_errors.hpp>

#include <array>
#include <cstdint>

namespace armi::detail {

class answer_cells {
 public:
  // The cells of the locations of self's process (none when the transport
  // has none), asked of the transport when needed: a table of them would
  // be an entry per location of the process, at every location.
  answer_cells(transport& tr, location_id self)
      : m_transport(tr),
        m_self(self),
        m_first(tr.process_first(self)),
        m_count(tr.process_locations()),
        m_own(tr.answer_cells(self, self)) {}

  // The caller's side: a cell for the answer to a sync_rmi to dest (in this
  // process: same_process), with the tag that names it, or nullptr (no
  // cells, or every cell taken by the waits this one is nested in).  Each
  // cell taken is given back by close, in reverse order.
  answer_cell* open(bool same_process, std::uint64_t& tag) {
    if (m_own == nullptr || !same_process || m_depth == answer_cells_per_location) return nullptr;
    std::uint32_t const index = m_depth++;
    std::uint32_t& number = m_numbers[index];
    if (++number == 0) number = 1;
    tag = answer_tag(index, number);
    return &m_own[index];
  }
  void close() { --m_depth; }

  // What a wait for the answer numbered in tag watches.
  static answer_watch watch(answer_cell const& c, std::uint64_t tag) { return {&c.answered, answer_number(tag)}; }

  // The callee's side: the cell that an answering request's tag names, in
  // the caller's memory.  A tag that names no cell of a location of this
  // process is a decode error (reply tags have bit 0 clear).
  answer_cell& cell_for(location_id caller, std::uint64_t tag) {
    std::size_t const at = caller - m_first;  // unsigned: huge for a location before the first
    std::uint32_t const index = answer_index(tag);
    if (m_own == nullptr || at >= m_count || index >= answer_cells_per_location || answer_number(tag) == 0)
        [[unlikely]]
      errors::no_such_cell(caller);
    return m_transport.answer_cells(m_self, caller)[index];
  }

 private:
  transport& m_transport;
  location_id m_self, m_first, m_count;  // m_count locations from m_first: self's process
  answer_cell* m_own;                    // self's cells, or nullptr: the transport has none
  std::uint32_t m_depth = 0;            // own cells taken by the sync_rmis waiting now
  std::array<std::uint32_t, answer_cells_per_location> m_numbers{};  // per cell, its last call's
};

}  // namespace armi::detail
