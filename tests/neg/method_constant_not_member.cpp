// armi::method<F> names a member function (&T::f); a free function, or
// anything else, is a compile-time error that says so.  (Compiles with
// -DARMI_NEG_CONTROL, which names a member function.)
// EXPECT: F must name a member function
#include <armi/armi.hpp>

namespace {

class counter : public armi::p_object {
 public:
  void touch(int) {}
};

[[maybe_unused]] void touch(int) {}

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    counter c;
#ifdef ARMI_NEG_CONTROL
    armi::async_rmi(0, c.get_rmi_handle(), armi::method<&counter::touch>, 1);
#else
    armi::async_rmi(0, c.get_rmi_handle(), armi::method<&touch>, 1);
#endif
    armi::rmi_fence();
  });
}
