// Inside define_type, a pointer member must be declared dynamic (a heap block
// of n elements) or offset (into a block declared before it); declaring it
// local would send the address itself.  (Compiles with -DARMI_NEG_CONTROL,
// which declares it dynamic.)
// EXPECT: raw pointers cannot be sent by RMI
#include <armi/armi.hpp>

#include <cstddef>

namespace {

struct block {
  std::size_t size = 0;
  double* data = nullptr;
  void define_type(armi::typer& t) {
    t.local(size);
#ifdef ARMI_NEG_CONTROL
    t.dynamic(data, size);
#else
    t.local(data);
#endif
  }
};

class consumer : public armi::p_object {
 public:
  void take(block b) { m_size = b.size; }

 private:
  std::size_t m_size = 0;
};

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    consumer c;
    armi::async_rmi(0, c.get_rmi_handle(), &consumer::take, block{});
    armi::rmi_fence();
  });
}
