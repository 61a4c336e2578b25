// The byte cap of aggregation buffers: to a location in another process it is
// the transport's preference (mpi and mixed: MPI's eager limit) unless the
// user set --armi-buffer-bytes, to one in this process always the option's.
// Checked on the buffers a location hands its transport, with aggregation
// high enough that only the byte cap fills them.
#include "support/hand_transport.hpp"
#include "support/test_support.hpp"

#include <cstddef>
#include <cstdint>
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
class keeping_transport final : public armi_test::hand_transport {
 public:
  explicit keeping_transport(std::size_t remote_bytes)
      : hand_transport("byte_cap", 2, true), m_remote_bytes(remote_bytes) {}
  ~keeping_transport() override {
    for (d::buffer* b : sent) delete b;
  }

  std::size_t remote_buffer_bytes() const override { return m_remote_bytes; }
  d::send_path send(location_id, d::buffer* b) override {
    sent.push_back(b);
    return d::send_path::message;
  }

  std::vector<d::buffer*> sent;

 private:
  std::size_t m_remote_bytes;
};

// The sizes of the full buffers location 0 sends to location 1 (in another
// process) for 12000 8-byte async_rmi (a 24-byte record heads each buffer,
// a repeat record of 8 bytes a request follows it): few enough that flow
// control never waits for buffers to come back.
std::vector<std::size_t> full_buffer_sizes(armi::config const& cfg, std::size_t transport_bytes) {
  keeping_transport tr(transport_bytes);
  std::vector<std::size_t> sizes;
  {
    d::location loc(tr, 0, cfg);
    d::t_location = &loc;
    {
      counter c;
      for (std::uint64_t i = 0; i < 12000; ++i) armi::async_rmi(1, c.get_rmi_handle(), &counter::add, i);
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
  // The most room a request asks for: a full record (16-byte header +
  // 8-byte payload) after its padding.  A buffer is sent when the next
  // request might not fit, so a full one is within this of the cap.
  constexpr std::size_t request = d::request_bytes(8) + d::record_slack;
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
