// Per-location counters, updated without atomics by the owning location and
// printed at exit when --armi-stats is on (report.hpp).
#pragma once

#include <armi/core/clock.hpp>
#include <armi/core/handlers.hpp>
#include <armi/core/trace.hpp>


#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace armi::detail {

// Why a buffer left: it held the aggregation factor's requests (full) or
// reached the byte cap (bytes); it held something someone waits on (urgent);
// the location polled and found nothing (poll), blocked (wait), fenced, or
// called rmi_flush or set_aggregation (flush); its oldest request reached
// --armi-max-delay (delay).
enum class flush_cause : std::uint8_t { full, bytes, urgent, poll, wait, fence, flush, delay };
inline constexpr std::size_t num_flush_causes = 8;
inline constexpr char const* flush_cause_names[num_flush_causes] = {"full", "bytes", "urgent", "poll",
                                                                    "wait", "fence", "flush", "delay"};

// How a buffer reached its destination: within the sender's process (a
// pointer or a ring copy), through memory shared with another process of
// its node (the mpi backend's node rings), or as a message of the layer
// below (MPI, the sp2 network).  Each transport says which at every send.
enum class send_path : std::uint8_t { process, node, message };
inline constexpr std::size_t num_send_paths = 3;
inline constexpr char const* send_path_names[num_send_paths] = {"process", "node", "message"};

struct location_stats {
  std::array<std::uint64_t, num_rmi_kinds> sent{};
  std::array<std::uint64_t, num_rmi_kinds> executed{};
  std::uint64_t buffers_sent = 0;
  std::uint64_t bytes_sent = 0;  // the buffers', and the lent ranges sent apart (armi::lend)
  std::uint64_t buffers_received = 0;
  // Requests passed on toward their destination (--armi-routing): counted
  // by neither sent nor executed, which count each request once.
  std::uint64_t requests_forwarded = 0;
  std::uint64_t fences = 0;
  std::uint64_t fence_rounds = 0;
  std::uint64_t sleeps = 0;  // times the location blocked waiting for work
  // Flow control: times the location waited for its buffers to come back
  // (and nanoseconds; outside a fence also counted in ns_blocked), and
  // times it asked its partners to serve at each buffer they send (past half
  // its limit in flight, location::ask_service).
  std::uint64_t flow_control_waits = 0;
  std::uint64_t ns_flow_control = 0;
  std::uint64_t service_asks = 0;
  // Buffers sent by how many requests they held: [1], [2,3], [4,7], ...,
  // [2048,4095], [4096, ...).  The histogram of achieved aggregation.
  static constexpr std::size_t histogram_buckets = 13;
  std::array<std::uint64_t, histogram_buckets> requests_per_buffer{};
  // Nanoseconds (steady clock) spent in rmi_fence, blocked outside a fence
  // (sync_rmi, future::get, collectives, rmi_wait) and in rmi_poll.
  std::uint64_t ns_fence = 0;
  std::uint64_t ns_blocked = 0;
  std::uint64_t ns_polling = 0;
  std::array<std::uint64_t, num_flush_causes> flushes{};  // buffers sent, by flush_cause
  std::array<std::uint64_t, num_send_paths> paths{};      // buffers sent, by send_path
  // --armi-aggregation=auto: its decisions (factor doubled, halved, lowered
  // to what the byte cap holds), the factor in effect summed over the
  // buffers it governed (mean = auto_factor_sum / auto_buffers), the largest
  // factor reached, and the factors in effect now summed over the
  // destinations it governs (mean final factor = auto_final_sum / auto_destinations).
  std::uint64_t auto_grows = 0;
  std::uint64_t auto_shrinks = 0;
  std::uint64_t auto_capped = 0;
  std::uint64_t auto_held = 0;  // full buffers whose k the burst length held (may_grow)
  std::uint64_t auto_buffers = 0;
  std::uint64_t auto_factor_sum = 0;
  std::uint64_t auto_factor_max = 0;
  std::uint64_t auto_final_sum = 0;
  std::uint64_t auto_destinations = 0;

  double auto_factor_mean() const { return auto_buffers == 0 ? 0.0 : double(auto_factor_sum) / double(auto_buffers); }
  double auto_final_mean() const {
    return auto_destinations == 0 ? 0.0 : double(auto_final_sum) / double(auto_destinations);
  }

  void sent_by(send_path p) { ++paths[static_cast<std::size_t>(p)]; }

  static std::size_t bucket_of(std::uint32_t requests) {
    std::size_t const b = static_cast<std::size_t>(std::bit_width(requests | 1u)) - 1;
    return b < histogram_buckets ? b : histogram_buckets - 1;
  }

  location_stats& operator+=(location_stats const& o) {
    for (std::size_t k = 0; k < num_rmi_kinds; ++k) {
      sent[k] += o.sent[k];
      executed[k] += o.executed[k];
    }
    buffers_sent += o.buffers_sent;
    bytes_sent += o.bytes_sent;
    buffers_received += o.buffers_received;
    requests_forwarded += o.requests_forwarded;
    fences += o.fences;
    fence_rounds += o.fence_rounds;
    sleeps += o.sleeps;
    flow_control_waits += o.flow_control_waits;
    ns_flow_control += o.ns_flow_control;
    service_asks += o.service_asks;
    for (std::size_t k = 0; k < histogram_buckets; ++k) requests_per_buffer[k] += o.requests_per_buffer[k];
    ns_fence += o.ns_fence;
    ns_blocked += o.ns_blocked;
    ns_polling += o.ns_polling;
    for (std::size_t k = 0; k < num_flush_causes; ++k) flushes[k] += o.flushes[k];
    for (std::size_t k = 0; k < num_send_paths; ++k) paths[k] += o.paths[k];
    auto_grows += o.auto_grows;
    auto_shrinks += o.auto_shrinks;
    auto_capped += o.auto_capped;
    auto_held += o.auto_held;
    auto_buffers += o.auto_buffers;
    auto_factor_sum += o.auto_factor_sum;
    auto_factor_max = std::max(auto_factor_max, o.auto_factor_max);
    auto_final_sum += o.auto_final_sum;
    auto_destinations += o.auto_destinations;
    return *this;
  }
  std::uint64_t total_sent() const {
    std::uint64_t s = 0;
    for (auto v : sent) s += v;
    return s;
  }
  std::uint64_t total_executed() const {
    std::uint64_t s = 0;
    for (auto v : executed) s += v;
    return s;
  }
};

// Requests a location executed per target method type, by handler title
// ("async: void (T::*)(int)": the kind and the method's type, as the trace
// names executions).  Kept apart from location_stats, which travels between
// ranks as raw bytes; these travel as text (method_counts_text).
using method_counts = std::map<std::string, std::uint64_t>;

// A location's executions per handler id (stats on), as method_counts: method
// stubs only (replies, collectives and definitions are in the kind counts).
inline method_counts method_counts_of(std::vector<std::uint64_t> const& by_handler) {
  method_counts out;
  for (std::uint32_t id = 0; id < by_handler.size(); ++id) {
    handler_entry const* e = handler_table::instance().find(id);
    if (by_handler[id] != 0 && e != nullptr && e->is_method()) out[handler_title(e->mangled_name)] += by_handler[id];
  }
  return out;
}

// Several locations' counts as text and back: per location, "count title"
// lines, then an empty line.  Titles are type names, without line breaks.
inline std::string method_counts_text(std::vector<method_counts> const& per_location) {
  std::string out;
  for (auto const& counts : per_location) {
    for (auto const& [title, n] : counts) out += std::to_string(n) + ' ' + title + '\n';
    out += '\n';
  }
  return out;
}
inline std::vector<method_counts> method_counts_from_text(std::string_view text) {
  std::vector<method_counts> out;
  method_counts current;
  while (!text.empty()) {
    std::size_t const end = std::min(text.find('\n'), text.size());
    std::string_view const line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (line.empty()) {
      out.push_back(std::move(current));
      current.clear();
      continue;
    }
    std::size_t const space = line.find(' ');
    current[std::string(line.substr(space + 1))] += std::stoull(std::string(line.substr(0, space)));
  }
  return out;
}

// Adds the steady-clock time of its scope to `ns`, when `on`.
class stopwatch {
 public:
  stopwatch(bool on, std::uint64_t& ns) : m_ns(on ? &ns : nullptr) {
    if (m_ns != nullptr) m_start = steady_ns();
  }
  stopwatch(stopwatch const&) = delete;
  stopwatch& operator=(stopwatch const&) = delete;
  ~stopwatch() {
    if (m_ns != nullptr)
      *m_ns += static_cast<std::uint64_t>(steady_ns() - m_start);
  }

 private:
  std::uint64_t* m_ns;
  std::int64_t m_start = 0;
};

}  // namespace armi::detail
