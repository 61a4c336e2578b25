// A raw pointer argument does not travel: the callee gets its own copy of
// every argument, possibly in another address space.  The error says so.
// (Compiles with -DARMI_NEG_CONTROL, which passes an int instead.)
// EXPECT: raw pointers cannot be sent by RMI
#include <armi/armi.hpp>

namespace {

class cell : public armi::p_object {
 public:
#ifdef ARMI_NEG_CONTROL
  void set(int v) {
    m_value = v;
  }
#else
  void set(int* v) {
    m_value = *v;
  }
#endif
  int m_value = 0;
};

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    cell c;
    int v = 3;
#ifdef ARMI_NEG_CONTROL
    armi::async_rmi(0, c.get_rmi_handle(), &cell::set, v);
#else
    armi::async_rmi(0, c.get_rmi_handle(), &cell::set, &v);
#endif
    armi::rmi_fence();
  });
}
