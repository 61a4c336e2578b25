// The runtime of a program built with ARMI_SEPARATE_COMPILATION=1: include
// this header in exactly one .cpp file of the program (that file, like every
// other, compiled with ARMI_SEPARATE_COMPILATION=1).  It defines
// armi::execute's runtime (runtime/run.hpp) once, out of line; the program's
// other translation units then neither parse nor compile the backends.
//
// By default (ARMI_SEPARATE_COMPILATION unset or 0) armi is header-only and
// this file is not needed.
#pragma once

// This file defines the runtime's out-of-line parts (ARMI_RUNTIME_BODIES),
// which the headers hold back from other translation units; they are only
// seen if no armi header was included before this one.
#ifdef ARMI_CONFIG_INCLUDED
#error "<armi/src.hpp> must be the first armi header of its .cpp file (it defines the runtime, which the other armi headers leave out)"
#endif
#define ARMI_RUNTIME_SOURCE 1
#include <armi/core/config.hpp>

#if !ARMI_SEPARATE_COMPILATION
#error "<armi/src.hpp> is for programs built with ARMI_SEPARATE_COMPILATION=1 in every translation unit; without it armi is header-only and needs no src.hpp"
#endif

#include <armi/runtime/run.hpp>
