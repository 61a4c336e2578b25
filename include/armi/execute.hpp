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

// Runs fn on every location with an explicit configuration.  fn is callable
// as fn() (or fn(int, char**), given argc 0) and may return void or int.
// Returns 0, or the first non-zero value fn returned (in location order).
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

// Parses the --armi-* options (and ARMI_* environment) out of argv, then runs
// fn on every location as fn() or fn(argc, argv) with the remaining
// arguments.  An option error, or a configuration the backend cannot run,
// prints one line and returns 2; --armi-help prints the options and returns 0.
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
