// armi's runtime, compiled once into the static library that armi::armi
// (armi_runtime) and armi::mpi (armi_runtime_mpi) link: a program's
// translation units, built with ARMI_SEPARATE_COMPILATION=1 by those
// targets, then parse none of the backends (docs/guide/compile-time.md).
#include <armi/src.hpp>
