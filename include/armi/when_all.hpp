// armi::when_all: one future for several.
//
//   auto both = armi::when_all(armi::opaque_rmi(1, h, &T::f), armi::opaque_allreduce_rmi(h, &T::g, op));
//   auto [a, b] = both.get();
//
// The result is ready when every future given is; its value is the tuple
// (or, from a std::vector of futures, the vector) of their values, in the
// order given; a future<void> contributes std::monostate.  If any failed,
// get() throws the failure of the first one (in that order) that failed,
// once all are ready.  The futures given are left without a state, and must
// belong to the calling location.
#pragma once

#include <armi/future.hpp>
#include <armi/runtime/location.hpp>
#include <armi/runtime/reply.hpp>

#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace armi {

namespace detail {

// What a future<R> contributes to a when_all: its value, or std::monostate.
template <class R>
using when_all_value_t = std::conditional_t<std::is_void_v<R>, std::monostate, R>;

// The first failure, in argument order, among the states a when_all waits for.
struct first_failure {
  std::size_t at = static_cast<std::size_t>(-1);
  std::exception_ptr thrown;
  std::unique_ptr<remote_error> error;

  // Keeps src's failure if it has one and comes before the kept one; true if it failed.
  template <class R>
  bool take(reply_state<R>& src, std::size_t i) {
    if (!src.failed()) return false;
    if (i < at) {
      at = i;
      thrown = src.thrown;
      error = std::move(src.error);
    }
    return true;
  }
  // Completes out with the kept failure; false if there is none.
  template <class V>
  bool fail(reply_state<V>& out) {
    if (!thrown && !error) return false;
    out.thrown = thrown;
    out.error = std::move(error);
    out.complete();
    return true;
  }
};

// Calls arrived(src) once src is ready: now if it is, else when it completes.
template <class R, class Join>
void on_arrival(std::shared_ptr<reply_state<R>> const& src, std::shared_ptr<Join> const& join, std::size_t i) {
  if (src->ready)
    join->arrived(*src, i);
  else
    src->on_ready = [s = src.get(), join, i] { join->arrived(*s, i); };
}

template <class... R>
class when_all_join {
 public:
  using value_type = std::tuple<when_all_value_t<R>...>;
  explicit when_all_join(std::shared_ptr<reply_state<value_type>> out) : m_out(std::move(out)) {}

  template <class S>
  void arrived(reply_state<S>& src, std::size_t i) {
    if (!m_failure.take(src, i)) store(src, i, std::index_sequence_for<R...>{});
    if (--m_left == 0 && !m_failure.fail(*m_out)) {
      m_out->value.emplace(std::apply([](auto&... v) { return value_type(std::move(*v)...); }, m_values));
      m_out->complete();
    }
  }

 private:
  // Moves src's value into slot i (the slot whose type src's value has).
  template <class S, std::size_t... I>
  void store(reply_state<S>& src, std::size_t i, std::index_sequence<I...>) {
    (store_at<I>(src, i), ...);
  }
  template <std::size_t I, class S>
  void store_at(reply_state<S>& src, std::size_t i) {
    if (i != I) return;
    if constexpr (std::is_same_v<std::tuple_element_t<I, std::tuple<R...>>, S>) {
      if constexpr (std::is_void_v<S>)
        std::get<I>(m_values).emplace();
      else
        std::get<I>(m_values).emplace(std::move(*src.value));
    }
  }

  std::tuple<std::optional<when_all_value_t<R>>...> m_values;
  std::size_t m_left = sizeof...(R);
  first_failure m_failure;
  std::shared_ptr<reply_state<value_type>> m_out;
};

template <class R>
class when_all_vector_join {
 public:
  using value_type = std::vector<when_all_value_t<R>>;
  when_all_vector_join(std::size_t n, std::shared_ptr<reply_state<value_type>> out)
      : m_values(n), m_left(n), m_out(std::move(out)) {}

  void arrived(reply_state<R>& src, std::size_t i) {
    if (!m_failure.take(src, i)) {
      if constexpr (std::is_void_v<R>)
        m_values[i].emplace();
      else
        m_values[i].emplace(std::move(*src.value));
    }
    if (--m_left == 0 && !m_failure.fail(*m_out)) {
      value_type all;
      all.reserve(m_values.size());
      for (auto& v : m_values) all.push_back(std::move(*v));
      m_out->value.emplace(std::move(all));
      m_out->complete();
    }
  }

 private:
  std::vector<std::optional<when_all_value_t<R>>> m_values;
  std::size_t m_left;
  first_failure m_failure;
  std::shared_ptr<reply_state<value_type>> m_out;
};

inline location& when_all_location(std::initializer_list<location*> owners) {
  location& here = current("when_all");
  for (location* o : owners)
    if (o != &here) throw std::logic_error("armi::when_all: a future of another location");
  return here;
}

}  // namespace detail

/// A future of the tuple of the futures' values, ready when all of them are.
/// The futures are left without a state.
/// @throws std::logic_error if a future has no state or belongs to another location.
template <class... R>
future<std::tuple<detail::when_all_value_t<R>...>> when_all(future<R>&&... futures) {
  using value_type = std::tuple<detail::when_all_value_t<R>...>;
  detail::armi_call const call;
  detail::location& here = detail::when_all_location({detail::future_access::owner(futures)...});
  auto out = std::make_shared<detail::reply_state<value_type>>();
  if constexpr (sizeof...(R) == 0) {
    out->value.emplace();
    out->complete();
  } else {
    auto join = std::make_shared<detail::when_all_join<R...>>(out);
    std::tuple<std::shared_ptr<detail::reply_state<R>>...> states{
        detail::future_access::take_state(futures, "when_all")...};
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (detail::on_arrival(std::get<I>(states), join, I), ...);
    }(std::index_sequence_for<R...>{});
  }
  return future<value_type>(std::move(out), &here);
}

/// A future of the vector of the futures' values, in their order, ready when all
/// of them are.  The futures are left without a state.
/// @throws std::logic_error if a future has no state or belongs to another location.
template <class R>
future<std::vector<detail::when_all_value_t<R>>> when_all(std::vector<future<R>> futures) {
  using value_type = std::vector<detail::when_all_value_t<R>>;
  detail::armi_call const call;
  detail::location& here = detail::current("when_all");
  for (auto const& f : futures)
    if (detail::future_access::owner(f) != &here) throw std::logic_error("armi::when_all: a future of another location");
  auto out = std::make_shared<detail::reply_state<value_type>>();
  if (futures.empty()) {
    out->value.emplace();
    out->complete();
    return future<value_type>(std::move(out), &here);
  }
  std::vector<std::shared_ptr<detail::reply_state<R>>> states;
  for (auto& f : futures) states.push_back(detail::future_access::take_state(f, "when_all"));
  auto join = std::make_shared<detail::when_all_vector_join<R>>(states.size(), out);
  for (std::size_t i = 0; i < states.size(); ++i) detail::on_arrival(states[i], join, i);
  return future<value_type>(std::move(out), &here);
}

}  // namespace armi
