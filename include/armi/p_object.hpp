// p_object: base class of shared objects.  Constructing one registers the
// calling location's representative; the i-th p_object constructed on every
// location gets the same handle (collective, symmetric registration), or the
// handle the user names with explicit_handle (asymmetric programs).  The
// destructor unregisters it: later RMIs to the handle are a clear error.
//
// Thread safety: construct, use and destroy a p_object on the location
// (thread) that owns it.  Distinct objects: safe.
#pragma once

#include <armi/core/error.hpp>
#include <armi/core/handle.hpp>
#include <armi/runtime/location.hpp>

#include <string>
#include <typeinfo>

namespace armi {

/// Base class of shared objects: derive from it to make a class's methods callable by RMI.
///
/// Each location constructs its own representative, and all representatives share one
/// rmi_handle, so an RMI sent with the handle reaches the destination's representative.
/// Construction is collective and symmetric: the i-th p_object constructed on each
/// location gets the same handle.  Programs where not every location constructs an
/// object name its handle with explicit_handle instead.  The destructor unregisters the
/// representative; RMIs that reach it afterwards end the run with a clear error, so
/// fence (rmi_fence) before destroying an object others may still call.  Neither
/// copyable nor movable: the handle names this object's address.  Construct, use and
/// destroy a p_object on the location (thread) that owns it.
class p_object {
 public:
  /// Registers this representative under the next symmetric handle of the calling location.
  /// @throws std::logic_error when called outside armi::execute.
  p_object() : m_location(&detail::current("p_object (constructor)")), m_handle(register_here(nullptr)) {}
  /// Registers this representative under the handle the program chose.
  /// @throws std::invalid_argument if h.value is 2^31 or more.
  /// @throws std::logic_error when called outside armi::execute or if the handle is taken
  /// on this location.
  explicit p_object(explicit_handle h)
      : m_location(&detail::current("p_object (constructor)")), m_handle(register_here(&h)) {}

  p_object(p_object const&) = delete;
  p_object& operator=(p_object const&) = delete;
  p_object(p_object&&) = delete;
  p_object& operator=(p_object&&) = delete;

  /// Unregisters this location's representative; later RMIs to it are an error.
  virtual ~p_object() {
    detail::armi_call const call;
    m_location->registry().remove(m_handle);
  }

  /// The handle that names this object on every location; pass it to the RMI calls.
  rmi_handle get_rmi_handle() const noexcept { return m_handle; }

 private:
  // Under --armi-progress=thread the location keeps the communication thread
  // away until its next armi call, so no request runs on this object before
  // the derived class's constructor has had its chance to finish.
  rmi_handle register_here(explicit_handle const* h) {
    detail::armi_call const call;
    rmi_handle const handle = h != nullptr ? m_location->registry().add_explicit(this, h->value)
                                           : m_location->registry().add(this);
    if (detail::t_claim != nullptr) detail::t_claim->hold_for_new_object();
    return handle;
  }

  detail::location* m_location;
  rmi_handle m_handle;
};

namespace detail {
inline std::string dynamic_type_name(p_object const& object) { return demangle(typeid(object).name()); }
}  // namespace detail

}  // namespace armi
