// What a location does while many of its buffers are in flight, checked on
// the calls it makes to a transport that never gives buffers back (so the
// count in flight only grows):
//  - streaming buffers out from its own code, it serves what has arrived
//    once half its flow-control limit is in flight, at each buffer it sends;
//    below that it does not look.  (Two locations that stream to each other
//    without polling, as sample_sort's distribution does, would otherwise
//    each fill the limit and wait in flow control for the other.)
//    Past half, it also asks its partners to serve at each buffer they
//    send, once, until no more than a quarter of the limit is in flight.
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
  void take(std::vector<std::uint8_t> const& bytes) { m_sum += bytes.size(); }

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

  d::send_path send(location_id, d::buffer* b) override {
    m_sent.push_back(b);
    return d::send_path::message;
  }
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

// Location 0's buffers stay sent until the test gives them back; notes each
// want_service call with the number of buffers then in flight.
class returning_transport final : public armi_test::hand_transport {
 public:
  returning_transport() : hand_transport("in_flight", 2, false) {}
  ~returning_transport() override {
    for (d::buffer* b : m_sent) delete b;
    for (d::buffer* b : m_back) delete b;
  }

  d::send_path send(location_id, d::buffer* b) override {
    m_sent.push_back(b);
    return d::send_path::message;
  }
  d::buffer* reclaim(location_id) override {
    if (m_back.empty()) return nullptr;
    d::buffer* b = m_back.back();
    m_back.pop_back();
    return b;
  }
  void want_service(location_id, bool on) override { asks.push_back({on, m_sent.size()}); }

  void give_back(std::size_t n) {
    for (; n != 0; --n) {
      m_back.push_back(m_sent.back());
      m_sent.pop_back();
    }
  }

  struct ask {
    bool on;
    std::size_t in_flight;
    bool operator==(ask const&) const = default;
  };
  std::vector<ask> asks;

 private:
  std::vector<d::buffer*> m_sent;
  std::vector<d::buffer*> m_back;
};

}  // namespace

TEST_CASE("past half its flow-control limit, a streaming location asks its partners to serve until a quarter is left",
          "[flow_control]") {
  // Limit 80 for 2 locations: half 40, a quarter 20.
  constexpr std::size_t factor = 16;
  returning_transport tr;
  armi::config cfg;
  cfg.aggregation = factor;
  d::location_stats stats;
  {
    d::location loc(tr, 0, cfg);
    d::t_location = &loc;
    {
      sink s;
      auto stream = [&](std::size_t buffers) {
        for (std::uint64_t i = 0; i < factor * buffers; ++i) armi::async_rmi(1, s.get_rmi_handle(), &sink::add, i);
      };
      stream(50);
      // Asked once, as the 41st buffer left; not again for the next nine.
      CHECK(tr.asks == std::vector<returning_transport::ask>{{true, 41}});
      tr.give_back(25);  // 25 in flight: still more than a quarter
      armi::rmi_poll();
      CHECK(tr.asks.size() == 1);
      tr.give_back(10);  // 15 in flight: the poll takes them back one by one, and stops asking at 20
      armi::rmi_poll();
      CHECK(tr.asks == std::vector<returning_transport::ask>{{true, 41}, {false, 15}});
      stream(30);  // 45 in flight again: asked again at 41
      CHECK(tr.asks.size() == 3);
      CHECK(tr.asks.back() == returning_transport::ask{true, 41});
    }
    stats = loc.stats();
    d::t_location = nullptr;
  }
  CHECK(stats.service_asks == 2);
  CHECK(stats.flow_control_waits == 0);
}

TEST_CASE("flow control bounds the bytes in flight too: 1 MiB buffers ask for service at 17 in flight, not 41",
          "[flow_control]") {
  // Two locations share the process's 64 MiB: 32 MiB in flight at most
  // for location 0, and half of it (16 MiB, 16 buffers of 1 MiB) comes
  // before the count's half (40).
  static_assert(d::flow_control::in_flight_bytes_per_process == std::size_t{64} << 20);
  returning_transport tr;
  armi::config cfg;
  cfg.aggregation = 1;
  cfg.buffer_bytes = std::size_t{4} << 20;
  cfg.buffer_bytes_given = true;
  {
    d::location loc(tr, 0, cfg);
    d::t_location = &loc;
    {
      sink s;
      std::vector<std::uint8_t> const bytes((std::size_t{3} << 20) / 4, 7);  // a buffer of 1 MiB each
      for (int i = 0; i < 24; ++i) armi::async_rmi(1, s.get_rmi_handle(), &sink::take, bytes);
      CHECK(tr.asks == std::vector<returning_transport::ask>{{true, 17}});
      tr.give_back(24);
      armi::rmi_poll();
    }
    d::t_location = nullptr;
  }
}

namespace {

// Location 0 under auto sends `requests` to location 1, slowly (a buffer of
// 64 fills in about 64 us, and auto doubles k for one filled in under half
// its target, 2.5 us at least to another process and 20 us in this one, so
// only the buffers in flight can grow k); returns its stats.
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
