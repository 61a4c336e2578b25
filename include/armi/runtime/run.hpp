// The runtime behind armi::execute: parses the options, picks the backend
// and hands the run to its launch (runtime/launch/<backend>.hpp), which
// starts the locations, runs the user's body on each and reports.  Nothing
// here depends on the body's type (runtime/body.hpp erases it), so a program
// compiles it once: inline in every translation unit that includes
// <armi/armi.hpp> (the default), or, with ARMI_SEPARATE_COMPILATION=1, in the
// one that includes <armi/src.hpp>.
#pragma once

#include <armi/core/config.hpp>
#include <armi/core/error.hpp>
#include <armi/runtime/body.hpp>
#include <armi/runtime/global_memory.hpp>
#include <armi/runtime/launch/mixed.hpp>
#include <armi/runtime/launch/mpi.hpp>
#if ARMI_HAS_SP2
#include <armi/runtime/launch/sp2.hpp>
#endif
#include <armi/runtime/launch/threads.hpp>
#include <armi/runtime/options.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace armi {

ARMI_DECL std::string effective_backend(config const& cfg) {
#if ARMI_HAS_MPI
  if (!cfg.backend_given && detail::launched_by_mpiexec()) return "mpi";
#endif
  return cfg.backend;
}

namespace detail {

// armi::execute(cfg, fn) (see execute.hpp).
ARMI_DECL int execute_with(config const& cfg, body_ref fn, int argc, char** argv) {
  if (t_location != nullptr) throw std::logic_error("armi::execute called inside armi::execute");
  if (cfg.aggregation == 0) throw std::invalid_argument("armi::execute: aggregation must be at least 1");
  std::string const backend = effective_backend(cfg);
#if ARMI_HAS_MPI
  if (backend == "mpi") return run_mpi(cfg, fn, argc, argv);
  if (backend == "mixed") return run_mixed(cfg, fn, argc, argv);
#endif
#if ARMI_HAS_SP2
  if (backend == "sp2") return run_sp2(cfg, fn, argc, argv);
#endif
  if (backend != "threads")
    throw std::invalid_argument("armi::execute: backend '" + backend +
                                "' is not compiled into this program (available: " + compiled_backends + ")");
  return run_threads(cfg, fn, argc, argv);
}

// armi::execute(argc, argv, fn) (see execute.hpp).
ARMI_DECL int execute_main(int argc, char** argv, body_ref fn) {
  config cfg;
  try {
    cfg = parse_options(argc, argv);
  } catch (option_error const& e) {
    std::fprintf(stderr, "armi: error: %s\n", e.what());
    return 2;
  }
  if (cfg.help) {
    std::fputs(options_help().c_str(), stdout);
    return 0;
  }
  // The body's own exceptions end the run inside; what arrives here is a
  // configuration the backend refused (on every rank alike), or threads the
  // system would not start (threads and sp2; before any body ran: see
  // launch_threads; the mixed backend ends its job itself).
  try {
    return execute_with(cfg, fn, argc, argv);
  } catch (std::invalid_argument const& e) {
    std::fprintf(stderr, "armi: error: %s\n", e.what());
    return 2;
  } catch (thread_start_error const& e) {
    std::fprintf(stderr, "armi: error: %s\n", e.what());
    return 2;
  }
}

}  // namespace detail

}  // namespace armi
