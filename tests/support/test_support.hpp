// Shared helpers for armi's Catch2 tests.
//
// Catch2 v2 assertions are not thread-safe, and armi runs the test body on
// several location threads at once.  Inside a body use ARMI_CHECK(cond), which
// records failures in a thread-safe list; armi_test::run() then asserts on the
// main thread that the run exited 0 and recorded nothing.
#pragma once

#include <armi/armi.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#ifndef ARMI_TEST_SCALE_DIVISOR
#define ARMI_TEST_SCALE_DIVISOR 1
#endif

namespace armi_test {

// The configuration given on the test program's command line
// (--armi-locations=N --armi-aggregation=A ...), parsed by tests/main.cpp.
inline armi::config& run_config() {
  static armi::config cfg;
  return cfg;
}

// A 64-bit mixing function (splitmix64's finalizer): deterministic test data
// from an index or a seed, the same on every location.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Problem sizes shrink under sanitizers (ARMI_TEST_SCALE_DIVISOR > 1).
constexpr std::size_t scaled(std::size_t n) {
  std::size_t const s = n / ARMI_TEST_SCALE_DIVISOR;
  return s == 0 ? 1 : s;
}

class failure_log {
 public:
  void add(std::string msg) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_messages.size() < 50) m_messages.push_back(std::move(msg));
    ++m_count;
  }
  std::size_t count() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_count;
  }
  std::vector<std::string> take() {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_count = 0;
    return std::exchange(m_messages, {});
  }

 private:
  mutable std::mutex m_mutex;
  std::vector<std::string> m_messages;
  std::size_t m_count = 0;
};

inline failure_log& failures() {
  static failure_log log;
  return log;
}

// Runs body on every location with run_config() (or cfg), then asserts on the
// calling (Catch2) thread that the run succeeded and no ARMI_CHECK failed.
// On the sp2 backend's process mode every location is a forked process with
// its own failure log, which this process never sees: there the body prints
// its location's failures and turns them into a non-zero exit code, which
// the run returns.
inline void run(armi::config const& cfg, std::function<void()> const& body) {
  failures().take();
  int const rc = cfg.backend == "sp2" && cfg.sp2_mode == "process"
                     ? armi::execute(cfg,
                                     [&] {
                                       body();
                                       armi::rmi_fence();  // the body's RMIs ran (and checked) here
                                       auto const msgs = failures().take();
                                       for (auto const& m : msgs) std::fprintf(stderr, "%s\n", m.c_str());
                                       return msgs.empty() ? 0 : 1;
                                     })
                     : armi::execute(cfg, body);
  auto const msgs = failures().take();
  for (auto const& m : msgs) UNSCOPED_INFO(m);
  CHECK(msgs.empty());
  REQUIRE(rc == 0);
}
inline void run(std::function<void()> const& body) { run(run_config(), body); }

}  // namespace armi_test

#define ARMI_CHECK(...)                                                        \
  do {                                                                         \
    if (!(__VA_ARGS__)) {                                                      \
      std::ostringstream armi_check_os_;                                       \
      armi_check_os_ << __FILE__ << ':' << __LINE__ << ": location "           \
                     << armi::get_location_id() << ": ARMI_CHECK(" #__VA_ARGS__ \
                     << ") failed";                                            \
      ::armi_test::failures().add(armi_check_os_.str());                       \
    }                                                                          \
  } while (false)

// Like ARMI_CHECK, for a == b, printing both values.
#define ARMI_CHECK_EQ(a, b)                                                    \
  do {                                                                         \
    auto const& armi_a_ = (a);                                                 \
    auto const& armi_b_ = (b);                                                 \
    if (!(armi_a_ == armi_b_)) {                                               \
      std::ostringstream armi_check_os_;                                       \
      armi_check_os_ << __FILE__ << ':' << __LINE__ << ": location "           \
                     << armi::get_location_id() << ": ARMI_CHECK_EQ(" #a ", " #b \
                     << ") failed: " << armi_a_ << " != " << armi_b_;          \
      ::armi_test::failures().add(armi_check_os_.str());                       \
    }                                                                          \
  } while (false)

namespace armi_test {

// call(m), with m the method F named as a constant (armi::method<F>) when
// `constant`, else as a pointer (F): the two forms every RMI takes, which
// the matrix tests mix in one stream.
template <auto F, class Call>
decltype(auto) either_form(bool constant, Call&& call) {
  if (constant) return call(armi::method<F>);
  return call(F);
}

// What a location threw from a call that must fail on every member of a
// collective.
struct thrown_error {
  std::string type, what;
};

// Runs call, which must throw on every member: on location `at`, where it
// failed, its own exception; on every other member a remote_error naming
// `at`.  Records a failure if this location got the wrong one (or nothing),
// and returns the type's name and message for the caller to check.
template <class F>
thrown_error collective_failure(armi::location_id at, F&& call) {
  armi::location_id const me = armi::get_location_id();
  std::string const where =
      "location " + std::to_string(me) + ", failure expected from location " + std::to_string(at) + ": ";
  try {
    call();
    failures().add(where + "the call returned");
  } catch (armi::remote_error const& e) {
    if (me == at) failures().add(where + "got a remote_error, not its own exception");
    if (e.location() != at) failures().add(where + "the remote_error names location " + std::to_string(e.location()));
    return {e.type_name(), e.what()};
  } catch (std::exception const& e) {
    std::string type = armi::detail::demangle(typeid(e).name());
    if (me != at) failures().add(where + "got its own " + type + ", not a remote_error");
    return {std::move(type), e.what()};
  }
  return {};
}

}  // namespace armi_test
