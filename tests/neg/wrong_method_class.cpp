// The arguments of an RMI must convert to the method's parameter types; an
// int cannot become a std::string.  (Compiles with -DARMI_NEG_CONTROL, which
// passes a string.)
// EXPECT: error
#include <armi/armi.hpp>

#include <string>

namespace {

class named : public armi::p_object {
 public:
  void rename(std::string name) { m_name = std::move(name); }

 private:
  std::string m_name;
};

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    named n;
#ifdef ARMI_NEG_CONTROL
    armi::async_rmi(0, n.get_rmi_handle(), &named::rename, std::string("x"));
#else
    armi::async_rmi(0, n.get_rmi_handle(), &named::rename, 42);
#endif
    armi::rmi_fence();
  });
}
