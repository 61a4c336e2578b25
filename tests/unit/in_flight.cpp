// What a location does while many of its buffers are in flight, checked on
// the calls it makes to a transport that never gives buffers back (so the
// count in flight only grows):
//  - streaming buffers out from its own code, it serves what has arrived
//    once half its flow-control limit is in flight, at each buffer it sends;
//    below that it does not look.  (Two locations that stream to each other
//    without polling, as sample_sort's distribution does, would otherwise
//    each fill the limit and wait in flow control for the other.)
//  - under --armi-aggregation=auto, that many buffers in flight doubles the
//    factor of a destination in another process (fewer, bigger messages),
//    not of one in this process (there a send is a pointer handed over).
#include "support/hand_transport.hpp"
#include "support/test_support.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

namespace d = armi::detail;
using armi::location_id;

class sink : public armi::p_object {
 public:
  void add(std::uint64_t v) { m_sum += v; }

 private:
  std::uint64_t m_sum = 0;
};

// Two locations, in one process or each in its own; notes, at each call to
// receive(), how many buffers location 0 had sent by then.
class counting_transport final : public armi_test::hand_transport {
 public:
  explicit counting_transport(bool one_process = true) : hand_transport("in_flight", 2, !one_process) {}
  ~counting_transport() override {
    for (d::buffer* b : m_sent) delete b;
  }

  void send(location_id, d::buffer* b) override { m_sent.push_back(b); }
  d::buffer* receive(location_id) override {
    receives_at.push_back(m_sent.size());
    return nullptr;
  }

  std::size_t sent() const { return m_sent.size(); }
  std::vector<std::size_t> receives_at;  // buffers sent when receive() was called

 private:
  std::vector<d::buffer*> m_sent;
};

}  // namespace

TEST_CASE("a location streaming buffers serves arrivals once half its flow-control limit is in flight",
          "[flow_control]") {
  // The limit for 2 locations is 64 + 8 * 2 = 80 buffers (location.hpp);
  // 60 full buffers stay below it, so flow control itself never waits.
  constexpr std::size_t factor = 16, buffers = 60, half_limit = 40;
  counting_transport tr;
  armi::config cfg;
  cfg.aggregation = factor;
  {
    d::location loc(tr, 0, cfg);
    d::t_location = &loc;
    {
      sink s;
      for (std::uint64_t i = 0; i < factor * buffers; ++i) armi::async_rmi(1, s.get_rmi_handle(), &sink::add, i);
    }
    d::t_location = nullptr;
  }
  REQUIRE(tr.sent() == buffers);
  // Once for each full buffer sent beyond half the limit, and never before.
  std::vector<std::size_t> expected;
  for (std::size_t n = half_limit + 1; n <= buffers; ++n) expected.push_back(n);
  CHECK(tr.receives_at == expected);
}

namespace {

// Location 0 under auto sends `requests` to location 1, slowly (a buffer of
// 64 fills in about 64 us, far over auto's target of 5 us or more, so only
// the buffers in flight can grow k); returns its stats.
d::location_stats slow_auto_stream(counting_transport& tr, std::uint64_t requests) {
  armi::config cfg;
  cfg.aggregation = armi::aggregation_auto;
  d::location_stats stats;
  {
    d::location loc(tr, 0, cfg);
    d::t_location = &loc;
    {
      sink s;
      for (std::uint64_t i = 0; i < requests; ++i) {
        auto const until = std::chrono::steady_clock::now() + std::chrono::microseconds(1);
        while (std::chrono::steady_clock::now() < until) {
        }
        armi::async_rmi(1, s.get_rmi_handle(), &sink::add, i);
      }
    }
    stats = loc.stats();
    d::t_location = nullptr;
  }
  return stats;
}

}  // namespace

TEST_CASE("auto: buffers backed up double the factor to another process, not within the process",
          "[flow_control][auto]") {
  // 44 buffers' worth at the start factor 64: the 42nd leaves with more
  // than half the limit of 80 in flight.
  constexpr std::uint64_t requests = 44 * 64;
  SECTION("a destination in another process") {
    counting_transport tr(false);
    auto const s = slow_auto_stream(tr, requests);
    CHECK(s.auto_grows >= 1);
    CHECK(s.auto_factor_max >= 128);
  }
  SECTION("a destination in this process") {
    counting_transport tr(true);
    auto const s = slow_auto_stream(tr, requests);
    CHECK(s.auto_grows == 0);
    CHECK(s.auto_factor_max == 64);
  }
}
