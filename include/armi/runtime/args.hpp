// Packing a request's arguments.  Trivially copyable arguments are copied
// with memcpy at a size fixed at compile time (no generic serializer); other
// types go through packer/unpacker.  Either way the callee gets its own copy.
#pragma once

#include <armi/serialization/serialize.hpp>

#include <cstddef>
#include <cstring>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

namespace armi::detail {

// The caller's argument as the parameter's value type: a reference when it
// already is one, a converted temporary otherwise.
template <class Pd, class A>
decltype(auto) as_param(A&& a) {
  if constexpr (std::is_same_v<std::remove_cvref_t<A>, Pd>)
    return static_cast<Pd const&>(a);
  else
    return Pd(std::forward<A>(a));
}

template <class T>
struct raw_storage {
  using type = T;
  alignas(T) unsigned char bytes[sizeof(T)];
  T& get() noexcept { return *std::launder(reinterpret_cast<T*>(bytes)); }
};

template <class... Pd>
struct arg_pack {
  static constexpr bool bits = (bitwise<Pd> && ...);
  static constexpr std::size_t fixed_size = (sizeof(Pd) + ... + 0);

  template <class... V>
  static std::size_t measure(V const&... v) {
    if constexpr (bits) {
      return fixed_size;
    } else {
      packer m;
      (m.write(v), ...);
      return m.size();
    }
  }

  template <class... V>
  static void write(std::byte* p, [[maybe_unused]] std::size_t n, V const&... v) {
    if constexpr (bits) {
      ((std::memcpy(p, &v, sizeof(V)), p += sizeof(V)), ...);
    } else {
      packer w(p, n);
      (w.write(v), ...);
    }
  }

  // Decodes the arguments into values owned by this frame and calls
  // f(Pd&...).  Throws decode_error on a size mismatch.
  template <class F>
  static void read_and_call(std::byte const* p, std::size_t n, F&& f) {
    if constexpr (bits) {
      if (n != fixed_size) [[unlikely]]
        throw_decode_error("armi: RMI payload size does not match the method's arguments");
      std::tuple<raw_storage<Pd>...> storage;
      std::apply([&](auto&... s) { ((std::memcpy(s.bytes, p, sizeof(s.bytes)), p += sizeof(s.bytes)), ...); },
                 storage);
      std::apply([](auto&... s) { (check_bits<typename std::remove_reference_t<decltype(s)>::type>(s.bytes), ...); },
                 storage);
      std::apply([&](auto&... s) { f(s.get()...); }, storage);
    } else {
      unpacker u(p, n);
      std::tuple<Pd...> values{u.template read<Pd>()...};
      if (u.remaining() != 0) throw decode_error("armi: RMI payload longer than the method's arguments");
      std::apply(f, values);
    }
  }
};

}  // namespace armi::detail
