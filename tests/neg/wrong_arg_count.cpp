// An RMI passes exactly the method's arguments.  (Compiles with
// -DARMI_NEG_CONTROL, which passes both.)
// EXPECT: wrong number of arguments
#include <armi/armi.hpp>

namespace {

class adder : public armi::p_object {
 public:
  int add(int a, int b) { return a + b; }
};

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    adder a;
#ifdef ARMI_NEG_CONTROL
    int const r = armi::sync_rmi(0, a.get_rmi_handle(), &adder::add, 1, 2);
#else
    int const r = armi::sync_rmi(0, a.get_rmi_handle(), &adder::add, 1);
#endif
    (void)r;
    armi::rmi_fence();
  });
}
