// The handler table: every kind of request a program can receive (one stub
// per RMI kind and method type) gets a small integer id at start-up, in
// static-initialization order, which is the same in every process running
// the same binary.  Requests carry that id, never a code address; the
// receiver checks it against the table before dispatch.
//
// Methods of one type (say  void (T::*)(int)) are told apart by a second
// index into method_table<M>, also validated on arrival.
//
// Thread safety: registration happens during static initialization (and,
// for method_table, under a mutex); lookups are lock-free.
#pragma once

#include <armi/runtime/buffer.hpp>
#include <armi/runtime/error.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace armi::detail {

class location;

using handler_fn = void (*)(location& ctx, std::uint32_t source, request_header const& header,
                            std::byte const* payload);

enum class rmi_kind : std::uint8_t { async, sync, opaque, broadcast, reduce, reply, collective };
inline constexpr std::size_t num_rmi_kinds = 7;
inline constexpr char const* rmi_kind_names[num_rmi_kinds] = {"async",  "sync",  "opaque",    "broadcast",
                                                              "reduce", "reply", "collective"};

struct handler_entry {
  handler_fn fn;
  rmi_kind kind;
  char const* mangled_name;  // demangled lazily, for diagnostics only
};

class handler_table {
 public:
  static handler_table& instance() {
    static handler_table t;
    return t;
  }
  std::uint32_t add(handler_fn fn, rmi_kind kind, char const* mangled) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_size == m_entries.size() || m_size > handler_mask)
      fatal_exit("too many RMI handler types in one program (limit " + std::to_string(m_entries.size()) + ")");
    m_entries[m_size] = {fn, kind, mangled};
    std::uint32_t const id = static_cast<std::uint32_t>(m_size);
    m_size_atomic.store(++m_size, std::memory_order_release);
    return id;
  }
  // nullptr for an id the table does not hold.
  handler_entry const* find(std::uint32_t id) const {
    return id < m_size_atomic.load(std::memory_order_acquire) ? &m_entries[id] : nullptr;
  }
  std::size_t size() const { return m_size_atomic.load(std::memory_order_acquire); }

 private:
  handler_table() = default;
  std::mutex m_mutex;
  std::size_t m_size = 0;
  std::atomic<std::size_t> m_size_atomic{0};
  std::array<handler_entry, 1u << 14> m_entries{};
};

// Each Stub type registers itself once; Stub::invoke is the handler.
template <class Stub>
struct handler_id {
  static inline std::uint32_t const value =
      handler_table::instance().add(&Stub::invoke, Stub::kind, typeid(Stub).name());
};

// The methods of type M that this program has sent, by index.
template <class M>
class method_table {
 public:
  static std::uint32_t index_of(M m) {
    thread_local M last_method{};
    thread_local std::uint32_t last_index = ~0u;
    if (last_index != ~0u && last_method == m) return last_index;
    auto& t = instance();
    std::uint32_t const n = t.m_size.load(std::memory_order_acquire);
    std::uint32_t i = 0;
    for (; i < n; ++i)
      if (t.m_methods[i] == m) break;
    if (i == n) i = t.insert(m);
    last_method = m;
    last_index = i;
    return i;
  }
  // false for an index no sender has registered.
  static bool lookup(std::uint32_t index, M& out) {
    auto& t = instance();
    if (index >= t.m_size.load(std::memory_order_acquire)) return false;
    out = t.m_methods[index];
    return true;
  }

 private:
  static method_table& instance() {
    static method_table t;
    return t;
  }
  std::uint32_t insert(M m) {
    std::lock_guard<std::mutex> lock(m_mutex);
    std::uint32_t const n = m_size.load(std::memory_order_relaxed);
    for (std::uint32_t i = 0; i < n; ++i)
      if (m_methods[i] == m) return i;
    if (n == max_methods_per_type)
      fatal_exit("too many distinct methods of type " + type_name<M>() + " used in RMIs");
    m_methods[n] = m;
    m_size.store(n + 1, std::memory_order_release);
    return n;
  }
  std::mutex m_mutex;
  std::atomic<std::uint32_t> m_size{0};
  std::array<M, max_methods_per_type> m_methods{};
};

}  // namespace armi::detail
