// Value collectives for the container and algorithm layers: combine or
// gather one plain value per location without a p_object of one's own.
//
//   detail::allreduce_value(mine, op)  every location gets
//                                      ((v0 op v1) op v2) ... in location order
//   detail::allgather_value(mine)      every location gets {v0, v1, ..., v(p-1)}
//
// Both are collective over all locations (every location calls them, in the
// same order as its other collectives and p_object constructions): each
// registers a short-lived p_object whose one method returns the caller's
// value and runs one allreduce_rmi over it.  The value type must travel by
// RMI (docs/design.md §2, "Arguments").
//
// Communication: one allreduce_rmi, i.e. p-1 messages to location 0 and p-1
// back; allgather_value's answers carry all p values (O(p) bytes each).
//
// Thread safety: call from location threads, like any collective.
#pragma once

#include <armi/hold_requests.hpp>
#include <armi/p_object.hpp>
#include <armi/rmi.hpp>

#include <iterator>
#include <utility>
#include <vector>

namespace armi::detail {

// The short-lived shared object behind the value collectives.
template <class R>
class value_exchange : public p_object {
 public:
  explicit value_exchange(R value) : m_value(std::move(value)) {}

  // Collective: the fold of every location's value by op.
  template <class Op>
  R allreduce(Op op) const {
    hold_requests const hold;
    return allreduce_rmi(get_rmi_handle(), &value_exchange::serve_value, std::move(op));
  }

  // Collective: every location's value, in location order.
  std::vector<R> allgather() const {
    hold_requests const hold;
    return allreduce_rmi(get_rmi_handle(), &value_exchange::serve_listed, [](std::vector<R> a, std::vector<R> b) {
      a.insert(a.end(), std::make_move_iterator(b.begin()), std::make_move_iterator(b.end()));
      return a;
    });
  }

 private:
  // RMI targets of the allreduce.
  R serve_value() const { return m_value; }
  std::vector<R> serve_listed() const { return {m_value}; }

  R m_value;
};

template <class R, class Op>
R allreduce_value(R mine, Op op) {
  value_exchange<R> const x(std::move(mine));
  return x.allreduce(std::move(op));
}

template <class R>
std::vector<R> allgather_value(R mine) {
  value_exchange<R> const x(std::move(mine));
  return x.allgather();
}

}  // namespace armi::detail
