// --armi-watchdog=SECONDS: a diagnosis for runs that hang.
//
// Each location of the process keeps a wait_record: the blocking calls it is
// inside (fence, sync_rmi, future::get, a collective, rmi_wait), innermost
// last, each with its peer, method and start time, and a counter of the
// requests it has served.  A watchdog thread per process samples the records;
// when a location has been inside a blocking call for SECONDS without serving
// a request or leaving the call, it prints what every location of the process
// is waiting on (and a wait-for cycle among them, if there is one), then ends
// the run.  Under MPI every rank runs its own watchdog: in a hang they fire
// within moments of each other, and the first waits a second before the
// abort so the others can print too.
//
// Off (no records, no thread) unless asked for; when off, a location pays one
// null-pointer test per blocking call and per served poll.
//
// Thread safety: a record is written by its location only and read by the
// watchdog thread; every field is atomic.
#pragma once

#include <armi/runtime/error.hpp>
#include <armi/runtime/handle.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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

inline std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

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

class watchdog {
 public:
  // Watches records[i], the record of location first + i.
  watchdog(double seconds, location_id first, std::vector<wait_record*> records)
      : m_limit_ns(static_cast<std::int64_t>(seconds * 1e9)), m_first(first), m_records(std::move(records)) {
    m_thread = std::thread([this] { run(); });
  }
  watchdog(watchdog const&) = delete;
  watchdog& operator=(watchdog const&) = delete;
  ~watchdog() {
    {
      std::lock_guard<std::mutex> g(m_mutex);
      m_stop = true;
    }
    m_wake.notify_one();
    m_thread.join();
  }

  // What every watched location is doing, one line each, plus a wait-for
  // cycle if the innermost waits form one.
  std::string report(std::int64_t now) const {
    std::string s;
    std::vector<location_id> waits_on(m_records.size(), no_peer);
    for (std::size_t i = 0; i < m_records.size(); ++i) {
      wait_record const& r = *m_records[i];
      location_id const me = m_first + static_cast<location_id>(i);
      std::uint32_t const depth = r.depth.load(std::memory_order_acquire);
      s += "  location " + std::to_string(me) + ": ";
      if (depth == 0) {
        s += "not waiting in armi (running its own code, or a request)\n";
        continue;
      }
      std::uint32_t const shown = depth < wait_record::max_frames ? depth : wait_record::max_frames;
      for (std::uint32_t k = shown; k-- > 0;) {
        auto const& f = r.frames[k];
        auto const kind = static_cast<wait_kind>(f.kind.load(std::memory_order_relaxed));
        location_id const peer = f.peer.load(std::memory_order_relaxed);
        char const* what = f.what.load(std::memory_order_relaxed);
        if (k + 1 != shown) s += ", inside ";
        s += wait_kind_name(kind);
        if (peer != no_peer) s += (kind == wait_kind::collective ? " led by location " : " to location ") +
                                  std::to_string(peer);
        if (what != nullptr) s += " (" + demangle(what) + ")";
        if (kind == wait_kind::fence) s += " (fence #" + std::to_string(f.detail.load(std::memory_order_relaxed) + 1) + ")";
        if (k + 1 == shown) {
          waits_on[i] = peer;
          s += " for " + seconds_text(now - f.since.load(std::memory_order_relaxed));
        }
      }
      if (depth > shown) s += ", and " + std::to_string(depth - shown) + " more";
      s += "\n";
    }
    std::string const cycle = find_cycle(waits_on);
    if (!cycle.empty()) s += "  wait-for cycle: " + cycle + "\n";
    return s;
  }

 private:
  static std::string seconds_text(std::int64_t ns) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ns) / 1e9);
    return buf;
  }

  // "a -> b -> a" over locations of this process, or "".  A location that
  // waits on itself serves its own requests meanwhile: no cycle.
  std::string find_cycle(std::vector<location_id> const& waits_on) const {
    std::size_t const n = waits_on.size();
    auto index_of = [&](location_id l) { return l - m_first < n ? std::size_t{l - m_first} : n; };
    for (std::size_t start = 0; start < n; ++start) {
      std::size_t at = start;
      for (std::size_t steps = 0; steps < n; ++steps) {
        std::size_t const next = index_of(waits_on[at]);
        if (next == n || next == at) break;
        at = next;
        if (at == start) {
          std::string s = std::to_string(m_first + start);
          std::size_t k = start;
          do {
            k = index_of(waits_on[k]);
            s += " -> " + std::to_string(m_first + k);
          } while (k != start);
          return s;
        }
      }
    }
    return "";
  }

  void run() {
    struct seen {
      std::uint64_t progress = 0;
      std::uint32_t depth = 0;
      std::int64_t since = 0;  // last change
    };
    std::vector<seen> last(m_records.size());
    auto const period = std::chrono::nanoseconds(std::max<std::int64_t>(m_limit_ns / 20, 1'000'000));
    std::unique_lock<std::mutex> lock(m_mutex);
    while (!m_wake.wait_for(lock, period, [this] { return m_stop; })) {
      std::int64_t const now = steady_ns();
      for (std::size_t i = 0; i < m_records.size(); ++i) {
        wait_record const& r = *m_records[i];
        std::uint64_t const p = r.progress.load(std::memory_order_relaxed);
        std::uint32_t const d = r.depth.load(std::memory_order_acquire);
        if (p != last[i].progress || d != last[i].depth || last[i].since == 0) last[i] = {p, d, now};
        if (d != 0 && now - last[i].since >= m_limit_ns) fire(m_first + static_cast<location_id>(i), now);
      }
    }
  }

  [[noreturn]] void fire(location_id who, std::int64_t now) const {
    std::string const s = "armi: watchdog: location " + std::to_string(who) + " has waited " +
                          seconds_text(m_limit_ns) + " without progress; the locations of this process:\n" +
                          report(now);
    std::fputs(s.c_str(), stderr);
    std::fflush(stderr);
    // Other processes' watchdogs print their part before the abort ends them.
    if (fatal_hook.load() != nullptr) std::this_thread::sleep_for(std::chrono::seconds(1));
    fatal_exit("watchdog: no progress for " + seconds_text(m_limit_ns) + " (--armi-watchdog); ending the run");
  }

  std::int64_t m_limit_ns;
  location_id m_first;
  std::vector<wait_record*> m_records;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stop = false;
  std::thread m_thread;
};

// The records and the watchdog of one process's locations, or nothing when
// the watchdog is off.
class watch_set {
 public:
  watch_set(double seconds, location_id first, std::uint32_t count) {
    if (seconds <= 0) return;
    m_records = std::make_unique<wait_record[]>(count);
    std::vector<wait_record*> ptrs;
    for (std::uint32_t i = 0; i < count; ++i) ptrs.push_back(&m_records[i]);
    m_first = first;
    m_watchdog = std::make_unique<watchdog>(seconds, first, std::move(ptrs));
  }
  wait_record* record_of(location_id l) { return m_records ? &m_records[l - m_first] : nullptr; }

 private:
  location_id m_first = 0;
  std::unique_ptr<wait_record[]> m_records;  // outlives m_watchdog (declared first)
  std::unique_ptr<watchdog> m_watchdog;
};

}  // namespace armi::detail
