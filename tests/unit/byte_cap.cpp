// The byte cap of aggregation buffers: to a location in another process it is
// the transport's preference (mpi and mixed: MPI's eager limit) unless the
// user set --armi-buffer-bytes, to one in this process always the option's.
// Checked on the buffers a location hands its transport, with aggregation
// high enough that only the byte cap fills them.
#include "support/test_support.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

namespace {

namespace d = armi::detail;
using armi::location_id;

class counter : public armi::p_object {
 public:
  void add(std::uint64_t v) { m_sum += v; }

 private:
  std::uint64_t m_sum = 0;
};

// Two locations, each its own process; keeps what location 0 sends.
class keeping_transport final : public d::transport {
 public:
  explicit keeping_transport(std::size_t remote_bytes) : m_remote_bytes(remote_bytes) {}
  keeping_transport(keeping_transport const&) = delete;
  keeping_transport& operator=(keeping_transport const&) = delete;
  ~keeping_transport() override {
    for (d::buffer* b : sent) delete b;
  }

  location_id size() const override { return 2; }
  location_id process_first(location_id self) const override { return self; }
  location_id process_locations() const override { return 1; }
  std::size_t remote_buffer_bytes() const override { return m_remote_bytes; }

  void send(location_id, d::buffer* b) override { sent.push_back(b); }
  d::buffer* receive(location_id) override { return nullptr; }
  void release(location_id, d::buffer*, d::buffer*) override {}
  d::buffer* reclaim(location_id) override { return nullptr; }
  std::uint32_t wake_token(location_id) const override { return 0; }
  bool idle_wait(location_id, std::uint32_t) override { return false; }
  std::uint32_t empty_polls_before_yield() const override { return 1u << 20; }
  void sum_contribute(location_id, std::uint64_t, std::uint64_t const (&)[2]) override { no_fence(); }
  bool sum_ready(std::uint64_t) const override { no_fence(); }
  void sum_result(std::uint64_t, std::uint64_t (&)[2]) const override { no_fence(); }

  std::vector<d::buffer*> sent;

 private:
  [[noreturn]] static void no_fence() { throw std::logic_error("byte_cap: no rmi_fence in this test"); }
  std::size_t m_remote_bytes;
};

// The sizes of the full buffers location 0 sends to location 1 (in another
// process) for 3000 8-byte async_rmi: few enough that flow control never
// waits for buffers to come back.
std::vector<std::size_t> full_buffer_sizes(armi::config const& cfg, std::size_t transport_bytes) {
  keeping_transport tr(transport_bytes);
  std::vector<std::size_t> sizes;
  {
    d::location loc(tr, 0, cfg);
    d::t_location = &loc;
    {
      counter c;
      for (std::uint64_t i = 0; i < 3000; ++i) armi::async_rmi(1, c.get_rmi_handle(), &counter::add, i);
    }
    d::t_location = nullptr;
  }
  for (d::buffer const* b : tr.sent) sizes.push_back(b->size);
  return sizes;
}

armi::config high_aggregation() {
  armi::config cfg;
  cfg.aggregation = 1 << 20;
  return cfg;
}

}  // namespace

TEST_CASE("buffers to another process take the transport's byte cap unless the user gave one", "[byte_cap]") {
  constexpr std::size_t request = 24;  // 16-byte header + 8-byte payload
  SECTION("the transport's cap, by default") {
    auto const sizes = full_buffer_sizes(high_aggregation(), 8192);
    REQUIRE(sizes.size() >= 8);
    for (std::size_t s : sizes) {
      CHECK(s <= 8192);
      CHECK(s > 8192 - request);
    }
  }
  SECTION("the option's, when the transport has no preference") {
    auto const sizes = full_buffer_sizes(high_aggregation(), 0);
    REQUIRE(sizes.size() >= 2);
    for (std::size_t s : sizes) {
      CHECK(s <= 32768);
      CHECK(s > 32768 - request);
    }
  }
  SECTION("the option's, when the user gave one") {
    armi::config cfg = high_aggregation();
    cfg.buffer_bytes = 16384;
    cfg.buffer_bytes_given = true;
    auto const sizes = full_buffer_sizes(cfg, 8192);
    REQUIRE(sizes.size() >= 4);
    for (std::size_t s : sizes) {
      CHECK(s <= 16384);
      CHECK(s > 16384 - request);
    }
  }
}
