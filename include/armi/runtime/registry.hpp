// Per-location table from handle to the local representative of a shared
// object.  Symmetric registration hands out indices in construction order
// (reusing freed ones last-in first-out, so a symmetric program reuses the
// same index everywhere) with an epoch that tells a new object from a
// destroyed one at the same index.
//
// Thread safety: used only by its own location.
#pragma once

#include <armi/core/handle.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace armi {
class p_object;
}

namespace armi::detail {

class object_registry {
 public:
  struct entry {
    p_object* object = nullptr;
    std::uint32_t epoch = 0;
    std::uint32_t checked_handler = ~0u;  // last handler whose target type was verified
  };

  rmi_handle add(p_object* obj) {
    std::uint32_t index;
    if (!m_free.empty()) {
      index = m_free.back();
      m_free.pop_back();
    } else {
      index = static_cast<std::uint32_t>(m_entries.size());
      if (index >= explicit_handle_bit) throw std::length_error("armi: too many registered p_objects");
      m_entries.emplace_back();
      m_count = index + 1;
    }
    entry& e = m_entries[index];
    e.object = obj;
    ++e.epoch;
    e.checked_handler = ~0u;
    return {index, e.epoch};
  }

  rmi_handle add_explicit(p_object* obj, std::uint32_t id) {
    if (id >= explicit_handle_bit) throw std::invalid_argument("armi: explicit handle ids must be below 2^31");
    std::uint32_t const index = id | explicit_handle_bit;
    entry& e = m_explicit[index];
    if (e.object != nullptr)
      throw std::logic_error("armi: explicit handle " + std::to_string(id) + " is already registered on this location");
    e.object = obj;
    e.epoch = 1;
    e.checked_handler = ~0u;
    return {index, 1};
  }

  void remove(rmi_handle h) {
    if ((h.index & explicit_handle_bit) != 0) {
      m_explicit.erase(h.index);
      return;
    }
    if (h.index >= m_entries.size() || m_entries[h.index].epoch != h.epoch) return;
    m_entries[h.index].object = nullptr;
    m_free.push_back(h.index);
    ++m_removals;
  }
  // How many symmetric objects remove has taken out: while it stays the
  // same, a target found live by a lookup still is (method_stub::run).
  std::uint64_t removals() const { return m_removals; }

  // nullptr when no live object has that handle.  Inlined into every
  // request's dispatch: the hash lookup of explicit handles is out of line,
  // so that it costs symmetric ones no registers.
  entry* find(std::uint32_t index, std::uint32_t epoch) {
    if ((index & explicit_handle_bit) == 0) [[likely]]
      return find_symmetric(index, epoch);
    return find_explicit(index, epoch);
  }
  // find for symmetric handles only: nullptr for an explicit one too.
  entry* find_symmetric(std::uint32_t index, std::uint32_t epoch) {
    if (index < m_count) {  // explicit handles have the top bit: never below the size
      entry& e = m_entries[index];
      if (e.epoch == epoch && e.object != nullptr) return &e;
    }
    return nullptr;
  }
  [[gnu::noinline]] entry* find_explicit(std::uint32_t index, std::uint32_t epoch) {
    auto it = m_explicit.find(index);
    return it != m_explicit.end() && it->second.epoch == epoch ? &it->second : nullptr;
  }

  std::size_t live() const {
    std::size_t n = m_explicit.size();
    for (auto const& e : m_entries) n += e.object != nullptr;
    return n;
  }

 private:
  std::vector<entry> m_entries;
  std::uint64_t m_removals = 0;
  std::uint32_t m_count = 0;  // m_entries.size(), kept so that find's bound check is one load
  std::vector<std::uint32_t> m_free;
  std::unordered_map<std::uint32_t, entry> m_explicit;
};

}  // namespace armi::detail
