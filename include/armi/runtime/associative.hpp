// armi::associative<Op, R>: whether a reduction operator may be regrouped.
#pragma once

#include <functional>
#include <type_traits>

namespace armi {

/// True when `op(op(a, b), c) == op(a, op(b, c))` for all values `a`, `b`, `c`
/// of type `R`: then allreduce_rmi combines partial results up its tree
/// (each member sends one value), otherwise every member's value travels to
/// the group's first member, which folds them left in member order.  The
/// order of the operands is kept either way, so `op` need not be commutative.
///
/// True for std::plus and std::multiplies on integers (floating-point sums
/// round differently when regrouped) and for the bitwise and logical
/// operators; specialize it for an operator of your own.
template <class Op, class R>
struct associative : std::false_type {};

/// Integer addition regroups (modulo 2^N); floating-point addition does not.
template <class T, class R>
struct associative<std::plus<T>, R> : std::is_integral<R> {};
/// Integer multiplication regroups (modulo 2^N); floating-point multiplication does not.
template <class T, class R>
struct associative<std::multiplies<T>, R> : std::is_integral<R> {};
/// Bitwise and regroups on integers.
template <class T, class R>
struct associative<std::bit_and<T>, R> : std::is_integral<R> {};
/// Bitwise or regroups on integers.
template <class T, class R>
struct associative<std::bit_or<T>, R> : std::is_integral<R> {};
/// Bitwise exclusive or regroups on integers.
template <class T, class R>
struct associative<std::bit_xor<T>, R> : std::is_integral<R> {};
/// Logical and regroups.
template <class T, class R>
struct associative<std::logical_and<T>, R> : std::true_type {};
/// Logical or regroups.
template <class T, class R>
struct associative<std::logical_or<T>, R> : std::true_type {};

/// associative<Op, R>::value, for Op as a call names it.
template <class Op, class R>
inline constexpr bool associative_v = associative<std::remove_cvref_t<Op>, R>::value;

}  // namespace armi
