// The watchdog's report (core/watchdog.hpp): what each location is inside,
// innermost first, and the wait-for cycle among the innermost waits.  The
// firing itself is tested end to end in tests/death/watchdog.cpp.
#include <armi/armi.hpp>
#include <armi/core/watchdog.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {

using armi::detail::wait_kind;
using armi::detail::wait_record;
using armi::detail::wait_scope;

struct records {
  explicit records(std::size_t n) : all(n) {
    for (auto& r : all) ptrs.push_back(&r);
  }
  std::vector<wait_record> all;
  std::vector<wait_record*> ptrs;
};

// A watchdog that never fires during the test (a day's limit).
std::string report_of(records& r, armi::location_id first = 0) {
  armi::detail::watchdog w(86400, first, r.ptrs);
  return w.report(armi::detail::steady_ns());
}

}  // namespace

TEST_CASE("watchdog report: each location's waits, innermost first", "[watchdog]") {
  records r(3);
  wait_scope fence(r.ptrs[0], wait_kind::fence, armi::detail::no_peer, nullptr, 4);
  wait_scope sync(r.ptrs[0], wait_kind::sync_rmi, 2, typeid(int (std::string::*)() const).name());
  wait_scope get(r.ptrs[2], wait_kind::future_get, 1);
  std::string const s = report_of(r);
  INFO(s);
  CHECK(s.find("location 0: sync_rmi to location 2 (int (std::") != std::string::npos);
  CHECK(s.find(", inside rmi_fence (fence #5)") != std::string::npos);
  CHECK(s.find("location 1: not waiting in armi") != std::string::npos);
  CHECK(s.find("location 2: future::get to location 1 for ") != std::string::npos);
  CHECK(s.find("cycle") == std::string::npos);
}

TEST_CASE("watchdog report: a wait-for cycle among the innermost waits", "[watchdog]") {
  records r(4);
  // 10 -> 12 -> 13 -> 10 (locations 10..13 of a process); 11 waits on 13, outside the cycle.
  wait_scope a(r.ptrs[0], wait_kind::sync_rmi, 12);
  wait_scope b(r.ptrs[1], wait_kind::future_get, 13);
  wait_scope c(r.ptrs[2], wait_kind::collective, 13);
  wait_scope d(r.ptrs[3], wait_kind::fence);
  wait_scope d_inner(r.ptrs[3], wait_kind::sync_rmi, 10);
  std::string const s = report_of(r, 10);
  INFO(s);
  CHECK(s.find("location 12: a collective led by location 13") != std::string::npos);
  CHECK(s.find("wait-for cycle: 10 -> 12 -> 13 -> 10") != std::string::npos);
}

TEST_CASE("watchdog report: waits on other processes' locations make no cycle", "[watchdog]") {
  records r(2);
  wait_scope a(r.ptrs[0], wait_kind::sync_rmi, 1);
  wait_scope b(r.ptrs[1], wait_kind::sync_rmi, 7);  // not in this process
  std::string const s = report_of(r);
  INFO(s);
  CHECK(s.find("location 1: sync_rmi to location 7") != std::string::npos);
  CHECK(s.find("cycle") == std::string::npos);
}

TEST_CASE("watchdog report: a wait ends with its scope; deep nesting is counted", "[watchdog]") {
  records r(1);
  {
    wait_scope a(r.ptrs[0], wait_kind::rmi_wait);
    CHECK(report_of(r).find("location 0: rmi_wait for") != std::string::npos);
  }
  CHECK(report_of(r).find("location 0: not waiting in armi") != std::string::npos);
  std::vector<std::unique_ptr<wait_scope>> deep;
  for (int i = 0; i < 6; ++i) deep.push_back(std::make_unique<wait_scope>(r.ptrs[0], wait_kind::sync_rmi, 0));
  std::string const s = report_of(r);
  INFO(s);
  CHECK(s.find(", and 2 more") != std::string::npos);
  CHECK(r.all[0].progress.load() == 1);  // the first scope, and nothing else, has ended
  CHECK(s.find("cycle") == std::string::npos);  // waiting on oneself is no deadlock
}

TEST_CASE("watchdog report: other processes' waits close a cycle across processes", "[watchdog]") {
  records r(2);
  wait_scope a(r.ptrs[0], wait_kind::sync_rmi, 1);
  wait_scope b(r.ptrs[1], wait_kind::future_get, 7);  // location 7 is in another process
  armi::detail::watchdog w(86400, 0, r.ptrs);
  auto const now = armi::detail::steady_ns();
  CHECK(w.report(now).find("cycle") == std::string::npos);
  CHECK(w.report(now, {{7, 9}, {9, 4}}).find("cycle") == std::string::npos);  // 7 -> 9 -> 4: open
  std::string const s = w.report(now, {{9, 0}, {7, 9}});
  INFO(s);
  CHECK(s.find("wait-for cycle: 0 -> 1 -> 7 -> 9 -> 0") != std::string::npos);
  CHECK(w.innermost_waits() == armi::detail::wait_edges{{0, 1}, {1, 7}});
}
