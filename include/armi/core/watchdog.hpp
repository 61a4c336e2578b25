// --armi-watchdog=SECONDS: a diagnosis for runs that hang.
//
// Each location of the process keeps a wait_record (core/wait_record.hpp):
// the blocking calls it is inside (fence, sync_rmi, future::get, a
// collective, rmi_wait), innermost last, each with its peer, method and start
// time, and a counter of the requests it has served.  A watchdog thread per
// process samples the records;
// when a location has been inside a blocking call for SECONDS without serving
// a request or leaving the call, it prints what every location of the process
// is waiting on and the wait-for cycle among the innermost waits, if there is
// one, then ends the run.
//
// Where locations live in several processes, the cycle needs the others'
// waits too.  The sp2 backend's process mode keeps every node's record in
// memory shared by its processes (watched by each node for itself, reported
// by whichever fires).  Under MPI every rank runs its own watchdog; in a hang
// they fire within moments of each other, and each sends its innermost waits
// to the others (a wait_exchange, backend/mpi/diagnosis.hpp) and gathers
// theirs for up to a second before it prints the cycle and aborts.
//
// Off (no records, no thread) unless asked for; when off, a location pays one
// null-pointer test per blocking call and per served poll.
//
// Thread safety: a record is written by its location only and read by the
// watchdog thread; every field is atomic.
#pragma once

#include <armi/core/error.hpp>
#include <armi/core/handle.hpp>
#include <armi/core/wait_record.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace armi::detail {

// Innermost waits as (location, the location it waits on).
using wait_edges = std::vector<std::pair<location_id, location_id>>;
// Sends this process's innermost waits to the other processes and returns
// theirs, as many as arrive within budget_ns.  Called by a firing watchdog.
using wait_exchange = std::function<wait_edges(wait_edges const& mine, std::int64_t budget_ns)>;

class watchdog {
 public:
  // Reports records[i], the record of location first + i, and fires when one
  // of records[fire_begin, fire_end) (by default all) stops making progress.
  // exchange, if given, brings other processes' waits into the cycle.
  watchdog(double seconds, location_id first, std::vector<wait_record*> records, wait_exchange exchange = {},
           std::size_t fire_begin = 0, std::size_t fire_end = ~std::size_t{0})
      : m_limit_ns(static_cast<std::int64_t>(seconds * 1e9)),
        m_first(first),
        m_records(std::move(records)),
        m_exchange(std::move(exchange)),
        m_fire_begin(fire_begin),
        m_fire_end(std::min(fire_end, m_records.size())) {
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
  // cycle if the innermost waits (these, and `others` of other processes)
  // form one.
  std::string report(std::int64_t now, wait_edges const& others = {}) const {
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
        if (what != nullptr) s += " (" + method_name(demangle(what)) + ")";
        if (kind == wait_kind::fence) s += " (fence #" + std::to_string(f.detail.load(std::memory_order_relaxed) + 1) + ")";
        if (k + 1 == shown) {
          waits_on[i] = peer;
          s += " for " + seconds_text(now - f.since.load(std::memory_order_relaxed));
        }
      }
      if (depth > shown) s += ", and " + std::to_string(depth - shown) + " more";
      s += "\n";
    }
    wait_edges edges = others;
    for (std::size_t i = 0; i < waits_on.size(); ++i)
      if (waits_on[i] != no_peer) edges.emplace_back(m_first + static_cast<location_id>(i), waits_on[i]);
    std::string const cycle = find_cycle(edges);
    if (!cycle.empty()) s += "  wait-for cycle: " + cycle + "\n";
    return s;
  }

  // This process's innermost waits (where the innermost frame is recorded).
  wait_edges innermost_waits() const {
    wait_edges edges;
    for (std::size_t i = 0; i < m_records.size(); ++i) {
      wait_record const& r = *m_records[i];
      std::uint32_t const depth = r.depth.load(std::memory_order_acquire);
      if (depth == 0 || depth > wait_record::max_frames) continue;
      location_id const peer = r.frames[depth - 1].peer.load(std::memory_order_relaxed);
      if (peer != no_peer) edges.emplace_back(m_first + static_cast<location_id>(i), peer);
    }
    return edges;
  }

  // "a -> b -> ... -> a", from the smallest location on the cycle, or "".  A
  // location that waits on itself serves its own requests meanwhile: no
  // cycle.  Each location has one innermost wait, so the walk from any
  // location either stops or enters one loop.
  static std::string find_cycle(wait_edges const& edges) {
    std::map<location_id, location_id> next;
    for (auto const& [from, to] : edges) next.emplace(from, to);
    for (auto const& entry : next) {
      location_id const start = entry.first;
      location_id at = start;
      for (std::size_t steps = 0; steps < next.size(); ++steps) {
        auto const it = next.find(at);
        if (it == next.end() || it->second == at) break;
        at = it->second;
        if (at == start) {
          std::string s = std::to_string(start);
          location_id k = start;
          do {
            k = next.at(k);
            s += " -> " + std::to_string(k);
          } while (k != start);
          return s;
        }
      }
    }
    return "";
  }

 private:
  static std::string seconds_text(std::int64_t ns) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ns) / 1e9);
    return buf;
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
      for (std::size_t i = m_fire_begin; i < m_fire_end; ++i) {
        wait_record const& r = *m_records[i];
        std::uint64_t const p = r.progress.load(std::memory_order_relaxed);
        std::uint32_t const d = r.depth.load(std::memory_order_acquire);
        if (p != last[i].progress || d != last[i].depth || last[i].since == 0) last[i] = {p, d, now};
        if (d != 0 && now - last[i].since >= m_limit_ns) fire(m_first + static_cast<location_id>(i), now);
      }
    }
  }

  [[noreturn]] void fire(location_id who, std::int64_t now) const {
    // Other processes' innermost waits (their watchdogs fire at about the
    // same time), gathered for up to a second.  Without an exchange, under
    // MPI, the same second lets the others print their part before the abort.
    wait_edges others;
    if (m_exchange)
      others = m_exchange(innermost_waits(), 1'000'000'000);
    else if (fatal_hook.load() != nullptr)
      std::this_thread::sleep_for(std::chrono::seconds(1));
    std::string const s = "armi: watchdog: location " + std::to_string(who) + " has waited " +
                          seconds_text(m_limit_ns) + " without progress; " +
                          (m_fire_end - m_fire_begin < m_records.size() ? "every location of the run"
                                                                         : "the locations of this process") +
                          ":\n" + report(now, others);
    std::fputs(s.c_str(), stderr);
    std::fflush(stderr);
    fatal_exit("watchdog: no progress for " + seconds_text(m_limit_ns) + " (--armi-watchdog); ending the run");
  }

  std::int64_t m_limit_ns;
  location_id m_first;
  std::vector<wait_record*> m_records;
  wait_exchange m_exchange;
  std::size_t m_fire_begin;
  std::size_t m_fire_end;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stop = false;
  std::thread m_thread;
};

// The records and the watchdog of one process's locations, or nothing when
// the watchdog is off.
class watch_set {
 public:
  // This process's locations first .. first + count - 1; exchange, if
  // given, brings other processes' waits into the cycle.
  watch_set(double seconds, location_id first, std::uint32_t count, wait_exchange exchange = {}) {
    if (seconds <= 0) return;
    m_owned = std::make_unique<wait_record[]>(count);
    m_base = m_owned.get();
    m_first = first;
    std::vector<wait_record*> ptrs;
    for (std::uint32_t i = 0; i < count; ++i) ptrs.push_back(&m_base[i]);
    m_watchdog = std::make_unique<watchdog>(seconds, first, std::move(ptrs), std::move(exchange));
  }
  // Location self of a run whose `count` records, for locations 0 .. count - 1,
  // are in memory shared with the other processes of the run (the sp2
  // backend's process mode): the watchdog fires on self's record and reports
  // them all.
  watch_set(double seconds, wait_record* shared, std::uint32_t count, location_id self) {
    if (seconds <= 0 || shared == nullptr) return;
    m_base = shared;
    std::vector<wait_record*> ptrs;
    for (std::uint32_t i = 0; i < count; ++i) ptrs.push_back(&m_base[i]);
    m_watchdog = std::make_unique<watchdog>(seconds, 0, std::move(ptrs), wait_exchange{}, self, self + 1);
  }
  wait_record* record_of(location_id l) { return m_base != nullptr ? &m_base[l - m_first] : nullptr; }

 private:
  location_id m_first = 0;
  wait_record* m_base = nullptr;
  std::unique_ptr<wait_record[]> m_owned;  // outlives m_watchdog (declared first)
  std::unique_ptr<watchdog> m_watchdog;
};

}  // namespace armi::detail
