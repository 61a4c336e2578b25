// The user's body as armi::execute hands it to the runtime: one non-owning
// reference type for every callable, so the runtime (runtime/run.hpp) is
// compiled once per program, not once per body type.
#pragma once

#include <armi/core/config.hpp>
#include <armi/runtime/options.hpp>

#include <string>
#include <type_traits>

namespace armi {
namespace detail {

// Calls fn as fn(argc, argv) or fn(), and makes its result an exit code.
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

// A reference to the body, an object (armi::execute passes a function as a
// pointer to it); the body outlives every call (armi::execute returns only
// after every location's has returned).
class body_ref {
 public:
  template <class F>
    requires(!std::is_function_v<F>)
  explicit body_ref(F& fn) noexcept
      : m_fn(const_cast<void*>(static_cast<void const volatile*>(&fn))), m_call(&invoke<F>) {}

  int operator()(int argc, char** argv) const { return m_call(m_fn, argc, argv); }

 private:
  template <class F>
  static int invoke(void* fn, int argc, char** argv) {
    return call_body(*static_cast<F*>(fn), argc, argv);
  }

  void* m_fn;
  int (*m_call)(void*, int, char**);
};

// Defined in runtime/run.hpp.
ARMI_DECL int execute_with(config const& cfg, body_ref fn, int argc, char** argv);
ARMI_DECL int execute_main(int argc, char** argv, body_ref fn);

}  // namespace detail

/// The backend armi::execute(cfg, ...) runs on: cfg.backend, or mpi when none was asked
/// for and an MPI launcher started more than one process.
///
/// Lets a program (or its report) name the backend before the run starts.
ARMI_DECL std::string effective_backend(config const& cfg);

}  // namespace armi
