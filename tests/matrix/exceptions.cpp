// Exceptions thrown by RMI targets (docs/design.md §2, "Errors"):
//  - a sync_rmi target's exception reaches the caller as armi::remote_error
//    whose what() is the original message (std::runtime_error, a
//    std::logic_error subclass, a custom std::exception), with the original
//    type's name and the location that threw;
//  - opaque_rmi(...).get() rethrows it the same way (void and non-void);
//  - after an exception the runtime keeps working: more RMIs of every kind,
//    fences, the same object and method;
//  - an exception from a nested sync_rmi propagates through the middle method
//    to the original caller;
//  - every location throwing at every location (itself included), on every
//    backend and shape of the test matrix.
#include "support/test_support.hpp"

#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct custom_error : std::exception {
  explicit custom_error(std::string m) : msg(std::move(m)) {}
  char const* what() const noexcept override { return msg.c_str(); }
  std::string msg;
};

struct bad_input : std::logic_error {
  using std::logic_error::logic_error;
};

std::string runtime_message(armi::location_id at, int x) {
  return "runtime failure at " + std::to_string(at) + " for " + std::to_string(x);
}

class thrower : public armi::p_object {
 public:
  int fail_runtime(int x) { throw std::runtime_error(runtime_message(armi::get_location_id(), x)); }
  void fail_logic(std::string const& what) { throw bad_input("bad input: " + what); }
  std::string fail_custom() const { throw custom_error("custom failure"); }
  // Throws only for odd x: mixed with answers in one aggregated buffer.
  int maybe_fail(int x) {
    if (x % 2 != 0) throw std::out_of_range("odd " + std::to_string(x));
    ++m_calls;
    return x * 10;
  }
  int ok(int x) {
    ++m_calls;
    return x + 1;
  }
  void count() { ++m_calls; }
  int calls() const { return m_calls; }

  // Calls fail_runtime on `last` by a nested sync_rmi; does not catch.
  int middle(armi::location_id last, int x) {
    int const r = armi::sync_rmi(last, get_rmi_handle(), &thrower::fail_runtime, x);
    return r + 1000;  // never reached
  }
  // Same, through a future.
  int middle_opaque(armi::location_id last, int x) {
    auto f = armi::opaque_rmi(last, get_rmi_handle(), &thrower::fail_runtime, x);
    return f.get() + 1000;
  }
  // Catches the nested remote_error and answers normally.
  std::string middle_catches(armi::location_id last, int x) {
    try {
      armi::sync_rmi(last, get_rmi_handle(), &thrower::fail_runtime, x);
    } catch (armi::remote_error const& e) {
      return std::string("caught: ") + e.what();
    }
    return "not thrown";
  }

 private:
  int m_calls = 0;
};

// The matrix's configuration (backend, locations, aggregation from the
// command line; see tests/CMakeLists.txt).
std::vector<armi::config> configs() { return {armi_test::run_config()}; }

}  // namespace

TEST_CASE("sync_rmi rethrows the target's exception as remote_error", "[exceptions][sync]") {
  for (auto const& cfg : configs()) {
    INFO("locations " << cfg.locations << " aggregation " << cfg.aggregation);
    armi_test::run(cfg, [] {
      thrower t;
      auto const h = t.get_rmi_handle();
      auto const me = armi::get_location_id();
      auto const n = armi::get_num_locations();
      for (armi::location_id dest = 0; dest < n; ++dest) {
        int const x = static_cast<int>(me * 100 + dest);
        // std::runtime_error, the method named by a pointer and as a constant
        for (bool const constant : {false, true}) {
          bool caught = false;
          try {
            armi_test::either_form<&thrower::fail_runtime>(constant,
                                                           [&](auto m) { (void)armi::sync_rmi(dest, h, m, x); });
          } catch (armi::remote_error const& e) {
            caught = true;
            ARMI_CHECK_EQ(std::string(e.what()), runtime_message(dest, x));
            ARMI_CHECK_EQ(e.location(), dest);
            ARMI_CHECK(e.type_name().find("runtime_error") != std::string::npos);
          } catch (...) {
            ARMI_CHECK(false);  // sync_rmi threw something other than armi::remote_error
          }
          ARMI_CHECK(caught);
        }
        // a std::logic_error subclass, also catchable as std::runtime_error
        {
          bool caught = false;
          try {
            armi::sync_rmi(dest, h, &thrower::fail_logic, std::string("x=") + std::to_string(x));
          } catch (std::runtime_error const& e) {
            caught = true;
            ARMI_CHECK(dynamic_cast<armi::remote_error const*>(&e) != nullptr);
            ARMI_CHECK_EQ(std::string(e.what()), "bad input: x=" + std::to_string(x));
            if (auto const* r = dynamic_cast<armi::remote_error const*>(&e)) {
              ARMI_CHECK(r->type_name().find("bad_input") != std::string::npos);
              ARMI_CHECK_EQ(r->location(), dest);
            }
          }
          ARMI_CHECK(caught);
        }
        // a custom std::exception, from a const method returning a string
        {
          bool caught = false;
          try {
            (void)armi::sync_rmi(dest, h, &thrower::fail_custom);
          } catch (armi::remote_error const& e) {
            caught = true;
            ARMI_CHECK_EQ(std::string(e.what()), "custom failure");
            ARMI_CHECK(e.type_name().find("custom_error") != std::string::npos);
          }
          ARMI_CHECK(caught);
        }
        // the runtime keeps working: same object, same destination
        ARMI_CHECK_EQ(armi::sync_rmi(dest, h, &thrower::ok, x), x + 1);
      }
      {
        // Under --armi-progress=thread the others' next requests (below) could run here while it checks.
        armi::hold_requests const hold;
        armi::rmi_fence();
        // Every location called ok() on every location once.
        ARMI_CHECK_EQ(t.calls(), static_cast<int>(n));
      }
      // More RMIs of every kind after the exceptions, then a fence.
      for (armi::location_id dest = 0; dest < n; ++dest) {
        for (int i = 0; i < 10; ++i) armi::async_rmi(dest, h, &thrower::count);
        auto f = armi::opaque_rmi(dest, h, &thrower::ok, 41);
        ARMI_CHECK_EQ(f.get(), 42);
      }
      armi::rmi_fence();
      ARMI_CHECK_EQ(t.calls(), static_cast<int>(n) * 12);
      armi::rmi_fence();
    });
  }
}

TEST_CASE("opaque_rmi(...).get() rethrows the target's exception", "[exceptions][opaque]") {
  for (auto const& cfg : configs()) {
    INFO("locations " << cfg.locations << " aggregation " << cfg.aggregation);
    armi_test::run(cfg, [] {
      thrower t;
      auto const h = t.get_rmi_handle();
      auto const me = armi::get_location_id();
      auto const n = armi::get_num_locations();
      for (armi::location_id dest = 0; dest < n; ++dest) {
        int const x = static_cast<int>(me * 7 + dest);
        {
          armi::future<int> f = armi::opaque_rmi(dest, h, &thrower::fail_runtime, x);
          ARMI_CHECK(f.valid());
          bool caught = false;
          try {
            (void)f.get();
          } catch (armi::remote_error const& e) {
            caught = true;
            ARMI_CHECK_EQ(std::string(e.what()), runtime_message(dest, x));
            ARMI_CHECK_EQ(e.location(), dest);
          }
          ARMI_CHECK(caught);
        }
        {
          armi::future<void> f =
              armi::opaque_rmi(dest, h, &thrower::fail_logic, std::string("void"));
          while (!f.ready()) armi::rmi_poll();  // ready() turns true for an exception too
          bool caught = false;
          try {
            f.get();
          } catch (armi::remote_error const& e) {
            caught = true;
            ARMI_CHECK_EQ(std::string(e.what()), "bad input: void");
          }
          ARMI_CHECK(caught);
        }
        {
          armi::future<std::string> f = armi::opaque_rmi(dest, h, &thrower::fail_custom);
          bool caught = false;
          try {
            (void)f.get();
          } catch (armi::remote_error const& e) {
            caught = true;
            ARMI_CHECK_EQ(std::string(e.what()), "custom failure");
          }
          ARMI_CHECK(caught);
        }
      }
      armi::rmi_fence();
    });
  }
}

TEST_CASE("many outstanding futures: failures and answers each reach their own future",
          "[exceptions][opaque]") {
  for (auto const& cfg : configs()) {
    INFO("locations " << cfg.locations << " aggregation " << cfg.aggregation);
    armi_test::run(cfg, [] {
      thrower t;
      auto const h = t.get_rmi_handle();
      auto const me = armi::get_location_id();
      auto const n = armi::get_num_locations();
      int const per_dest = 40;
      std::vector<armi::future<int>> futures;
      std::vector<int> args;
      for (int i = 0; i < per_dest; ++i) {
        for (armi::location_id dest = 0; dest < n; ++dest) {
          int const x = i + static_cast<int>(me);
          futures.push_back(armi::opaque_rmi(dest, h, &thrower::maybe_fail, x));
          args.push_back(x);
        }
      }
      // Collect them in reverse order of issue.
      for (std::size_t k = futures.size(); k-- > 0;) {
        int const x = args[k];
        try {
          int const r = futures[k].get();
          ARMI_CHECK(x % 2 == 0);
          ARMI_CHECK_EQ(r, x * 10);
        } catch (armi::remote_error const& e) {
          ARMI_CHECK(x % 2 != 0);
          ARMI_CHECK_EQ(std::string(e.what()), "odd " + std::to_string(x));
          ARMI_CHECK(e.type_name().find("out_of_range") != std::string::npos);
        }
      }
      armi::rmi_fence();
      // Each location received per_dest requests from every location; the
      // even ones (half of them, x = i + source) ran to completion.
      int expected = 0;
      for (armi::location_id src = 0; src < n; ++src)
        for (int i = 0; i < per_dest; ++i)
          if ((i + static_cast<int>(src)) % 2 == 0) ++expected;
      ARMI_CHECK_EQ(t.calls(), expected);
      armi::rmi_fence();
    });
  }
}

TEST_CASE("an exception from a nested sync_rmi reaches the original caller",
          "[exceptions][nested]") {
  for (auto const& cfg : configs()) {
    INFO("locations " << cfg.locations << " aggregation " << cfg.aggregation);
    armi_test::run(cfg, [] {
      thrower t;
      auto const h = t.get_rmi_handle();
      auto const me = armi::get_location_id();
      auto const n = armi::get_num_locations();
      armi::location_id const mid = (me + 1) % n;
      armi::location_id const last = (me + 2) % n;
      int const x = static_cast<int>(me) + 500;
      // me -> mid (middle) -> last (fail_runtime): the exception passes through middle.
      {
        bool caught = false;
        try {
          (void)armi::sync_rmi(mid, h, &thrower::middle, last, x);
        } catch (armi::remote_error const& e) {
          caught = true;
          ARMI_CHECK_EQ(std::string(e.what()), runtime_message(last, x));
        }
        ARMI_CHECK(caught);
      }
      {
        bool caught = false;
        try {
          (void)armi::opaque_rmi(mid, h, &thrower::middle_opaque, last, x).get();
        } catch (armi::remote_error const& e) {
          caught = true;
          ARMI_CHECK_EQ(std::string(e.what()), runtime_message(last, x));
        }
        ARMI_CHECK(caught);
      }
      {
        bool caught = false;
        try {
          (void)armi::sync_rmi(mid, h, &thrower::middle_opaque, last, x);
        } catch (armi::remote_error const& e) {
          caught = true;
          ARMI_CHECK_EQ(std::string(e.what()), runtime_message(last, x));
        }
        ARMI_CHECK(caught);
      }
      // The middle can catch it too and answer normally.
      ARMI_CHECK_EQ(armi::sync_rmi(mid, h, &thrower::middle_catches, last, x),
                    "caught: " + runtime_message(last, x));
      // And everything still works.
      ARMI_CHECK_EQ(armi::sync_rmi(last, h, &thrower::ok, x), x + 1);
      armi::rmi_fence();
      ARMI_CHECK_EQ(t.calls(), 1);  // one ok() per location: from the location two before it
      armi::rmi_fence();
    });
  }
}
