// A sync_rmi result travels back by value too: a method returning a type that
// cannot travel is rejected where it is called.  (Compiles with
// -DARMI_NEG_CONTROL, which returns an int.)
// EXPECT: cannot be sent by RMI
#include <armi/armi.hpp>

#include <memory>

namespace {

class factory : public armi::p_object {
 public:
#ifdef ARMI_NEG_CONTROL
  int make() {
    return 7;
  }
#else
  std::shared_ptr<int> make() {
    return std::make_shared<int>(7);
  }
#endif
};

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    factory f;
    auto r = armi::sync_rmi(0, f.get_rmi_handle(), &factory::make);
    (void)r;
    armi::rmi_fence();
  });
}
