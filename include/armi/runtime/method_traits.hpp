// What a pointer to member function tells armi: the class, the result and the
// parameter types.  Const and noexcept methods included.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

namespace armi::detail {

template <class... T>
struct type_list {
  static constexpr std::size_t size = sizeof...(T);
};

template <class M>
struct method_traits;

#define ARMI_METHOD_TRAITS(QUALS)                        \
  template <class R, class C, class... P>                \
  struct method_traits<R (C::*)(P...) QUALS> {           \
    using class_type = C;                                \
    using raw_result = R;                                \
    using result = std::remove_cvref_t<R>;               \
    using params = type_list<P...>;                      \
    static constexpr std::size_t arity = sizeof...(P);   \
  };
ARMI_METHOD_TRAITS()
ARMI_METHOD_TRAITS(const)
ARMI_METHOD_TRAITS(noexcept)
ARMI_METHOD_TRAITS(const noexcept)
#undef ARMI_METHOD_TRAITS

template <class M>
concept member_function = requires { typename method_traits<M>::class_type; };

// A method named at compile time (armi::method<&T::f>): its stubs get a
// handler id of their own, so requests carry no method index, a receiver
// needs no definition of it, and the stub calls the method directly, where
// the compiler can inline it (see method_stub).
template <auto F>
struct method_constant {
  static_assert(member_function<decltype(F)>,
                "armi::method<F>: F must name a member function, as in armi::method<&T::f>");
  static constexpr auto value = F;
};
template <class M>
inline constexpr bool is_method_constant = false;
template <auto F>
inline constexpr bool is_method_constant<method_constant<F>> = true;

template <auto F>
  requires member_function<decltype(F)>
struct method_traits<method_constant<F>> : method_traits<decltype(F)> {};

// obj->*m(v...), for a method pointer or a method constant.
template <class C, class M, class... V>
[[gnu::always_inline]] inline decltype(auto) call_member(C* obj, [[maybe_unused]] M m, V&&... v) {
  if constexpr (is_method_constant<M>)
    return (obj->*M::value)(std::forward<V>(v)...);
  else
    return (obj->*m)(std::forward<V>(v)...);
}

template <class M>
using result_t = typename method_traits<M>::result;

}  // namespace armi::detail
