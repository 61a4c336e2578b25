// What this build of armi contains: its version and the backends compiled in
// (armi::has_mpi_backend, ...).  Defined in the core layer, which backends
// may include; this is its public name.
#pragma once

#include <armi/core/config.hpp>
