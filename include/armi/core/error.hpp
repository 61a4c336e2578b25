// Errors: remote_error (a target's exception, rethrown at the caller), fatal
// run-ending errors, and readable type names for diagnostics.
#pragma once

#include <cxxabi.h>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>

namespace armi {

/// An exception thrown by the target of a sync_rmi or opaque_rmi, rethrown at the caller.
///
/// The original exception cannot cross locations (it may not even be copyable, and on
/// mpi it lives in another process), so the caller gets this one instead: what() is the
/// original message, type_name() the original exception's type, location() where it
/// was thrown.  An exception from an async_rmi's target has no caller to go to and ends
/// the run instead.
class remote_error : public std::runtime_error {
 public:
  /// Made by the runtime from what the target location reported.
  remote_error(std::string const& message, std::string type_name, std::uint32_t location)
      : std::runtime_error(message), m_type_name(std::move(type_name)), m_location(location) {}
  /// The demangled type of the exception the target threw, e.g. `std::out_of_range`.
  std::string const& type_name() const noexcept { return m_type_name; }
  /// The location whose method threw.
  std::uint32_t location() const noexcept { return m_location; }

 private:
  std::string m_type_name;
  std::uint32_t m_location;
};

namespace detail {

inline std::string demangle(char const* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> p(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && p ? std::string(p.get()) : std::string(mangled);
}

// A method's type as demangle gives it ("void (T::*)(int)"), or for a
// method constant (armi::method<&T::f>) the method itself: "&T::f".
inline std::string method_name(std::string name) {
  std::string_view const constant = "armi::detail::method_constant<";
  if (name.starts_with(constant) && name.ends_with('>'))
    return name.substr(constant.size(), name.size() - constant.size() - 1);
  return name;
}

template <class T>
std::string type_name() {
  return demangle(typeid(T).name());
}

// Ends the whole run with a one-paragraph message on stderr and exit status 1.
// Used where continuing would lose or corrupt requests (an async target threw,
// a malformed buffer, an RMI to a destroyed object).
// A backend whose run spans processes installs how to end all of them
// (MPI_Abort); otherwise the process exits.
inline std::atomic<void (*)(int)> fatal_hook{nullptr};

[[noreturn]] inline void fatal_exit(std::string const& message) {
  std::fprintf(stderr, "armi: %s\n", message.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  if (auto hook = fatal_hook.load()) hook(EXIT_FAILURE);
  std::_Exit(EXIT_FAILURE);
}

}  // namespace detail
}  // namespace armi
