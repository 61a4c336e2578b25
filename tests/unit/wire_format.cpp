// The two record forms of an aggregation buffer (core/wire.hpp): requests
// whose header equals the buffer's last full record go in a repeat record
// (a 4-byte word with their count, then their payloads back to back); any
// other as a full record at a multiple of 8, after zero padding where needed.  Checked on
// the bytes location 0 hands its transport, then by executing them at
// location 1: every request runs, in order, with its own argument.
// (decoder_fuzz damages these forms; this pins the layout.)  Routed, the
// hop records of a 3 x 3 grid, passed on and run, and damaged ones
// rejected at the hop; then randomly damaged routed buffers (flipped bytes,
// stray record words, cut short) passed through the grid: each stops with
// armi's message naming a malformed request, or decodes without one.  And the reply
// tag of a sync request: a tag that names an answer cell (answers.hpp) is
// accepted only from a location of the callee's own process whose
// transport keeps cells, and checked before the target runs.
#include "support/holding_transport.hpp"
#include "support/test_support.hpp"

#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define ARMI_TEST_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARMI_TEST_LSAN 1
#endif
#endif
#ifdef ARMI_TEST_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
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
  void put_byte(std::uint8_t v) { g_ran.push_back(m_name + ".put_byte " + std::to_string(v)); }
  void ping() { g_ran.push_back(m_name + ".ping"); }
  void put_text(std::string const& v) { g_ran.push_back(m_name + ".put_text " + v); }
  int answer(int v) {
    g_ran.push_back(m_name + ".answer " + std::to_string(v));
    return v + 1;
  }

 private:
  std::string m_name;
};

std::uint32_t word_at(d::buffer const& b, std::size_t at) {
  std::uint32_t w;
  std::memcpy(&w, b.data.get() + at, sizeof w);
  return w;
}

// armi's fatal exit, turned into an exception for the test.
struct fatal_stop {};
[[noreturn]] void throw_fatal_stop(int) { throw fatal_stop{}; }

// Runs f with stderr going to a temporary file; returns what it printed and
// whether f ended in armi's fatal exit.
template <class F>
std::pair<std::string, bool> fatal_output(F&& f) {
  std::fflush(stderr);
  std::FILE* tmp = std::tmpfile();
  REQUIRE(tmp != nullptr);
  int const saved = ::dup(STDERR_FILENO);
  ::dup2(::fileno(tmp), STDERR_FILENO);
  auto* const previous = d::fatal_hook.exchange(&throw_fatal_stop);
  bool stopped = false;
  try {
    f();
  } catch (fatal_stop const&) {
    stopped = true;
  }
  d::fatal_hook.store(previous);
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::string text;
  std::rewind(tmp);
  for (int c; (c = std::fgetc(tmp)) != EOF;) text.push_back(static_cast<char>(c));
  std::fclose(tmp);
  return {text, stopped};
}

// Polls both locations until executed buffers are back with their owners
// (a location gives buffers back after a run of empty polls).
void settle(std::unique_ptr<d::location> (&loc)[2]) {
  for (int round = 0; round < 40; ++round)
    for (location_id i = 0; i < 2; ++i) {
      d::t_location = loc[i].get();
      loc[i]->poll();
    }
  d::t_location = nullptr;
}

// Two locations on one transport, each with a recorder "a" (the same handle
// on both); finish() brings executed buffers home and destroys the recorders.
struct recorder_pair {
  std::unique_ptr<d::location> loc[2];
  std::unique_ptr<recorder> a[2];
  recorder_pair(d::transport& tr, armi::config const& cfg) {
    for (location_id i = 0; i < 2; ++i) loc[i] = std::make_unique<d::location>(tr, i, cfg);
    for (location_id i = 0; i < 2; ++i) {
      d::t_location = loc[i].get();
      a[i] = std::make_unique<recorder>("a");
    }
    d::t_location = nullptr;
    g_ran.clear();
  }
  void finish() {
    settle(loc);
    for (location_id i = 0; i < 2; ++i) {
      d::t_location = loc[i].get();
      a[i].reset();
    }
    d::t_location = nullptr;
  }
};

}  // namespace

TEST_CASE("requests with the header of the full record before them go in a repeat record", "[wire]") {
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
  armi::async_rmi(1, ha, &recorder::put, std::uint64_t{2});  // a repeat: its word at 24, payload [28, 36)
  armi::async_rmi(1, ha, &recorder::put, std::uint64_t{3});  // the same repeat, of 2 now: payload [36, 44)
  armi::async_rmi(1, hb, &recorder::put, std::uint64_t{4});  // another object: pad [44, 48), full [48, 72)
  armi::async_rmi(1, hb, &recorder::put, std::uint64_t{5});  // a repeat, [72, 84)
  armi::async_rmi(1, hb, &recorder::put_int, 6);             // another method: pad [84, 88), full [88, 112)
  armi::async_rmi(1, hb, &recorder::put_int, 7);             // a repeat, [112, 120)
  armi::async_rmi(1, ha, &recorder::put, std::uint64_t{8});  // full, [120, 144)
  loc[0]->flush(1, d::flush_cause::flush);
  d::t_location = nullptr;

  REQUIRE(tr.sent.size() == 1);
  d::buffer& sent = *tr.sent.front().b;
  CHECK(sent.count == 8);
  REQUIRE(sent.size == 144);
  CHECK(word_at(sent, 24) == d::repeat_word(2));
  CHECK(word_at(sent, 72) == d::repeat_word(1));
  CHECK(word_at(sent, 112) == d::repeat_word(1));
  CHECK(word_at(sent, 44) == 0);
  CHECK(word_at(sent, 84) == 0);
  for (std::size_t at : {0u, 48u, 88u, 120u}) {
    d::request_header h;
    std::memcpy(&h, sent.data.get() + at, sizeof h);
    CHECK(!d::is_repeat_word(h.handler));
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

  // The executed buffer goes home, so location 0 ends with nothing in flight.
  settle(loc);
  for (location_id i = 0; i < 2; ++i) {
    d::t_location = loc[i].get();
    a[i].reset();
    b[i].reset();
  }
  d::t_location = nullptr;
}

TEST_CASE("a repeat record holds up to 4096 requests, of any payload size", "[wire]") {
  armi_test::holding_transport tr("wire_format", 2, false);
  armi::config cfg;
  cfg.aggregation = 100000;  // one buffer, sent by the flush below
  cfg.buffer_bytes = std::size_t{1} << 20;
  cfg.buffer_bytes_given = true;
  recorder_pair pair(tr, cfg);
  auto& loc = pair.loc;
  auto& a = pair.a;
  std::vector<std::string> expected;

  d::t_location = loc[0].get();
  auto const h = a[0]->get_rmi_handle();
  constexpr std::uint32_t n = d::max_repeat_count + 5;
  for (std::uint32_t i = 0; i < n; ++i) {  // full [0, 24), a repeat of 4096, one of 4
    armi::async_rmi(1, h, &recorder::put, std::uint64_t{i});
    expected.push_back("a.put " + std::to_string(i));
  }
  std::size_t const bytes = 24 + 4 + 8 * std::size_t{d::max_repeat_count} + 4 + 8 * 4;
  for (std::uint8_t v : {1, 2, 3}) {  // 1-byte payloads: full, then a repeat of 2 that ends unaligned
    armi::async_rmi(1, h, &recorder::put_byte, v);
    expected.push_back("a.put_byte " + std::to_string(v));
  }
  std::size_t const bytes2 = d::align8(bytes) + 24 + 4 + 2;
  armi::async_rmi(1, h, &recorder::put_text, std::string("x"));  // not fixed-size: full, after zero bytes to a multiple of 8
  expected.push_back("a.put_text x");
  for (int i = 0; i < 3; ++i) {  // no payload: full, then a repeat of 2 with no bytes after its word
    armi::async_rmi(1, h, &recorder::ping);
    expected.push_back("a.ping");
  }
  loc[0]->flush(1, d::flush_cause::flush);
  d::t_location = nullptr;

  REQUIRE(tr.sent.size() == 1);
  d::buffer& sent = *tr.sent.front().b;
  CHECK(sent.count == n + 7);
  CHECK(word_at(sent, 24) == d::repeat_word(d::max_repeat_count));
  CHECK(word_at(sent, 28 + 8 * std::size_t{d::max_repeat_count}) == d::repeat_word(4));
  CHECK(word_at(sent, d::align8(bytes) + 24) == d::repeat_word(2));
  CHECK(word_at(sent, sent.size - 4) == d::repeat_word(2));  // the pings' repeat: the buffer's last word
  std::size_t const text_at = d::align8(bytes2);
  for (std::size_t at = bytes2; at < text_at; ++at) CHECK(sent.data[at] == std::byte{0});
  d::request_header text;
  std::memcpy(&text, sent.data.get() + text_at, sizeof text);
  CHECK(text.handle_index == h.index);

  tr.inbox[1].push_back(tr.sent.front().b);
  tr.sent.clear();
  d::t_location = loc[1].get();
  loc[1]->poll_once();
  d::t_location = nullptr;
  CHECK(g_ran == expected);
  pair.finish();
}

namespace {

// A holding transport that keeps answer cells for its locations (all in one process).
class celled_transport final : public armi_test::holding_transport {
 public:
  celled_transport() : holding_transport("wire_format", 2, false) {}
  d::answer_cell* answer_cells(location_id, location_id loc) override { return cells[loc]; }
  d::answer_cell cells[2][d::answer_cells_per_location];
};

struct tagged_outcome {
  std::string text;                 // what armi printed
  bool stopped;                     // ended in armi's fatal exit
  std::vector<std::string> ran;     // the targets that ran
};

// Location 0 sends location 1 two sync requests in one buffer: a genuine one
// (a reply tag) for answer(1), then answer(2) under `tag`; location 1 polls once.
tagged_outcome send_tagged(armi_test::holding_transport& tr, std::uint64_t tag) {
  armi::config cfg;
  cfg.aggregation = 1000;
  recorder_pair pair(tr, cfg);
  auto& loc = pair.loc;
  auto& a = pair.a;

  d::t_location = loc[0].get();
  auto const h = a[0]->get_rmi_handle();
  d::reply_state<int> state;
  d::send_call<d::rmi_kind::sync>(*loc[0], 1, h, &recorder::answer, loc[0]->replies().acquire(&state, nullptr), 1);
  d::send_call<d::rmi_kind::sync>(*loc[0], 1, h, &recorder::answer, tag, 2);
  loc[0]->flush(1, d::flush_cause::flush);
  d::t_location = nullptr;
  REQUIRE(tr.sent.size() == 1);
  tr.inbox[1].push_back(tr.sent.front().b);
  tr.sent.clear();

  auto [text, stopped] = fatal_output([&] {
    d::t_location = loc[1].get();
    loc[1]->poll_once();
  });
  tagged_outcome out{std::move(text), stopped, g_ran};

  pair.finish();
  for (auto& s : tr.sent) delete s.b;
  tr.sent.clear();
  return out;
}

void check_rejected(tagged_outcome const& o) {
  CHECK(o.stopped);
  CHECK(o.text.find("malformed request from location 0") != std::string::npos);
  CHECK(o.text.find("names an answer cell that location 0 does not have") != std::string::npos);
  CHECK(o.ran == std::vector<std::string>{"a.answer 1"});  // the damaged one did not run
}

}  // namespace

TEST_CASE("a sync request's tag names an answer cell only where the caller can have one", "[wire]") {
  // Hand transports keep no cells: locations in one process, or each in its own.
  for (bool const separate : {false, true}) {
    INFO("separate processes: " << separate);
    armi_test::holding_transport tr("wire_format", 2, separate);
    check_rejected(send_tagged(tr, d::answer_tag(0, 1)));
  }
  // With cells: an index past them, and the number 0 (no call has it), are rejected.
  {
    celled_transport tr;
    INFO("cell index " << d::answer_cells_per_location);
    check_rejected(send_tagged(tr, d::answer_tag(d::answer_cells_per_location, 1)));
  }
  {
    celled_transport tr;
    INFO("call number 0");
    check_rejected(send_tagged(tr, d::answer_tag(0, 0)));
  }
  // A cell location 0 has: the answer is written there, numbered.
  {
    celled_transport tr;
    tagged_outcome const o = send_tagged(tr, d::answer_tag(3, 7));
    CHECK_FALSE(o.stopped);
    CHECK(o.ran == std::vector<std::string>{"a.answer 1", "a.answer 2"});
    d::answer_cell const& c = tr.cells[0][3];
    CHECK(c.answered.load() == 7);
    CHECK(c.status == d::answer_status::value);
    int v;
    std::memcpy(&v, c.value, sizeof v);
    CHECK(v == 3);
    for (std::uint32_t i = 0; i < d::answer_cells_per_location; ++i)
      if (i != 3) CHECK(tr.cells[0][i].answered.load() == 0);
  }
}

namespace {

// Nine locations on a 3 x 3 grid (--armi-routing=grid), each with a
// recorder named after it (the same handle on all).
struct routed_grid {
  static constexpr location_id n = 9;
  armi_test::holding_transport tr{"wire_format", n, false};
  std::unique_ptr<d::location> loc[n];
  std::unique_ptr<recorder> r[n];
  routed_grid() {
    armi::config cfg;
    cfg.aggregation = 1000;  // buffers leave by the flushes of the test
    cfg.routing = "grid";
    for (location_id i = 0; i < n; ++i) loc[i] = std::make_unique<d::location>(tr, i, cfg);
    for (location_id i = 0; i < n; ++i) {
      d::t_location = loc[i].get();
      r[i] = std::make_unique<recorder>("at" + std::to_string(i));
    }
    d::t_location = nullptr;
    g_ran.clear();
  }
  // Delivers everything sent, and flushes what the receivers passed on, until nothing moves.
  void deliver() {
    for (int round = 0; round < 4; ++round) {
      for (auto const& s : tr.sent) tr.inbox[s.dest].push_back(s.b);
      tr.sent.clear();
      for (location_id i = 0; i < n; ++i) {
        d::t_location = loc[i].get();
        loc[i]->poll_once();
        loc[i]->flush_all(d::flush_cause::flush);
      }
      d::t_location = nullptr;
    }
  }
  // A copy of b's bytes for `to`, as a transport that moves bytes delivers
  // them (from the receiver's own buffers: it deletes what it still holds).
  static d::buffer* copy_of(d::buffer const& b, std::size_t size, location_id to) {
    auto* c = new d::buffer;
    c->reserve(size);
    std::memcpy(c->data.get(), b.data.get(), size);
    c->size = size;
    c->count = b.count;
    c->source = b.source;
    c->owner = to;
    c->dest = b.dest;
    c->epoch = b.epoch;
    return c;
  }
  bool damaged = false;  // a location stopped at a malformed buffer: it is not polled again
  ~routed_grid() {
    for (location_id i = 0; i < n && !damaged; ++i) {
      d::t_location = loc[i].get();
      for (int k = 0; k < 40; ++k) loc[i]->poll();
    }
    for (location_id i = 0; i < n; ++i) {
      d::t_location = loc[i].get();
      r[i].reset();
    }
    d::t_location = nullptr;
  }
};

}  // namespace

TEST_CASE("routed: requests of random destinations travel as hop records, 12 bytes a hop", "[wire][routes]") {
  routed_grid g;
  // Location 0 is (0, 0); 4 is (1, 1) and 7 is (2, 1), both reached through 1 = (0, 1).
  d::t_location = g.loc[0].get();
  auto const h = g.r[0]->get_rmi_handle();
  armi::async_rmi(4, h, &recorder::put, std::uint64_t{1});  // route record [0, 8), full [8, 32)
  armi::async_rmi(7, h, &recorder::put, std::uint64_t{2});  // hop record [32, 44): row 2 of 1's column
  armi::async_rmi(4, h, &recorder::put, std::uint64_t{3});  // hop record [44, 56): row 1 of it
  armi::async_rmi(1, h, &recorder::put, std::uint64_t{4});  // hop record [56, 68): for 1 itself
  armi::async_rmi(1, h, &recorder::put, std::uint64_t{5});  // the same segment: a repeat [68, 80)
  g.loc[0]->flush(1, d::flush_cause::flush);
  d::t_location = nullptr;

  REQUIRE(g.tr.sent.size() == 1);
  REQUIRE(g.tr.sent.front().dest == 1);
  d::buffer const& sent = *g.tr.sent.front().b;
  REQUIRE(sent.size == 80);
  CHECK(d::is_route_word(word_at(sent, 0)));
  CHECK(word_at(sent, 32) == d::hop_word(1 | 2u << 2));
  CHECK(word_at(sent, 44) == d::hop_word(1 | 1u << 2));
  CHECK(word_at(sent, 56) == d::hop_word(0));
  CHECK(word_at(sent, 68) == d::repeat_word(1));

  SECTION("passed on and run where they belong, in order") {
    g.deliver();
    std::vector<std::string> const want{"at1.put 4", "at1.put 5", "at4.put 1", "at4.put 3", "at7.put 2"};
    std::vector<std::string> ran = g_ran;
    std::sort(ran.begin(), ran.end());  // locations run in turn; each one's order is checked below
    CHECK(ran == want);
    auto const before = [](std::string const& x, std::string const& y) {
      auto const at = [](std::string const& s) { return std::find(g_ran.begin(), g_ran.end(), s); };
      return at(x) < at(y);
    };
    CHECK(before("at4.put 1", "at4.put 3"));
    CHECK(before("at1.put 4", "at1.put 5"));
  }

  // The same bytes damaged, delivered as a copy (no header left over from the sender).
  auto const damaged = [&](std::size_t size, std::size_t at, std::uint32_t word) {
    d::buffer* c = routed_grid::copy_of(sent, size, 1);
    g.damaged = true;
    if (word != 0) std::memcpy(c->data.get() + at, &word, sizeof word);
    g.tr.inbox[1].push_back(c);
    auto const [text, stopped] = fatal_output([&] {
      d::t_location = g.loc[1].get();
      g.loc[1]->poll_once();
    });
    d::t_location = nullptr;
    CHECK(stopped);
    return text;
  };
  SECTION("a hop record with no full record before it") {
    std::string const text = damaged(sent.size, 0, d::hop_word(0));
    CHECK(text.find("a hop record with no request before it (not executed)") != std::string::npos);
    CHECK(g_ran.empty());
  }
  SECTION("a hop code that names no location") {
    std::string const text = damaged(sent.size, 32, d::hop_word(1 | 3u << 2));  // row 3 of a 3-row grid
    CHECK(text.find("a hop record whose code 13 names no route from location 0 (not executed)") != std::string::npos);
    CHECK(g_ran.empty());  // the request before it was passed on, not run here
  }
  SECTION("a hop record's payload past the end") {
    std::string const text = damaged(60, 0, 0);  // the hop record at 56 keeps 4 of its 8 bytes
    CHECK(text.find("payload runs past the end of the buffer (not executed)") != std::string::npos);
    CHECK(g_ran.empty());
  }
}

namespace {

// While alive, LeakSanitizer does not count what is allocated: a grid that
// armi's fatal error stopped in the middle of passing requests on is
// abandoned, as the real fatal exit would abandon the process, with buffers
// still on their way between its locations.
struct abandoned_allocations {
#ifdef ARMI_TEST_LSAN
  abandoned_allocations() { __lsan_disable(); }
  ~abandoned_allocations() { __lsan_enable(); }
#endif
};

}  // namespace

TEST_CASE("routed: randomly damaged routed buffers stop with a clear message or decode", "[wire][routes][fuzz]") {
  // The genuine bytes: location 0's buffer to 1 = (0, 1), carrying requests
  // of every form for 1 and for 4 and 7 below it (route, hop and repeat
  // records; payloads of 0, 1, 4, 8 and string bytes).
  std::vector<std::byte> genuine;
  std::uint32_t genuine_count = 0;
  std::uint64_t genuine_dest = 0;
  {
    routed_grid g;
    d::t_location = g.loc[0].get();
    auto const h = g.r[0]->get_rmi_handle();
    std::uint64_t state = 7;
    for (int i = 0; i < 40; ++i) {
      state = armi_test::mix64(state + static_cast<std::uint64_t>(i));
      location_id const dest = location_id{1} + 3 * static_cast<location_id>(state % 3);
      switch ((state >> 8) % 5) {
        case 0: armi::async_rmi(dest, h, &recorder::put, state); break;
        case 1: armi::async_rmi(dest, h, &recorder::put_int, static_cast<int>(state >> 40)); break;
        case 2: armi::async_rmi(dest, h, &recorder::put_byte, static_cast<std::uint8_t>(state >> 16)); break;
        case 3: armi::async_rmi(dest, h, &recorder::ping); break;
        default: armi::async_rmi(dest, h, &recorder::put_text, std::string((state >> 20) % 13, 'q')); break;
      }
    }
    g.loc[0]->flush(1, d::flush_cause::flush);
    d::t_location = nullptr;
    REQUIRE(g.tr.sent.size() == 1);
    d::buffer const& sent = *g.tr.sent.front().b;
    genuine.assign(sent.data.get(), sent.data.get() + sent.size);
    genuine_count = sent.count;
    genuine_dest = sent.dest;
    g.deliver();  // and the genuine bytes run everywhere without a message
    CHECK(g_ran.size() == 40);
  }

  std::uint64_t const cases = 1500 / ARMI_TEST_SCALE_DIVISOR;
  std::uint64_t stopped_cases = 0;
  std::vector<std::string> problems;
  for (std::uint64_t k = 0; k < cases && problems.size() < 5; ++k) {
    std::uint64_t r = armi_test::mix64(0xf00d + k);
    std::vector<std::byte> bytes = genuine;
    switch (r % 3) {
      case 0:  // one to three flipped bytes
        for (std::uint64_t f = 0; f <= (r >> 2) % 3; ++f) {
          r = armi_test::mix64(r);
          bytes[r % bytes.size()] ^= static_cast<std::byte>(1 + (r >> 32) % 255);
        }
        break;
      case 1: {  // a record word where it does not belong
        std::size_t const at = ((r >> 2) % (bytes.size() / 4)) * 4;
        std::uint32_t const words[] = {d::hop_word(static_cast<std::uint32_t>(r >> 20) & 0xfff),
                                       d::repeat_word(1 + static_cast<std::uint32_t>(r >> 40) % 8),
                                       static_cast<std::uint32_t>(r >> 32)};
        std::memcpy(bytes.data() + at, &words[(r >> 12) % 3], 4);
        break;
      }
      default:  // cut short
        bytes.resize(1 + (r >> 2) % (bytes.size() - 1));
        break;
    }
    [[maybe_unused]] abandoned_allocations const abandoned;
    routed_grid g;
    g.damaged = true;
    auto* c = new d::buffer;
    c->reserve(bytes.size());
    std::memcpy(c->data.get(), bytes.data(), bytes.size());
    c->size = bytes.size();
    c->count = genuine_count;
    c->source = 0;
    c->owner = 1;
    c->dest = static_cast<location_id>(genuine_dest);
    g.tr.inbox[1].push_back(c);
    auto const [text, stopped] = fatal_output([&] { g.deliver(); });
    d::t_location = nullptr;
    stopped_cases += stopped ? 1 : 0;
    bool const clear = text.find("malformed buffer from location") != std::string::npos ||
                       text.find("malformed request from location") != std::string::npos ||
                       text.find("could not be decoded") != std::string::npos;
    if (stopped && !clear) problems.push_back("case " + std::to_string(k) + ": unclear message: " + text);
    if (!stopped && !text.empty()) problems.push_back("case " + std::to_string(k) + ": went on after: " + text);
  }
  for (auto const& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());
  CHECK(stopped_cases > cases / 4);  // the damage is mostly seen, not mostly harmless
}
