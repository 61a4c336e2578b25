// Flow control: the count of a location's buffers in flight, the wait when
// it passes the limit (throttle: serve requests until half are back), and
// the ask to partners to serve at each buffer they send while more than
// half are out (ask_service).
#pragma once

#include <armi/core/handle.hpp>
#include <armi/core/stats.hpp>
#include <armi/core/transport.hpp>

#include <cstddef>

namespace armi::detail {

class flow_control {
 public:
  // partners: the locations this one sends buffers to (every one; its next
  // hops under --armi-routing).
  flow_control(transport& tr, location_id self, location_stats& stats, std::size_t partners)
      : m_transport(tr), m_self(self), m_stats(stats), m_max(64 + 8 * partners) {}

  std::size_t outstanding() const { return m_outstanding; }
  bool over_limit() const { return m_outstanding > m_max; }
  bool half_out() const { return m_outstanding > m_max / 2; }
  // Inside throttle (or serving from a send): no serving from sends then.
  bool throttling() const { return m_throttling; }
  void set_throttling(bool on) { m_throttling = on; }

  // One of this location's buffers is being sent (by send: it comes back).
  void sent() { ++m_outstanding; }
  // One of this location's buffers in flight came back.
  void came_back() {
    --m_outstanding;
    if (m_asking_service && m_outstanding <= m_max / 4) ask_service(false);
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
      return m_outstanding <= m_max / 2;
    });
    m_throttling = false;
  }

 private:
  transport& m_transport;
  location_id m_self;
  location_stats& m_stats;
  std::size_t m_outstanding = 0;
  std::size_t m_max;
  bool m_throttling = false;
  bool m_asking_service = false;
};

}  // namespace armi::detail
