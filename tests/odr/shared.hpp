// Types both translation units of test_odr use: the same p_object class, the
// same define_type class and the same RMI template instantiations appear in
// tu_a.cpp and tu_b.cpp, so handler ids, method tables and inline functions
// must agree across translation units (STYLE.md: "we test with two TUs").
#pragma once

#include <armi/armi.hpp>

#include <map>
#include <string>
#include <vector>

namespace odr {

struct record {
  std::string name;
  std::vector<int> values;
  void define_type(armi::typer& t) {
    t.local(name);
    t.local(values);
  }
  friend bool operator==(record const&, record const&) = default;
};

// One per location, registered symmetrically.
class ledger : public armi::p_object {
 public:
  void add(int v) { m_sum += v; }
  void add_record(record r) { m_records[r.name] = r; }
  int sum() const { return m_sum; }
  std::size_t records() const { return m_records.size(); }
  record get(std::string const& name) const {
    auto const it = m_records.find(name);
    return it == m_records.end() ? record{} : it->second;
  }
  std::string where() const { return "ledger@" + std::to_string(armi::get_location_id()); }

 private:
  int m_sum = 0;
  std::map<std::string, record> m_records;
};

// Defined in tu_a.cpp / tu_b.cpp; each returns the number of failed checks on
// the calling location.
int exercise_a(ledger& shared);
int exercise_b(ledger& shared);
// An object only tu_b.cpp defines, reachable by RMIs issued from tu_a.cpp
// through these functions (compiled in tu_b.cpp).
armi::rmi_handle b_object_handle();
int call_b_object(armi::location_id dest, int x);
void make_b_object();
void destroy_b_object();

}  // namespace odr
