// detail::ready_future: an armi::future that already holds its value, for
// an *_async call answered on the calling location (no request is sent).
#pragma once

#include <armi/future.hpp>
#include <armi/runtime/location.hpp>
#include <armi/runtime/reply.hpp>

#include <memory>
#include <utility>

namespace armi::detail {

// A future whose get() returns value at once.  who names the caller for the
// error when it is called outside a location thread.
template <class T>
future<T> ready_future(T value, char const* who) {
  auto state = std::make_shared<reply_state<T>>();
  state->value.emplace(std::move(value));
  state->ready = true;
  return future<T>(std::move(state), &current(who));
}

}  // namespace armi::detail
