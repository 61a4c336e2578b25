// armi_compile_bloat_separate: armi's runtime, compiled once for the program's
// other translation units (all built with ARMI_SEPARATE_COMPILATION=1).
#include <armi/src.hpp>
