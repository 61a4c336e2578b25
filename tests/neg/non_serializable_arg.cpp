// A class that is not trivially copyable and has neither define_type nor an
// armi::serializer<T> cannot be an RMI argument; the error says what to add
// and names the type.  (Compiles with -DARMI_NEG_CONTROL, which gives the
// class a define_type.)
// EXPECT: cannot be sent by RMI
// EXPECT: define_type
// EXPECT: check_sendable<[^>]*widget
#include <armi/armi.hpp>

#include <string>

namespace {

class widget {
 public:
  widget() = default;
  widget(widget const& o) : m_name(o.m_name), m_copies(o.m_copies + 1) {}  // not trivially copyable
  widget& operator=(widget const&) = default;
#ifdef ARMI_NEG_CONTROL
  void define_type(armi::typer& t) {
    t.local(m_name);
    t.local(m_copies);
  }
#endif

 private:
  std::string m_name;
  int m_copies = 0;
};

class shelf : public armi::p_object {
 public:
  void put(widget w) { m_last = w; }

 private:
  widget m_last;
};

}  // namespace

int main() {
  return armi::execute(armi::config{}, [] {
    shelf s;
    armi::async_rmi(0, s.get_rmi_handle(), &shelf::put, widget{});
    armi::rmi_fence();
  });
}
