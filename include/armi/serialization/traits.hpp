// Which types travel as RMI arguments and results, decided at compile time.
//
// Order of customization (first match wins), as in UPC++'s serialization:
//   1. a user specialization of armi::serializer<T>;
//   2. a member  void define_type(armi::typer&);
//   3. the standard library types armi knows (string, containers, pair,
//      tuple, optional, variant, array) of travelling types;
//   4. trivially copyable types, copied as bytes (no generic serializer).
// Raw pointers, member pointers, the standard views (span, string_view,
// reference_wrapper, initializer_list) and everything else do not travel.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

namespace armi {

class typer;
class packer;
class unpacker;

/// Specialize for a class to choose its encoding by hand.
///
/// A type travels in RMIs (arguments and results) by the first of these that applies:
/// a specialization of serializer<T>; a member `void define_type(armi::typer&)` (see
/// typer); a standard string, container, pair, tuple, optional, variant or array of
/// travelling types; or, for a trivially copyable type, its bytes.  Raw pointers, member
/// pointers and views (std::span, std::string_view, ...) never travel: the callee gets
/// its own copy, possibly in another address space, and the compiler says so.
///
/// A specialization has a static `pack` and one of the two `unpack` forms:
/// ```
/// template <> struct armi::serializer<my_type> {
///   static void pack(armi::packer& p, my_type const& v);
///   static my_type unpack(armi::unpacker& u);         // or
///   static void unpack(armi::unpacker& u, my_type& v);
/// };
/// ```
/// pack runs twice per send (measuring, then writing) and must write the same bytes both
/// times.  The second parameter is for partial specializations constrained with
/// std::enable_if.
template <class T, class Enable>
struct serializer {
  /// Marks the primary template: a type whose serializer has it is not specialized by
  /// the user.
  using armi_primary_template = void;
};

namespace detail {

template <class T>
concept user_serializer = !requires { typename serializer<T, void>::armi_primary_template; } &&
                          requires(packer& p, T const& v) { serializer<T, void>::pack(p, v); };

template <class T>
concept has_define_type = requires(T& v, typer& t) { v.define_type(t); };

template <class T>
concept forbidden_scalar = std::is_pointer_v<T> || std::is_member_pointer_v<T> ||
                           std::is_reference_v<T> || std::is_function_v<T>;

// Standard types that only refer to memory elsewhere.  They are trivially
// copyable, so as bytes they would "travel": a pointer into the caller's
// memory, which another process cannot read and which a by-value callee
// must not see (an async_rmi's caller may free it at once).
template <class T>
struct is_std_view : std::false_type {};
template <class T, std::size_t E>
struct is_std_view<std::span<T, E>> : std::true_type {};
template <class C, class Tr>
struct is_std_view<std::basic_string_view<C, Tr>> : std::true_type {};
template <class T>
struct is_std_view<std::reference_wrapper<T>> : std::true_type {};
template <class T>
struct is_std_view<std::initializer_list<T>> : std::true_type {};

}  // namespace detail
template <class T>
class view;  // view.hpp: a target's parameter only
namespace detail {
template <class T>
struct is_armi_view : std::false_type {};
template <class T>
struct is_armi_view<view<T>> : std::true_type {};

template <class T>
concept forbidden_view = is_std_view<std::remove_cv_t<T>>::value || is_armi_view<std::remove_cv_t<T>>::value;

// GCC 12 calls a class whose copy and move operations are all deleted (one
// holding a std::mutex) trivially copyable (CWG 1734 not implemented): such a
// type must still not be copied as bytes.
template <class T>
concept copyable_bytes = std::is_trivially_copyable_v<T> && std::is_copy_constructible_v<T>;

template <class T>
concept bitwise = copyable_bytes<T> && !forbidden_scalar<T> && !forbidden_view<T> && !user_serializer<T> &&
                  !has_define_type<T> && !std::is_array_v<T>;

// Standard types with a built-in codec.  kind tells serialize.hpp how.
enum class std_kind { none, string, sequence, set, map, pair, tuple, optional, variant, array };

template <class T>
struct std_type {
  static constexpr std_kind kind = std_kind::none;
};
template <class C, class Tr, class A>
struct std_type<std::basic_string<C, Tr, A>> {
  static constexpr std_kind kind = std_kind::string;
  static constexpr bool elements_travel = true;
};

template <class T>
struct travels;  // forward

template <class... Ts>
inline constexpr bool all_travel = (travels<Ts>::value && ...);

template <class T, class A>
struct std_type<std::vector<T, A>> {
  static constexpr std_kind kind = std_kind::sequence;
  static constexpr bool elements_travel = all_travel<T>;
};
template <class T, class A>
struct std_type<std::deque<T, A>> {
  static constexpr std_kind kind = std_kind::sequence;
  static constexpr bool elements_travel = all_travel<T>;
};
template <class T, class A>
struct std_type<std::list<T, A>> {
  static constexpr std_kind kind = std_kind::sequence;
  static constexpr bool elements_travel = all_travel<T>;
};
template <class K, class C, class A>
struct std_type<std::set<K, C, A>> {
  static constexpr std_kind kind = std_kind::set;
  static constexpr bool elements_travel = all_travel<K>;
};
template <class K, class C, class A>
struct std_type<std::multiset<K, C, A>> {
  static constexpr std_kind kind = std_kind::set;
  static constexpr bool elements_travel = all_travel<K>;
};
template <class K, class H, class E, class A>
struct std_type<std::unordered_set<K, H, E, A>> {
  static constexpr std_kind kind = std_kind::set;
  static constexpr bool elements_travel = all_travel<K>;
};
template <class K, class V, class C, class A>
struct std_type<std::map<K, V, C, A>> {
  static constexpr std_kind kind = std_kind::map;
  static constexpr bool elements_travel = all_travel<K, V>;
};
template <class K, class V, class C, class A>
struct std_type<std::multimap<K, V, C, A>> {
  static constexpr std_kind kind = std_kind::map;
  static constexpr bool elements_travel = all_travel<K, V>;
};
template <class K, class V, class H, class E, class A>
struct std_type<std::unordered_map<K, V, H, E, A>> {
  static constexpr std_kind kind = std_kind::map;
  static constexpr bool elements_travel = all_travel<K, V>;
};
template <class A, class B>
struct std_type<std::pair<A, B>> {
  static constexpr std_kind kind = std_kind::pair;
  static constexpr bool elements_travel = all_travel<std::remove_const_t<A>, B>;
};
template <class... Ts>
struct std_type<std::tuple<Ts...>> {
  static constexpr std_kind kind = std_kind::tuple;
  static constexpr bool elements_travel = all_travel<Ts...>;
};
template <class T>
struct std_type<std::optional<T>> {
  static constexpr std_kind kind = std_kind::optional;
  static constexpr bool elements_travel = all_travel<T>;
};
template <class... Ts>
struct std_type<std::variant<Ts...>> {
  static constexpr std_kind kind = std_kind::variant;
  static constexpr bool elements_travel = all_travel<Ts...>;
};
template <class T, std::size_t N>
struct std_type<std::array<T, N>> {
  static constexpr std_kind kind = std_kind::array;
  static constexpr bool elements_travel = all_travel<T>;
};

template <class T>
constexpr bool compute_travels() {
  if constexpr (forbidden_scalar<T> || forbidden_view<T>) {
    return false;
  } else if constexpr (user_serializer<T> || has_define_type<T>) {
    return true;
  } else if constexpr (std_type<T>::kind != std_kind::none) {
    return std_type<T>::elements_travel;
  } else if constexpr (std::is_array_v<T>) {
    return false;  // C arrays decay; wrap in std::array
  } else {
    return copyable_bytes<T>;
  }
}

template <class T>
struct travels : std::bool_constant<compute_travels<std::remove_cv_t<T>>()> {};

// True when Leaf<T> holds for T itself or for a type inside a standard type
// armi looks into (for the sharper diagnostics below).
template <template <class> class Leaf, class T>
struct contains : Leaf<T> {};
template <template <class> class Leaf, template <class...> class C, class... Ts>
  requires(std_type<C<Ts...>>::kind != std_kind::none)
struct contains<Leaf, C<Ts...>> : std::bool_constant<(contains<Leaf, Ts>::value || ...)> {};
template <template <class> class Leaf, class T, std::size_t N>
struct contains<Leaf, std::array<T, N>> : contains<Leaf, T> {};

template <class T>
struct raw_pointer_leaf : std::bool_constant<forbidden_scalar<T>> {};
template <class T>
struct view_leaf : std::bool_constant<forbidden_view<T>> {};
template <class T>
struct armi_view_leaf : is_armi_view<std::remove_cv_t<T>> {};
template <class T>
using has_raw_pointer = contains<raw_pointer_leaf, T>;
template <class T>
using has_view = contains<view_leaf, T>;

// Bytes one value of T takes on the wire at least; 0 = unknown.  Used to
// reject corrupt element counts before allocating (serialize.hpp, typer.hpp).
template <class T>
constexpr std::size_t min_wire_size() {
  if constexpr (bitwise<T>)
    return sizeof(T);
  else if constexpr (std_type<T>::kind == std_kind::string || std_type<T>::kind == std_kind::sequence ||
                     std_type<T>::kind == std_kind::set || std_type<T>::kind == std_kind::map)
    return sizeof(std::uint64_t);
  else
    return 0;
}

}  // namespace detail

/// True for a type that can be an RMI argument or result (see serializer for the rules).
template <class T>
concept travelling = detail::travels<std::remove_cvref_t<T>>::value;

namespace detail {

// Instantiated for every argument and result type of an RMI.  When T does not
// travel, the compiler prints the static_assert text with T spelled out in the
// "required from check_sendable<T>" line.
template <class T>
struct check_sendable {
  static_assert(!contains<armi_view_leaf, T>::value,
                "armi: an armi::view can only be an RMI target's parameter itself: not a result, and not "
                "inside another type (it points into the request's buffer, which lives only as long as the "
                "target's call). Take or return a std::vector instead");
  static_assert(contains<armi_view_leaf, T>::value || !has_raw_pointer<T>::value,
                "armi: raw pointers cannot be sent by RMI (the callee gets its own copy of every "
                "argument, in another address space): pass the pointee by value, or an index or "
                "p_object handle instead");
  static_assert(contains<armi_view_leaf, T>::value || has_raw_pointer<T>::value || !has_view<T>::value,
                "armi: a view (std::span, std::string_view, std::reference_wrapper, "
                "std::initializer_list) cannot be sent by RMI: it refers to the caller's memory, and "
                "the callee gets its own copy of every argument, possibly in another address space. "
                "Pass a std::vector, std::array or std::string instead");
  static_assert(has_raw_pointer<T>::value || has_view<T>::value || travels<T>::value,
                "armi: this argument/result type cannot be sent by RMI: it is not trivially "
                "copyable, not a standard string/container/pair/tuple/optional/variant/array of "
                "sendable types, and has no `void define_type(armi::typer&)` member nor an "
                "armi::serializer<T> specialization. Add one of the last two (see the type T in "
                "the 'required from check_sendable<T>' note)");
  static constexpr bool value = true;
};

}  // namespace detail
}  // namespace armi
