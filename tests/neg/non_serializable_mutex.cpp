// A class holding a std::mutex (neither copyable nor serializable) cannot be
// an RMI argument, not even by const reference: arguments travel by value.
// (Compiles with -DARMI_NEG_CONTROL, which sends only the counter.)
// EXPECT: cannot be sent by RMI
// EXPECT: check_sendable<[^>]*guarded
#include <armi/armi.hpp>

#include <mutex>

namespace {

struct guarded {
  std::mutex m;
  int counter = 0;
};

class sink : public armi::p_object {
 public:
#ifdef ARMI_NEG_CONTROL
  void take(int counter) {
    m_total += counter;
  }
#else
  void take(guarded const& g) {
    m_total += g.counter;
  }
#endif

 private:
  int m_total = 0;
};

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    sink s;
    guarded g;
#ifdef ARMI_NEG_CONTROL
    armi::async_rmi(0, s.get_rmi_handle(), &sink::take, g.counter);
#else
    armi::async_rmi(0, s.get_rmi_handle(), &sink::take, g);
#endif
    armi::rmi_fence();
  });
}
