// The two record forms of an aggregation buffer (runtime/buffer.hpp): a
// request whose header equals the one before it in the buffer goes as a
// repeat record (4-byte marker + payload padded to 4); any other as a full
// record at a multiple of 8, after a zero pad word where needed.  Checked on
// the bytes location 0 hands its transport, then by executing them at
// location 1: every request runs, in order, with its own argument.
// (decoder_fuzz damages these forms; this pins the layout.)
#include "support/holding_transport.hpp"
#include "support/test_support.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace d = armi::detail;
using armi::location_id;

std::vector<std::string> g_ran;

class recorder : public armi::p_object {
 public:
  explicit recorder(std::string name) : m_name(std::move(name)) {}
  void put(std::uint64_t v) { g_ran.push_back(m_name + ".put " + std::to_string(v)); }
  void put_int(int v) { g_ran.push_back(m_name + ".put_int " + std::to_string(v)); }

 private:
  std::string m_name;
};

std::uint32_t word_at(d::buffer const& b, std::size_t at) {
  std::uint32_t w;
  std::memcpy(&w, b.data.get() + at, sizeof w);
  return w;
}

}  // namespace

TEST_CASE("a request with the header of the one before it is a repeat record", "[wire]") {
  armi_test::holding_transport tr("wire_format", 2, false);
  armi::config cfg;
  cfg.aggregation = 1000;  // one buffer, sent by the flush below
  std::unique_ptr<d::location> loc[2];
  std::unique_ptr<recorder> a[2], b[2];
  for (location_id i = 0; i < 2; ++i) loc[i] = std::make_unique<d::location>(tr, i, cfg);
  for (location_id i = 0; i < 2; ++i) {
    d::t_location = loc[i].get();
    a[i] = std::make_unique<recorder>("a");  // the same handles on both
    b[i] = std::make_unique<recorder>("b");
  }
  g_ran.clear();

  d::t_location = loc[0].get();
  auto const ha = a[0]->get_rmi_handle(), hb = b[0]->get_rmi_handle();
  armi::async_rmi(1, ha, &recorder::put, std::uint64_t{1});  // full, [0, 24)
  armi::async_rmi(1, ha, &recorder::put, std::uint64_t{2});  // repeat, [24, 36)
  armi::async_rmi(1, ha, &recorder::put, std::uint64_t{3});  // repeat, [36, 48)
  armi::async_rmi(1, hb, &recorder::put, std::uint64_t{4});  // another object: full, [48, 72)
  armi::async_rmi(1, hb, &recorder::put, std::uint64_t{5});  // repeat, [72, 84)
  armi::async_rmi(1, hb, &recorder::put_int, 6);             // another method: pad [84, 88), full [88, 112)
  armi::async_rmi(1, hb, &recorder::put_int, 7);             // repeat, [112, 120)
  armi::async_rmi(1, ha, &recorder::put, std::uint64_t{8});  // full, [120, 144)
  loc[0]->flush(1, d::flush_cause::flush);
  d::t_location = nullptr;

  REQUIRE(tr.sent.size() == 1);
  d::buffer& sent = *tr.sent.front().b;
  CHECK(sent.count == 8);
  REQUIRE(sent.size == 144);
  for (std::size_t at : {24u, 36u, 72u, 112u}) CHECK(word_at(sent, at) == d::repeat_marker);
  CHECK(word_at(sent, 84) == 0);
  for (std::size_t at : {0u, 48u, 88u, 120u}) {
    d::request_header h;
    std::memcpy(&h, sent.data.get() + at, sizeof h);
    CHECK(h.handler != d::repeat_marker);
    CHECK(h.handle_index == (at == 0 || at == 120 ? ha.index : hb.index));
    CHECK(h.payload_bytes == (at == 88 ? 4u : 8u));
  }

  tr.inbox[1].push_back(tr.sent.front().b);
  tr.sent.clear();
  d::t_location = loc[1].get();
  loc[1]->poll_once();
  d::t_location = nullptr;
  CHECK(g_ran == std::vector<std::string>{"a.put 1", "a.put 2", "a.put 3", "b.put 4", "b.put 5", "b.put_int 6",
                                          "b.put_int 7", "a.put 8"});

  // The executed buffer goes home (a location gives buffers back after a
  // run of empty polls), so location 0 ends with nothing in flight.
  for (int round = 0; round < 40; ++round)
    for (location_id i = 0; i < 2; ++i) {
      d::t_location = loc[i].get();
      loc[i]->poll();
    }
  for (location_id i = 0; i < 2; ++i) {
    d::t_location = loc[i].get();
    a[i].reset();
    b[i].reset();
  }
  d::t_location = nullptr;
}
