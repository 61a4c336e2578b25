// Heartbeats between the hosts of an MPI job (--armi-heartbeat), so that a
// host whose link is cut, or whose processes are gone or stopped, ends the
// job with a message naming it instead of leaving the others waiting on it
// forever (an MPI send to a host that is cut off completes eagerly, and a
// receive from it just never matches).
//
// One rank per host takes part (rank 0 of its MPI_COMM_TYPE_SHARED group):
// the hosts form a ring, each connected by TCP to the next on a connection of
// its own.  A thread per host writes a byte to the next host every interval
// and watches the previous one.  It blocks in poll() between beats, and it
// calls no MPI, so it beats on while the host's locations compute.  The
// previous host is given up when it closes its connection without saying
// goodbye, or sends nothing for the timeout: the thread prints which rank and
// host, and ends the job (MPI_Abort, then _exit in case the abort cannot
// reach a launcher cut off from it).  At the end of a run each host says
// goodbye before it closes.  If some host cannot reach the next, the run goes
// without heartbeats, and that host says why.
#pragma once

#include <armi/core/error.hpp>

#include <fmt/format.h>
#include <mpi.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace armi::detail {

class host_heartbeat {
 public:
  // Collective over comm; `speaks_for_host`: this rank is its node's first
  // (the channel's rank_on_node() == 0).  timeout_s <= 0: no heartbeats.
  host_heartbeat(MPI_Comm comm, bool speaks_for_host, double timeout_s)
      : m_timeout(std::chrono::duration<double>(timeout_s)) {
    int size = 1;
    MPI_Comm_rank(comm, &m_rank);
    MPI_Comm_size(comm, &size);
    if (timeout_s <= 0 || size == 1) return;

    card mine{};
    gethostname(mine.host, sizeof mine.host - 1);
    std::string problem;
    if (speaks_for_host) {
      problem = open_listener(mine.port);
      mine.leader = problem.empty() ? 1 : 0;
    }
    std::vector<card> all(static_cast<std::size_t>(size));
    MPI_Allgather(&mine, sizeof(card), MPI_BYTE, all.data(), sizeof(card), MPI_BYTE, comm);
    if (!problem.empty()) warn("this host takes no part: " + problem);
    std::vector<int> hosts;
    for (int r = 0; r < size; ++r)
      if (all[static_cast<std::size_t>(r)].leader != 0) hosts.push_back(r);
    if (hosts.size() < 2) {  // one host: nothing to watch (every rank sees the same)
      close_all();
      return;
    }
    auto const at = std::find(hosts.begin(), hosts.end(), m_rank);
    bool const in_ring = at != hosts.end();
    problem.clear();
    if (in_ring) {
      std::size_t const i = static_cast<std::size_t>(at - hosts.begin());
      int const next = hosts[(i + 1) % hosts.size()];
      m_prev_rank = hosts[(i + hosts.size() - 1) % hosts.size()];
      m_self_host = mine.host;
      m_prev_host = all[static_cast<std::size_t>(m_prev_rank)].host;
      card const& to = all[static_cast<std::size_t>(next)];
      problem = connect_next(to.host, to.port);
    }
    // The kernel has completed every connection that will come up (accept()
    // waits for none): all hosts go on with heartbeats, or all without.
    if (!everyone_ok(comm, problem)) return;
    if (in_ring) {
      problem = accept_previous();
      if (problem.empty() && pipe(m_wake) != 0) problem = std::string("no pipe: ") + std::strerror(errno);
    }
    if (!everyone_ok(comm, problem)) return;
    if (in_ring) m_thread = std::thread([this] { watch(); });
  }

  host_heartbeat(host_heartbeat const&) = delete;
  host_heartbeat& operator=(host_heartbeat const&) = delete;

  ~host_heartbeat() {
    if (m_thread.joinable()) {
      char const stop = 0;
      (void)!write(m_wake[1], &stop, 1);
      m_thread.join();
    }
    if (m_next >= 0) {
      char const bye = goodbye;
      (void)!send(m_next, &bye, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    close_all();
  }

 private:
  static constexpr char beat = 1;
  static constexpr char goodbye = 2;

  // What a rank tells the others at the start: whether it speaks for its
  // host, its host's name and the port it listens on.
  struct card {
    std::int32_t leader = 0;
    std::int32_t port = 0;
    char host[64] = {};
  };

  using clock = std::chrono::steady_clock;

  std::chrono::duration<double> interval() const {
    return std::clamp(m_timeout / 8, std::chrono::duration<double>(0.05), std::chrono::duration<double>(0.5));
  }

  // Collective: true if no rank has a problem; otherwise this rank reports
  // its own, if any, and closes its sockets.
  bool everyone_ok(MPI_Comm comm, std::string const& problem) {
    int const mine = problem.empty() ? 1 : 0;
    int all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
    if (all == 1) return true;
    if (!problem.empty()) warn(problem);
    close_all();
    return false;
  }

  void warn(std::string const& what) const {
    std::fprintf(stderr, "armi: --armi-heartbeat: rank %d: %s; this run goes without heartbeats\n", m_rank,
                 what.c_str());
  }

  std::string open_listener(std::int32_t& port) {
    m_listen = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (m_listen < 0) return std::string("socket: ") + std::strerror(errno);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof a;
    if (bind(m_listen, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(m_listen, 4) != 0 ||
        getsockname(m_listen, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      return std::string("listen: ") + std::strerror(errno);
    port = ntohs(a.sin_port);
    return {};
  }

  // Waits up to `seconds` for fd to be ready for `events`; false on timeout.
  static bool wait_for(int fd, short events, int seconds) {
    pollfd p{fd, events, 0};
    int r;
    do r = poll(&p, 1, seconds * 1000);
    while (r < 0 && errno == EINTR);
    return r > 0;
  }

  std::string connect_next(char const* host, int port) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    std::string const service = std::to_string(port);
    if (int e = getaddrinfo(host, service.c_str(), &hints, &found); e != 0)
      return "cannot resolve host " + std::string(host) + ": " + gai_strerror(e);
    std::string why = "no address";
    for (addrinfo* a = found; a != nullptr && m_next < 0; a = a->ai_next) {
      int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0) continue;
      int err = connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
      if (err == EINPROGRESS) {
        socklen_t len = sizeof err;
        err = wait_for(fd, POLLOUT, 10) ? (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len), err) : ETIMEDOUT;
      }
      if (err == 0) {
        m_next = fd;
      } else {
        why = std::strerror(err);
        ::close(fd);
      }
    }
    freeaddrinfo(found);
    if (m_next < 0) return "cannot connect to host " + std::string(host) + " port " + service + ": " + why;
    int const one = 1;
    setsockopt(m_next, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::int32_t const me = m_rank;
    if (!wait_for(m_next, POLLOUT, 10) || send(m_next, &me, sizeof me, MSG_NOSIGNAL) != sizeof me)
      return "cannot greet host " + std::string(host);
    return {};
  }

  std::string accept_previous() {
    std::string const who = "rank " + std::to_string(m_prev_rank) + " (host " + m_prev_host + ")";
    if (!wait_for(m_listen, POLLIN, 10)) return "no connection from " + who + " within 10 s";
    m_prev = accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
    ::close(m_listen);
    m_listen = -1;
    std::int32_t rank = -1;
    if (m_prev < 0 || !wait_for(m_prev, POLLIN, 10) || recv(m_prev, &rank, sizeof rank, MSG_WAITALL) != sizeof rank)
      return "no greeting from " + who;
    if (rank != m_prev_rank) return "a greeting from rank " + std::to_string(rank) + " instead of " + who;
    return {};
  }

  void watch() {
    clock::time_point last_heard = clock::now();
    clock::time_point next_beat = last_heard;
    auto const step = std::chrono::duration_cast<clock::duration>(interval());
    auto const limit = std::chrono::duration_cast<clock::duration>(m_timeout);
    pollfd fds[2] = {{m_wake[0], POLLIN, 0}, {m_prev, POLLIN, 0}};
    for (;;) {
      clock::time_point now = clock::now();
      if (now >= next_beat) {
        // A full or broken connection is the next host's to notice.
        char const b = beat;
        (void)send(m_next, &b, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        next_beat = now + step;
      }
      if (fds[1].fd >= 0 && now - last_heard > limit)
        give_up(fmt::format("has sent no heartbeat for {:.1f} s (its link is cut, or its processes are stopped)",
                            m_timeout.count()));
      clock::time_point wake = next_beat;
      if (fds[1].fd >= 0) wake = std::min(wake, last_heard + limit);
      int const ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count()) + 1;
      if (poll(fds, 2, ms) < 0 && errno != EINTR) give_up(std::string("poll: ") + std::strerror(errno));
      if (fds[0].revents != 0) return;
      if (fds[1].fd >= 0 && fds[1].revents != 0) {
        char in[64];
        ssize_t const n = recv(m_prev, in, sizeof in, MSG_DONTWAIT);
        if (n > 0) {
          last_heard = clock::now();
          if (std::find(in, in + n, goodbye) != in + n) fds[1].fd = -1;  // its run is over
        } else if (n == 0) {
          give_up("closed its heartbeat connection without a goodbye (its process ended)");
        } else if (errno != EAGAIN && errno != EINTR) {
          give_up(std::string("broke its heartbeat connection: ") + std::strerror(errno));
        }
      }
    }
  }

  // Ends the job through fatal_exit (MPI_Abort, the launchers' fatal_hook),
  // which goes through the launcher, and the launcher may be cut off with
  // the lost host: leave anyway a few seconds later.
  [[noreturn]] void give_up(std::string const& what) const {
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::seconds(3));
      std::_Exit(EXIT_FAILURE);
    }).detach();
    fatal_exit(fmt::format("error: rank {} (host {}) {}; rank {} (host {}) ends the job", m_prev_rank, m_prev_host,
                           what, m_rank, m_self_host));
  }

  void close_all() {
    for (int* fd : {&m_listen, &m_next, &m_prev, &m_wake[0], &m_wake[1]}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
  }

  std::chrono::duration<double> m_timeout;
  int m_rank = 0;
  int m_prev_rank = -1;
  std::string m_self_host;
  std::string m_prev_host;
  int m_listen = -1;
  int m_next = -1;
  int m_prev = -1;
  int m_wake[2] = {-1, -1};
  std::thread m_thread;
};

}  // namespace armi::detail
