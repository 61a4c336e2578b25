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

template <class R>
class future {
 public:
  future() = default;
  future(future&&) noexcept = default;
  future& operator=(future&&) noexcept = default;
  future(future const&) = delete;
  future& operator=(future const&) = delete;

  bool valid() const noexcept { return m_state != nullptr; }

  // True once the answer is here.  If it is not, serves what has arrived (and
  // flushes partial buffers when nothing had), then looks again.
  bool ready() {
    check("ready");
    if (m_state->ready) return true;
    m_owner->poll();
    return m_state->ready;
  }

  // Waits for the answer and returns it; call once.
  R get() {
    check("get");
    {
      detail::wait_scope const waiting(m_owner->watch(), detail::wait_kind::future_get, m_peer, m_what);
      m_owner->wait_for(m_state->ready, "future::get");
    }
    auto state = std::move(m_state);
    return state->take();
  }

  // For the runtime.
  // For the runtime: peer and what (the method's mangled type) are for the
  // watchdog's report.
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
