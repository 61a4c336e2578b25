// armi::future<R>: the result of an opaque_rmi (or of any request whose
// answer arrives later).  ready() polls once; get() waits, serving incoming
// requests meanwhile, and rethrows the target's exception as remote_error.
//
// Thread safety: use a future on the location that created it.  Move-only.
#pragma once

#include <armi/runtime/location.hpp>
#include <armi/runtime/reply.hpp>

#include <memory>
#include <stdexcept>

namespace armi {

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
    check("get");
    {
      detail::wait_scope const waiting(m_owner->watch(), detail::wait_kind::future_get, m_peer, m_what);
      m_owner->wait_for(m_state->ready, "future::get");
    }
    auto state = std::move(m_state);
    return state->take();
  }

  /// Made by the runtime when it sends a request: owner is the calling location, and peer
  /// and what (the method's mangled type) name the wait in the watchdog's report.
  future(std::shared_ptr<detail::reply_state<R>> state, detail::location* owner,
         location_id peer = detail::no_peer, char const* what = nullptr)
      : m_state(std::move(state)), m_owner(owner), m_peer(peer), m_what(what) {}

 private:
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

}  // namespace armi
