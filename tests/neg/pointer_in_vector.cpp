// Raw pointers inside a container do not travel either.  (Compiles with
// -DARMI_NEG_CONTROL, which sends a std::vector<int>.)
// EXPECT: cannot be sent by RMI
#include <armi/armi.hpp>

#include <vector>

namespace {

#ifdef ARMI_NEG_CONTROL
using payload = std::vector<int>;
#else
using payload = std::vector<int*>;
#endif

class store : public armi::p_object {
 public:
  void keep(payload const& v) { m_size = v.size(); }

 private:
  std::size_t m_size = 0;
};

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    store s;
    payload v(3);
    armi::sync_rmi(0, s.get_rmi_handle(), &store::keep, v);
    armi::rmi_fence();
  });
}
