// An RMI targets a method of a shared object, a class derived from
// armi::p_object.  (Compiles with -DARMI_NEG_CONTROL, which derives it.)
// EXPECT: derived from armi::p_object
#include <armi/armi.hpp>

namespace {

#ifdef ARMI_NEG_CONTROL
class plain : public armi::p_object {
#else
class plain {
#endif
 public:
  void touch(int) {}
};

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    armi::rmi_handle h{0, 1};
    armi::async_rmi(0, h, &plain::touch, 1);
    armi::rmi_fence();
  });
}
