// rmi_handle: names one shared object (a p_object) on every location.
#pragma once

#include <cstdint>
#include <ostream>

namespace armi {

using location_id = std::uint32_t;

struct rmi_handle {
  std::uint32_t index = 0;
  std::uint32_t epoch = 0;  // 0: no object; bumped each time an index is reused
  friend bool operator==(rmi_handle, rmi_handle) = default;
  bool valid() const { return epoch != 0; }
  friend std::ostream& operator<<(std::ostream& os, rmi_handle h) {
    return os << "handle{" << h.index << "," << h.epoch << "}";
  }
};

// A user-chosen handle for asymmetric programs: p_object(explicit_handle{7})
// registers under the same handle on whichever locations construct it.
struct explicit_handle {
  std::uint32_t value;
};

namespace detail {
inline constexpr std::uint32_t explicit_handle_bit = 0x8000'0000u;
}

}  // namespace armi
