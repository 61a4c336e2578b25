// A bounded endpoint close for MPICH's UCX netmod, so that MPI_Finalize ends
// on every rank (docs/guide/backends.md, "Across hosts").
//
// Why: MPICH before 4.2 (ch4:ucx) finalizes by flush-closing every endpoint
// with ucp_disconnect_nb, progressing until their own closes complete, and
// only then entering the launcher's (PMI) barrier, where they no longer
// progress UCX.  Over UCX's tcp transport (1.13) a flush of an endpoint that
// has sent anything since its last flush is a zero-byte put that the peer
// must acknowledge, and the acknowledgement is itself a send that leaves the
// peer's endpoint to be flushed in turn: some endpoint of every pair that has
// talked needs the peer at finalize.  A rank whose closes complete first sits
// in the PMI barrier while a peer's close still waits for it, and that peer
// spins forever (most runs on 3 or more hosts).  No exchange of messages before
// MPI_Finalize can prevent it (each message leaves an endpoint to flush);
// MPICH 4.2 stopped waiting in the PMI barrier after the closes.
//
// What: armi defines ucp_disconnect_nb and ucp_worker_create in the program
// (a program's definition comes before libucp's for libmpich's calls).  The
// close is started as MPICH starts it, then progressed here until it
// completes or until `ucx_close_deadline` has passed since the process's
// first close; an unfinished close is released, and MPICH goes on.  Giving
// up loses nothing: MPI_Finalize is entered only after every MPI operation
// has completed, so all that is cut short is UCX's own flush handshake.
// Where MPICH is not built on UCX, or closes endpoints another way, these
// functions are never called.
#pragma once

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace armi::detail::ucx_close {

// How long a rank's MPI_Finalize waits for its endpoint closes in all; a
// healthy close takes one round trip (microseconds between hosts).
inline constexpr std::chrono::milliseconds ucx_close_deadline{200};

// UCX's types, seen through opaque pointers so that armi needs no UCX
// headers: ucs_status_t is an int (0 UCS_OK, 1 UCS_INPROGRESS, errors down to
// UCS_ERR_LAST = -100, returned as pointers by the *_nb calls).
inline constexpr int ucs_inprogress = 1;
inline bool is_status_pointer(void* p) {
  return p == nullptr || reinterpret_cast<std::uintptr_t>(p) >= static_cast<std::uintptr_t>(std::intptr_t{-100});
}

template <class F>
F next_definition(char const* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// The workers MPICH created (one per VCI), which a close must progress.
struct worker_list {
  static constexpr int capacity = 64;
  void* workers[capacity] = {};
  std::atomic<int> count{0};
};
inline worker_list& workers() {
  static worker_list list;
  return list;
}

}  // namespace armi::detail::ucx_close

extern "C" {

[[gnu::used, gnu::visibility("default")]] inline int ucp_worker_create(void* context, void const* params,
                                                                       void** worker) {
  using namespace armi::detail::ucx_close;
  static auto const real = next_definition<int (*)(void*, void const*, void**)>("ucp_worker_create");
  if (real == nullptr) return -1;  // UCS_ERR_NO_MESSAGE: no libucp behind this program
  int const status = real(context, params, worker);
  auto& list = workers();
  if (status == 0) {
    int const i = list.count.load(std::memory_order_relaxed);
    if (i < worker_list::capacity) {
      list.workers[i] = *worker;
      list.count.store(i + 1, std::memory_order_release);
    }
  }
  return status;
}

[[gnu::used, gnu::visibility("default")]] inline void* ucp_disconnect_nb(void* endpoint) {
  using namespace armi::detail::ucx_close;
  using clock = std::chrono::steady_clock;
  static auto const real = next_definition<void* (*)(void*)>("ucp_disconnect_nb");
  static auto const progress = next_definition<unsigned (*)(void*)>("ucp_worker_progress");
  static auto const status_of = next_definition<int (*)(void*)>("ucp_request_check_status");
  static auto const release = next_definition<void (*)(void*)>("ucp_request_free");
  static clock::time_point const deadline = clock::now() + ucx_close_deadline;
  void* request = real(endpoint);
  auto& list = workers();
  int const n = list.count.load(std::memory_order_acquire);
  if (is_status_pointer(request) || n == 0 || !progress || !status_of || !release) return request;
  while (status_of(request) == ucs_inprogress && clock::now() < deadline) {
    unsigned events = 0;
    for (int i = 0; i < n; ++i) events += progress(list.workers[i]);
    if (events == 0) std::this_thread::yield();  // the peer that must answer may need this core
  }
  release(request);  // freed now, or by UCX when it completes or the worker goes
  return nullptr;    // UCS_OK: MPICH moves on to the next endpoint
}

}  // extern "C"
