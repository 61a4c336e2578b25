// A raw pointer cannot come back as a sync_rmi / opaque_rmi result either: it
// would point into the callee's memory.  (Compiles with -DARMI_NEG_CONTROL,
// which returns the value.)
// EXPECT: raw pointers cannot be sent by RMI
#include <armi/armi.hpp>

namespace {

class holder : public armi::p_object {
 public:
#ifdef ARMI_NEG_CONTROL
  int get() {
    return m_value;
  }
#else
  int* get() {
    return &m_value;
  }
#endif

 private:
  int m_value = 5;
};

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    holder h;
    auto f = armi::opaque_rmi(0, h.get_rmi_handle(), &holder::get);
    (void)f.get();
    armi::rmi_fence();
  });
}
