// armi::future<R>: the result of an opaque_rmi (or of any request whose
// answer arrives later).  ready() polls once; get() waits, serving incoming
// requests meanwhile, and rethrows the target's exception as remote_error.
// then(f) chains a continuation that runs on this location as soon as the
// result is here (inside whichever armi call takes it in).
//
// Thread safety: use a future on the location that created it.  Move-only.
#pragma once

#include <armi/runtime/location.hpp>
#include <armi/runtime/reply.hpp>

#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace armi {

template <class R>
class future;

namespace detail {

template <class T>
struct is_future : std::false_type {};
template <class T>
struct is_future<future<T>> : std::true_type {};

// The result type of f applied to a future<R>'s value (f() for void).
template <class F, class R>
struct then_result {
  using type = std::invoke_result_t<F&, R&&>;
};
template <class F>
struct then_result<F, void> {
  using type = std::invoke_result_t<F&>;
};

// Moves src's outcome through f into out, and completes out: f's result, or
// src's failure unchanged (f does not run), or what f threw.
template <class R, class U, class F>
void continue_into(reply_state<R>& src, reply_state<U>& out, F& f) {
  if (src.failed()) {
    out.fail_like(src);
    return;
  }
  try {
    if constexpr (std::is_void_v<U>) {
      if constexpr (std::is_void_v<R>)
        f();
      else
        f(std::move(*src.value));
      out.value.emplace('\0');
    } else if constexpr (std::is_void_v<R>) {
      out.value.emplace(f());
    } else {
      out.value.emplace(f(std::move(*src.value)));
    }
  } catch (...) {
    out.fail_here();
    return;
  }
  out.complete();
}

// What when_all (when_all.hpp) needs of a future: its state and location.
struct future_access {
  template <class R>
  static std::shared_ptr<reply_state<R>> take_state(future<R>& f, char const* what) {
    f.check(what);
    return std::move(f.m_state);
  }
  template <class R>
  static location* owner(future<R> const& f) {
    return f.m_owner;
  }
};

}  // namespace detail

/// The result of an opaque_rmi, or of any request whose answer arrives later.
///
/// ready() asks once without waiting; get() waits for the answer, serving incoming
/// requests meanwhile so that the location answering can make progress, and rethrows the
/// target's exception as remote_error.  Move-only.  Use it on the location that made it:
/// ready() and get() throw std::logic_error elsewhere.
/// @tparam R the method's result type (void for none).
template <class R>
class future {
 public:
  /// A future with no state (valid() is false), to be assigned later.
  future() = default;
  /// Takes the other's state; the other is left without one.
  future(future&&) noexcept = default;
  /// Takes the other's state; the other is left without one.
  future& operator=(future&&) noexcept = default;
  future(future const&) = delete;
  future& operator=(future const&) = delete;

  /// True while the future has a state: made by an RMI, not moved from, get() not yet called.
  bool valid() const noexcept { return m_state != nullptr; }

  /// True once the answer is here.  If it is not, serves the requests that have arrived
  /// (and sends partly filled buffers when none had), then looks again; never blocks.
  bool ready() {
    detail::armi_call const call;
    check("ready");
    if (m_state->ready) return true;
    m_owner->poll();
    return m_state->ready;
  }

  /// Waits for the answer and returns it, serving incoming requests while it waits.
  ///
  /// Call it once: afterwards the future is not valid().
  /// @throws remote_error if the target threw.
  R get() {
    detail::armi_call const call;
    check("get");
    {
      detail::wait_scope const waiting(m_owner->watch(), detail::wait_kind::future_get, m_peer, m_what);
      m_owner->wait_for(m_state->ready, "future::get");
    }
    m_owner->settle_loans();  // a flush point
    auto state = std::move(m_state);
    return state->take();
  }

  /// Returns a future of `f(value)` (of `f()` for a future<void>), and leaves this
  /// one without a state.
  ///
  /// f runs on this location once the value is here: at once if it already is, else
  /// inside the armi call that takes the answer in (a poll, a wait, another future's
  /// get()), like a request's target.  If this future's call failed, f does not run and
  /// the returned future's get() throws the same error; if f throws, it throws what f
  /// threw.  f must be copyable; it may make RMIs.
  template <class F>
  auto then(F f) -> future<typename detail::then_result<F, R>::type> {
    using U = typename detail::then_result<F, R>::type;
    static_assert(!detail::is_future<U>::value,
                  "armi::future::then: the continuation returns a future; return its value instead, or chain "
                  "another then() on it");
    static_assert(std::is_copy_constructible_v<F>, "armi::future::then: the continuation must be copyable");
    detail::armi_call const call;
    check("then");
    auto out = std::make_shared<detail::reply_state<U>>();
    std::shared_ptr<detail::reply_state<R>> const src = std::move(m_state);
    if (src->ready)
      detail::continue_into(*src, *out, f);
    else  // whoever completes src keeps it alive until then
      src->on_ready = [s = src.get(), out, f = std::move(f)]() mutable { detail::continue_into(*s, *out, f); };
    return future<U>(std::move(out), m_owner, m_peer, m_what);
  }

  /// Made by the runtime when it sends a request: owner is the calling location, and peer
  /// and what (the method's mangled type) name the wait in the watchdog's report.
  future(std::shared_ptr<detail::reply_state<R>> state, detail::location* owner,
         location_id peer = detail::no_peer, char const* what = nullptr)
      : m_state(std::move(state)), m_owner(owner), m_peer(peer), m_what(what) {}

 private:
  friend struct detail::future_access;
  void check(char const* what) const {
    if (!m_state) throw std::logic_error(std::string("armi::future::") + what + ": no state (moved from or already got)");
    if (detail::t_location != m_owner)
      throw std::logic_error(std::string("armi::future::") + what + ": used on another location than the one that made it");
  }
  std::shared_ptr<detail::reply_state<R>> m_state;
  detail::location* m_owner = nullptr;
  location_id m_peer = detail::no_peer;
  char const* m_what = nullptr;
};

namespace detail {

// A future that already holds its value, for a call answered on the calling
// location (no request is sent).  who names the caller for the error when it
// is called outside a location thread.
template <class T>
future<T> ready_future(T value, char const* who) {
  auto state = std::make_shared<reply_state<T>>();
  state->value.emplace(std::move(value));
  state->ready = true;
  return future<T>(std::move(state), &current(who));
}
// The same for a call with no result.
inline future<void> ready_future(char const* who) {
  auto state = std::make_shared<reply_state<void>>();
  state->value.emplace('\0');
  state->ready = true;
  return future<void>(std::move(state), &current(who));
}

}  // namespace detail

}  // namespace armi
