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

// Header-only by default.  With ARMI_SEPARATE_COMPILATION=1 in every
// translation unit of a program, the runtime behind armi::execute is compiled
// once, in the file that includes <armi/src.hpp> (see execute.hpp).
#ifndef ARMI_SEPARATE_COMPILATION
#define ARMI_SEPARATE_COMPILATION 0
#endif
// How the runtime's entry points are declared and defined: inline when
// header-only; with external linkage, defined by <armi/src.hpp>, otherwise.
#if ARMI_SEPARATE_COMPILATION
#define ARMI_DECL
#else
#define ARMI_DECL inline
#endif
// Whether this translation unit compiles the runtime's out-of-line parts
// (the location's waits and flushes, its error messages): every one when
// header-only; with separate compilation only the one that includes
// <armi/src.hpp>, which defines ARMI_RUNTIME_SOURCE before any armi header.
// Each header keeps those definitions at its end, under #if ARMI_RUNTIME_BODIES.
#define ARMI_CONFIG_INCLUDED 1
#if !ARMI_SEPARATE_COMPILATION || defined(ARMI_RUNTIME_SOURCE)
#define ARMI_RUNTIME_BODIES 1
#else
#define ARMI_RUNTIME_BODIES 0
#endif

// The sp2 backend (the emulated IBM SP2: its Active Messages layer, network
// and cost model) is about a fifth of what a header-only translation unit
// takes to compile (docs/guide/compile-time.md).  It is compiled in where
// the runtime is compiled once (ARMI_SEPARATE_COMPILATION: armi::armi's
// runtime, <armi/src.hpp>), and header-only only when asked for
// (ARMI_HAS_SP2=1, implied by ARMI_HAS_BOOST_ASIO=1).  ARMI_HAS_SP2=0
// leaves it out of either.
#ifndef ARMI_HAS_SP2
#if ARMI_SEPARATE_COMPILATION || (defined(ARMI_HAS_BOOST_ASIO) && ARMI_HAS_BOOST_ASIO)
#define ARMI_HAS_SP2 1
#else
#define ARMI_HAS_SP2 0
#endif
#endif

// Boost.Asio drives the sp2 backend's process mode (its sockets and pipes);
// without it only the threads mode is built.  Asio's headers are about a quarter of
// what a header-only translation unit takes to compile, so it is used where
// the runtime is compiled once (ARMI_SEPARATE_COMPILATION: armi::armi's
// runtime, <armi/src.hpp>) and Asio is installed, and header-only only when
// asked for (ARMI_HAS_BOOST_ASIO=1).  ARMI_HAS_BOOST_ASIO=0 leaves it out.
#ifndef ARMI_HAS_BOOST_ASIO
#if ARMI_HAS_SP2 && ARMI_SEPARATE_COMPILATION && __has_include(<boost/asio/local/stream_protocol.hpp>)
#define ARMI_HAS_BOOST_ASIO 1
#else
#define ARMI_HAS_BOOST_ASIO 0
#endif
#endif
#if ARMI_HAS_BOOST_ASIO && !ARMI_HAS_SP2
#error "ARMI_HAS_BOOST_ASIO=1 serves the sp2 backend's process mode, which ARMI_HAS_SP2=0 leaves out"
#endif

// The diagnostics' hooks in the request and wait paths (--armi-stats's
// timers and per-method counts, --armi-trace, --armi-watchdog) cost a test
// each when those options are off.  ARMI_DIAGNOSTICS=0 compiles them out (and
// makes those options an error), to measure that cost
// (benchmarks/README.md, "diagnostics off").
#ifndef ARMI_DIAGNOSTICS
#define ARMI_DIAGNOSTICS 1
#endif

#include <cstddef>

namespace armi::detail {
// How far apart data that different cores write is kept: two cache lines.
// x86 cores fetch lines in aligned 128-byte pairs (the adjacent-line
// prefetcher), so two lines of one pair written by two cores move between
// them together (docs/runtime-measurements.md, "Data kept apart").
inline constexpr std::size_t apart_bytes = 128;
}  // namespace armi::detail

// (The builtin, not <immintrin.h>'s _mm_pause: that header alone takes
// 0.4 s to parse, in every translation unit.)
#if defined(__x86_64__) || defined(__i386__)
#define ARMI_CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define ARMI_CPU_RELAX() asm volatile("yield" ::: "memory")
#else
#define ARMI_CPU_RELAX() ((void)0)
#endif

namespace armi {

/// Major version of this armi; a change means an incompatible API.
inline constexpr int version_major = 0;
/// Minor version of this armi; a change adds to the API compatibly.
inline constexpr int version_minor = 1;
/// Patch version of this armi; a change only fixes bugs.
inline constexpr int version_patch = 0;

// Backends compiled into this program.  Code that would otherwise need an
// #if on ARMI_WITH_MPI and the like asks these constants instead.

/// Always true: the threads backend (one location per thread) is part of every build.
inline constexpr bool has_threads_backend = true;
/// True when the threads backend starts its locations with OpenMP instead of std::thread
/// (CMake option ARMI_THREADS_OPENMP).
inline constexpr bool threads_backend_uses_openmp = ARMI_HAS_OPENMP != 0;
/// True in programs linked with armi::mpi: the mpi and mixed backends can run
/// (`--armi-backend=mpi` or `mixed`, or by default under `mpiexec -n` > 1).
inline constexpr bool has_mpi_backend = ARMI_HAS_MPI != 0;
/// True when the sp2 backend (an emulated IBM SP2) is compiled in: always with
/// armi::armi or <armi/src.hpp>; header-only with ARMI_HAS_SP2=1.
inline constexpr bool has_sp2_backend = ARMI_HAS_SP2 != 0;
/// True when Boost.Asio was found, which the sp2 backend's process mode needs
/// (`--armi-sp2-mode=process`: one forked process per node).
inline constexpr bool has_sp2_process_mode = ARMI_HAS_BOOST_ASIO != 0;
/// False when the program was built with ARMI_DIAGNOSTICS=0: then `--armi-stats`,
/// `--armi-trace` and `--armi-watchdog` are errors, and their hooks cost nothing.
inline constexpr bool has_diagnostics = ARMI_DIAGNOSTICS != 0;
/// The backends this program can run on, comma-separated, as option error messages list them.
inline constexpr char const* compiled_backends = ARMI_HAS_MPI ? (ARMI_HAS_SP2 ? "threads, mpi, mixed, sp2" : "threads, mpi, mixed")
                                                               : (ARMI_HAS_SP2 ? "threads, sp2" : "threads");

}  // namespace armi
