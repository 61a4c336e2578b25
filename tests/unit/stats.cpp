// --armi-stats: the counters armi keeps per location, as JSON
// (--armi-stats=json:FILE) and as the stderr table.  The run below knows
// exactly what it sent, so every count in the file can be checked.
#include "support/test_support.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

class sink : public armi::p_object {
 public:
  void take(std::uint64_t v) { m_sum += v; }
  std::uint64_t sum() const { return m_sum; }

 private:
  std::uint64_t m_sum = 0;
};

std::string slurp(std::string const& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The JSON text of the object that follows "key": in `text`, from `from` on.
std::string field(std::string const& text, std::string const& key, std::size_t from = 0) {
  std::size_t const k = text.find("\"" + key + "\":", from);
  if (k == std::string::npos) return {};
  std::size_t b = k + key.size() + 3;
  while (b < text.size() && text[b] == ' ') ++b;
  std::size_t e = b;
  int depth = 0;
  for (; e < text.size(); ++e) {
    char const c = text[e];
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') {
      if (depth == 0) break;
      if (--depth == 0) {
        ++e;
        break;
      }
    }
    if (c == ',' && depth == 0) break;
  }
  return text.substr(b, e - b);
}

std::string temp_path(char const* stem) {
  return std::string("/tmp/armi_test_") + stem + "_" + std::to_string(::getpid()) + ".json";
}

// A run of `locations` locations at `aggregation` that writes its stats as JSON to path.
armi::config json_stats(std::uint32_t locations, std::size_t aggregation, std::string const& path) {
  armi::config cfg;
  cfg.locations = locations;
  cfg.aggregation = aggregation;
  cfg.stats = true;
  cfg.stats_json = path;
  return cfg;
}

}  // namespace

TEST_CASE("--armi-stats=json:FILE writes every location's counters", "[stats]") {
  std::string const path = temp_path("stats");
  armi::config const cfg = json_stats(3, 8, path);
  constexpr std::uint64_t per_destination = 40;  // 5 full buffers of 8 to each location
  int const code = armi::execute(cfg, [] {
    sink s;
    for (armi::location_id d = 0; d < armi::get_num_locations(); ++d)
      for (std::uint64_t i = 0; i < per_destination; ++i) armi::async_rmi(d, s.get_rmi_handle(), &sink::take, i);
    armi::rmi_fence();
    (void)armi::sync_rmi(0, s.get_rmi_handle(), &sink::sum);
    armi::rmi_fence();
  });
  REQUIRE(code == 0);
  std::string const text = slurp(path);
  std::remove(path.c_str());
  REQUIRE_FALSE(text.empty());
  CHECK(field(text, "backend") == "\"threads\"");
  CHECK(field(text, "locations") == "3");
  std::string const total = field(text, "total");
  CHECK(field(field(total, "sent"), "async") == std::to_string(3 * 3 * per_destination));
  CHECK(field(field(total, "executed"), "async") == std::to_string(3 * 3 * per_destination));
  CHECK(field(field(total, "sent"), "sync") == "3");
  // 45 buffers of exactly 8 async requests; the sync requests and replies travel
  // in buffers of 1 or 2.
  std::string const hist = field(total, "requests_per_buffer");
  CHECK(field(hist, "8-15") == "45");
  CHECK(field(hist, "16-31") == "0");
  CHECK(field(field(total, "flushes_by_cause"), "full") == "45");
  CHECK(field(field(total, "flushes_by_cause"), "delay") == "0");
  CHECK(field(field(total, "auto"), "destinations") == "0");  // fixed factors: auto decided nothing
  // 15 buffers per location, far from the flow-control limit.
  CHECK(field(field(total, "flow_control"), "waits") == "0");
  CHECK(field(field(total, "flow_control"), "asks") == "0");
  CHECK(field(total, "fences") == "9");  // two in the body and execute's final one, on each location
  // Three per-location objects, each with its own counts.
  std::string const per = field(text, "per_location");
  std::size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    at = per.find("\"sent\":", at);
    REQUIRE(at != std::string::npos);
    CHECK(field(field(per, "sent", at), "async") == std::to_string(3 * per_destination));
    ++at;
  }
  CHECK(per.find("\"sent\":", at) == std::string::npos);
  CHECK_FALSE(field(total, "seconds_in_fence").empty());
  // Executions by target method type (kind and the method's type), exactly
  // the two methods called; location 0 ran every sync_rmi.
  std::string const async_take = "async: void ((anonymous namespace)::sink::*)(unsigned long)";
  std::string const sync_sum = "sync: unsigned long ((anonymous namespace)::sink::*)() const";
  std::string const by_method = field(total, "executed_by_method");
  CHECK(field(by_method, async_take) == std::to_string(3 * 3 * per_destination));
  CHECK(field(by_method, sync_sum) == "3");
  CHECK(std::count(by_method.begin(), by_method.end(), '"') == 4);  // those two keys, no other
  std::string const first = field(per, "executed_by_method");
  CHECK(field(first, async_take) == std::to_string(3 * per_destination));
  CHECK(field(first, sync_sum) == "3");
  std::string const second = field(per, "executed_by_method", per.find("executed_by_method") + 1);
  CHECK(field(second, async_take) == std::to_string(3 * per_destination));
  CHECK(field(second, sync_sum).empty());
}

TEST_CASE("--armi-stats counts a method constant's executions under the method's name", "[stats]") {
  std::string const path = temp_path("stats_constant");
  int const code = armi::execute(json_stats(3, 8, path), [] {
    sink s;
    for (armi::location_id d = 0; d < armi::get_num_locations(); ++d)
      for (std::uint64_t i = 0; i < 10; ++i) armi::async_rmi(d, s.get_rmi_handle(), armi::method<&sink::take>, i);
    for (std::uint64_t i = 0; i < 4; ++i) armi::async_rmi(0, s.get_rmi_handle(), &sink::take, i);
    armi::rmi_fence();
  });
  REQUIRE(code == 0);
  std::string const text = slurp(path);
  std::remove(path.c_str());
  std::string const by_method = field(field(text, "total"), "executed_by_method");
  CHECK(field(by_method, "async: &(anonymous namespace)::sink::take") == "90");
  CHECK(field(by_method, "async: void ((anonymous namespace)::sink::*)(unsigned long)") == "12");
  CHECK(std::count(by_method.begin(), by_method.end(), '"') == 4);  // those two keys, no other
}

TEST_CASE("--armi-stats=json: to a file that cannot be written fails the run, clearly", "[stats]") {
  armi::config const cfg = json_stats(2, armi::config{}.aggregation, "/nonexistent-dir/armi/stats.json");
  int const code = armi::execute(cfg, [] { armi::rmi_fence(); });
  CHECK(code == 1);
}

TEST_CASE("--armi-stats=json:FILE on sp2 holds the emulated network's counters, per node and in total",
          "[stats][sp2]") {
#if ARMI_HAS_BOOST_ASIO
  // In process mode every count crosses from a node's process to the parent.
  std::string const mode = GENERATE(as<std::string>{}, "threads", "process");
#else
  std::string const mode = "threads";
#endif
  INFO("--armi-sp2-mode=" << mode);
  std::string const path = temp_path("stats_sp2");
  armi::config cfg = json_stats(2, 4, path);
  cfg.sp2_mode = mode;
  cfg.backend = "sp2";
  cfg.backend_given = true;
  cfg.sp2.faults.drop = 0.2;  // lost packets: retransmissions to count
  cfg.sp2.faults.seed = 3;
  int const code = armi::execute(cfg, [] {
    sink s;
    for (std::uint64_t i = 0; i < 200; ++i)
      armi::async_rmi(1 - armi::get_location_id(), s.get_rmi_handle(), &sink::take, i);
    armi::rmi_fence();
  });
  REQUIRE(code == 0);
  std::string const text = slurp(path);
  std::remove(path.c_str());
  std::string const net = field(text, "sp2");
  REQUIRE_FALSE(net.empty());
  std::string const total = field(net, "total");
  std::string const per = field(net, "per_node");
  std::size_t const second = per.find("\"packets_sent\":", per.find("\"packets_sent\":") + 1);
  REQUIRE(second != std::string::npos);
  CHECK(per.find("\"packets_sent\":", second + 1) == std::string::npos);  // two nodes
  // The total is the sum of the nodes, for every counter the file has.
  for (char const* counter : {"packets_sent", "bytes_sent", "retransmissions", "duplicates_discarded", "stalls",
                              "injected_drops", "messages_sent"}) {
    INFO(counter);
    std::uint64_t const a = std::stoull(field(per, counter)), b = std::stoull(field(per, counter, second));
    CHECK(std::stoull(field(total, counter)) == a + b);
  }
  CHECK(std::stoull(field(total, "packets_sent")) > 0);
  CHECK(std::stoull(field(total, "injected_drops")) > 0);
  CHECK(std::stoull(field(total, "retransmissions")) > 0);
  CHECK(std::stod(field(net, "emulated_us")) > 0);
  CHECK(field(net, "emulated_us") == field(total, "emulated_us"));
  std::string const async_take = "async: void ((anonymous namespace)::sink::*)(unsigned long)";
  CHECK(field(field(field(text, "total"), "executed_by_method"), async_take) == "400");
}

TEST_CASE("two threads streaming to each other without polling ask each other to serve, and lose nothing",
          "[stats][flow_control]") {
  // 200 full buffers of 16 each way and no poll: until one location has
  // more than half its limit (80) in flight nobody serves, so at least one
  // asks; every request still runs exactly once.
  std::string const path = temp_path("asks");
  armi::config const cfg = json_stats(2, 16, path);
  constexpr std::uint64_t per_location = 200 * 16;
  std::atomic<bool> sums_ok{true};
  int const code = armi::execute(cfg, [&] {
    sink s;
    armi::location_id const other = 1 - armi::get_location_id();
    for (std::uint64_t i = 1; i <= per_location; ++i) armi::async_rmi(other, s.get_rmi_handle(), &sink::take, i);
    armi::rmi_fence();
    if (s.sum() != per_location * (per_location + 1) / 2) sums_ok = false;
    armi::rmi_fence();
  });
  REQUIRE(code == 0);
  CHECK(sums_ok);
  std::string const text = slurp(path);
  std::remove(path.c_str());
  std::string const flow = field(field(text, "total"), "flow_control");
  REQUIRE_FALSE(flow.empty());
  CHECK(std::stoull(field(flow, "asks")) >= 1);
  CHECK(field(field(text, "total"), "executed").find("\"async\": " + std::to_string(2 * per_location)) !=
        std::string::npos);
}
