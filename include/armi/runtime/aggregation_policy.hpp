// The aggregation policy: how many requests a buffer to each destination
// holds before it leaves (its factor) and when a filling buffer looks at
// the clock.  Fixed factors (local and remote), or `auto`, where each
// destination's factor k doubles when its buffers fill fast, halves when
// one waits out --armi-max-delay, and stays within what the program's
// bursts allow.  The rule and the measurements behind its constants:
// docs/runtime-measurements.md, "Aggregation policy".
//
// A plain class over a few numbers (aggregation_setup) and the location's
// stats: no transport, no location, so the rule can be tested alone.
#pragma once

#include <armi/core/buffer.hpp>
#include <armi/core/clock.hpp>
#include <armi/core/handle.hpp>
#include <armi/core/stats.hpp>
#include <armi/core/transport.hpp>
#include <armi/runtime/options.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace armi::detail {

// Auto, to a destination in another process not reached through shared
// memory: the most k may be for bursts of b requests (b more than twice the
// start factor), where a send costs send_ns and the sender writes a request
// every request_ns (0: not measured yet).  Half the burst, doubled while a
// doubling saves more in sends (b / 2k of them) than it delays the
// receiver's start (k requests written).
inline std::uint64_t remote_burst_bound(std::uint64_t b, double send_ns, double request_ns) {
  std::uint64_t const half = b / 2, lo = std::bit_floor(half), whole = std::bit_ceil(b);
  if (request_ns <= 0) return half;
  double const pays_below = send_ns * static_cast<double>(b) / (2.0 * request_ns);  // k to 2k pays while k^2 is less
  std::uint64_t k = lo;
  while (k < whole && static_cast<double>(k) * static_cast<double>(k) < pays_below) k *= 2;
  return k == lo ? half : k;
}

// The byte cap where the user set none: a process's open buffers, one per
// location and slot (destination, or next hop under routing), stay within
// open_buffer_bytes_per_process.  It binds only with thousands of slots in
// one process (threads: 4,096 locations under grid routing, 516 B a
// buffer; 1,024 all-to-all, 256 B), where buffers of the default cap held
// gigabytes; never below shared_cap_floor.
inline constexpr std::size_t open_buffer_bytes_per_process = std::size_t{256} << 20;
inline constexpr std::size_t shared_cap_floor = 256;
inline std::size_t shared_byte_cap(std::size_t process_locations, std::size_t slots) {
  return std::max(open_buffer_bytes_per_process / std::max<std::size_t>(process_locations * slots, 1), shared_cap_floor);
}

// What the policy needs to know of the location and its transport.
struct aggregation_setup {
  location_id size = 1;
  location_id local_first = 0, local_count = 1;  // the locations of this process
  std::size_t factor_local = 64, factor_remote = 64;  // aggregation_auto: auto
  std::size_t bytes_local = 0, bytes_remote = 0;      // byte caps
  std::int64_t max_delay_ns = 0;                      // --armi-max-delay, 0 = none
  transport::message_model modeled{};                 // what a message costs on a modeled machine
  std::vector<bool> cheap;  // [dest]: reached through shared memory (missing: not)
};

class aggregation_policy {
 public:
  // Auto: the factor a destination starts at, the least it goes down to,
  // the factor for bursts in this process shorter than the start, and its
  // target fill time (a multiple of a send's cost, at least a floor).
  static constexpr std::uint32_t auto_start_factor = 64;
  static constexpr std::uint32_t auto_min_factor = 4;
  static constexpr std::uint32_t auto_short_factor = 8;
  static constexpr double auto_cost_multiple = 8;
  static constexpr std::int64_t auto_min_target_ns = 5000;
  // Through shared memory a send is a pointer handed over, while a buffer
  // costs far more (the receiver's look, its lines moving, its return).
  static constexpr std::int64_t auto_min_target_shared_ns = 40000;
  static constexpr std::uint64_t auto_send_sample = 16;  // every this many-th send is timed
  static constexpr std::uint32_t auto_single_bursts = 4;  // lone-request bursts in a row that set k to 1
  // --armi-max-delay: requests to one destination between looks at the clock.
  static constexpr std::uint32_t delay_check_every = 32;

  // Auto: what one destination's factor is and has seen.
  struct auto_state {
    std::uint32_t k = auto_start_factor;  // the factor now
    std::uint32_t singles = 0;            // bursts of one request in a row
    std::uint64_t burst = 0;              // requests sent since the last wait
    std::uint64_t burst_mean = 0;         // the mean of those at each wait (0: none yet)
    bool waited = false;                  // its last buffer left for a poll or a wait
    std::uint64_t polls = 0;              // the program's polls when its last buffer left
  };

  aggregation_policy(aggregation_setup setup, location_stats& stats)
      : m_size(setup.size),
        m_local_first(setup.local_first),
        m_local_count(setup.local_count),
        m_factor_local(setup.factor_local),
        m_factor_remote(setup.factor_remote),
        m_bytes_local(setup.bytes_local),
        m_bytes_remote(setup.bytes_remote),
        m_max_delay_ns(setup.max_delay_ns),
        m_modeled(setup.modeled),
        m_cheap(std::move(setup.cheap)),
        m_stats(stats) {
    m_cheap.resize(m_size, false);
    for (location_id d = 0; d < m_size; ++d) track_auto(d, false);
    update_clocked();
  }

  bool same_process(location_id l) const { return l - m_local_first < m_local_count; }
  bool cheap(location_id dest) const { return m_cheap[dest]; }
  std::size_t factor_local() const { return m_factor_local; }
  std::size_t factor_remote() const { return m_factor_remote; }
  std::int64_t max_delay_ns() const { return m_max_delay_ns; }
  // Buffers look at the clock only under auto or a max delay.
  bool clocked() const { return m_clocked; }
  auto_state const& state(location_id dest) const { return m_auto[dest]; }

  // New factors (checked: at least 1, or aggregation_auto); a destination
  // that enters auto starts afresh.  The caller rearms the open buffers.
  void set_factors(std::size_t local, std::size_t remote) {
    if (local == 0 || remote == 0)
      throw std::invalid_argument("armi::set_aggregation: a factor must be at least 1 (or armi::aggregation_auto)");
    std::vector<bool> was_auto(m_size);
    for (location_id d = 0; d < m_size; ++d) was_auto[d] = is_auto(d);
    m_factor_local = local;
    m_factor_remote = remote;
    update_clocked();
    for (location_id d = 0; d < m_size; ++d) track_auto(d, was_auto[d]);
  }

  bool is_auto(location_id dest) const {
    return (same_process(dest) ? m_factor_local : m_factor_remote) == aggregation_auto;
  }

  // The aggregation factor of a buffer for dest (buffer::left is 32 bits).
  std::uint32_t factor(location_id dest) const {
    std::size_t const f = same_process(dest) ? m_factor_local : m_factor_remote;
    return f == aggregation_auto ? m_auto[dest].k : static_cast<std::uint32_t>(std::min<std::size_t>(f, UINT32_MAX));
  }

  // Where a buffer to dest holding `count` requests looks again: at the
  // factor, or sooner under --armi-max-delay, to look at the clock; under
  // auto, also at half the factor, to note the time, when k may grow.
  std::uint32_t next_limit(location_id dest, std::uint32_t count) const {
    std::uint32_t f = factor(dest);
    if (count < f / 2 && m_clocked && is_auto(dest) && may_grow(dest)) f /= 2;
    return m_max_delay_ns == 0 ? f : std::min(f, count + delay_check_every);
  }

  // Sets b's countdown to its next look (next_limit), or to its next request
  // when it already holds the factor (k went down under it).
  void rearm(location_id dest, buffer& b) const {
    b.left = b.count >= factor(dest) ? 1 : next_limit(dest, b.count) - b.count;
  }

  // A clocked buffer reached a look short of the factor: under auto, the
  // half mark, whose time the buffer's fill time is measured from.
  void note_half(location_id dest, buffer& b) const {
    if (b.half_ns == 0 && b.count >= factor(dest) / 2 && is_auto(dest) && may_grow(dest)) b.half_ns = now_ns();
  }

  // Auto: whether a full buffer to dest may double k.  If not, its fill
  // time decides nothing, so it takes no half mark (a clock read saved).
  bool may_grow(location_id dest) const {
    std::uint32_t const k = m_auto[dest].k;
    return k < auto_max(dest) && 2 * std::uint64_t{k} <= burst_bound(dest);
  }

  // A buffer of b.count requests to dest leaves for `cause`; backed_up:
  // more than half the flow-control limit is in flight.  Returns whether
  // dest is under auto (then the send may be timed: time_send).
  bool on_flush(location_id dest, buffer const& b, flush_cause cause, bool backed_up) {
    if (!m_clocked || !is_auto(dest)) return false;
    adapt(dest, b, cause, backed_up);
    auto_state& a = m_auto[dest];
    a.burst += b.count;
    a.waited = cause == flush_cause::poll || cause == flush_cause::wait;
    a.polls = m_polls;
    m_burst_open = true;
    return true;
  }
  // The program polled (rmi_poll), whether or not anything had arrived.
  void note_poll() { ++m_polls; }

  // Whether to time this send of an auto buffer (every auto_send_sample-th),
  // and the time it took: a send's cost sets the target fill time.
  bool time_send() { return ++m_auto_flushes % auto_send_sample == 0; }
  void sent_in(std::int64_t ns) { average_in(m_send_ns, static_cast<double>(ns)); }

  // Auto, as a buffer to dest leaves: double k on a fast fill (or backed-up
  // sends to another process), halve it on a max-delay send.
  void adapt(location_id dest, buffer const& b, flush_cause cause, bool backed_up) {
    std::uint32_t& k = m_auto[dest].k;
    std::uint32_t const before = k;
    ++m_stats.auto_buffers;
    m_stats.auto_factor_sum += k;
    if (k == 1) {
      // Lone requests so far: a second one in this burst, with no poll of
      // the program since the one before, ends that.  (A poll that serves
      // the answer at once ends no burst, but the program still waited.)
      if (m_auto[dest].burst != 0 && m_auto[dest].polls == m_polls) {
        k = auto_start_factor;
        ++m_stats.auto_grows;
      }
    } else if (cause == flush_cause::full && !may_grow(dest)) {
      // At the byte cap's bound nothing is decided; at the burst's, k is held.
      if (k < auto_max(dest)) ++m_stats.auto_held;
    } else if (cause == flush_cause::full) {
      std::int64_t const target = auto_target_ns(dest);
      std::int64_t const fill = b.half_ns == 0 ? target : 2 * (now_ns() - b.half_ns);  // no half mark: no opinion
      if (b.half_ns != 0) average_in(m_request_ns, static_cast<double>(fill) / k);
      // Backed-up sends call for fewer messages only where each buffer is
      // one (not through shared memory).
      bool const grow_for_backlog = !m_cheap[dest] && backed_up;
      if (fill < target / 2 || grow_for_backlog) {
        // A modeled machine's receive window bounds a buffer: past it, a
        // bigger one adds a wait for acknowledgements.
        if (m_modeled.window_bytes != 0 && 2 * b.size > m_modeled.window_bytes) {
          ++m_stats.auto_held;
        } else {
          k = std::min(2 * k, auto_max(dest));
          ++m_stats.auto_grows;
        }
      }
    } else if (cause == flush_cause::bytes) {
      ++m_stats.auto_capped;  // the cap, not k, bounds these requests: k stays
    } else if (cause == flush_cause::delay && k > auto_min_factor) {
      k = std::max(k / 2, auto_min_factor);
      ++m_stats.auto_shrinks;
    }
    m_stats.auto_final_sum = m_stats.auto_final_sum - before + k;
    m_stats.auto_factor_max = std::max<std::uint64_t>(m_stats.auto_factor_max, k);
  }

  // Auto: the most k may be for the bursts sent to dest (UINT64_MAX: none
  // seen yet).  A burst that keeps its receiver idle while a buffer fills
  // should leave in pieces: the receiver starts on the first while the
  // rest is written.
  std::uint64_t burst_bound(location_id dest) const {
    std::uint64_t const b = m_auto[dest].burst_mean;
    if (b == 0) return UINT64_MAX;
    if (b < auto_start_factor) return auto_short_factor;  // short bursts (only counted in this process)
    if (m_cheap[dest]) {
      // Through shared memory: a quarter of the burst, at most 8 sqrt(b)
      // (the last buffer runs after the sender is done).
      auto const root = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(b)));
      return std::max<std::uint64_t>(auto_start_factor, std::min(b / 4, 8 * root));
    }
    // A message to another process costs more: all of a burst of up to twice
    // the start factor, half of a longer one or more (remote_burst_bound).
    if (b <= 2 * auto_start_factor) return 2 * auto_start_factor;
    return remote_burst_bound(b, std::max(m_send_ns, static_cast<double>(m_modeled.message_ns)), m_request_ns);
  }

  // The location is about to wait (or is fenced): the bursts sent since the
  // last wait have ended.  Each updates its destination's mean burst, and a
  // factor above what that allows halves down to it; the open buffer of a
  // destination whose factor changed (open_buffer_of(dest), or nullptr) is
  // rearmed.
  template <class OpenBuffer>
  void end_bursts(OpenBuffer const& open_buffer_of) {
    if (!m_burst_open) return;
    m_burst_open = false;
    for (location_id d = 0; d < m_size; ++d) {
      auto_state& a = m_auto[d];
      std::uint64_t const n = std::exchange(a.burst, 0);
      if (n == 0 || !is_auto(d)) continue;
      std::uint32_t& k = a.k;
      std::uint32_t const before = k;
      if (n == 1 && a.waited) {  // (a sync call's request leaves at once anyway)
        if (++a.singles >= auto_single_bursts && k != 1) {
          k = 1;
          ++m_stats.auto_shrinks;
        }
      } else {
        a.singles = 0;
      }
      // A burst shorter than the start factor fits one buffer whatever k is,
      // so to another process it says nothing about k.
      if (n >= auto_start_factor || (n > auto_short_factor && same_process(d))) {
        a.burst_mean = a.burst_mean == 0 ? n : (a.burst_mean + n) / 2;
        std::uint64_t const bound = burst_bound(d);
        while (k > bound && k / 2 >= auto_min_factor) {
          k /= 2;
          ++m_stats.auto_shrinks;
        }
      }
      if (k != before) {
        m_stats.auto_final_sum = m_stats.auto_final_sum - before + k;
        // An open buffer already at the new k leaves with its next request.
        if (buffer* open = open_buffer_of(d)) rearm(d, *open);
      }
    }
  }

  std::int64_t auto_target_ns(location_id dest) const {
    std::int64_t const least = m_cheap[dest] ? auto_min_target_shared_ns : auto_min_target_ns;
    auto const t = std::max(least, static_cast<std::int64_t>(m_send_ns * auto_cost_multiple));
    return m_max_delay_ns == 0 ? t : std::min(t, m_max_delay_ns / 2);
  }

  std::size_t bytes_cap(location_id dest) const { return same_process(dest) ? m_bytes_local : m_bytes_remote; }

  // Auto: the most a factor to dest grows to, the byte cap's worth of the
  // smallest request.
  std::uint32_t auto_max(location_id dest) const {
    return static_cast<std::uint32_t>(
        std::clamp<std::size_t>(bytes_cap(dest) / sizeof(request_header), auto_min_factor, UINT32_MAX));
  }

  static std::int64_t now_ns() { return steady_ns(); }

 private:
  // Running averages: each new sample weighs 1/16, the first all.
  static void average_in(double& mean, double sample) { mean = mean == 0 ? sample : mean + (sample - mean) / 16; }

  // Keeps the stats of auto destinations current as dest enters or leaves
  // auto (entering starts its factor afresh).
  void track_auto(location_id dest, bool was_auto) {
    bool const now_auto = is_auto(dest);
    if (now_auto == was_auto) return;
    if (m_auto.empty()) m_auto.resize(m_size);
    if (now_auto) {
      m_auto[dest] = auto_state{};
      ++m_stats.auto_destinations;
      m_stats.auto_final_sum += auto_start_factor;
      m_stats.auto_factor_max = std::max<std::uint64_t>(m_stats.auto_factor_max, auto_start_factor);
    } else {
      --m_stats.auto_destinations;
      m_stats.auto_final_sum -= m_auto[dest].k;
    }
  }

  void update_clocked() {
    m_clocked = m_max_delay_ns != 0 || m_factor_local == aggregation_auto || m_factor_remote == aggregation_auto;
  }

  location_id m_size, m_local_first, m_local_count;
  std::size_t m_factor_local, m_factor_remote;
  std::size_t m_bytes_local, m_bytes_remote;
  std::int64_t m_max_delay_ns;
  transport::message_model m_modeled;
  std::vector<bool> m_cheap;
  location_stats& m_stats;
  std::vector<auto_state> m_auto;  // per destination (allocated when a destination first goes auto)
  double m_send_ns = 0;            // average cost of a send
  double m_request_ns = 0;         // average time between two requests of a filling buffer
  bool m_burst_open = false;       // some auto_state::burst may be nonzero
  std::uint64_t m_polls = 0;       // the program's polls (note_poll)
  std::uint64_t m_auto_flushes = 0;
  bool m_clocked = false;
};

}  // namespace armi::detail
