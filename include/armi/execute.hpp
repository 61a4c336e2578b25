// armi::execute: parses the options, starts the locations, runs the user's
// body on every one of them, fences, and returns the process exit code.
//
// The runtime behind it (runtime/run.hpp: option parsing, every backend,
// reports) does not depend on the body's type.  By default it is included
// here, inline, as every header of this header-only library is.  A program
// built with ARMI_SEPARATE_COMPILATION=1 (in every translation unit) compiles
// it once instead, in the one .cpp file that includes <armi/src.hpp>; its
// other translation units then skip the backends' headers and code.
#pragma once

#include <armi/core/config.hpp>
#include <armi/runtime/body.hpp>
#include <armi/runtime/options.hpp>

#include <type_traits>

namespace armi {

/// Runs fn on every location of a run configured by cfg, and returns the run's exit code.
///
/// No flags or environment variables are read (see parse_options to read them).  fn is
/// called as fn() (or as fn(0, argv) if it takes `int, char**`) once on each location,
/// concurrently, and may return void or int.  Every location fences after fn returns, so
/// every request is done when execute returns.  Blocks until the run ends; it cannot be
/// called from inside a run.
/// @return 0, or the first non-zero value fn returned (in location order).
/// @throws std::invalid_argument for a configuration the backend cannot run.
template <class F>
int execute(config const& cfg, F&& fn) {
  char* no_args[] = {nullptr};
  if constexpr (std::is_function_v<std::remove_reference_t<F>>) {
    auto* const function = &fn;
    return detail::execute_with(cfg, detail::body_ref(function), 0, no_args);
  } else {
    return detail::execute_with(cfg, detail::body_ref(fn), 0, no_args);
  }
}

/// The usual entry point: reads the `--armi-*` flags and `ARMI_*` variables, then runs fn on
/// every location.
///
/// The flags are removed from argv first (parse_options), and fn is called as fn() or
/// fn(argc, argv) with what remains, once on each location, concurrently.  Every location
/// fences after fn returns.  Blocks until the run ends.  Typically
/// `int main(int argc, char** argv) { return armi::execute(argc, argv, body); }`.
/// @return 0, or the first non-zero value fn returned (in location order); 2 after
/// printing one line for an option error or a configuration the backend cannot run;
/// 0 after printing options_help() for `--armi-help`, without running fn.
template <class F>
int execute(int argc, char** argv, F&& fn) {
  if constexpr (std::is_function_v<std::remove_reference_t<F>>) {
    auto* const function = &fn;
    return detail::execute_main(argc, argv, detail::body_ref(function));
  } else {
    return detail::execute_main(argc, argv, detail::body_ref(fn));
  }
}

}  // namespace armi

#if !ARMI_SEPARATE_COMPILATION
#include <armi/runtime/run.hpp>
#endif
