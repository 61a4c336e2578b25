// The runtime of a program built with ARMI_SEPARATE_COMPILATION=1: include
// this header in exactly one .cpp file of the program (that file, like every
// other, compiled with ARMI_SEPARATE_COMPILATION=1).  It defines
// armi::execute's runtime (runtime/run.hpp) once, out of line; the program's
// other translation units then neither parse nor compile the backends.
//
// By default (ARMI_SEPARATE_COMPILATION unset or 0) armi is header-only and
// this file is not needed.
#pragma once

#include <armi/core/config.hpp>

#if !ARMI_SEPARATE_COMPILATION
#error "<armi/src.hpp> is for programs built with ARMI_SEPARATE_COMPILATION=1 in every translation unit; without it armi is header-only and needs no src.hpp"
#endif

#include <armi/runtime/run.hpp>
