// Fuzzed, truncated and garbage request buffers fed to armi's real decoder
// (docs/design.md §2, "Errors": malformed bytes from the wire raise a clear error
// and are never executed).
//
// The seed corpus is real wire bytes.  Two locations share this thread and a
// transport that keeps what is sent instead of delivering it.  Location 0
// sends RMIs of every kind, with arguments of many types, to location 1
// (stage 0: one-sided requests; stage 1: requests that answer, a broadcast
// request, a collective contribution); location 1's answers are stage 2.
// A case is a mutated copy of one stage's buffer.  It runs on a fresh pair
// of locations brought to the state in which the genuine buffer would
// arrive (the earlier stages delivered and served), is delivered to the
// receiver and polled once.  Every target method that runs, and every reply
// that is delivered, writes one record.
//
// armi's fatal errors end the process, and a decoder bug may crash it, so
// cases run in forked worker processes: fatal_hook turns armi's fatal exit
// into an exception that ends just that case, and the worker streams each
// case's records and armi's message to this process.  A worker that dies
// (signal, sanitizer report, hang) is charged to the case it was running and
// a new worker goes on with the next one.  This process checks every case:
//   - no crash, no hang, no output other than records and armi's message
//     (so no sanitizer report);
//   - decoded cleanly (a flipped byte inside an int is still a valid
//     request), or ended by armi's fatal error with a message naming a
//     decoding failure; for targeted mutations the exact message;
//   - the records: for targeted mutations exactly the requests that lie
//     wholly before the damage, with their genuine arguments (the damaged
//     request never runs); for random mutations at least that prefix.
// One case of each targeted kind also runs alone in a child with the real
// fatal_exit: the process must end with status 1 and armi's message.
//
// Each scenario runs twice: locations in one process, and in separate
// processes (define requests describe each method before its first use and
// the receiver translates method indices).
//
// ARMI_FUZZ_SEED=S changes the seed of the random cases, ARMI_FUZZ_CASES=N
// their number per scenario (default 6000; 3000 under sanitizers).
#include "support/holding_transport.hpp"
#include "support/test_support.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace d = armi::detail;
using armi::location_id;
using bytes_t = std::vector<std::byte>;

// ---- what ran -------------------------------------------------------------------

// Set around the delivery of a case's buffer in a worker.
bool g_recording = false;

void write_all(int fd, std::string const& s) {
  char const* p = s.data();
  std::size_t n = s.size();
  while (n != 0) {
    ssize_t const w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      _exit(4);
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

// One record per executed request, to the parent through the worker's
// stderr (a pipe).
void note(std::string const& what) {
  if (g_recording) write_all(STDERR_FILENO, "@ " + what + "\n");
}

// Decoded values as text (bytes from a flipped string stay on one line).
std::string show(int v) { return std::to_string(v); }
std::string show(long v) { return std::to_string(v); }
std::string show(std::string const& s) {
  std::string out = "'";
  for (char c : s) {
    auto const u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\' && c != '\'') {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    }
  }
  return out + "'";
}
template <class T>
std::string show(std::vector<T> const& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + show(v[i]);
  return out + "]";
}
std::string show(std::map<std::string, std::vector<int>> const& m) {
  std::string out = "{";
  for (auto const& [k, v] : m) out += (out.size() > 1 ? "," : "") + show(k) + ":" + show(v);
  return out + "}";
}

// A user type with define_type: a local count, a heap block of that many
// elements (dynamic), a pointer into it (offset) and a string.
struct shape {
  int n = 0;
  std::int64_t* values = nullptr;
  std::int64_t* mark = nullptr;  // inside values, or null
  std::string label;

  shape() = default;
  shape(int count, std::string name)
      : n(count), values(count != 0 ? new std::int64_t[static_cast<std::size_t>(count)] : nullptr),
        label(std::move(name)) {
    for (int i = 0; i < count; ++i) values[i] = 10 * i - 7;
    mark = count > 1 ? values + 1 : nullptr;
  }
  shape(shape const& o)
      : n(o.n), values(o.n != 0 ? new std::int64_t[static_cast<std::size_t>(o.n)] : nullptr), label(o.label) {
    std::copy(o.values, o.values + o.n, values);
    mark = o.mark != nullptr ? values + (o.mark - o.values) : nullptr;
  }
  shape(shape&& o) noexcept
      : n(std::exchange(o.n, 0)), values(std::exchange(o.values, nullptr)), mark(std::exchange(o.mark, nullptr)),
        label(std::move(o.label)) {}
  shape& operator=(shape o) noexcept {
    std::swap(n, o.n);
    std::swap(values, o.values);
    std::swap(mark, o.mark);
    std::swap(label, o.label);
    return *this;
  }
  ~shape() { delete[] values; }

  void define_type(armi::typer& t) {
    t.local(n);
    t.dynamic(values, static_cast<std::size_t>(n));
    t.offset(mark, values);
    t.local(label);
  }
};
std::string show(shape const& s) {
  std::string out = "shape{n=" + std::to_string(s.n) + " values=[";
  for (int i = 0; i < s.n; ++i) out += (i ? "," : "") + std::to_string(s.values[i]);
  out += "] mark=" + (s.mark != nullptr ? std::to_string(s.mark - s.values) : std::string("null"));
  return out + " label=" + show(s.label) + "}";
}

class fuzz_target : public armi::p_object {
 public:
  void add(int v) { note("add " + show(v)); }
  void sub(int v) { note("sub " + show(v)); }  // same method type as add: method index 1
  void set_flag(bool on, std::uint16_t level) {
    note(std::string("set_flag ") + (on ? "true " : "false ") + std::to_string(level));
  }
  void put_string(std::string s) { note("put_string " + show(s)); }
  void put_vector(std::vector<int> v) { note("put_vector " + show(v)); }
  void put_map(std::map<std::string, std::vector<int>> m) { note("put_map " + show(m)); }
  void put_shape(shape s) { note("put_shape " + show(s)); }
  void put_long(long v) { note("put_long " + show(v)); }
  void put_view(char c, armi::view<std::int64_t> v) {
    note("put_view " + std::string(1, c) + " " + show(std::vector<long>(v.begin(), v.end())));
  }
  void ping() { note("ping"); }
  int sum_of(std::vector<int> v) {
    note("sum_of " + show(v));
    int sum = 0;
    for (int x : v) sum += x % 1000;
    return sum;
  }
  std::string echo(std::string s) {
    note("echo " + show(s));
    return s + "!";
  }
  long total() const {
    note("total");
    return 1234;
  }
  shape reshape(int n) {
    note("reshape " + show(n));
    return shape(std::clamp(n, 0, 8), "made");
  }
};

class other_target : public armi::p_object {
 public:
  void poke(int v) { note("poke " + show(v)); }
};

// A pending sync/opaque/reduce call whose answer, when delivered, decodes
// through the runtime's own reply_state and writes a record.
template <class R>
struct logged_reply final : d::reply_sink {
  explicit logged_reply(std::string n) : name(std::move(n)) {}
  std::string name;
  d::reply_state<R> state;
  void deliver(armi::unpacker& u, d::reply_status status, location_id from) override {
    state.deliver(u, status, from);
    if (state.error)
      note("reply " + name + " error " + show(state.error->type_name()) + ": " + show(state.error->what()));
    else
      note("reply " + name + " " + show(*state.value));
  }
};

// ---- a transport for two locations on one thread ---------------------------------

// Sent buffers wait in `sent` until the test delivers them (to the inbox
// receive() reads).  `separate`: every location is its own process.
using test_transport = armi_test::holding_transport;

// ---- a fresh pair of locations, brought to a stage ---------------------------------

enum stage : int { one_sided = 0, answered = 1, replies = 2 };
constexpr int num_stages = 3;
char const* const stage_names[num_stages] = {"one-sided requests", "answered requests", "replies"};

class scenario {
 public:
  // Brings the locations to stage `st`: the genuine buffers of the stages
  // before it delivered and served, the one of stage `st` taken out of the
  // transport (genuine_bytes()), not delivered.
  scenario(bool separate, int st) : m_tr("decoder_fuzz", 2, separate), m_stage(st) {
    m_cfg.aggregation = 1000;  // one buffer per flush
    m_cfg.buffer_bytes = 1 << 16;
    for (location_id i = 0; i < 2; ++i) m_loc[i] = std::make_unique<d::location>(m_tr, i, m_cfg);
    for (location_id i = 0; i < 2; ++i) {
      on(i);
      m_target[i] = std::make_unique<fuzz_target>();  // the same handles on both
      m_other[i] = std::make_unique<other_target>();
    }
    send_one_sided();
    for (int s = 0; s < st; ++s) advance(s);
    REQUIRE(m_tr.sent.size() == 1);
    m_genuine = m_tr.sent.front();
    m_tr.sent.clear();
    // Give executed buffers back to their owners, so that a case that ends
    // in a fatal error leaves nothing held.
    settle();
  }
  scenario(scenario const&) = delete;
  scenario& operator=(scenario const&) = delete;
  ~scenario() {
    delete m_genuine.b;
    for (auto& p : m_target) p.reset();
    for (auto& p : m_other) p.reset();
    d::t_location = nullptr;
  }

  location_id receiver() const { return m_genuine.dest; }
  location_id source() const { return m_genuine.b->source; }
  bytes_t genuine_bytes() const { return {m_genuine.b->data.get(), m_genuine.b->data.get() + m_genuine.b->size}; }
  armi::rmi_handle target_handle() const { return m_target[0]->get_rmi_handle(); }
  armi::rmi_handle other_handle() const { return m_other[0]->get_rmi_handle(); }

  // Delivers bytes from source to receiver in a buffer exactly as large as
  // they are (a read past the end is a sanitizer report), polls the
  // receiver once.
  void deliver(location_id receiver, location_id source, bytes_t const& bytes) {
    auto* b = new d::buffer;
    b->owner = receiver;  // so the receiver deletes it, however the case ends
    b->source = source;
    b->data.reset(new std::byte[bytes.size()]);
    if (!bytes.empty()) std::memcpy(b->data.get(), bytes.data(), bytes.size());
    b->size = b->capacity = bytes.size();
    m_tr.inbox[receiver].push_back(b);
    on(receiver).poll_once();
    d::t_location = nullptr;
  }

  // The genuine run to the end: delivers this stage's buffer and the later
  // ones; true if every call was answered with its genuine value.
  bool finish_genuinely() {
    m_tr.sent.push_back(m_genuine);
    m_genuine = {};
    for (int s = m_stage; s < num_stages; ++s) advance(s);
    settle();
    return m_sum.state.ready && *m_sum.state.value == 15 && m_echo.state.ready && *m_echo.state.value == "abc!" &&
           m_total.state.ready && *m_total.state.value == 1234 && m_total2.state.ready &&
           *m_total2.state.value == 1234 && m_echo2.state.ready && *m_echo2.state.value == "de!" && m_shape.state.ready &&
           show(*m_shape.state.value) == "shape{n=2 values=[-7,3] mark=1 label='made'}";
  }

 private:
  d::location& on(location_id i) {
    d::t_location = m_loc[i].get();
    return *m_loc[i];
  }

  // Stage 0: one-sided requests with arguments of every sort.
  void send_one_sided() {
    d::location& ctx = on(0);
    auto const h = m_target[0]->get_rmi_handle();
    armi::async_rmi(1, h, &fuzz_target::add, 7);
    armi::async_rmi(1, h, &fuzz_target::add, 8);  // a repeat record of 1 (8 bytes: ends at a multiple of 8)
    armi::async_rmi(1, h, &fuzz_target::sub, 3);
    armi::async_rmi(1, h, &fuzz_target::set_flag, true, std::uint16_t{9});
    armi::async_rmi(1, h, &fuzz_target::put_string, std::string("hello, fuzz"));
    armi::async_rmi(1, h, &fuzz_target::put_vector, std::vector<int>{1, 2, 3, -4});
    armi::async_rmi(1, h, &fuzz_target::put_map,
                    std::map<std::string, std::vector<int>>{{"a", {1, 2}}, {"bb", {}}});
    armi::async_rmi(1, h, &fuzz_target::put_shape, shape(3, "tri"));
    armi::async_rmi(1, h, &fuzz_target::put_long, 1L);
    armi::async_rmi(1, h, &fuzz_target::put_long, -2L);  // a repeat of 3 requests, 28 bytes: a pad word before the next
    armi::async_rmi(1, h, &fuzz_target::put_long, 3L);
    armi::async_rmi(1, h, &fuzz_target::put_long, -4L);
    armi::async_rmi(1, h, &fuzz_target::ping);
    // A view: a count, zero padding to 8 (after the char), the elements in place.
    armi::async_rmi(1, h, &fuzz_target::put_view, 'v', std::vector<std::int64_t>{5, -6, 7});
    armi::async_rmi(1, m_other[0]->get_rmi_handle(), &other_target::poke, 5);
    // Method constants: a handler of their own, no method index to define.
    armi::async_rmi(1, h, armi::method<&fuzz_target::add>, 12);
    armi::async_rmi(1, h, armi::method<&fuzz_target::add>, 13);  // a repeat
    armi::async_rmi(1, h, armi::method<&fuzz_target::put_string>, std::string("constant"));
    ctx.flush(1, armi::detail::flush_cause::flush);
    d::t_location = nullptr;
  }

  // Stage 1: requests that answer (sync, opaque, reduce), a broadcast
  // request and a collective contribution.
  void send_answered() {
    d::location& ctx = on(0);
    auto const h = m_target[0]->get_rmi_handle();
    call<d::rmi_kind::sync>(ctx, h, m_sum, &fuzz_target::sum_of, std::vector<int>{4, 5, 6});
    call<d::rmi_kind::opaque>(ctx, h, m_echo, &fuzz_target::echo, std::string("abc"));
    call<d::rmi_kind::reduce>(ctx, h, m_total, &fuzz_target::total);
    call<d::rmi_kind::reduce>(ctx, h, m_total2, &fuzz_target::total);  // a repeat that answers
    call<d::rmi_kind::sync>(ctx, h, m_shape, &fuzz_target::reshape, 2);
    call<d::rmi_kind::opaque>(ctx, h, m_echo2, armi::method<&fuzz_target::echo>, std::string("de"));
    d::send_call<d::rmi_kind::broadcast>(ctx, 1, h, &fuzz_target::add, 0, 11);
    d::send_collective(ctx, 1, 77, 0, 0, d::collective_status::value,
                       d::pack_collective(ctx, std::vector<armi::location_id>{1}, 42));
    ctx.flush(1, armi::detail::flush_cause::flush);
    d::t_location = nullptr;
  }

  template <d::rmi_kind K, class R, class M, class... A>
  static void call(d::location& ctx, armi::rmi_handle h, logged_reply<R>& sink, M m, A&&... a) {
    d::method_stub<K, M>::template check_call<A...>();
    std::uint64_t const tag = ctx.replies().acquire(&sink, nullptr);
    d::send_call<K>(ctx, 1, h, m, tag, std::forward<A>(a)...);
  }

  // From the stage `s` buffer sent to the next one sent.
  void advance(int s) {
    serve_sent();
    if (s == one_sided) send_answered();
  }

  // Delivers what was sent and serves it (which may send answers).
  void serve_sent() {
    auto const sent = std::exchange(m_tr.sent, {});
    for (auto const& s : sent) {
      m_tr.inbox[s.dest].push_back(s.b);
      on(s.dest).poll_once();
    }
    d::t_location = nullptr;
  }

  // Polls both until executed buffers are back with their owners (a
  // location gives them back after a run of empty polls).
  void settle() {
    for (int round = 0; round < 40; ++round)
      for (location_id i = 0; i < 2; ++i) on(i).poll();
    d::t_location = nullptr;
  }

  test_transport m_tr;  // first in, last out
  armi::config m_cfg;
  std::unique_ptr<d::location> m_loc[2];
  std::unique_ptr<fuzz_target> m_target[2];
  std::unique_ptr<other_target> m_other[2];
  logged_reply<int> m_sum{"sum_of"};
  logged_reply<std::string> m_echo{"echo"};
  logged_reply<std::string> m_echo2{"echo (a method constant)"};
  logged_reply<long> m_total{"total"};
  logged_reply<long> m_total2{"total (again)"};
  logged_reply<shape> m_shape{"reshape"};
  int m_stage;
  test_transport::sent_buffer m_genuine{};
};

// ---- running cases in worker processes ------------------------------------------------

struct expectation {
  enum class result { decoded, fatal, either } want = result::either;
  std::vector<std::string> records;
  bool exact_records = true;               // else: the records start with these
  std::string message;                     // the fatal message is exactly this, if set
  std::vector<std::string> message_parts;  // ... or contains each of these
};

struct fuzz_case {
  bool separate = false;
  int stage = one_sided;
  location_id receiver = 0, source = 0;
  bytes_t bytes;
  std::string klass, what;
  expectation expect;
};

struct outcome {
  std::string crash;  // how the worker died during this case; empty if it did not
  bool fatal = false;
  std::string message;  // armi's first fatal message, without "armi: "
  std::vector<std::string> records;
  bool ran_after_message = false;
  std::string other;  // anything else printed during the case
};

// armi's fatal exit, in a worker: ends the case, not the process.
struct fatal_stop {};
[[noreturn]] void throw_fatal_stop(int) { throw fatal_stop{}; }

constexpr unsigned case_seconds = 30;

void run_one(fuzz_case const& c) {
  scenario s(c.separate, c.stage);
  struct recording {
    recording() { g_recording = true; }
    ~recording() { g_recording = false; }
  } const during_delivery;
  s.deliver(c.receiver, c.source, c.bytes);
}

// Runs cases[first, last) in this (worker) process, one line protocol:
//   "C <i>" case i starts, "@ <record>", "armi: <message>" (armi's own),
//   "X <what>" an unexpected exception, "E <i> <0|1>" case i ended (1: by a
//   fatal error).
[[noreturn]] void worker(std::vector<fuzz_case> const& cases, std::size_t first, std::size_t last) {
  d::fatal_hook.store(&throw_fatal_stop);
  for (std::size_t i = first; i < last; ++i) {
    write_all(STDERR_FILENO, "C " + std::to_string(i) + "\n");
    ::alarm(case_seconds);
    bool stopped = false;
    try {
      run_one(cases[i]);
    } catch (fatal_stop const&) {
      stopped = true;
    } catch (std::exception const& e) {
      write_all(STDERR_FILENO, std::string("X unexpected exception: ") + e.what() + "\n");
    } catch (...) {
      write_all(STDERR_FILENO, "X unexpected exception\n");
    }
    write_all(STDERR_FILENO, "E " + std::to_string(i) + (stopped ? " 1\n" : " 0\n"));
  }
  _exit(0);
}

struct child_exit {
  std::string output;
  std::string how;  // "" for exit status 0, else "exit status N" or "signal N (...)"
  int code = -1;
};

// Forks; the child runs body() with stdout and stderr on a pipe, and must
// end with _exit.
template <class Body>
child_exit run_child(Body&& body) {
  std::fflush(nullptr);
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("decoder_fuzz: pipe failed");
  pid_t const pid = ::fork();
  if (pid < 0) throw std::runtime_error("decoder_fuzz: fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[1]);
    body();
    _exit(0);
  }
  ::close(fds[1]);
  child_exit r;
  char buf[1 << 16];
  for (;;) {
    ssize_t const n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    r.output.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    int const sig = WTERMSIG(status);
    r.how = sig == SIGALRM ? "hung (no end within " + std::to_string(case_seconds) + " s)"
                           : "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  } else {
    r.code = WEXITSTATUS(status);
    if (r.code != 0) r.how = "exit status " + std::to_string(r.code);
  }
  return r;
}

bool parse_number(std::string const& s, std::size_t& out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
  out = std::stoull(s);
  return true;
}

// Runs every case in workers; a worker that dies is charged to the case it
// was running, and a new one goes on with the next, up to max_crashes
// (a sanitizer report takes a while; a broken decoder would take hours).
constexpr std::size_t max_crashes = 40;

std::vector<outcome> run_cases(std::vector<fuzz_case> const& cases) {
  std::vector<outcome> results(cases.size());
  constexpr std::size_t no_case = ~std::size_t{0};
  std::size_t next = 0, crashes = 0;
  while (next < cases.size()) {
    if (crashes == max_crashes) {
      for (; next < cases.size(); ++next)
        results[next].crash = "not run: " + std::to_string(max_crashes) + " cases before it crashed their worker";
      break;
    }
    ++crashes;  // taken back below if the worker ends cleanly
    child_exit const w = run_child([&] { worker(cases, next, cases.size()); });
    std::size_t open = no_case;      // started, not ended (a plain index: GCC 12 -O2 warns on an optional here)
    std::size_t ended = next;
    std::string stray;                // output outside any case
    std::size_t pos = 0;
    auto const& out = w.output;
    while (pos < out.size()) {
      std::size_t const eol = std::min(out.find('\n', pos), out.size());
      std::string const line = out.substr(pos, eol - pos);
      pos = eol + 1;
      std::size_t i = 0;
      if (line.rfind("C ", 0) == 0 && parse_number(line.substr(2), i) && i < cases.size()) {
        open = i;
        continue;
      }
      if (line.rfind("E ", 0) == 0 && open != no_case && line.size() > 2 &&
          parse_number(line.substr(2, line.rfind(' ') - 2), i) && i == open) {
        results[i].fatal = line.back() == '1';
        open = no_case;
        ended = i + 1;
        continue;
      }
      if (open == no_case) {
        stray += line + "\n";
        continue;
      }
      outcome& o = results[open];
      if (line.rfind("@ ", 0) == 0) {
        o.records.push_back(line.substr(2));
        if (!o.message.empty()) o.ran_after_message = true;
      } else if (line.rfind("armi: ", 0) == 0) {
        if (o.message.empty()) o.message = line.substr(6);  // later ones: the unwinding of the first
      } else {
        o.other += line + "\n";
      }
    }
    if (open != no_case) {  // died inside a case
      results[open].crash = w.how.empty() ? "the worker ended inside the case" : w.how;
      results[open].other += stray;
      next = open + 1;
    } else {
      if (!w.how.empty() || !stray.empty()) {
        // Died between cases, or printed outside them: charge the next case.
        std::size_t const k = std::min(ended, cases.size() - 1);
        results[k].crash = "worker " + (w.how.empty() ? std::string("printed outside a case") : w.how);
        results[k].other += stray;
      }
      if (w.how.empty() && stray.empty()) --crashes;
      next = std::max(ended, next + 1);
    }
  }
  return results;
}

// What counts as a clear error: armi's message naming the failure.
bool clear_message(std::string const& m) {
  static char const* const known[] = {"malformed buffer from location", "malformed request from location",
                                      "could not be decoded", "RMI to unknown or destroyed handle", ", not a "};
  return std::any_of(std::begin(known), std::end(known),
                     [&](char const* k) { return m.find(k) != std::string::npos; });
}

// Empty if the outcome meets the expectation, else what is wrong.
std::string judge(outcome const& o, expectation const& e) {
  if (!o.crash.empty()) return o.crash;
  if (!o.other.empty()) return "unexpected output (a sanitizer report?)";
  if (o.fatal && !clear_message(o.message)) return "a fatal error without a clear decoding message";
  if (!o.fatal && !o.message.empty()) return "armi printed a message, yet the case went on";
  if (o.ran_after_message) return "a target ran after the fatal error";
  if (e.want == expectation::result::decoded && o.fatal) return "rejected a valid buffer";
  if (e.want == expectation::result::fatal && !o.fatal) return "accepted a malformed buffer";
  if (o.fatal && !e.message.empty() && o.message != e.message) return "wrong message; expected: " + e.message;
  if (o.fatal)
    for (auto const& part : e.message_parts)
      if (o.message.find(part) == std::string::npos) return "the message lacks \"" + part + "\"";
  bool const records_ok = e.exact_records ? o.records == e.records
                                          : o.records.size() >= e.records.size() &&
                                                std::equal(e.records.begin(), e.records.end(), o.records.begin());
  if (!records_ok)
    return e.exact_records ? "other requests ran than expected" : "the requests before the damage ran differently";
  return {};
}

std::string hex(bytes_t const& b) {
  std::string out;
  char buf[4];
  for (std::size_t i = 0; i < b.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%02x", std::to_integer<unsigned>(b[i]));
    out += (i != 0 && i % 16 == 0 ? "\n      " : i != 0 ? " " : "") + std::string(buf);
  }
  return out;
}

std::string describe(fuzz_case const& c) {
  return std::string(c.separate ? "separate processes" : "one process") + " / " + stage_names[c.stage] + " / " +
         c.klass + ": " + c.what;
}

std::string report(fuzz_case const& c, outcome const& o, std::string const& problem) {
  std::string r = describe(c) + ": " + problem;
  r += "\n  fatal: " + std::string(o.fatal ? "yes" : "no") + "; message: " + o.message;
  if (!c.expect.message.empty()) r += "\n  expected message: " + c.expect.message;
  for (auto const& part : c.expect.message_parts) r += "\n  expected in the message: " + part;
  for (auto const& rec : o.records) r += "\n  ran: " + rec;
  if (!c.expect.records.empty()) {
    r += std::string("\n  expected records (") + (c.expect.exact_records ? "exactly" : "at least") + "):";
    for (auto const& rec : c.expect.records) r += "\n    " + rec;
  }
  r += "\n  bytes (" + std::to_string(c.bytes.size()) + "):\n      " + hex(c.bytes);
  if (!o.other.empty()) r += "\n  other output:\n" + o.other.substr(0, 6000);
  return r;
}

// ---- the corpus ------------------------------------------------------------------------

std::uint32_t get32(bytes_t const& b, std::size_t at) {
  std::uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
void put32(bytes_t& b, std::size_t at, std::uint32_t v) { std::memcpy(b.data() + at, &v, 4); }
std::uint64_t get64(bytes_t const& b, std::size_t at) {
  std::uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}
void put64(bytes_t& b, std::size_t at, std::uint64_t v) { std::memcpy(b.data() + at, &v, 8); }

// A request (core/wire.hpp): a full record, after a zero pad word when it
// starts 4 past a multiple of 8, or one of a repeat record's requests (the
// first after the repeat word, the others right after the one before).
struct request_info {
  std::size_t start;  // where framing it starts: its pad word, if any
  std::size_t at;     // offset of the header, of a repeat's word, or of a later repeated payload
  d::request_header h;  // a repeat's: the header it repeats
  d::handler_entry const* entry;
  bool repeat = false;
  std::size_t head_bytes = sizeof(d::request_header);  // a repeat's: 4 for its first request, 0 for the others
  std::size_t repeat_last = 0;  // a repeat's: the index of the last request of its record
  std::size_t head() const { return head_bytes; }
  std::size_t end() const { return at + head() + h.payload_bytes; }  // without padding
  // Where the next request starts (with a whole padded record).
  std::size_t next(std::size_t index) const {
    if (!repeat) return at + d::request_bytes(h.payload_bytes);
    return index == repeat_last ? d::align4(end()) : end();
  }
  bool is_method() const { return entry->is_method(); }
  bool answers() const { return d::answers(entry->kind); }
  // Its execution writes a record: a target method, or a delivered reply.
  bool records() const { return is_method() || entry->kind == d::rmi_kind::reply; }
};

// One stage's genuine buffer, its requests, and what its genuine run did.
struct corpus_buffer {
  bool separate = false;
  int stage = 0;
  location_id receiver = 0, source = 0;
  armi::rmi_handle target, other;  // handles of the two objects
  bytes_t bytes;
  std::vector<request_info> requests;
  std::vector<std::string> records;

  // Records of requests [0, j).
  std::vector<std::string> records_before(std::size_t j) const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < j; ++i) n += requests[i].records();
    return {records.begin(), records.begin() + static_cast<std::ptrdiff_t>(n)};
  }
  // Every record but request j's and those of the repeats right after it
  // (they share its header).
  std::vector<std::string> records_without(std::size_t j) const {
    std::size_t k = j + 1;
    while (k < requests.size() && requests[k].repeat) ++k;
    std::vector<std::string> out = records_before(j);
    std::size_t const skip = records_before(k).size();
    out.insert(out.end(), records.begin() + static_cast<std::ptrdiff_t>(skip), records.end());
    return out;
  }
  // The start of execute_next's messages.
  std::string where(std::size_t at, std::size_t size) const {
    return "location " + std::to_string(receiver) + ": malformed buffer from location " + std::to_string(source) +
           " at byte " + std::to_string(at) + " of " + std::to_string(size) + ": ";
  }
  fuzz_case make(std::string klass, std::string what, bytes_t bytes, expectation e) const {
    return {separate, stage, receiver, source, std::move(bytes), std::move(klass), std::move(what), std::move(e)};
  }
};

corpus_buffer make_corpus(bool separate, int st) {
  scenario s(separate, st);
  corpus_buffer c;
  c.separate = separate;
  c.stage = st;
  c.receiver = s.receiver();
  c.source = s.source();
  c.target = s.target_handle();
  c.other = s.other_handle();
  c.bytes = s.genuine_bytes();
  for (std::size_t at = 0; at < c.bytes.size();) {
    std::uint32_t const first = get32(c.bytes, at);
    if (d::is_repeat_word(first)) {
      REQUIRE(!c.requests.empty());
      std::size_t const count = d::repeat_count(first), last = c.requests.size() + count - 1;
      request_info r = c.requests.back();
      r.repeat = true;
      r.repeat_last = last;
      for (std::size_t k = 0; k < count; ++k) {
        r.start = r.at = k == 0 ? at : r.end();
        r.head_bytes = k == 0 ? sizeof first : 0;
        c.requests.push_back(r);
      }
    } else {
      request_info r{at, at, {}, nullptr};
      if (at % 8 != 0) {
        REQUIRE(first == 0);  // a pad word
        r.at += 4;
      }
      std::memcpy(&r.h, c.bytes.data() + r.at, sizeof r.h);
      r.entry = d::handler_table::instance().find(r.h.handler & d::handler_mask);
      REQUIRE(r.entry != nullptr);
      c.requests.push_back(r);
    }
    at = c.requests.back().next(c.requests.size() - 1);
  }
  return c;
}

// ---- targeted mutations ---------------------------------------------------------------

expectation decoded(std::vector<std::string> records) {
  expectation e;
  e.want = expectation::result::decoded;
  e.records = std::move(records);
  return e;
}
expectation fatal(std::vector<std::string> records) {
  expectation e;
  e.want = expectation::result::fatal;
  e.records = std::move(records);
  return e;
}

// Cut at every byte: the requests wholly inside run, those of a repeat
// record only when all of it is (it is checked whole); the cut one never does.
void truncations(corpus_buffer const& c, std::vector<fuzz_case>& out) {
  for (std::size_t k = 0; k < c.bytes.size(); ++k) {
    bytes_t cut(c.bytes.begin(), c.bytes.begin() + static_cast<std::ptrdiff_t>(k));
    std::size_t whole = 0, cursor = 0;
    while (whole < c.requests.size()) {
      request_info const& r = c.requests[whole];
      std::size_t const last = r.repeat ? r.repeat_last : whole;
      if (c.requests[last].end() > k) break;
      cursor = std::min(c.requests[last].next(last), k);
      whole = last + 1;
    }
    std::string what = "cut to " + std::to_string(k) + " bytes";
    if (cursor == k) {
      out.push_back(c.make("truncated", std::move(what), std::move(cut), decoded(c.records_before(whole))));
      continue;
    }
    request_info const& r = c.requests[whole];  // the record cut
    bool const in_head = k < r.at + r.head();
    expectation e = fatal(c.records_before(whole));
    e.message = c.where(cursor, k) + (in_head ? "truncated request header" : "payload runs past the end of the buffer") +
                " (not executed)";
    out.push_back(c.make(in_head ? "truncated header" : "truncated payload", std::move(what), std::move(cut),
                         std::move(e)));
  }
}

void header_mutations(corpus_buffer const& c, std::vector<fuzz_case>& out) {
  std::size_t const size = c.bytes.size();
  auto const table_size = static_cast<std::uint32_t>(d::handler_table::instance().size());
  for (std::size_t i = 0; i < c.requests.size(); ++i) {
    request_info const& r = c.requests[i];
    if (r.repeat) continue;  // no header of its own (repeat_mutations)
    std::uint32_t const id = r.h.handler & d::handler_mask;
    std::string const req = "request " + std::to_string(i) + " (" +
                            d::rmi_kind_names[static_cast<std::size_t>(r.entry->kind)] + ", handler " +
                            std::to_string(id) + ")";

    // An id the handler table does not hold (handler_mask, route_id and
    // hop_id make repeat, route and hop words).
    for (std::uint32_t bad : {table_size, table_size + 7, d::hop_id - 1}) {
      bytes_t m = c.bytes;
      put32(m, r.at, (r.h.handler & ~d::handler_mask) | bad);
      expectation e = fatal(c.records_before(i));
      e.message = c.where(r.start, size) + "unknown handler id " + std::to_string(bad) + " (not executed)";
      out.push_back(c.make("unknown handler id", req + " -> id " + std::to_string(bad), std::move(m), e));
    }

    // A payload size other than the one written.
    std::vector<std::uint32_t> sizes{r.h.payload_bytes + 1, r.h.payload_bytes + 8, static_cast<std::uint32_t>(size),
                                     0xffff'ffffu, 0x8000'0000u};
    if (r.h.payload_bytes != 0) sizes.insert(sizes.end(), {r.h.payload_bytes - 1, 0u});
    for (std::uint32_t p : sizes) {
      bytes_t m = c.bytes;
      put32(m, r.at + 4, p);
      std::string what = req + ": payload_bytes " + std::to_string(r.h.payload_bytes) + " -> " + std::to_string(p);
      expectation e = fatal(c.records_before(i));
      if (r.at + sizeof r.h + p > size) {
        e.message = c.where(r.start, size) + "payload runs past the end of the buffer (not executed)";
      } else if (r.entry->kind == d::rmi_kind::collective) {
        // Opaque bytes for the collective call that takes them: only a size
        // below their fixed prefix is malformed here.
        if (p >= d::collective_stub::prefix) {
          e.want = expectation::result::either;
          e.exact_records = false;
        }
        e.message_parts = {"malformed request from location", "truncated collective message", "(not executed)"};
      } else {
        e.message_parts = {"malformed request from location " + std::to_string(c.source), "(not executed)"};
      }
      out.push_back(c.make("payload size", std::move(what), std::move(m), std::move(e)));
    }

    if (!r.is_method()) continue;

    // A method index no one defined.
    {
      bytes_t m = c.bytes;
      std::uint32_t const index = d::max_methods_per_type - 1;
      put32(m, r.at, id | (index << d::handler_bits));
      expectation e = fatal(c.records_before(i));
      if (c.separate && r.entry->define != nullptr)  // a method constant's stub has no index to translate
        e.message = c.where(r.start, size) + "method index " + std::to_string(index) + " of handler " +
                    std::to_string(id) + " was never defined by that location (not executed)";
      else
        e.message_parts = {"malformed request from location", "armi: unknown method index", "(not executed)"};
      out.push_back(c.make("unknown method index", req, std::move(m), std::move(e)));
    }

    // A handle that names no object here: a one-sided request ends the run,
    // an answered one gets an error reply; neither runs.
    struct handle_change {
      char const* what;
      std::uint32_t index, epoch;
    };
    handle_change const changes[] = {
        {"index + 1000", r.h.handle_index + 1000, r.h.handle_epoch},
        {"epoch + 1000", r.h.handle_index, r.h.handle_epoch + 1000},
        {"epoch 0", r.h.handle_index, 0},
        {"explicit-handle bit", r.h.handle_index | d::explicit_handle_bit, r.h.handle_epoch},
    };
    for (auto const& hc : changes) {
      bytes_t m = c.bytes;
      put32(m, r.at + 8, hc.index);
      put32(m, r.at + 12, hc.epoch);
      std::string what = req + ": handle " + hc.what;
      if (r.answers()) {
        out.push_back(c.make("unknown handle", std::move(what), std::move(m), decoded(c.records_without(i))));
      } else {
        expectation e = fatal(c.records_before(i));
        e.message_parts = {"RMI to unknown or destroyed handle{" + std::to_string(hc.index) + "," +
                           std::to_string(hc.epoch) + "}"};
        out.push_back(c.make("unknown handle", std::move(what), std::move(m), std::move(e)));
      }
    }

    // The handle of the live object of the other type.
    {
      armi::rmi_handle const swapped = r.h.handle_index == c.target.index ? c.other : c.target;
      bytes_t m = c.bytes;
      put32(m, r.at + 8, swapped.index);
      put32(m, r.at + 12, swapped.epoch);
      expectation e = fatal(c.records_before(i));
      e.message_parts = {"targets handle{" + std::to_string(swapped.index) + "," + std::to_string(swapped.epoch) + "}",
                         ", not a "};
      out.push_back(c.make("wrong object type", req, std::move(m), std::move(e)));
    }
  }
}

// The framing of repeat records and pad words (core/wire.hpp): a repeat as
// the first record has no header to repeat; a repeat's count that takes its
// payloads past the end is checked before any of them runs; a pad word that
// is not zero would put a header off its alignment.  Each ends the run before
// that record.
void repeat_mutations(corpus_buffer const& c, std::vector<fuzz_case>& out) {
  std::size_t const size = c.bytes.size();
  if (!c.requests.empty()) {
    bytes_t m = c.bytes;
    put32(m, 0, d::repeat_word(1));
    expectation e = fatal({});
    e.message = c.where(0, size) + "a repeated request with no request before it (not executed)";
    out.push_back(c.make("repeat first", "request 0 -> a repeat word", std::move(m), std::move(e)));
  }
  for (std::size_t i = 0; i < c.requests.size(); ++i) {
    request_info const& r = c.requests[i];
    if (!r.repeat || r.head() == 0 || r.h.payload_bytes == 0) continue;
    for (std::uint32_t count : {std::uint32_t{d::max_repeat_count},
                                static_cast<std::uint32_t>((size - r.at) / r.h.payload_bytes + 1)}) {
      if (count > d::max_repeat_count || std::uint64_t{count} * r.h.payload_bytes <= size - r.at - 4) continue;
      bytes_t m = c.bytes;
      put32(m, r.at, d::repeat_word(count));
      expectation e = fatal(c.records_before(i));
      e.message = c.where(r.start, size) + "payload runs past the end of the buffer (not executed)";
      out.push_back(c.make("repeat count", "request " + std::to_string(i) + ": a repeat of " + std::to_string(count),
                           std::move(m), std::move(e)));
    }
  }
  for (std::size_t i = 0; i < c.requests.size(); ++i) {
    request_info const& r = c.requests[i];
    if (r.start == r.at) continue;
    for (std::uint32_t bad : {1u, 0x8000'0000u, 0xffff'fffcu}) {  // none a repeat, route or hop word
      bytes_t m = c.bytes;
      put32(m, r.start, bad);
      expectation e = fatal(c.records_before(i));
      e.message = c.where(r.start, size) + "a request header that is not at a multiple of 8 bytes (not executed)";
      out.push_back(c.make("pad word", "request " + std::to_string(i) + ": pad word -> " + std::to_string(bad),
                           std::move(m), std::move(e)));
    }
  }
}

// Route records (--armi-routing) in place of a request's header: one with
// flags no writer sets, one naming a location the run does not have, one
// for the other location, which a location that routes nothing cannot
// pass on, and a hop record, which it cannot read.  Each ends the run
// before that record.
void route_mutations(corpus_buffer const& c, std::vector<fuzz_case>& out) {
  std::size_t const size = c.bytes.size();
  for (std::size_t i = 0; i < c.requests.size(); ++i) {
    request_info const& r = c.requests[i];
    if (r.repeat || r.start != r.at) continue;  // after a pad word a header is read, never a route
    std::string const req = "request " + std::to_string(i);
    {
      bytes_t m = c.bytes;
      put32(m, r.at, d::route_id | (1u << 31));
      expectation e = fatal(c.records_before(i));
      e.message = c.where(r.start, size) + "a route record with unknown flags (not executed)";
      out.push_back(c.make("route record", req + " -> a route word with unknown flags", std::move(m), std::move(e)));
    }
    for (std::uint32_t dest : {2u, 1000u, 0xffff'fffeu}) {
      bytes_t m = c.bytes;
      put32(m, r.at, d::route_id);
      put32(m, r.at + 4, dest);
      expectation e = fatal(c.records_before(i));
      e.message = c.where(r.start, size) + "a route record naming location " + std::to_string(dest) + " of 2" +
                  " (not executed)";
      out.push_back(c.make("route record", req + " -> a route to location " + std::to_string(dest), std::move(m),
                           std::move(e)));
    }
    {
      bytes_t m = c.bytes;
      put32(m, r.at, d::route_id);
      put32(m, r.at + 4, c.source);
      expectation e = fatal(c.records_before(i));
      e.message = c.where(r.start, size) + "a route record for location " + std::to_string(c.source) +
                  ", which this location does not pass requests on to (--armi-routing=direct here) (not executed)";
      out.push_back(c.make("route record", req + " -> a route back to the sender", std::move(m), std::move(e)));
    }
    {
      bytes_t m = c.bytes;
      put32(m, r.at, d::hop_word(0));
      expectation e = fatal(c.records_before(i));
      e.message = c.where(r.start, size) +
                  "a hop record, which a location under --armi-routing=direct does not read (not executed)";
      out.push_back(c.make("route record", req + " -> a hop record", std::move(m), std::move(e)));
    }
  }
}

// A collective message's status word (value or failed) that is neither.
void collective_mutations(corpus_buffer const& c, std::vector<fuzz_case>& out) {
  for (std::size_t i = 0; i < c.requests.size(); ++i) {
    request_info const& r = c.requests[i];
    if (r.repeat || r.entry->kind != d::rmi_kind::collective) continue;
    for (std::uint32_t bad : {2u, 0xffff'ffffu}) {
      bytes_t m = c.bytes;
      put32(m, r.at + sizeof r.h + 20, bad);
      expectation e = fatal(c.records_before(i));
      e.message_parts = {"malformed request from location " + std::to_string(c.source),
                         "collective message with an unknown status " + std::to_string(bad), "(not executed)"};
      out.push_back(c.make("collective status", "request " + std::to_string(i) + ": status -> " + std::to_string(bad),
                           std::move(m), std::move(e)));
    }
  }
}

// Damaged fields inside payloads: a string's length, a vector's and a map's
// size, a define_type's declared and dynamic counts and its offset, a bool.
void payload_mutations(corpus_buffer const& c, std::vector<fuzz_case>& out) {
  using namespace armi::detail;
  using ft = fuzz_target;
  // Stubs whose payload starts with an element count (after the reply tag of
  // the kinds that answer).
  std::map<std::uint32_t, std::size_t> const leading_count{
      {handler_id<method_stub<rmi_kind::async, decltype(&ft::put_string)>>::value, 0},
      {handler_id<method_stub<rmi_kind::async, decltype(&ft::put_vector)>>::value, 0},
      {handler_id<method_stub<rmi_kind::async, decltype(&ft::put_map)>>::value, 0},
      {handler_id<method_stub<rmi_kind::sync, decltype(&ft::sum_of)>>::value, 8},
      {handler_id<method_stub<rmi_kind::opaque, decltype(&ft::echo)>>::value, 8},
  };
  std::uint32_t const shape_stub = handler_id<method_stub<rmi_kind::async, decltype(&ft::put_shape)>>::value;
  std::uint32_t const flag_stub = handler_id<method_stub<rmi_kind::async, decltype(&ft::set_flag)>>::value;
  std::uint32_t const view_stub = handler_id<method_stub<rmi_kind::async, decltype(&ft::put_view)>>::value;
  std::uint32_t const reply_stub_id = handler_id<reply_stub>::value;
  char const* const exceeds = "element count exceeds the RMI payload";

  for (std::size_t i = 0; i < c.requests.size(); ++i) {
    request_info const& r = c.requests[i];
    std::uint32_t const id = r.h.handler & handler_mask;
    std::string const req = "request " + std::to_string(i);
    std::size_t const payload = r.at + r.head();
    auto const malformed = [&](std::vector<std::string> const& parts) {
      expectation e = fatal(c.records_before(i));
      e.message_parts = {"malformed request from location " + std::to_string(c.source), "(not executed)"};
      e.message_parts.insert(e.message_parts.end(), parts.begin(), parts.end());
      return e;
    };

    if (auto it = leading_count.find(id); it != leading_count.end()) {
      std::size_t const at = payload + it->second;
      std::uint64_t const n = get64(c.bytes, at);
      std::vector<std::pair<std::uint64_t, std::vector<std::string>>> counts{
          {n + 1, {}},
          {std::uint64_t{1} << 40, {exceeds}},
          {(std::uint64_t{1} << 40) + 1, {exceeds}},
          {n + (std::uint64_t{1} << 32), {exceeds}},
          {~std::uint64_t{0}, {exceeds}},
      };
      if (n != 0) counts.push_back({n - 1, {}});
      for (auto const& [value, parts] : counts) {
        bytes_t m = c.bytes;
        put64(m, at, value);
        out.push_back(c.make("payload count", req + ": count " + std::to_string(n) + " -> " + std::to_string(value),
                             std::move(m), malformed(parts)));
      }
    }

    // set_flag(bool, uint16_t) on the wire: the bool's byte, then the level.
    // A bool is 0 or 1; any other byte is malformed (reading it would be
    // undefined behaviour), while 0 is a valid, different request.
    if (id == flag_stub) {
      for (std::uint8_t v : {std::uint8_t{2}, std::uint8_t{0x80}, std::uint8_t{0xff}}) {
        bytes_t m = c.bytes;
        m[payload] = std::byte{v};
        out.push_back(c.make("bool byte", req + ": bool byte " + std::to_string(v), std::move(m),
                             malformed({"a bool on the wire is neither 0 nor 1"})));
      }
      bytes_t m = c.bytes;
      m[payload] = std::byte{0};
      std::vector<std::string> records = c.records;
      std::size_t const mine = c.records_before(i).size();
      records[mine] = "set_flag false 9";
      out.push_back(c.make("bool byte", req + ": bool byte 0", std::move(m), decoded(std::move(records))));
    }

    // put_view('v', 3 elements) on the wire: the char, the count, padding,
    // the elements.  A count with lent_bit makes a lent record (address,
    // return word, lender: armi::lend), which no buffer here may carry:
    // misaligned, or from a lender that is no location, it is malformed.
    // One with apart_bit names a message sent apart (a tag), which no
    // transport here sends: too long, or any other, it is malformed.
    if (id == view_stub) {
      struct lent_change {
        char const* what;
        std::uint64_t address;
        std::uint64_t lender;
        char const* part;
      };
      for (auto const& ch : {lent_change{"misaligned", 4, c.source, "a lent view's range is malformed"},
                             lent_change{"from no location", 8, 999, "a lent view (armi::lend) where none may arrive"}}) {
        bytes_t m = c.bytes;
        put64(m, payload + 1, 3 | armi::detail::lent_bit);
        put64(m, payload + 9, ch.address);
        put64(m, payload + 17, 64);  // the return word's address: never used
        put64(m, payload + 25, ch.lender);
        out.push_back(c.make("lent view", req + ": lent record, " + ch.what, std::move(m), malformed({ch.part})));
      }
      struct apart_change {
        char const* what;
        std::uint64_t count;
        char const* part;
      };
      for (auto const& ch : {apart_change{"too long", std::uint64_t{1} << 41, "a view sent apart is malformed"},
                             apart_change{"where none comes", 3, "a view sent apart (armi::lend) where none may"}}) {
        bytes_t m = c.bytes;
        put64(m, payload + 1, ch.count | armi::detail::apart_bit);
        put64(m, payload + 9, 0);  // the tag
        out.push_back(c.make("lent view", req + ": apart record, " + ch.what, std::move(m), malformed({ch.part})));
      }
    }

    // A shape on the wire: int n | u64 count | n x i64 | i64 mark | string.
    std::optional<std::size_t> shape_at;
    if (id == shape_stub) shape_at = payload;
    if (id == reply_stub_id && r.h.payload_bytes > 16 + 12 && get32(c.bytes, payload + 16) == 2 &&
        get64(c.bytes, payload + 20) == 2)
      shape_at = payload + 16;  // the answer of reshape(2): tag | status | pad | shape
    if (!shape_at) continue;
    std::size_t const at = *shape_at;
    auto const n = static_cast<int>(get32(c.bytes, at));
    char const* const differs = "element count on the wire differs";
    struct change {
      char const* what;
      std::optional<int> n;
      std::optional<std::uint64_t> count;
      std::vector<std::string> parts;
    };
    std::vector<change> const changes{
        {"declared n + 1", n + 1, std::nullopt, {differs}},
        {"declared n = -1", -1, std::nullopt, {differs}},
        {"dynamic count + 1", std::nullopt, std::uint64_t(n) + 1, {differs}},
        {"dynamic count 2^40", std::nullopt, std::uint64_t{1} << 40, {differs}},
        {"both n + 1", n + 1, std::uint64_t(n) + 1, {}},
        // Consistent, and far more than the payload holds: rejected before
        // anything is allocated.
        {"both INT_MAX", INT_MAX, std::uint64_t{INT_MAX}, {exceeds}},
        {"both 2^20", 1 << 20, std::uint64_t{1} << 20, {exceeds}},
        {"offset past its block", std::nullopt, std::nullopt, {"offset() points outside its block"}},
    };
    for (auto const& ch : changes) {
      bytes_t m = c.bytes;
      if (ch.n) put32(m, at, static_cast<std::uint32_t>(*ch.n));
      if (ch.count) put64(m, at + 4, *ch.count);
      if (!ch.n && !ch.count) put64(m, at + 12 + 8 * static_cast<std::size_t>(n), std::uint64_t(n) + 1);
      out.push_back(c.make("shape count", req + ": " + ch.what, std::move(m), malformed(ch.parts)));
    }
  }
}

// Any damaged byte of a define request (separate processes): rejected before
// its code address is registered, so the request after it finds its method
// index undefined or never runs.
void define_mutations(corpus_buffer const& c, std::vector<fuzz_case>& out) {
  for (std::size_t i = 0; i < c.requests.size(); ++i) {
    request_info const& r = c.requests[i];
    if (r.entry->kind != d::rmi_kind::define) continue;
    for (std::size_t k = 0; k < r.h.payload_bytes; ++k) {
      for (std::uint8_t mask : {std::uint8_t{0x01}, std::uint8_t{0x80}}) {
        bytes_t m = c.bytes;
        std::size_t const at = r.at + sizeof r.h + k;
        m[at] ^= std::byte{mask};
        expectation e = fatal(c.records_before(i));
        e.message_parts = {"malformed request from location " + std::to_string(c.source),
                           "armi: method definition damaged (check word mismatch) (not executed)"};
        out.push_back(c.make("define damaged", "request " + std::to_string(i) + ": byte " + std::to_string(k) +
                                                   " of its payload ^ " + std::to_string(mask),
                             std::move(m), std::move(e)));
      }
    }
  }
}

// ---- random mutations ------------------------------------------------------------------

class random_source {
 public:
  explicit random_source(std::uint64_t seed) : m_gen(seed) {}
  std::uint64_t below(std::uint64_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<std::uint64_t>(0, n - 1)(m_gen);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(m_gen); }
  std::byte byte() { return static_cast<std::byte>(below(256)); }

 private:
  std::mt19937_64 m_gen;
};

// A few bytes of a genuine buffer changed: the requests before the first
// change run exactly as they did, whatever the rest does.
void random_flips(corpus_buffer const& c, random_source& rnd, std::size_t cases, std::vector<fuzz_case>& out) {
  static constexpr std::uint8_t special[] = {0x00, 0xff, 0x7f, 0x80, 0x01};
  for (std::size_t k = 0; k < cases; ++k) {
    bytes_t m = c.bytes;
    std::size_t const flips = 1 + rnd.below(3);
    std::size_t first = m.size();
    std::string what = "bytes";
    for (std::size_t f = 0; f < flips; ++f) {
      std::size_t at;
      if (rnd.chance(0.4)) {  // inside a header
        request_info const* r = &c.requests[rnd.below(c.requests.size())];
        while (r->head() == 0) --r;  // a repeat's later request: its record's word
        at = r->at + rnd.below(r->head());
      } else {
        at = rnd.below(m.size());
      }
      std::byte const v = rnd.chance(0.3) ? std::byte{special[rnd.below(sizeof special)]}
                                          : m[at] ^ static_cast<std::byte>(1 + rnd.below(255));
      what += " [" + std::to_string(at) + "]=" + std::to_string(std::to_integer<int>(v));
      m[at] = v;
      first = std::min(first, at);
    }
    std::size_t whole = 0;
    while (whole < c.requests.size() && c.requests[whole].end() <= first) ++whole;
    expectation e;
    e.records = c.records_before(whole);
    e.exact_records = false;
    out.push_back(c.make("random flips", std::move(what), std::move(m), std::move(e)));
  }
}

// Buffers made up from scratch, delivered in the last stage (answers are
// pending at location 0): pure noise, and requests with real handler ids and
// handles whose payloads are runs of plausible fields (small counts, short
// strings, reply tags), to reach deep into the decoders.
void random_garbage(corpus_buffer const& c, random_source& rnd, std::size_t cases, std::vector<fuzz_case>& out) {
  auto const table_size = d::handler_table::instance().size();
  for (std::size_t k = 0; k < cases; ++k) {
    location_id const receiver = rnd.chance(0.7) ? 1 : 0;
    bytes_t m;
    std::string klass;
    if (rnd.chance(0.15)) {
      klass = "random noise";
      m.resize(rnd.below(160));
      for (auto& b : m) b = rnd.byte();
    } else {
      klass = "random requests";
      for (std::size_t q = 1 + rnd.below(3); q > 0; --q) {
        bytes_t p;
        auto const add = [&p](void const* src, std::size_t n) {
          auto const* b = static_cast<std::byte const*>(src);
          p.insert(p.end(), b, b + n);
        };
        for (std::size_t f = rnd.below(7); f > 0; --f) {
          switch (rnd.below(6)) {
            case 0: {  // a small count
              std::uint64_t const v = rnd.below(6);
              add(&v, 8);
              break;
            }
            case 1: {  // a short string
              std::uint64_t const v = rnd.below(5);
              add(&v, 8);
              for (std::uint64_t j = 0; j < v; ++j) p.push_back(static_cast<std::byte>('a' + rnd.below(26)));
              break;
            }
            case 2: {  // a small int, bool or flag
              auto const v = static_cast<std::uint32_t>(rnd.below(4));
              add(&v, 1 + rnd.below(4));
              break;
            }
            case 3: {  // a reply tag as the runtime makes them: slot | generation << 32
              std::uint64_t const v = rnd.below(5) | (std::uint64_t{1 + rnd.below(2)} << 32);
              add(&v, 8);
              break;
            }
            default:
              for (std::size_t j = rnd.below(9); j > 0; --j) p.push_back(rnd.byte());
          }
        }
        d::request_header h{};
        h.handler = static_cast<std::uint32_t>(rnd.chance(0.9) ? rnd.below(table_size) : rnd.below(1u << 20));
        h.handler |= static_cast<std::uint32_t>(rnd.chance(0.8) ? rnd.below(2) : rnd.below(4096)) << d::handler_bits;
        armi::rmi_handle hd = rnd.chance(0.7) ? c.target : c.other;
        if (rnd.chance(0.15)) hd = {static_cast<std::uint32_t>(rnd.below(4)), static_cast<std::uint32_t>(rnd.below(3))};
        h.handle_index = hd.index;
        h.handle_epoch = hd.epoch;
        h.payload_bytes = static_cast<std::uint32_t>(rnd.chance(0.9) ? p.size() : rnd.below(p.size() + 16));
        if (m.size() % 8 != 0) {  // a pad word, mostly zero
          std::uint32_t const pad = rnd.chance(0.9) ? 0u : static_cast<std::uint32_t>(rnd.below(3));
          m.resize(m.size() + 4);
          std::memcpy(m.data() + m.size() - 4, &pad, 4);
        }
        std::size_t const at = m.size();
        m.resize(at + sizeof h);
        std::memcpy(m.data() + at, &h, sizeof h);
        m.insert(m.end(), p.begin(), p.end());
        m.resize(d::align8(m.size()));
        // A repeat of it: its payload again, a few times (mostly of the size
        // it declares), under a count that is mostly right.
        if (rnd.chance(0.3)) {
          std::size_t const copies = 1 + rnd.below(3);
          std::uint32_t const count =
              rnd.chance(0.9) ? static_cast<std::uint32_t>(copies) : static_cast<std::uint32_t>(1 + rnd.below(4096));
          std::size_t const word_at = m.size();
          m.resize(word_at + 4);
          put32(m, word_at, d::repeat_word(count));
          for (std::size_t r = copies; r > 0; --r) {
            std::size_t const n =
                rnd.chance(0.9) ? std::min<std::size_t>(h.payload_bytes, p.size()) : rnd.below(p.size() + 1);
            m.insert(m.end(), p.begin(), p.begin() + static_cast<std::ptrdiff_t>(n));
          }
          m.resize(d::align4(m.size()));
        }
      }
    }
    expectation e;
    e.exact_records = false;
    fuzz_case fc = c.make(std::move(klass), std::to_string(m.size()) + " bytes to location " + std::to_string(receiver),
                          std::move(m), std::move(e));
    fc.receiver = receiver;
    fc.source = 1 - receiver;
    out.push_back(std::move(fc));
  }
}

// ---- the driver --------------------------------------------------------------------------

std::uint64_t env_number(char const* name, std::uint64_t fallback) {
  char const* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

// A sanitizer build (scale divisor > 1) runs each case about ten times slower.
constexpr std::size_t default_random_cases = ARMI_TEST_SCALE_DIVISOR > 1 ? 3000 : 6000;

// One case of each targeted kind alone in a child, with armi's real
// fatal_exit: the process ends with status 1 and armi's message, after
// running exactly the requests before the damage.
std::size_t check_real_exits(std::vector<fuzz_case> const& cases, std::vector<std::string>& failures) {
  std::vector<std::string> seen;
  for (auto const& c : cases) {
    bool const targeted = c.expect.want == expectation::result::fatal && c.expect.exact_records &&
                          (!c.expect.message.empty() || !c.expect.message_parts.empty());
    if (!targeted || std::find(seen.begin(), seen.end(), c.klass) != seen.end()) continue;
    seen.push_back(c.klass);
    child_exit const r = run_child([&] {
      ::alarm(case_seconds);
      try {
        run_one(c);
      } catch (...) {
        _exit(3);
      }
    });
    outcome o;
    std::size_t messages = 0;
    std::size_t pos = 0;
    while (pos < r.output.size()) {
      std::size_t const eol = std::min(r.output.find('\n', pos), r.output.size());
      std::string const line = r.output.substr(pos, eol - pos);
      pos = eol + 1;
      if (line.rfind("@ ", 0) == 0) {
        o.records.push_back(line.substr(2));
        if (messages != 0) o.ran_after_message = true;
      } else if (line.rfind("armi: ", 0) == 0 && messages++ == 0) {
        o.message = line.substr(6);
      } else {
        o.other += line + "\n";
      }
    }
    o.fatal = r.code == EXIT_FAILURE;
    if (r.code != EXIT_FAILURE) o.crash = r.how.empty() ? "the process went on (exit 0)" : r.how;
    if (messages > 1) o.other += "(armi printed " + std::to_string(messages) + " messages)\n";
    if (std::string const problem = judge(o, c.expect); !problem.empty())
      failures.push_back("real exit: " + report(c, o, problem));
  }
  return seen.size();
}

void fuzz_scenario(bool separate) {
  auto const start = std::chrono::steady_clock::now();
  std::string const label = separate ? "separate processes" : "one process";
  std::uint64_t const seed = env_number("ARMI_FUZZ_SEED", 1);
  std::size_t const random_cases = env_number("ARMI_FUZZ_CASES", default_random_cases);
  random_source rnd(seed * 2 + (separate ? 1 : 0));

  // The corpus, and what its genuine runs do.
  std::vector<corpus_buffer> corpus;
  std::vector<fuzz_case> genuine;
  for (int st = 0; st < num_stages; ++st) {
    corpus.push_back(make_corpus(separate, st));
    genuine.push_back(corpus.back().make("genuine", "unchanged", corpus.back().bytes, expectation{}));
  }
  auto const genuine_runs = run_cases(genuine);
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    outcome const& o = genuine_runs[i];
    INFO(report(genuine[i], o, "the genuine buffer"));
    REQUIRE(o.crash.empty());
    REQUIRE(o.other.empty());
    REQUIRE(!o.fatal);
    corpus[i].records = o.records;
    REQUIRE(o.records.size() == static_cast<std::size_t>(std::count_if(
                                    corpus[i].requests.begin(), corpus[i].requests.end(),
                                    [](request_info const& r) { return r.records(); })));
  }
  {
    // The whole genuine run in this process: every call gets its genuine answer.
    scenario s(separate, one_sided);
    CHECK(s.finish_genuinely());
  }

  std::vector<fuzz_case> cases;
  std::size_t corpus_bytes = 0;
  for (auto const& c : corpus) corpus_bytes += c.bytes.size();
  for (auto const& c : corpus) {
    truncations(c, cases);
    header_mutations(c, cases);
    repeat_mutations(c, cases);
    route_mutations(c, cases);
    collective_mutations(c, cases);
    payload_mutations(c, cases);
    define_mutations(c, cases);
    random_flips(c, rnd, random_cases * 3 / 4 * c.bytes.size() / corpus_bytes, cases);
  }
  random_garbage(corpus.back(), rnd, random_cases / 4, cases);

  auto const results = run_cases(cases);
  std::vector<std::string> failures;
  std::size_t failed = 0, fatal_count = 0, undecodable = 0;
  std::map<std::string, std::size_t> per_class;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    ++per_class[cases[i].klass];
    fatal_count += results[i].fatal;
    undecodable += results[i].message.find("could not be decoded") != std::string::npos;
    std::string const problem = judge(results[i], cases[i].expect);
    if (problem.empty()) continue;
    if (++failed <= 25) failures.push_back(report(cases[i], results[i], problem));
  }
  std::size_t const real = check_real_exits(cases, failures);

  double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string classes;
  for (auto const& [k, n] : per_class) classes += (classes.empty() ? "" : ", ") + k + " " + std::to_string(n);
  std::printf("decoder_fuzz [%s, seed %llu]: %zu cases in %.1f s (%s); %zu ended in a fatal error, %zu of them "
              "not a decode_error; %zu run alone with the real fatal exit\n",
              label.c_str(), static_cast<unsigned long long>(seed), cases.size(), seconds, classes.c_str(),
              fatal_count, undecodable, real);
  std::fflush(stdout);
  for (auto const& f : failures) UNSCOPED_INFO(f);
  if (failed > 25) UNSCOPED_INFO("... " << failed - 25 << " more failing cases");
  CHECK(failed == 0);
  CHECK(failures.empty());
}

}  // namespace

TEST_CASE("decoder: fuzzed, truncated and garbage buffers between locations of one process", "[fuzz]") {
  fuzz_scenario(false);
}

TEST_CASE("decoder: fuzzed, truncated and garbage buffers between locations of separate processes", "[fuzz]") {
  fuzz_scenario(true);
}
