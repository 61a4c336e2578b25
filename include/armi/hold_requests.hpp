// armi::hold_requests: the location's own code, made atomic with respect to
// requests under --armi-progress=thread.
#pragma once

#include <armi/runtime/progress_claim.hpp>

namespace armi {

/// Keeps this location's requests from running while it lives.
///
/// Under `--armi-progress=thread` the process's communication thread runs a location's
/// requests (and future continuations) while the location computes outside armi calls.
/// Code that reads or writes state those requests also touch holds them off with a
/// scope of its own:
///
///     { armi::hold_requests const hold; total += counts_[i]; }
///
/// Requests that arrive meanwhile wait (an armi call made inside the scope serves them
/// as usual).  Under `--armi-progress=poll` (the default) requests run only inside armi
/// calls anyway and a hold costs a test.  Hold briefly: a sync_rmi to this location
/// waits as long.  Construct and destroy it on the location's own thread; holds nest.
class hold_requests {
 public:
  hold_requests() = default;
  hold_requests(hold_requests const&) = delete;
  hold_requests& operator=(hold_requests const&) = delete;

 private:
  detail::armi_call m_call{false};
};

}  // namespace armi
