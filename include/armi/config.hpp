// What this build of armi contains.  The only header with #if on the
// compiled-in backends; everything else asks these constants.
#pragma once

#if defined(ARMI_THREADS_OPENMP) && ARMI_THREADS_OPENMP
#define ARMI_HAS_OPENMP 1
#else
#define ARMI_HAS_OPENMP 0
#endif

// ARMI_WITH_MPI is defined by the armi::mpi CMake target.
#if defined(ARMI_WITH_MPI) && ARMI_WITH_MPI
#define ARMI_HAS_MPI 1
#else
#define ARMI_HAS_MPI 0
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ARMI_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define ARMI_CPU_RELAX() asm volatile("yield" ::: "memory")
#else
#define ARMI_CPU_RELAX() ((void)0)
#endif

namespace armi {

inline constexpr int version_major = 0;
inline constexpr int version_minor = 1;
inline constexpr int version_patch = 0;

// Backends compiled into this program.
inline constexpr bool has_threads_backend = true;
inline constexpr bool threads_backend_uses_openmp = ARMI_HAS_OPENMP != 0;
inline constexpr bool has_mpi_backend = ARMI_HAS_MPI != 0;
inline constexpr bool has_sp2_backend = true;  // threads mode needs nothing
// The backends this program can run on, for messages.
inline constexpr char const* compiled_backends = ARMI_HAS_MPI ? "threads, mpi, mixed, sp2" : "threads, sp2";

}  // namespace armi
