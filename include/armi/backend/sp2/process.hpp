// The sp2 backend's process mode (--armi-sp2-mode=process): every node is a
// process of its own, forked by armi::execute, so nodes share nothing by
// accident.  Boost.Asio drives the I/O.
//
// Before forking, the parent links every pair of nodes by a local stream
// socket pair (connect_pair) and gives every node a pipe back to itself.
// Each child keeps its own sockets, runs its node, and writes a report (exit
// code, statistics, trace) into its pipe; then it _exits, never returning
// into the caller's code.  The parent reads the pipes and reaps the children.
// A child that ends without a complete report (a fatal error, a signal) ends
// the run: the parent names it, kills the other children and returns non-zero.
// Each child asks to be killed should the parent die, so none is left behind.
//
// socket_wire, the wire of one node: a packet travels as a frame, a 4-byte
// length and the packet's bytes.  A zero length (no packet is that short) is
// the node's "at rest" mark.  Writes are non-blocking: what the socket does
// not take waits in a per-peer outbox, flushed at every put and take, so a
// node never blocks on a peer that is busy.  Reads are non-blocking
// read_some; only wait() sleeps, in poll(2) on the sockets with the AM
// layer's timeout.
//
// Thread safety: a socket_wire is used by its node's thread only.
#pragma once

#include <armi/core/config.hpp>

#if ARMI_HAS_BOOST_ASIO

#include <armi/backend/sp2/am.hpp>
#include <armi/core/error.hpp>
#include <armi/core/stats.hpp>
#include <armi/core/watchdog.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/connect_pair.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

namespace armi::detail::sp2 {

using local_socket = boost::asio::local::stream_protocol::socket;

class socket_wire final : public wire {
 public:
  // peers[k]: the socket linked to node k (null for self).
  socket_wire(std::uint32_t self, std::vector<std::unique_ptr<local_socket>> peers) : m_self(self) {
    m_links.resize(peers.size());
    for (std::size_t k = 0; k < peers.size(); ++k) {
      if (k == self) continue;
      m_links[k].socket = std::move(peers[k]);
      m_links[k].socket->non_blocking(true);
    }
  }
  socket_wire(socket_wire const&) = delete;
  socket_wire& operator=(socket_wire const&) = delete;

  std::uint32_t nodes() const override { return static_cast<std::uint32_t>(m_links.size()); }

  void put(std::uint32_t dst, std::byte const* bytes, std::size_t n) override {
    link& l = m_links[dst];
    if (l.gone) return;  // the peer has left the run; the parent deals with it
    append_frame(l, bytes, static_cast<std::uint32_t>(n));
    flush(l);
  }

  bool take(std::uint32_t, std::vector<std::byte>& out) override {
    std::uint32_t const n = nodes();
    for (std::uint32_t i = 0; i < n; ++i) {
      std::uint32_t const k = (m_next + i) % n;
      if (k == m_self) continue;
      link& l = m_links[k];
      flush(l);
      if (next_frame(k, out) || (fill(l) && next_frame(k, out))) {
        m_next = (k + 1) % n;
        return true;
      }
    }
    return false;
  }

  bool maybe_waiting(std::uint32_t) const override {
    for (std::uint32_t k = 0; k < nodes(); ++k) {
      link const& l = m_links[k];
      if (k == m_self) continue;
      if (l.in.size() - l.in_begin >= frame_prefix) return true;
      boost::system::error_code ec;
      if (!l.eof && l.socket->available(ec) > 0 && !ec) return true;
    }
    return false;
  }

  // Readiness of the sockets is level-triggered: a packet put since the
  // token was read is still unread when wait() looks, so no token is needed.
  std::uint32_t wait_token(std::uint32_t) const override { return 0; }

  void wait(std::uint32_t self, std::uint32_t, std::chrono::microseconds timeout) override {
    if (maybe_waiting(self)) return;
    std::vector<pollfd> fds;
    for (std::uint32_t k = 0; k < nodes(); ++k) {
      link& l = m_links[k];
      if (k == m_self || (l.eof && l.gone)) continue;
      short events = l.eof ? 0 : POLLIN;
      if (!l.gone && l.out_begin < l.out.size()) events |= POLLOUT;
      if (events != 0) fds.push_back(pollfd{l.socket->native_handle(), events, 0});
    }
    auto const ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
    ::poll(fds.data(), fds.size(), static_cast<int>(ms > 0 ? ms : 1));
    for (auto& l : m_links)
      if (l.socket) flush(l);
  }

  void declare_at_rest(std::uint32_t) override {
    m_self_at_rest = true;
    for (std::uint32_t k = 0; k < nodes(); ++k) {
      if (k == m_self || m_links[k].gone) continue;
      append_frame(m_links[k], nullptr, 0);
      flush(m_links[k]);
    }
  }

  bool all_at_rest(std::uint32_t) const override {
    if (!m_self_at_rest) return false;
    for (std::uint32_t k = 0; k < nodes(); ++k)
      if (k != m_self && !m_links[k].at_rest) return false;
    return true;
  }

 private:
  static constexpr std::size_t frame_prefix = 4;

  struct link {
    std::unique_ptr<local_socket> socket;
    std::vector<std::byte> in;  // bytes read, from in_begin on not yet taken
    std::size_t in_begin = 0;
    std::vector<std::byte> out;  // frames put, from out_begin on not yet written
    std::size_t out_begin = 0;
    bool at_rest = false;  // the peer's at-rest mark arrived
    bool eof = false;      // the peer closed its end
    bool gone = false;     // writing to the peer failed
  };

  static void append_frame(link& l, std::byte const* bytes, std::uint32_t n) {
    std::byte prefix[frame_prefix];
    std::memcpy(prefix, &n, sizeof n);
    l.out.insert(l.out.end(), prefix, prefix + frame_prefix);
    if (n != 0) l.out.insert(l.out.end(), bytes, bytes + n);
  }

  // Writes what the socket takes without blocking.
  static void flush(link& l) {
    while (!l.gone && l.out_begin < l.out.size()) {
      boost::system::error_code ec;
      std::size_t const k =
          l.socket->write_some(boost::asio::buffer(l.out.data() + l.out_begin, l.out.size() - l.out_begin), ec);
      if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) break;
      if (ec) {
        l.gone = true;
        break;
      }
      l.out_begin += k;
    }
    if (l.gone || l.out_begin == l.out.size()) {
      l.out.clear();
      l.out_begin = 0;
    } else if (l.out_begin > l.out.size() / 2) {
      l.out.erase(l.out.begin(), l.out.begin() + static_cast<std::ptrdiff_t>(l.out_begin));
      l.out_begin = 0;
    }
  }

  // Reads what has arrived without blocking; true if anything did.
  static bool fill(link& l) {
    if (l.eof) return false;
    if (l.in_begin == l.in.size()) {
      l.in.clear();
      l.in_begin = 0;
    } else if (l.in_begin > 65536) {
      l.in.erase(l.in.begin(), l.in.begin() + static_cast<std::ptrdiff_t>(l.in_begin));
      l.in_begin = 0;
    }
    bool got = false;
    for (;;) {
      std::size_t const old = l.in.size();
      l.in.resize(old + 65536);
      boost::system::error_code ec;
      std::size_t const k = l.socket->read_some(boost::asio::buffer(l.in.data() + old, 65536), ec);
      l.in.resize(old + (ec ? 0 : k));
      if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) return got;
      if (ec) {  // end of file, or the peer is gone
        l.eof = true;
        return got;
      }
      got = true;
      if (k < 65536) return got;
    }
  }

  // The next packet frame buffered from peer k, into out; at-rest marks are
  // taken in on the way.
  bool next_frame(std::uint32_t k, std::vector<std::byte>& out) {
    link& l = m_links[k];
    for (;;) {
      if (l.in.size() - l.in_begin < frame_prefix) return false;
      std::uint32_t n = 0;
      std::memcpy(&n, l.in.data() + l.in_begin, sizeof n);
      if (n > 65535)
        fatal_exit("sp2: node " + std::to_string(m_self) + ": corrupted frame from node " + std::to_string(k) + " (" +
                   std::to_string(n) + " bytes announced; not acted on)");
      if (n == 0) {
        l.at_rest = true;
        l.in_begin += frame_prefix;
        continue;
      }
      if (l.in.size() - l.in_begin < frame_prefix + n) return false;
      auto const first = l.in.begin() + static_cast<std::ptrdiff_t>(l.in_begin + frame_prefix);
      out.assign(first, first + n);
      l.in_begin += frame_prefix + n;
      return true;
    }
  }

  std::uint32_t m_self;
  std::uint32_t m_next = 0;  // the peer take() looks at first (round robin)
  bool m_self_at_rest = false;
  std::vector<link> m_links;
};

// What a node's process reports to the parent at the end of its run.
struct node_result {
  int code = 0;  // the body's exit code
  location_stats location;
  node_stats network;
  method_counts methods;      // executions per method type, if stats are on
  std::string trace_events;  // the location's trace events (JSON), if traced
  std::uint64_t trace_dropped = 0;
};

namespace process_detail {

struct report_header {
  std::int32_t code;
  location_stats location;
  node_stats network;
  std::uint64_t trace_dropped;
  std::uint64_t trace_bytes;
  std::uint64_t methods_bytes;
};
static_assert(std::is_trivially_copyable_v<report_header>);

inline std::string encode(node_result const& r) {
  std::string const methods = method_counts_text({r.methods});
  report_header const h{r.code, r.location, r.network, r.trace_dropped, r.trace_events.size(), methods.size()};
  std::string out(sizeof h, '\0');
  std::memcpy(out.data(), &h, sizeof h);
  return out + r.trace_events + methods;
}

// False if the report is incomplete (the child ended before writing it all).
inline bool decode(std::string const& bytes, node_result& r) {
  report_header h;
  if (bytes.size() < sizeof h) return false;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (bytes.size() != sizeof h + h.trace_bytes + h.methods_bytes) return false;
  r.code = h.code;
  r.location = h.location;
  r.network = h.network;
  r.trace_dropped = h.trace_dropped;
  r.trace_events = bytes.substr(sizeof h, h.trace_bytes);
  auto const methods = method_counts_from_text(std::string_view(bytes).substr(sizeof h + h.trace_bytes));
  if (methods.size() != 1) return false;
  r.methods = methods.front();
  return true;
}

inline bool write_all(int fd, std::string const& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t const k = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    done += static_cast<std::size_t>(k);
  }
  return true;
}

inline void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// How a child ended, for the parent's message.
inline std::string describe_end(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  return "ended (status " + std::to_string(status) + ")";
}

}  // namespace process_detail

// Every node's watchdog record (--armi-watchdog), in memory that the node
// processes share: it is mapped before the fork, each node writes only its
// own record, and whichever node's watchdog fires reports all of them and the
// wait-for cycle among them.  It is the one thing the processes share, and
// only for that diagnosis.  A record's method names are pointers to type
// names in the program's image, which a forked child has at the same address.
class shared_wait_records {
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<char const*>::is_always_lock_free,
                "the watchdog's records are shared between processes only where their atomics are lock-free");

 public:
  explicit shared_wait_records(std::uint32_t count) : m_count(count) {
    if (count == 0) return;
    void* const p = ::mmap(nullptr, bytes(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "armi: sp2: mmap of the watchdog's records");
    m_records = static_cast<wait_record*>(p);
    for (std::uint32_t i = 0; i < count; ++i) new (&m_records[i]) wait_record();
  }
  shared_wait_records(shared_wait_records const&) = delete;
  shared_wait_records& operator=(shared_wait_records const&) = delete;
  ~shared_wait_records() {
    if (m_records == nullptr) return;
    for (std::uint32_t i = 0; i < m_count; ++i) m_records[i].~wait_record();
    ::munmap(m_records, bytes());
  }
  wait_record* data() const { return m_records; }

 private:
  std::size_t bytes() const { return sizeof(wait_record) * m_count; }
  std::uint32_t m_count;
  wait_record* m_records = nullptr;
};

// Runs node_main(i, wire) in a child process for each of n nodes and puts
// their reports, in node order, into results.  Returns 0 if every node
// reported; otherwise, after one line on stderr per node that failed, the
// first failed node's exit code (1 if it had none).
inline int run_node_processes(std::uint32_t n, std::function<node_result(std::uint32_t, wire&)> const& node_main,
                              std::vector<node_result>& results) {
  namespace asio = boost::asio;
  namespace pd = process_detail;
  asio::io_context io;
  // ends[i][k]: node i's socket to node k.
  std::vector<std::vector<std::unique_ptr<local_socket>>> ends(n);
  for (auto& row : ends) row.resize(n);
  for (std::uint32_t i = 0; i < n; ++i)
    for (std::uint32_t k = i + 1; k < n; ++k) {
      ends[i][k] = std::make_unique<local_socket>(io);
      ends[k][i] = std::make_unique<local_socket>(io);
      asio::local::connect_pair(*ends[i][k], *ends[k][i]);
    }
  std::vector<std::array<int, 2>> pipes(n, {-1, -1});
  for (auto& p : pipes)
    if (::pipe(p.data()) != 0) fatal_exit(std::string("sp2: cannot make a pipe for a node's report: ") + strerror(errno));
  std::vector<pid_t> pids(n, -1);
  [[maybe_unused]] pid_t const parent = ::getpid();
  std::fflush(nullptr);  // or the children would write the parent's buffered output again
  for (std::uint32_t i = 0; i < n; ++i) {
    io.notify_fork(asio::execution_context::fork_prepare);
    pid_t const pid = ::fork();
    if (pid == 0) {
#if defined(__linux__)
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) std::_Exit(1);
#endif
      io.notify_fork(asio::execution_context::fork_child);
      for (std::uint32_t j = 0; j < n; ++j) {
        if (j != i) {
          ends[j].clear();
          pd::close_fd(pipes[j][0]);
          pd::close_fd(pipes[j][1]);
        }
      }
      pd::close_fd(pipes[i][0]);
      int code = 0;
      try {
        socket_wire w(i, std::move(ends[i]));
        std::string const report = pd::encode(node_main(i, w));
        if (!pd::write_all(pipes[i][1], report)) code = 1;
      } catch (std::exception const& e) {
        std::fprintf(stderr, "armi: error: sp2 node %u: %s\n", i, e.what());
        code = 2;
      } catch (...) {
        std::fprintf(stderr, "armi: error: sp2 node %u: unknown exception\n", i);
        code = 2;
      }
      std::fflush(nullptr);
      std::_Exit(code);
    }
    io.notify_fork(asio::execution_context::fork_parent);
    if (pid < 0) {
      for (std::uint32_t j = 0; j < i; ++j) ::kill(pids[j], SIGKILL);
      fatal_exit("sp2: cannot start node " + std::to_string(i) + "'s process: " + strerror(errno));
    }
    pids[i] = pid;
    pd::close_fd(pipes[i][1]);
  }
  ends.clear();  // the children hold their own ends

  // Read every report to its end; a child's pipe ends when the child does.
  asio::io_context reader;
  std::vector<std::unique_ptr<asio::posix::stream_descriptor>> descriptors;
  std::vector<std::string> reports(n);
  results.assign(n, node_result{});
  std::vector<bool> reaped(n, false);
  bool stopping = false;
  int code = 0;
  auto finished = [&](std::uint32_t i) {
    int status = 0;
    while (::waitpid(pids[i], &status, 0) < 0 && errno == EINTR) {
    }
    reaped[i] = true;
    bool const clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (clean && pd::decode(reports[i], results[i])) return;
    // Killed because another node failed: that node is the one to name.
    if (stopping && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) return;
    std::fprintf(stderr, "armi: error: sp2 node %u (process %ld) %s before the end of the run\n", i,
                 static_cast<long>(pids[i]), pd::describe_end(status).c_str());
    if (code == 0) code = WIFEXITED(status) && WEXITSTATUS(status) != 0 ? WEXITSTATUS(status) : 1;
    if (!stopping) {
      stopping = true;
      for (std::uint32_t j = 0; j < n; ++j)
        if (!reaped[j]) ::kill(pids[j], SIGKILL);
    }
  };
  for (std::uint32_t i = 0; i < n; ++i) {
    descriptors.push_back(std::make_unique<asio::posix::stream_descriptor>(reader, pipes[i][0]));
    asio::async_read(*descriptors.back(), asio::dynamic_buffer(reports[i]),
                     [&finished, i](boost::system::error_code const&, std::size_t) { finished(i); });
  }
  reader.run();
  return code;
}

}  // namespace armi::detail::sp2

#endif  // ARMI_HAS_BOOST_ASIO
