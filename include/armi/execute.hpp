// armi::execute: parses the options, starts the locations, runs the user's
// body on every one of them, fences, and returns the process exit code.
#pragma once

#include <armi/backend/threads/launch.hpp>
#include <armi/backend/threads/transport.hpp>
#include <armi/runtime/error.hpp>
#include <armi/runtime/location.hpp>
#include <armi/runtime/options.hpp>
#include <armi/runtime/stats.hpp>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

namespace armi {

namespace detail {

template <class F>
int call_body(F& fn, int argc, char** argv) {
  if constexpr (std::is_invocable_v<F&, int, char**>) {
    using R = std::invoke_result_t<F&, int, char**>;
    if constexpr (std::is_void_v<R>) {
      fn(argc, argv);
      return 0;
    } else {
      return static_cast<int>(fn(argc, argv));
    }
  } else {
    static_assert(std::is_invocable_v<F&>, "armi::execute: the body must be callable as f() or f(int argc, char** argv)");
    using R = std::invoke_result_t<F&>;
    if constexpr (std::is_void_v<R>) {
      fn();
      return 0;
    } else {
      return static_cast<int>(fn());
    }
  }
}

template <class F>
int run(config const& cfg, F& fn, int argc, char** argv) {
  if (t_location != nullptr) throw std::logic_error("armi::execute called inside armi::execute");
  std::uint32_t const n = cfg.effective_locations();
  if (cfg.aggregation == 0) throw std::invalid_argument("armi::execute: aggregation must be at least 1");
  if (cfg.backend != "threads")
    throw std::invalid_argument("armi::execute: backend '" + cfg.backend +
                                "' is not compiled into this program (available: threads)");
  threads_transport tr(n);
  std::vector<std::unique_ptr<location>> locations;
  locations.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) locations.push_back(std::make_unique<location>(tr, i, cfg));
  std::vector<int> codes(n, 0);
  launch_threads(n, [&](std::uint32_t i) {
    location& self = *locations[i];
    t_location = &self;
    try {
      codes[i] = call_body(fn, argc, argv);
      self.fence();  // nothing in flight when the locations go away
    } catch (std::exception const& e) {
      fatal_exit("location " + std::to_string(i) + ": uncaught exception in the location's body: " +
                 demangle(typeid(e).name()) + ": " + e.what());
    } catch (...) {
      fatal_exit("location " + std::to_string(i) + ": uncaught exception (not derived from std::exception)");
    }
    t_location = nullptr;
  });
  if (cfg.stats) {
    std::vector<location_stats> all;
    for (auto const& l : locations) all.push_back(l->stats());
    std::fputs(format_stats(all).c_str(), stderr);
  }
  for (int c : codes)
    if (c != 0) return c;
  return 0;
}

}  // namespace detail

// Runs fn on every location with an explicit configuration.  fn is callable
// as fn() (or fn(int, char**), given argc 0) and may return void or int.
// Returns 0, or the first non-zero value fn returned (in location order).
template <class F>
int execute(config const& cfg, F&& fn) {
  char* no_args[] = {nullptr};
  return detail::run(cfg, fn, 0, no_args);
}

// Parses the --armi-* options (and ARMI_* environment) out of argv, then runs
// fn on every location as fn() or fn(argc, argv) with the remaining
// arguments.  An option error prints one line and returns 2; --armi-help
// prints the options and returns 0.
template <class F>
int execute(int argc, char** argv, F&& fn) {
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
  return detail::run(cfg, fn, argc, argv);
}

}  // namespace armi
