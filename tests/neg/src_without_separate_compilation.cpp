// <armi/src.hpp> compiles the runtime out of line for a program built with
// ARMI_SEPARATE_COMPILATION=1; without the macro (header-only, where every
// file already has the runtime inline) including it is an error that says so.
// (Compiles with -DARMI_NEG_CONTROL, which sets the macro.)
// EXPECT: is for programs built with ARMI_SEPARATE_COMPILATION=1
#ifdef ARMI_NEG_CONTROL
#define ARMI_SEPARATE_COMPILATION 1
#endif
#include <armi/src.hpp>
