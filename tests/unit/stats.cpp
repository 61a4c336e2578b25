// --armi-stats: the counters armi keeps per location, as JSON
// (--armi-stats=json:FILE) and as the stderr table.  The run below knows
// exactly what it sent, so every count in the file can be checked.
#include "support/test_support.hpp"

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

}  // namespace

TEST_CASE("--armi-stats=json:FILE writes every location's counters", "[stats]") {
  std::string const path = temp_path("stats");
  armi::config cfg;
  cfg.locations = 3;
  cfg.aggregation = 8;
  cfg.stats = true;
  cfg.stats_json = path;
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
}

TEST_CASE("--armi-stats=json: to a file that cannot be written fails the run, clearly", "[stats]") {
  armi::config cfg;
  cfg.locations = 2;
  cfg.stats = true;
  cfg.stats_json = "/nonexistent-dir/armi/stats.json";
  int const code = armi::execute(cfg, [] { armi::rmi_fence(); });
  CHECK(code == 1);
}
