// p_object: base class of shared objects.  Constructing one registers the
// calling location's representative; the i-th p_object constructed on every
// location gets the same handle (collective, symmetric registration), or the
// handle the user names with explicit_handle (asymmetric programs).  The
// destructor unregisters it: later RMIs to the handle are a clear error.
//
// Thread safety: construct, use and destroy a p_object on the location
// (thread) that owns it.  Distinct objects: safe.
#pragma once

#include <armi/core/handle.hpp>
#include <armi/runtime/location.hpp>

namespace armi {

class p_object {
 public:
  p_object() : m_location(&detail::current("p_object (constructor)")), m_handle(m_location->registry().add(this)) {}
  explicit p_object(explicit_handle h)
      : m_location(&detail::current("p_object (constructor)")),
        m_handle(m_location->registry().add_explicit(this, h.value)) {}

  p_object(p_object const&) = delete;
  p_object& operator=(p_object const&) = delete;
  p_object(p_object&&) = delete;
  p_object& operator=(p_object&&) = delete;

  virtual ~p_object() { m_location->registry().remove(m_handle); }

  rmi_handle get_rmi_handle() const noexcept { return m_handle; }

 private:
  detail::location* m_location;
  rmi_handle m_handle;
};

}  // namespace armi
