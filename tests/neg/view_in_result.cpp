// A result that holds a std::string_view (here inside a std::vector) does not
// travel: the views would point into the callee's memory.  (Compiles with
// -DARMI_NEG_CONTROL, which returns std::strings.)
// EXPECT: a view \(std::span, std::string_view.*cannot be sent by RMI
#include <armi/armi.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace {

class names : public armi::p_object {
 public:
#ifdef ARMI_NEG_CONTROL
  std::vector<std::string> all() const { return {m_first, m_second}; }
#else
  std::vector<std::string_view> all() const { return {m_first, m_second}; }
#endif
  std::string m_first = "ada", m_second = "grace";
};

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    names n;
    auto const v = armi::sync_rmi(0, n.get_rmi_handle(), &names::all);
    armi::rmi_fence();
    return v.size() == 2 ? 0 : 1;
  });
}
