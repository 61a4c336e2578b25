// test_odr, translation unit A: RMIs to the shared ledger (the same template
// instantiations as tu_b.cpp issues) and to an object defined only in tu_b.cpp.
#include "odr/shared.hpp"

#include <functional>
#include <string>

namespace odr {

namespace {

// A class local to this translation unit with the same shape as tu_b.cpp's.
class local_counter : public armi::p_object {
 public:
  int bump(int by) { return m_count += by; }

 private:
  int m_count = 0;
};

}  // namespace

int exercise_a(ledger& shared) {
  int failures = 0;
  auto const me = armi::get_location_id();
  auto const n = armi::get_num_locations();
  auto const h = shared.get_rmi_handle();
  local_counter lc;
  for (armi::location_id d = 0; d < n; ++d) {
    armi::async_rmi(d, h, &ledger::add, 1);
    armi::async_rmi(d, h, &ledger::add_record, record{"a" + std::to_string(me), {1, 2, 3}});
    if (armi::sync_rmi(d, h, &ledger::where) != "ledger@" + std::to_string(d)) ++failures;
    if (armi::sync_rmi(d, lc.get_rmi_handle(), &local_counter::bump, 0) < 0) ++failures;
    if (call_b_object(d, 5) != 5 * 2 + static_cast<int>(d)) ++failures;  // code from tu_b
  }
  armi::rmi_fence();
  int const total = armi::reduce_rmi(h, &ledger::sum, std::plus<>{});
  (void)total;
  armi::rmi_fence();
  return failures;
}

}  // namespace odr
