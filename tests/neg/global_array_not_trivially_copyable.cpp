// A global_array's elements are read and written as bytes at the owner,
// without running their type's code there: an element type that is not
// trivially copyable is a compile error that says so.
// (Compiles with -DARMI_NEG_CONTROL, which uses a trivially copyable struct.)
// EXPECT: armi::global_array<T>: T must be trivially copyable
#include <armi/armi.hpp>

#include <string>

namespace {

#ifdef ARMI_NEG_CONTROL
struct element {
  int a;
  double b;
};
#else
struct element {
  std::string name;
};
#endif

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    armi::global_array<element> a(4);
    (void)armi::rget(a.pointer(0, 0)).get();
  });
}
