// Flow control: the count of a location's buffers in flight and of their
// bytes, the wait when it passes the limit (throttle: serve requests until
// half are back), and the ask to partners to serve at each buffer they send
// while more than half are out (ask_service).
//
// The limit is 64 buffers and 8 more per partner, and the process's
// locations share in_flight_bytes_per_process between them: where
// thousands of locations share a process (threads), receivers run rarely,
// and senders that streamed up to their count limit held gigabytes of
// buffers (4,096 locations, 20,000 updates each: 5.6 GiB).  A location may
// always have min_in_flight buffers out, whatever their size.
#pragma once

#include <armi/core/handle.hpp>
#include <armi/core/stats.hpp>
#include <armi/core/transport.hpp>

#include <algorithm>
#include <cstddef>

namespace armi::detail {

class flow_control {
 public:
  static constexpr std::size_t in_flight_bytes_per_process = std::size_t{64} << 20;
  static constexpr std::size_t min_in_flight = 8;

  // partners: the locations this one sends buffers to (every one; its next
  // hops under --armi-routing).
  flow_control(transport& tr, location_id self, location_stats& stats, std::size_t partners)
      : m_transport(tr),
        m_self(self),
        m_stats(stats),
        m_max(64 + 8 * partners),
        m_max_bytes(in_flight_bytes_per_process / std::max<std::size_t>(tr.process_locations(), 1)) {}

  std::size_t outstanding() const { return m_outstanding; }
  bool over_limit() const { return beyond(m_max, m_max_bytes); }
  bool half_out() const { return beyond(m_max / 2, m_max_bytes / 2); }
  // Inside throttle (or serving from a send): no serving from sends then.
  bool throttling() const { return m_throttling; }
  void set_throttling(bool on) { m_throttling = on; }

  // One of this location's buffers is being sent (by send: it comes back),
  // holding `bytes` (its capacity).
  void sent(std::size_t bytes) {
    ++m_outstanding;
    m_outstanding_bytes += bytes;
  }
  // One of this location's buffers in flight came back.
  void came_back(std::size_t bytes) {
    --m_outstanding;
    m_outstanding_bytes -= std::min(bytes, m_outstanding_bytes);
    if (m_asking_service && !beyond(m_max / 4, m_max_bytes / 4)) ask_service(false);
  }

  // More than half the limit in flight asks the partners to serve at each
  // buffer they send, until a quarter is left: a partner whose own buffers
  // come back would otherwise serve only once this location sat in flow
  // control (docs/runtime-measurements.md).
  void ask_service(bool on) {
    if (m_asking_service == on) return;
    m_asking_service = on;
    if (on) ++m_stats.service_asks;
    m_transport.want_service(m_self, on);
  }

  // Waits, serving requests (wait_until(pred)), until half the limit is
  // back; reclaim() takes back the buffers that came home.
  template <class WaitUntil, class Reclaim>
  void throttle(bool timing, WaitUntil&& wait_until, Reclaim&& reclaim) {
    ++m_stats.flow_control_waits;
    stopwatch const timed(timing, m_stats.ns_flow_control);
    m_throttling = true;
    wait_until([&] {
      reclaim();
      return !half_out();
    });
    m_throttling = false;
  }

 private:
  transport& m_transport;
  location_id m_self;
  location_stats& m_stats;
  // More than `buffers` out, or more than min_in_flight holding more than `bytes`.
  bool beyond(std::size_t buffers, std::size_t bytes) const {
    return m_outstanding > buffers || (m_outstanding > min_in_flight && m_outstanding_bytes > bytes);
  }

  std::size_t m_outstanding = 0;
  std::size_t m_outstanding_bytes = 0;
  std::size_t m_max;        // buffers
  std::size_t m_max_bytes;  // their capacity
  bool m_throttling = false;
  bool m_asking_service = false;
};

}  // namespace armi::detail
