// A base for the transports of unit tests that drive locations by hand, on
// the test's own thread: `n` locations, all in one process or each in its own
// (`separate`); nothing arrives and nothing comes back unless a test
// overrides receive/release/reclaim; no idle waits; no fences (a fence needs
// every location running, which one thread cannot do: it throws).
#pragma once

#include <armi/armi.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace armi_test {

class hand_transport : public armi::detail::transport {
 public:
  using location_id = armi::location_id;
  using buffer = armi::detail::buffer;
  using send_path = armi::detail::send_path;

  hand_transport(char const* test, location_id n, bool separate) : m_test(test), m_n(n), m_separate(separate) {}
  hand_transport(hand_transport const&) = delete;
  hand_transport& operator=(hand_transport const&) = delete;

  location_id size() const override { return m_n; }
  location_id process_first(location_id self) const override { return m_separate ? self : 0; }
  location_id process_locations() const override { return m_separate ? 1 : m_n; }

  buffer* receive(location_id) override { return nullptr; }
  void release(location_id, buffer*, buffer*) override {}
  buffer* reclaim(location_id) override { return nullptr; }

  std::uint32_t wake_token(location_id) const override { return 0; }
  bool idle_wait(location_id, std::uint32_t, armi::detail::answer_watch) override { return false; }
  std::uint32_t empty_polls_before_yield() const override { return 1u << 20; }
  void sum_contribute(location_id, std::uint64_t, std::uint64_t const (&)[2]) override { no_fence(); }
  bool sum_ready(std::uint64_t) const override { no_fence(); }
  void sum_result(std::uint64_t, std::uint64_t (&)[2]) const override { no_fence(); }

 private:
  [[noreturn]] void no_fence() const { throw std::logic_error(std::string(m_test) + ": no rmi_fence in this test"); }
  char const* m_test;
  location_id m_n;
  bool m_separate;
};

}  // namespace armi_test
