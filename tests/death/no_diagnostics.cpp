// A program built with ARMI_DIAGNOSTICS=0 has no statistics, traces or
// watchdog (their hooks are compiled out, to measure what they cost when
// off): asking for one is an option error that says why; the rest runs.
//
// clang-format off
// CASE: stats | --armi-stats | armi: error: --armi-stats: this program was built with ARMI_DIAGNOSTICS=0
// CASE: stats_json | --armi-stats=json:x.json | armi: error: --armi-stats: this program was built with ARMI_DIAGNOSTICS=0
// CASE: trace | --armi-trace=x.json | armi: error: --armi-trace: this program was built with ARMI_DIAGNOSTICS=0
// CASE: watchdog | --armi-watchdog=2 | armi: error: --armi-watchdog: this program was built with ARMI_DIAGNOSTICS=0
// CASE: env | ARMI_STATS=1 --armi-locations=2 | armi: error: ARMI_STATS=1: --armi-stats: this program was built with ARMI_DIAGNOSTICS=0
// RUN: runs | --armi-locations=3 --armi-watchdog=0 --armi-stats=off | no_diagnostics: 3 locations, sum 3
// clang-format on
// armi-test: header-only (the option check must see ARMI_DIAGNOSTICS=0)
#define ARMI_DIAGNOSTICS 0
#include <armi/armi.hpp>

#include <cstdio>
#include <functional>

namespace {

class counter : public armi::p_object {
 public:
  void add(int v) { m_sum += v; }
  int sum() const { return m_sum; }

 private:
  int m_sum = 0;
};

}  // namespace

int main(int argc, char** argv) {
  return armi::execute(argc, argv, [] {
    counter c;
    armi::async_rmi(0, c.get_rmi_handle(), &counter::add, 1);
    armi::rmi_fence();
    int const sum = armi::allreduce_rmi(c.get_rmi_handle(), &counter::sum, std::plus<>{});
    if (armi::get_location_id() == 0) std::printf("no_diagnostics: %u locations, sum %d\n", armi::get_num_locations(), sum);
  });
}
