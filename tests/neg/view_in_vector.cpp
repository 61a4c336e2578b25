// A view is a target's parameter itself, never inside another type: a
// std::vector of views would outlive the buffer its views point into.
// (Compiles with -DARMI_NEG_CONTROL, which takes one view.)
// EXPECT: an armi::view can only be an RMI target's parameter itself
#include <armi/armi.hpp>

#include <vector>

namespace {

class sink : public armi::p_object {
 public:
#ifdef ARMI_NEG_CONTROL
  void take(armi::view<int> v) { m_count += v.size(); }
#else
  void take(std::vector<armi::view<int>> vs) { m_count += vs.size(); }
#endif

 private:
  std::size_t m_count = 0;
};

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    sink s;
    std::vector<int> values{1, 2, 3};
#ifdef ARMI_NEG_CONTROL
    armi::async_rmi(0, s.get_rmi_handle(), &sink::take, values);
#else
    armi::async_rmi(0, s.get_rmi_handle(), &sink::take, std::vector<armi::view<int>>{armi::view<int>(values)});
#endif
    armi::rmi_fence();
  });
}
