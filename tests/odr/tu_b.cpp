// test_odr, translation unit B: the same RMIs as tu_a.cpp on the shared
// ledger, an object only this unit defines, and main.
#include "odr/shared.hpp"

#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

namespace odr {

namespace {

class local_counter : public armi::p_object {  // same name as tu_a.cpp's, another class
 public:
  int bump(int by) { return m_count += 2 * by; }

 private:
  int m_count = 0;
};

class doubler : public armi::p_object {
 public:
  int twice_plus_id(int x) const { return 2 * x + static_cast<int>(armi::get_location_id()); }
};

// One per location (touched only by its own location thread).
thread_local std::unique_ptr<doubler> t_doubler;

}  // namespace

void make_b_object() {
  t_doubler = std::make_unique<doubler>();
}
void destroy_b_object() {
  t_doubler.reset();
}
armi::rmi_handle b_object_handle() {
  return t_doubler->get_rmi_handle();
}
int call_b_object(armi::location_id dest, int x) {
  return armi::sync_rmi(dest, b_object_handle(), &doubler::twice_plus_id, x);
}

int exercise_b(ledger& shared) {
  int failures = 0;
  auto const me = armi::get_location_id();
  auto const n = armi::get_num_locations();
  auto const h = shared.get_rmi_handle();
  local_counter lc;
  for (armi::location_id d = 0; d < n; ++d) {
    armi::async_rmi(d, h, &ledger::add, 1);
    armi::async_rmi(d, h, &ledger::add_record, record{"b" + std::to_string(me), {4, 5}});
    if (armi::sync_rmi(d, h, &ledger::where) != "ledger@" + std::to_string(d)) ++failures;
    if (armi::sync_rmi(d, lc.get_rmi_handle(), &local_counter::bump, 1) % 2 != 0) ++failures;
  }
  armi::rmi_fence();
  return failures;
}

}  // namespace odr

int main(int argc, char** argv) {
  int failures_total = 0;
  for (unsigned locations : {1u, 3u}) {
    armi::config cfg;
    cfg.locations = locations;
    cfg.aggregation = 4;
    std::atomic<int> failures{0};
    int const rc = armi::execute(cfg, [&failures] {
      odr::ledger shared;
      odr::make_b_object();
      armi::rmi_fence();
      failures += odr::exercise_a(shared);
      failures += odr::exercise_b(shared);
      auto const n = static_cast<int>(armi::get_num_locations());
      // Every location added 1 twice (once from each unit) to every ledger.
      if (shared.sum() != 2 * n) ++failures;
      // Records from both units, from every location.
      if (shared.records() != static_cast<std::size_t>(2 * n)) ++failures;
      odr::record const expect_a{"a0", {1, 2, 3}};
      if (!(shared.get("a0") == expect_a)) ++failures;
      odr::record const expect_b{"b0", {4, 5}};
      if (!(shared.get("b0") == expect_b)) ++failures;
      armi::rmi_fence();
      odr::destroy_b_object();
      armi::rmi_fence();
    });
    if (rc != 0 || failures != 0) {
      std::fprintf(stderr, "test_odr: %u locations: exit %d, %d failed checks\n", locations, rc,
                   failures.load());
      ++failures_total;
    }
  }
  // The options parser is an inline function used from this unit only; call
  // it too so its symbols are emitted here.
  int ac = argc;
  (void)armi::parse_options(ac, argv);
  if (failures_total == 0) std::printf("test_odr: ok\n");
  return failures_total == 0 ? 0 : 1;
}
