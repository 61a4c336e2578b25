// A view's elements are read in place as bytes: a view of pointers (or of
// anything that does not travel as its bytes) is rejected at compile time.
// (Compiles with -DARMI_NEG_CONTROL, a view of integers.)
// EXPECT: armi::view<T>: T must travel as its bytes
#include <armi/armi.hpp>

#include <cstdint>
#include <vector>

namespace {

#ifdef ARMI_NEG_CONTROL
using element = std::intptr_t;
#else
using element = int*;
#endif

class sink : public armi::p_object {
 public:
  void take(armi::view<element> v) { m_count += v.size(); }

 private:
  std::size_t m_count = 0;
};

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    sink s;
    std::vector<element> values(3);
    armi::async_rmi(0, s.get_rmi_handle(), &sink::take, values);
    armi::rmi_fence();
  });
}
