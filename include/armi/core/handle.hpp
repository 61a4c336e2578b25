// rmi_handle: names one shared object (a p_object) on every location.
#pragma once

#include <cstdint>
#include <ostream>

namespace armi {

/// Number of a location within a run: 0 to the number of locations minus one.
using location_id = std::uint32_t;

/// Names one shared object (a p_object) on every location.
///
/// Every location's representative of the object has the same handle, so a handle sent
/// in an RMI names the object at its destination.  It is a plain value: copy and compare
/// it freely, on any thread.
struct rmi_handle {
  /// Slot of the object in each location's table of shared objects.
  std::uint32_t index = 0;
  /// Tells objects apart that used the same index: bumped each time an index is
  /// reused, so a handle to a destroyed object is recognised, not confused with its
  /// successor.  0 means no object.
  std::uint32_t epoch = 0;
  /// Handles are equal when index and epoch are.
  friend bool operator==(rmi_handle, rmi_handle) = default;
  /// True when the handle names an object (epoch is not 0).
  bool valid() const { return epoch != 0; }
  /// Writes the handle as `handle{index,epoch}`, for messages and logs.
  friend std::ostream& operator<<(std::ostream& os, rmi_handle h) {
    return os << "handle{" << h.index << "," << h.epoch << "}";
  }
};

/// A handle the program chooses, for objects that not every location constructs.
///
/// `p_object(explicit_handle{7})` registers its object under the same handle on
/// whichever locations construct it, in any order, instead of counting
/// constructions as symmetric registration does.
struct explicit_handle {
  /// The number the program picked; the same value names the same object everywhere.
  std::uint32_t value;
};

namespace detail {
inline constexpr std::uint32_t explicit_handle_bit = 0x8000'0000u;
}

}  // namespace armi
