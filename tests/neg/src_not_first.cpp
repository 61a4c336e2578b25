// <armi/src.hpp> defines the runtime's out-of-line parts, which the other
// armi headers hold back under separate compilation; included after another
// armi header it would find them already left out, so it must come first.
// (Compiles with -DARMI_NEG_CONTROL, which includes it first.)
// EXPECT: must be the first armi header of its \.cpp file
#define ARMI_SEPARATE_COMPILATION 1
#ifndef ARMI_NEG_CONTROL
#include <armi/rmi.hpp>
#endif
#include <armi/src.hpp>
