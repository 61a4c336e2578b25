// The codecs behind packer::write and unpacker::read: one per kind of type
// (see traits.hpp for the order in which they are chosen).
#pragma once

#include <armi/serialization/bulk_copies.hpp>
#include <armi/serialization/packer.hpp>
#include <armi/serialization/traits.hpp>
#include <armi/serialization/typer.hpp>

#include <cstdint>
#include <cstring>
#include <utility>

namespace armi {
namespace detail {

inline void write_count(packer& p, std::size_t n) {
  std::uint64_t const c = n;
  p.write_bytes(&c, sizeof c);
}

template <class T>
struct codec;

template <class T>
void pack_value(packer& p, T const& v) {
  static_assert(check_sendable<T>::value);
  // bitwise first: a trivially copyable standard type (optional<int>) must
  // have one encoding, whether arg_pack copies it or the packer does.
  if constexpr (bitwise<T>) {
    p.write_bytes(&v, sizeof(T));
  } else if constexpr (user_serializer<T>) {
    serializer<T, void>::pack(p, v);
  } else if constexpr (has_define_type<T>) {
    typer t(p);
    const_cast<T&>(v).define_type(t);
  } else if constexpr (std_type<T>::kind != std_kind::none) {
    codec<T>::pack(p, v);
  }
}

// A bool is 0 or 1; reading one with another byte from the wire would be
// undefined behaviour, so such bytes are malformed.  p: the value's bytes.
template <class T>
void check_bits(void const* p) {
  if constexpr (std::is_same_v<std::remove_cv_t<T>, bool>) {
    unsigned char c;
    std::memcpy(&c, p, 1);
    if (c > 1) throw decode_error("armi: a bool on the wire is neither 0 nor 1");
  }
}

template <class T>
void unpack_value(unpacker& u, T& v) {
  if constexpr (bitwise<T>) {
    u.read_bytes(&v, sizeof(T));
    check_bits<T>(&v);
  } else if constexpr (user_serializer<T>) {
    if constexpr (requires { serializer<T, void>::unpack(u, v); })
      serializer<T, void>::unpack(u, v);
    else
      v = serializer<T, void>::unpack(u);
  } else if constexpr (has_define_type<T>) {
    typer t(u);
    v.define_type(t);
  } else if constexpr (std_type<T>::kind != std_kind::none) {
    codec<T>::unpack(u, v);
  }
}

template <class T>
T unpack_new(unpacker& u) {
  if constexpr (user_serializer<T> && requires { { serializer<T, void>::unpack(u) } -> std::convertible_to<T>; }) {
    return serializer<T, void>::unpack(u);
  } else {
    T v{};
    unpack_value(u, v);
    return v;
  }
}

// Element types that may read the wire's bytes in place (they may alias
// any object's bytes): a container of them is filled by one copy from the
// wire, not zero-filled first and then overwritten.
template <class T>
concept byte_like = std::is_same_v<T, char> || std::is_same_v<T, unsigned char> || std::is_same_v<T, std::byte>;

template <class T>
  requires(std_type<T>::kind == std_kind::string)
struct codec<T> {
  using char_type = typename T::value_type;
  static void pack(packer& p, T const& s) {
    write_count(p, s.size());
    p.write_bytes(s.data(), s.size() * sizeof(char_type));
  }
  static void unpack(unpacker& u, T& s) {
    std::size_t const n = u.read_count(sizeof(char_type));
    if constexpr (byte_like<char_type>) {
      s.assign(reinterpret_cast<char_type const*>(u.take_bytes(n)), n);
      count_copy(n);
    } else {
      s.resize(n);
      u.read_bytes(s.data(), n * sizeof(char_type));
    }
  }
};

template <class T>
  requires(std_type<T>::kind == std_kind::sequence)
struct codec<T> {
  using value_type = typename T::value_type;
  static constexpr bool contiguous_bits =
      bitwise<value_type> && requires(T& c) { c.data(); } && !std::is_same_v<value_type, bool>;
  static void pack(packer& p, T const& c) {
    write_count(p, c.size());
    if constexpr (contiguous_bits) {
      p.write_bytes(c.data(), c.size() * sizeof(value_type));
    } else {
      for (auto const& e : c) pack_value(p, static_cast<value_type const&>(e));
    }
  }
  static void unpack(unpacker& u, T& c) {
    std::size_t const n = u.read_count(min_wire_size<value_type>());
    c.clear();
    if constexpr (contiguous_bits && byte_like<value_type> && requires(value_type const* q) { c.assign(q, q); }) {
      auto const* p = reinterpret_cast<value_type const*>(u.take_bytes(n));
      c.assign(p, p + n);
      count_copy(n);
    } else if constexpr (contiguous_bits) {
      c.resize(n);
      u.read_bytes(c.data(), n * sizeof(value_type));
    } else {
      if constexpr (requires { c.reserve(n); }) {
        if (min_wire_size<value_type>() != 0) c.reserve(n);
      }
      for (std::size_t i = 0; i < n; ++i) c.push_back(unpack_new<value_type>(u));
    }
  }
};

template <class T>
  requires(std_type<T>::kind == std_kind::set)
struct codec<T> {
  using key_type = typename T::key_type;
  static void pack(packer& p, T const& c) {
    write_count(p, c.size());
    for (auto const& e : c) pack_value(p, e);
  }
  static void unpack(unpacker& u, T& c) {
    std::size_t const n = u.read_count(min_wire_size<key_type>());
    c.clear();
    for (std::size_t i = 0; i < n; ++i) c.insert(unpack_new<key_type>(u));
  }
};

template <class T>
  requires(std_type<T>::kind == std_kind::map)
struct codec<T> {
  using key_type = typename T::key_type;
  using mapped_type = typename T::mapped_type;
  static void pack(packer& p, T const& c) {
    write_count(p, c.size());
    for (auto const& [k, v] : c) {
      pack_value(p, k);
      pack_value(p, v);
    }
  }
  static void unpack(unpacker& u, T& c) {
    std::size_t const n = u.read_count(min_wire_size<key_type>());
    c.clear();
    for (std::size_t i = 0; i < n; ++i) {
      key_type k = unpack_new<key_type>(u);
      mapped_type v = unpack_new<mapped_type>(u);
      c.emplace(std::move(k), std::move(v));
    }
  }
};

template <class T>
  requires(std_type<T>::kind == std_kind::pair)
struct codec<T> {
  static void pack(packer& p, T const& v) {
    pack_value(p, v.first);
    pack_value(p, v.second);
  }
  static void unpack(unpacker& u, T& v) {
    unpack_value(u, const_cast<std::remove_const_t<typename T::first_type>&>(v.first));
    unpack_value(u, v.second);
  }
};

template <class T>
  requires(std_type<T>::kind == std_kind::tuple || std_type<T>::kind == std_kind::array)
struct codec<T> {
  static void pack(packer& p, T const& v) {
    std::apply([&p](auto const&... e) { (pack_value(p, e), ...); }, v);
  }
  static void unpack(unpacker& u, T& v) {
    std::apply([&u](auto&... e) { (unpack_value(u, e), ...); }, v);
  }
};

template <class T>
  requires(std_type<T>::kind == std_kind::optional)
struct codec<T> {
  using value_type = typename T::value_type;
  static void pack(packer& p, T const& v) {
    std::uint8_t const has = v.has_value() ? 1 : 0;
    p.write_bytes(&has, 1);
    if (has) pack_value(p, *v);
  }
  static void unpack(unpacker& u, T& v) {
    std::uint8_t has = 0;
    u.read_bytes(&has, 1);
    if (has > 1) throw decode_error("armi: corrupt std::optional flag");
    if (has)
      v.emplace(unpack_new<value_type>(u));
    else
      v.reset();
  }
};

template <class... Ts>
struct codec<std::variant<Ts...>> {
  using V = std::variant<Ts...>;
  static void pack(packer& p, V const& v) {
    if (v.valueless_by_exception()) throw std::logic_error("armi: cannot send a valueless std::variant");
    std::uint32_t const idx = static_cast<std::uint32_t>(v.index());
    p.write_bytes(&idx, sizeof idx);
    std::visit([&p](auto const& e) { pack_value(p, e); }, v);
  }
  template <std::size_t I>
  static void emplace_from(unpacker& u, V& v) {
    using E = std::variant_alternative_t<I, V>;
    v.template emplace<I>(unpack_new<E>(u));
  }
  static void unpack(unpacker& u, V& v) {
    std::uint32_t idx = 0;
    u.read_bytes(&idx, sizeof idx);
    if (idx >= sizeof...(Ts)) throw decode_error("armi: corrupt std::variant index");
    dispatch(u, v, idx, std::index_sequence_for<Ts...>{});
  }
  template <std::size_t... I>
  static void dispatch(unpacker& u, V& v, std::uint32_t idx, std::index_sequence<I...>) {
    ((idx == I ? (emplace_from<I>(u, v), true) : false) || ...);
  }
};

}  // namespace detail

template <class T>
void packer::write(T const& value) {
  detail::pack_value(*this, value);
}

template <class T>
T unpacker::read() {
  return detail::unpack_new<T>(*this);
}

template <class T>
void unpacker::read_into(T& value) {
  detail::unpack_value(*this, value);
}

}  // namespace armi
