// A hook for sends that wait on their receiver.  On sp2 a send waits while
// its node's send queue is full, until receivers poll and acknowledge.  The
// communication thread (runtime/progress_thread.hpp) may hold several
// locations at once; their own threads then wait for it, so if the receiver
// is one of them, nobody would poll it.  So the communication thread sets
// this hook on itself, and a transport calls it while such a send waits: it
// serves the network of the other locations the thread holds
// (transport::serve_network), which lets their acknowledgements go out.
//
// Thread safety: thread-local; set and called on the communication thread.
#pragma once

namespace armi::detail {

struct send_stall_hook {
  void* self;
  void (*serve_others)(void* self);
};
inline thread_local send_stall_hook const* t_send_stall = nullptr;

}  // namespace armi::detail
