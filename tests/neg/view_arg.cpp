// A std::span argument does not travel: it is trivially copyable, but its
// bytes are a pointer into the caller's memory, which another process cannot
// read and an async_rmi's caller may free at once.  The error says so and
// names what to pass instead.  (Compiles with -DARMI_NEG_CONTROL, which
// passes a std::vector.)
// EXPECT: a view \(std::span, std::string_view.*cannot be sent by RMI
#include <armi/armi.hpp>

#include <span>
#include <vector>

namespace {

class summer : public armi::p_object {
 public:
#ifdef ARMI_NEG_CONTROL
  void add(std::vector<int> const& v) {
    for (int x : v) m_sum += x;
  }
#else
  void add(std::span<int const> v) {
    for (int x : v) m_sum += x;
  }
#endif
  int m_sum = 0;
};

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    summer s;
    std::vector<int> v{1, 2, 3};
#ifdef ARMI_NEG_CONTROL
    armi::async_rmi(0, s.get_rmi_handle(), &summer::add, v);
#else
    armi::async_rmi(0, s.get_rmi_handle(), &summer::add, std::span<int const>(v));
#endif
    armi::rmi_fence();
  });
}
