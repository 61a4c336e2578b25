// armi's runtime for the test programs, compiled once (armi_test_runtime):
// they are built with ARMI_SEPARATE_COMPILATION=1 (see tests/CMakeLists.txt).
#include <armi/src.hpp>
