// What a location is waiting on, for the watchdog (core/watchdog.hpp): the
// blocking calls it is inside, innermost last, each with its peer, method
// and start time, and a counter of the requests it has served.  A location
// writes its record (wait_scope) only when the watchdog is on; then the
// watchdog thread reads it.  Every field is atomic.
#pragma once

#include <armi/core/clock.hpp>
#include <armi/core/handle.hpp>

#include <atomic>
#include <cstdint>

namespace armi::detail {

enum class wait_kind : std::uint32_t { fence = 1, sync_rmi, future_get, collective, rmi_wait };

inline char const* wait_kind_name(wait_kind k) {
  switch (k) {
    case wait_kind::fence: return "rmi_fence";
    case wait_kind::sync_rmi: return "sync_rmi";
    case wait_kind::future_get: return "future::get";
    case wait_kind::collective: return "a collective";
    case wait_kind::rmi_wait: return "rmi_wait";
  }
  return "?";
}

inline constexpr location_id no_peer = ~location_id{0};

struct wait_record {
  static constexpr std::uint32_t max_frames = 4;  // deeper nesting is counted, not described
  struct frame {
    std::atomic<std::uint32_t> kind{0};
    std::atomic<location_id> peer{no_peer};
    std::atomic<char const*> what{nullptr};  // mangled type of the method, or nullptr
    std::atomic<std::uint64_t> detail{0};    // fence: the location's fence count
    std::atomic<std::int64_t> since{0};
  };
  std::atomic<std::uint32_t> depth{0};
  std::atomic<std::uint64_t> progress{0};  // requests served, or blocking calls left
  frame frames[max_frames];
};

// Marks the location inside one blocking call for its lifetime.
class wait_scope {
 public:
  wait_scope(wait_record* r, wait_kind kind, location_id peer = no_peer, char const* what = nullptr,
             std::uint64_t detail = 0)
      : m_record(r) {
    if (m_record == nullptr) return;
    std::uint32_t const d = m_record->depth.load(std::memory_order_relaxed);
    if (d < wait_record::max_frames) {
      auto& f = m_record->frames[d];
      f.kind.store(static_cast<std::uint32_t>(kind), std::memory_order_relaxed);
      f.peer.store(peer, std::memory_order_relaxed);
      f.what.store(what, std::memory_order_relaxed);
      f.detail.store(detail, std::memory_order_relaxed);
      f.since.store(steady_ns(), std::memory_order_relaxed);
    }
    m_record->depth.store(d + 1, std::memory_order_release);
  }
  wait_scope(wait_scope const&) = delete;
  wait_scope& operator=(wait_scope const&) = delete;
  ~wait_scope() {
    if (m_record == nullptr) return;
    m_record->depth.fetch_sub(1, std::memory_order_release);
    m_record->progress.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  wait_record* m_record;
};

}  // namespace armi::detail
