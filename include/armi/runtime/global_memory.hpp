// The runtime's part of global memory (global_array.hpp): the directory of
// the blocks of one global_array that a process can reach by address, found
// by run, process and handle, and the messages of the one-sided operations'
// caller errors, out of line.  A process's directory holds the blocks of its
// own locations (itself; the other threads on threads, the threads of its
// rank on mixed) and, on mpi and mixed, those of the node's other ranks that
// the transport put in a shared window; there a one-sided operation is a memory
// access, not a request (design.md §2, "One-sided operations").  Other
// locations are reached through the transport's own one-sided messages where
// it has them (sp2: SP-AM handlers; mpi and mixed with --armi-mpi-rma=on:
// RMA gets and puts; remote_result below completes their futures), else by
// request (ranks of other nodes).
//
// Thread safety: attach and detach lock a process-wide mutex (construction
// and destruction only); base() and set() are lock-free, base() by any
// location of the process while the block's owner keeps it attached.
#pragma once

#include <armi/core/config.hpp>
#include <armi/core/error.hpp>
#include <armi/core/handle.hpp>
#include <armi/core/handlers.hpp>
#include <armi/core/remote_memory.hpp>
#include <armi/core/stats.hpp>
#include <armi/runtime/reply.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

namespace armi::detail {

// The base addresses of one array's blocks, one slot per location of the
// run (null: not attached, or in another process).
class block_directory {
 public:
  explicit block_directory(location_id locations) : m_base(std::make_unique<std::atomic<void*>[]>(locations)) {}
  void* base(location_id owner) const { return m_base[owner].load(std::memory_order_acquire); }
  void set(location_id owner, void* base) { m_base[owner].store(base, std::memory_order_release); }

 private:
  std::unique_ptr<std::atomic<void*>[]> m_base;
  friend struct block_directories;
  std::size_t m_attached = 0;  // under the process-wide mutex
};

// The process-wide table: run (any address the run's locations of this
// process share, such as their world list) and handle to a directory.
struct block_directories {
  // Publishes owner's block and returns the array's directory (made by the
  // first location of the process to attach).
  static block_directory& attach(void const* run, location_id process, rmi_handle h, location_id locations,
                                 location_id owner, void* base);
  // Withdraws owner's block; the last location to detach frees the directory.
  static void detach(void const* run, location_id process, rmi_handle h, block_directory& d, location_id owner);
};

// The caller's end of an operation the transport carries out at the owner:
// makes the future's value from the result bytes (make(result, state)), or
// its remote_error from the owner's, completes the future, counts the
// operation executed, and deletes itself.
template <class R, class Make>
class remote_result final : public remote_completion {
 public:
  remote_result(std::shared_ptr<reply_state<R>> state, location_stats& stats, Make make)
      : m_state(std::move(state)), m_stats(stats), m_make(std::move(make)) {}

  void done(std::span<std::byte const> result) override {
    std::unique_ptr<remote_result> const self(this);
    ++m_stats.executed[static_cast<std::size_t>(rmi_kind::one_sided)];
    try {
      m_make(result, *m_state);
    } catch (...) {
      m_state->fail_here();
      return;
    }
    m_state->complete();
  }
  void failed(std::string const& type, std::string const& what, std::uint32_t owner) override {
    std::unique_ptr<remote_result> const self(this);
    ++m_stats.executed[static_cast<std::size_t>(rmi_kind::one_sided)];
    m_state->error = std::make_unique<remote_error>(what, type, owner);
    m_state->complete();
  }

 private:
  std::shared_ptr<reply_state<R>> m_state;
  location_stats& m_stats;
  Make m_make;
};

// The caller errors of the one-sided operations (each throws).
[[noreturn, gnu::cold]] void global_index_out_of_range(char const* what, location_id owner, std::uint64_t index,
                                                       std::uint64_t count, std::uint64_t block);
[[noreturn, gnu::cold]] void global_array_missing(char const* what, location_id self, rmi_handle array);
[[noreturn, gnu::cold]] void global_ptr_null(char const* what);

}  // namespace armi::detail

#if ARMI_RUNTIME_BODIES
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

namespace armi::detail {

namespace block_table {
using key = std::tuple<void const*, location_id, std::uint32_t, std::uint32_t>;
inline std::mutex& mutex() {
  static std::mutex m;
  return m;
}
inline std::map<key, std::unique_ptr<block_directory>>& entries() {
  static std::map<key, std::unique_ptr<block_directory>> e;
  return e;
}
}  // namespace block_table

ARMI_DECL block_directory& block_directories::attach(void const* run, location_id process, rmi_handle h,
                                                     location_id locations, location_id owner, void* base) {
  std::lock_guard const lock(block_table::mutex());
  auto& slot = block_table::entries()[{run, process, h.index, h.epoch}];
  if (!slot) slot = std::make_unique<block_directory>(locations);
  ++slot->m_attached;
  slot->set(owner, base);
  return *slot;
}

ARMI_DECL void block_directories::detach(void const* run, location_id process, rmi_handle h, block_directory& d,
                                         location_id owner) {
  std::lock_guard const lock(block_table::mutex());
  d.set(owner, nullptr);
  if (--d.m_attached == 0) block_table::entries().erase({run, process, h.index, h.epoch});
}

[[gnu::noinline]] ARMI_DECL void global_index_out_of_range(char const* what, location_id owner, std::uint64_t index,
                                                           std::uint64_t count, std::uint64_t block) {
  throw std::out_of_range(std::string("armi::") + what + ": elements [" + std::to_string(index) + ", " +
                          std::to_string(index + count) + ") of location " + std::to_string(owner) +
                          "'s block are outside it (it holds " + std::to_string(block) + ")");
}
[[gnu::noinline]] ARMI_DECL void global_array_missing(char const* what, location_id self, rmi_handle array) {
  throw std::logic_error(std::string("armi::") + what + ": location " + std::to_string(self) +
                         " has no global_array of this element type with handle " + std::to_string(array.index) +
                         "." + std::to_string(array.epoch) +
                         " (destroyed, or not constructed here: a global_array is collective)");
}
[[gnu::noinline]] ARMI_DECL void global_ptr_null(char const* what) {
  throw std::invalid_argument(std::string("armi::") + what + ": the global_ptr is null");
}

}  // namespace armi::detail
#endif  // ARMI_RUNTIME_BODIES
