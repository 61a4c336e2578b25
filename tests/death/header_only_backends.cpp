// A header-only program compiles the sp2 emulator only when asked for
// (ARMI_HAS_SP2=1, core/config.hpp): without it, --armi-backend=sp2 is an
// option error that says how to get it, and the threads backend runs.
//
// clang-format off
// CASE: sp2 | --armi-backend=sp2 | armi: error: --armi-backend=sp2: this program was built header-only without the sp2 emulator .link armi::armi, or build with -DARMI_HAS_SP2=1. .available: threads
// CASE: sp2_env | ARMI_BACKEND=sp2 --armi-locations=2 | armi: error: ARMI_BACKEND=sp2: --armi-backend=sp2: this program was built header-only without the sp2 emulator
// RUN: threads | --armi-locations=2 | header_only_backends: ran on 2 locations; sp2 compiled in: no
// clang-format on
// armi-test: header-only (the default this test checks)
#include <armi/armi.hpp>

#include <cstdio>

static_assert(!armi::has_sp2_backend && !armi::has_sp2_process_mode);

int main(int argc, char** argv) {
  return armi::execute(argc, argv, [] {
    armi::rmi_fence();
    if (armi::get_location_id() == 0)
      std::printf("header_only_backends: ran on %u locations; sp2 compiled in: %s\n", armi::get_num_locations(),
                  armi::has_sp2_backend ? "yes" : "no");
  });
}
