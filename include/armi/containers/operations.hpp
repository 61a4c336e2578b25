// The named binary operations of update() (pvector, parray, pmatrix) and of
// any algorithm that takes an operation type.  Each is stateless and
// default-constructible, so it can travel as a type in an RMI.
#pragma once

namespace armi {

/// a + b, as a type that update() can send.
struct plus_op {
  /// Returns a + b.
  template <class T>
  T operator()(T const& a, T const& b) const {
    return a + b;
  }
};

/// a ^ b, as a type that update() can send.
struct xor_op {
  /// Returns a ^ b.
  template <class T>
  T operator()(T const& a, T const& b) const {
    return a ^ b;
  }
};

/// The smaller of a and b (a when equal), as a type that update() can send.
struct min_op {
  /// Returns b < a ? b : a.
  template <class T>
  T operator()(T const& a, T const& b) const {
    return b < a ? b : a;
  }
};

/// The larger of a and b (a when equal), as a type that update() can send.
struct max_op {
  /// Returns a < b ? b : a.
  template <class T>
  T operator()(T const& a, T const& b) const {
    return a < b ? b : a;
  }
};

}  // namespace armi
