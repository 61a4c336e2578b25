// Packing a request's arguments.  Trivially copyable arguments are copied
// with memcpy at a size fixed at compile time (no generic serializer); other
// types go through packer/unpacker.  Either way the callee gets its own copy,
// but for an armi::view parameter, which reads its elements in the request's
// buffer (serialization/view.hpp).
#pragma once

#include <armi/serialization/serialize.hpp>
#include <armi/serialization/view.hpp>

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

// One argument into or out of a packed payload: views by their own encoding.
template <class V>
void write_arg(packer& p, V const& v) {
  if constexpr (is_armi_view<V>::value)
    pack_view(p, v);
  else
    p.write(v);
}
// For the views of a request that cannot be read in place; none without views.
struct no_view_storage {};
template <class Pd, class Storage>
Pd read_arg(unpacker& u, [[maybe_unused]] Storage& storage) {
  if constexpr (is_armi_view<Pd>::value)
    return unpack_view<typename Pd::value_type>(u, storage);
  else
    return u.template read<Pd>();
}

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
      (write_arg(m, v), ...);
      return m.size();
    }
  }

  template <class... V>
  static void write(std::byte* p, [[maybe_unused]] std::size_t n, V const&... v) {
    if constexpr (bits) {
      ((std::memcpy(p, &v, sizeof(V)), p += sizeof(V)), ...);
    } else {
      packer w(p, n);
      (write_arg(w, v), ...);
    }
  }

  // measure and write for a request whose lent views (armi::lend) may go by
  // reference (lending: the runtime's context for it, or nullptr); write
  // returns how many did.  Only with views, so never the fixed-size form.
  template <class... V>
  static std::size_t measure_lending(lend_context const* lending, V const&... v) {
    packer m;
    m.allow_lending(lending);
    (write_arg(m, v), ...);
    return m.size();
  }
  template <class... V>
  static std::uint32_t write_lending(std::byte* p, std::size_t n, lend_context const* lending, V const&... v) {
    packer w(p, n);
    w.allow_lending(lending);
    (write_arg(w, v), ...);
    return w.lent();
  }

  // Decodes the arguments into values owned by this frame and calls
  // f(Pd&...).  Throws decode_error on a size mismatch.  `returns`: where
  // the loans of lent views go back after the call (none: a lent view is a
  // decode error).
  template <class F>
  static void read_and_call(std::byte const* p, std::size_t n, F&& f,
                            [[maybe_unused]] lend_returns* returns = nullptr) {
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
      constexpr bool has_views = (is_armi_view<Pd>::value || ...);
      std::conditional_t<has_views, view_storage, no_view_storage> storage = [&] {
        if constexpr (has_views)
          return view_storage(returns);
        else
          return no_view_storage{};
      }();
      std::tuple<Pd...> values{read_arg<Pd>(u, storage)...};
      if (u.remaining() != 0) throw decode_error("armi: RMI payload longer than the method's arguments");
      std::apply(f, values);
    }
  }
};

}  // namespace armi::detail
