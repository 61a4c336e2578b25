// The handler table: every kind of request a program can receive (one stub
// per RMI kind and method type) gets a small integer id at start-up, in
// static-initialization order, which is the same in every process running
// the same binary.  Requests carry that id, never a code address; the
// receiver checks it against the table before dispatch.
//
// Methods of one type (say  void (T::*)(int)) are told apart by a second
// index into method_table<M>, also validated on arrival.  A method named as
// a constant (armi::method<&T::f>) has stubs of its own, one per RMI kind:
// its handler id says everything, and its index is always 0.
//
// Thread safety: registration happens during static initialization (and,
// for method_table, under a mutex); lookups are lock-free.
#pragma once

#include <armi/core/buffer.hpp>
#include <armi/core/error.hpp>

#include <link.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace armi::detail {

class location;

// The header comes by value: 16 bytes, two registers, so the receive loop
// never stores it to memory for the stub to read back.
using handler_fn = void (*)(location& ctx, std::uint32_t source, request_header header, std::byte const* payload);

// Where location::execute_requests stands in a buffer, for a handler that
// executes a run of requests (run_fn): the buffer, its bytes, the cursor
// (past the request being executed), the poll count that ends the run, and
// the run's handler word as sent.
struct run_state {
  buffer& b;
  std::byte const* data;
  std::size_t size;
  std::size_t cursor;
  std::uint64_t polls;
  std::uint32_t word;
  std::uint32_t source;
};

// Executes the request `header` (framed and checked by execute_requests:
// header bounds, payload bounds, handler id, translation) and then, while
// the next request in the buffer has the same handler word, that one too,
// counting each as executed.  A method stub's run checks the method index
// once per run (same word, same index, and method tables only grow) and
// everything else per request; other handlers run one request
// (run_single).  Used when diagnostics are off; with them on, each request
// goes through handler_fn and execute_requests counts and traces it.
using run_fn = void (*)(location& ctx, run_state& st, request_header header, std::byte const* payload);

// one_sided: operations a transport carries out at the owner by itself
// (core/remote_memory.hpp), counted as sent when started and as executed
// when their result is back, both at the caller (the fence sums them too).
enum class rmi_kind : std::uint8_t { async, sync, opaque, broadcast, reduce, reply, collective, define, one_sided };
inline constexpr std::size_t num_rmi_kinds = 9;
inline constexpr char const* rmi_kind_names[num_rmi_kinds] = {
    "async", "sync", "opaque", "broadcast", "reduce", "reply", "collective", "define", "one-sided"};

// A method pointer in a form that means the same in every process running
// this binary: a non-virtual method as the distance of its code from a fixed
// function of the same executable (ASLR moves both alike), a virtual one by
// its vtable slot, plus the this-adjustment (Itanium C++ ABI).
struct method_ref {
  std::int64_t code = 0;  // distance from text_anchor, or vtable offset + 1
  std::int64_t adjust = 0;
  std::uint32_t is_virtual = 0;
  std::uint32_t pad = 0;
};
static_assert(sizeof(method_ref) == 24);

// The fixed point method_ref distances are measured from.
[[gnu::noinline, gnu::used]] inline void text_anchor() noexcept { asm volatile(""); }

// Bounds of the executable segment that holds text_anchor; a decoded code
// address outside it is rejected, never called.
struct text_range {
  std::uintptr_t lo = 0, hi = 0;

  bool contains(std::uintptr_t address) const { return address >= lo && address < hi; }
  static text_range const& get() {
    static text_range const r = find();
    return r;
  }

 private:
  static text_range find() {
    struct search {
      std::uintptr_t anchor;
      text_range found;
    } s{reinterpret_cast<std::uintptr_t>(&text_anchor), {}};
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* data) -> int {
          auto& s = *static_cast<search*>(data);
          for (int i = 0; i < info->dlpi_phnum; ++i) {
            ElfW(Phdr) const& ph = info->dlpi_phdr[i];
            if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
            std::uintptr_t const lo = info->dlpi_addr + ph.p_vaddr;
            if (s.anchor >= lo && s.anchor < lo + ph.p_memsz) {
              s.found.lo = lo;
              s.found.hi = lo + ph.p_memsz;
              return 1;
            }
          }
          return 0;
        },
        &s);
    return s.found;
  }
};

struct handler_entry {
  handler_fn fn;
  rmi_kind kind;
  char const* mangled_name;  // demangled lazily, for diagnostics only
  // Method stubs only: the local method index of a method_ref from another
  // process (registering it here), or ~0u when it names no method of this
  // binary.  nullptr for built-in handlers.
  std::uint32_t (*define)(method_ref const&) = nullptr;
  // Method stubs with a define only: which method_table (one per method type;
  // the stubs of every kind for one type share it, and so share method
  // indices).  Every default is zero, so that the table of entries is
  // zero-initialized (.bss) rather than written out in every object file.
  std::uint32_t method_type = 0;
  // Method stubs only: the method's type (typeid name), for the message
  // when a target that has no one to answer throws.
  char const* method_mangled_name = nullptr;
  run_fn run = nullptr;  // see run_fn

  // A method stub (of a method pointer's type, or of a method constant,
  // which has no define: its requests need no translation).
  bool is_method() const { return method_mangled_name != nullptr; }
};

// The run_fn of a handler that executes one request per call.  (Defined
// with location, in stubs.hpp.)
template <class Stub>
void run_single(location& ctx, run_state& st, request_header header, std::byte const* payload);

class handler_table {
 public:
  static handler_table& instance() {
    static handler_table t;
    return t;
  }
  std::uint32_t add(handler_entry const& entry) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_size == m_entries.size() || m_size >= hop_id)  // ids hop_id, route_id, handler_mask: never (wire.hpp)
      fatal_exit("too many RMI handler types in one program (limit " + std::to_string(m_entries.size()) + ")");
    m_entries[m_size] = entry;
    std::uint32_t const id = static_cast<std::uint32_t>(m_size);
    m_size_atomic.store(++m_size, std::memory_order_release);
    return id;
  }
  // nullptr for an id the table does not hold.
  handler_entry const* find(std::uint32_t id) const {
    return id < m_size_atomic.load(std::memory_order_acquire) ? &m_entries[id] : nullptr;
  }
  std::size_t size() const { return m_size_atomic.load(std::memory_order_acquire); }
  // The entry of an id below a size() this thread has read (entries never
  // change once added): no atomic load per request.
  handler_entry const& known(std::uint32_t id) const { return m_entries[id]; }

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
  static handler_entry entry() {
    handler_entry e{&Stub::invoke, Stub::kind, typeid(Stub).name()};
    if constexpr (requires(method_ref const& r) { Stub::define(r); }) {
      e.define = &Stub::define;
      e.method_type = Stub::method_type();
    }
    if constexpr (requires { typename Stub::method; }) e.method_mangled_name = typeid(typename Stub::method).name();
    if constexpr (requires(location& c, run_state& st, request_header h, std::byte const* p) { Stub::run(c, st, h, p); })
      e.run = &Stub::run;
    else
      e.run = &run_single<Stub>;
    return e;
  }
  static inline std::uint32_t const value = handler_table::instance().add(entry());
};

// A process-wide dense number for each method type (method_table).
inline std::uint32_t next_method_type() {
  static std::atomic<std::uint32_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// A process-wide dense number for each (method type, method) pair, so that a
// location can remember per destination which methods it has described.
inline std::uint32_t next_method_key() {
  static std::atomic<std::uint32_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// The methods of type M that this program has sent, by index.  Indices are
// assigned at first use, so they differ between processes; a location tells
// another process what an index means with a method_ref (define requests).
template <class M>
class method_table {
  // A member function pointer in the Itanium C++ ABI.
  struct itanium {
    std::uintptr_t ptr;  // code address, or vtable offset + 1 for a virtual method
    std::ptrdiff_t adj;  // this-adjustment
  };
  static_assert(sizeof(M) == sizeof(itanium), "armi: member function pointers are expected in the Itanium C++ ABI layout");

 public:
  // Every send asks; a run of sends of one method is answered by the
  // thread's last answer, inline.  The search (and registration) is out of
  // line, so that it costs the sender no registers.
  static std::uint32_t index_of(M m) {
    if (t_last_index != ~0u && t_last_method == m) [[likely]]
      return t_last_index;
    return search(m);
  }
  // The thread's last answer, when it is m's: a send's fast path, which
  // makes no calls.
  static bool cached_index(M m, std::uint32_t& index) {
    index = t_last_index;
    return index != ~0u && t_last_method == m;
  }
  [[gnu::noinline]] static std::uint32_t search(M m) {
    auto& t = instance();
    std::uint32_t const n = t.m_size.load(std::memory_order_acquire);
    std::uint32_t i = 0;
    for (; i < n; ++i)
      if (t.m_methods[i] == m) break;
    if (i == n) i = t.insert(m);
    t_last_method = m;
    t_last_index = i;
    return i;
  }
  // false for an index no sender has registered.
  static bool lookup(std::uint32_t index, M& out) {
    auto& t = instance();
    if (index >= t.m_size.load(std::memory_order_acquire)) return false;
    out = t.m_methods[index];
    return true;
  }
  // This table's number among all method tables of the process.
  static std::uint32_t type_id() {
    static std::uint32_t const id = next_method_type();
    return id;
  }
  // The process-wide key of a registered index (see next_method_key).
  static std::uint32_t key_of(std::uint32_t index) { return instance().m_keys[index]; }

  // m as a method_ref (for another process).
  static method_ref describe(M m) {
    method_ref out;
    itanium raw;
    std::memcpy(&raw, &m, sizeof raw);
    out.adjust = raw.adj;
    if ((raw.ptr & 1) != 0) {  // virtual: vtable offset + 1
      out.is_virtual = 1;
      out.code = static_cast<std::int64_t>(raw.ptr);
    } else {
      out.code = static_cast<std::int64_t>(raw.ptr - reinterpret_cast<std::uintptr_t>(&text_anchor));
    }
    return out;
  }
  // The local index of a method_ref from another process, registering the
  // method here; ~0u if it cannot be a method of this executable.
  static std::uint32_t define(method_ref const& r) {
    itanium raw{};
    raw.adj = static_cast<std::ptrdiff_t>(r.adjust);
    if (r.is_virtual > 1 || r.pad != 0) return ~0u;
    if (r.is_virtual != 0) {
      if ((r.code & 1) == 0 || r.code < 0 || r.code > (std::int64_t{1} << 20)) return ~0u;
      raw.ptr = static_cast<std::uintptr_t>(r.code);
    } else {
      raw.ptr = reinterpret_cast<std::uintptr_t>(&text_anchor) + static_cast<std::uintptr_t>(r.code);
      if ((raw.ptr & 1) != 0 || !text_range::get().contains(raw.ptr)) return ~0u;
    }
    constexpr std::ptrdiff_t max_adjust = std::ptrdiff_t{1} << 20;
    if (!(0 <= raw.adj && raw.adj <= max_adjust)) return ~0u;
    M m;
    std::memcpy(&m, &raw, sizeof m);
    return index_of(m);
  }

 private:
  static inline thread_local M t_last_method{};
  static inline thread_local std::uint32_t t_last_index = ~0u;

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
    m_keys[n] = next_method_key();
    m_size.store(n + 1, std::memory_order_release);
    return n;
  }
  std::mutex m_mutex;
  std::atomic<std::uint32_t> m_size{0};
  std::array<M, max_methods_per_type> m_methods{};
  std::array<std::uint32_t, max_methods_per_type> m_keys{};
};

}  // namespace armi::detail
