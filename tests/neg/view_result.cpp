// An armi::view points into the request's buffer, which lives only for the
// target's call: a method returning one cannot be called by sync_rmi.
// (Compiles with -DARMI_NEG_CONTROL, which returns a std::vector.)
// EXPECT: an armi::view can only be an RMI target's parameter itself
#include <armi/armi.hpp>

#include <vector>

namespace {

class store : public armi::p_object {
 public:
#ifdef ARMI_NEG_CONTROL
  std::vector<double> contents() const { return m_values; }
#else
  armi::view<double> contents() const { return armi::view<double>(m_values); }
#endif

 private:
  std::vector<double> m_values{1.0, 2.0};
};

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    store s;
    auto r = armi::sync_rmi(0, s.get_rmi_handle(), &store::contents);
    (void)r;
    armi::rmi_fence();
  });
}
