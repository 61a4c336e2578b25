// What a pointer to member function tells armi: the class, the result and the
// parameter types.  Const and noexcept methods included.
#pragma once

#include <cstddef>
#include <type_traits>

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

template <class M>
using result_t = typename method_traits<M>::result;

}  // namespace armi::detail
