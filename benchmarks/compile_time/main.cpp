// Compile-time bloat test: the program that links the ARMI_BLOAT_TUS
// generated translation units (bloat_tu<i>.cpp) and runs each one's RMIs
// once, so the target is also a working program.  What is watched is how
// long the target takes to build:
//
//   time cmake --build build --target armi_compile_bloat -j1
//
// Exit status: 0 if every TU's results were right, 1 otherwise.

#include <armi/armi.hpp>

#include <cstdio>

#define ARMI_BLOAT_TU_LIST(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

#define ARMI_BLOAT_DECLARE(i) int armi_bloat_##i();
ARMI_BLOAT_TU_LIST(ARMI_BLOAT_DECLARE)

int main(int argc, char** argv) {
  armi::config cfg;
  try {
    cfg = armi::parse_options(argc, argv);
  } catch (armi::option_error const& e) {
    std::fprintf(stderr, "armi: error: %s\n", e.what());
    return 2;
  }
  if (cfg.locations == 0) cfg.locations = 2;
  return armi::execute(cfg, []() -> int {
    int bad = 0;
#define ARMI_BLOAT_CALL(i) bad += armi_bloat_##i();
    ARMI_BLOAT_TU_LIST(ARMI_BLOAT_CALL)
    if (bad != 0) std::fprintf(stderr, "armi_compile_bloat: location %u: %d wrong results\n",
                               armi::get_location_id(), bad);
    return bad == 0 ? 0 : 1;
  });
}
