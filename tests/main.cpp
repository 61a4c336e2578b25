// Catch2 main for armi's tests: strips and parses the --armi-* options (they
// set the configuration every armi_test::run() uses), then hands the rest of
// the command line to Catch2.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "support/test_support.hpp"

#include <cstdio>

int main(int argc, char** argv) {
  try {
    armi_test::run_config() = armi::parse_options(argc, argv);
  } catch (armi::option_error const& e) {
    std::fprintf(stderr, "armi: error: %s\n", e.what());
    return 2;
  }
  return Catch::Session().run(argc, argv);
}
