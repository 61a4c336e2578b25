// armi::lend of a temporary does not compile: the loan lasts until the
// caller's next flush point, and a temporary is gone at the end of the call's
// statement.  The error says so and names what to do instead.  (Compiles
// with -DARMI_NEG_CONTROL, which lends a named vector.)
// EXPECT: armi::lend: the range must live until the caller's next flush point
#include <armi/armi.hpp>

#include <cstdint>
#include <vector>

namespace {

class summer : public armi::p_object {
 public:
  void add(armi::view<std::uint64_t> v) {
    for (std::uint64_t x : v) m_sum += x;
  }
  std::uint64_t m_sum = 0;
};

std::vector<std::uint64_t> numbers() { return std::vector<std::uint64_t>(1000, 1); }

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    summer s;
#ifdef ARMI_NEG_CONTROL
    auto const v = numbers();
    armi::async_rmi(0, s.get_rmi_handle(), &summer::add, armi::lend(v));
#else
    armi::async_rmi(0, s.get_rmi_handle(), &summer::add, armi::lend(numbers()));
#endif
    armi::rmi_fence();
  });
}
