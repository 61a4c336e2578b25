// opaque_rmi and armi::future (docs/design.md §2): non-blocking; the request may
// travel in an aggregated buffer; ready() polls, get() waits serving requests
// and rethrows the target's exception as armi::remote_error.  then() chains
// a continuation, when_all joins futures; failures travel through both.
#include "support/test_support.hpp"

#include <armi/when_all.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace {

struct splitmix64 {
  std::uint64_t state;
  std::uint64_t operator()() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

struct custom_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::uint64_t f_of(armi::location_id at, std::uint64_t x) {
  return x * 1000003ULL + at * 17ULL + 5;
}

class service : public armi::p_object {
 public:
  std::uint64_t compute(std::uint64_t x) {
    ++m_calls;
    return f_of(armi::get_location_id(), x);
  }
  std::string text(std::uint32_t len, char c) {
    ++m_calls;
    return std::string(len, c) + std::to_string(armi::get_location_id());
  }
  std::vector<std::uint64_t> sequence(std::uint32_t len) {
    ++m_calls;
    std::vector<std::uint64_t> v(len);
    for (std::uint32_t i = 0; i < len; ++i) v[i] = f_of(armi::get_location_id(), i);
    return v;
  }
  void poke(std::uint64_t by) {
    ++m_calls;
    m_poked += by;
  }
  std::uint64_t fail(std::uint64_t code) {
    ++m_calls;
    if (code != 0)
      throw custom_failure("failure #" + std::to_string(code) + " at location " +
                           std::to_string(armi::get_location_id()));
    return 0;
  }
  void fail_void() {
    ++m_calls;
    throw std::runtime_error("void method failed");
  }
  // A target that itself waits on futures (get() inside a request).
  std::uint64_t sum_from_others(std::uint64_t x) {
    ++m_calls;
    auto const n = armi::get_num_locations();
    std::vector<armi::future<std::uint64_t>> fs;
    for (armi::location_id d = 0; d < n; ++d)
      fs.push_back(armi::opaque_rmi(d, get_rmi_handle(), &service::compute, x));
    std::uint64_t s = 0;
    for (auto& f : fs) s += f.get();
    return s;
  }
  std::uint64_t calls() const { return m_calls; }
  std::uint64_t poked() const { return m_poked; }

 private:
  std::uint64_t m_calls = 0;
  std::uint64_t m_poked = 0;
};

}  // namespace

TEST_CASE(
    "futures: many opaque_rmis to several destinations - more than the aggregation factor - "
    "then get() all",
    "[futures]") {
  armi_test::run([&] {
    service s;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = s.get_rmi_handle();
    // Under auto the factor has no fixed value; 3000 is above what it starts at.
    std::size_t const factor = armi::get_aggregation() == armi::aggregation_auto ? 64 : armi::get_aggregation();
    std::size_t const count = std::max<std::size_t>(armi_test::scaled(3000), 3 * factor + 1);
    splitmix64 rng{0xf00dULL + me};
    struct call {
      armi::future<std::uint64_t> f;
      armi::location_id dest;
      std::uint64_t x;
    };
    std::vector<call> calls;
    calls.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      auto const d = static_cast<armi::location_id>(rng() % n);
      std::uint64_t const x = rng() % 1000000;
      calls.push_back({armi::opaque_rmi(d, h, &service::compute, x), d, x});
      ARMI_CHECK(calls.back().f.valid());
    }
    // Collect in reverse order of issue.
    for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
      ARMI_CHECK_EQ(it->f.get(), f_of(it->dest, it->x));
      ARMI_CHECK(!it->f.valid());
    }
    // Values of non-trivial types.
    std::vector<std::pair<armi::future<std::string>, armi::location_id>> strs;
    std::vector<std::pair<armi::future<std::vector<std::uint64_t>>, armi::location_id>> vecs;
    for (std::size_t i = 0; i < 300; ++i) {
      auto const d = static_cast<armi::location_id>((me + i) % n);
      strs.emplace_back(armi::opaque_rmi(d, h, &service::text, static_cast<std::uint32_t>(i), 'q'),
                        d);
      vecs.emplace_back(
          armi::opaque_rmi(d, h, &service::sequence, static_cast<std::uint32_t>(i % 50)), d);
    }
    for (std::size_t i = 0; i < 300; ++i) {
      ARMI_CHECK_EQ(strs[i].first.get(), std::string(i, 'q') + std::to_string(strs[i].second));
      auto const v = vecs[i].first.get();
      ARMI_CHECK_EQ(v.size(), i % 50);
      for (std::size_t k = 0; k < v.size(); ++k) ARMI_CHECK_EQ(v[k], f_of(vecs[i].second, k));
    }
    armi::rmi_fence();
  });
}

TEST_CASE("futures: ready() loops with rmi_poll until the value arrives", "[futures]") {
  armi_test::run([&] {
    service s;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = s.get_rmi_handle();
    // (Few rounds: on an oversubscribed machine every round trip of a pure
    // spin-poll loop costs scheduler time slices.)
    for (std::uint64_t i = 0; i < armi_test::scaled(40); ++i) {
      auto const d = static_cast<armi::location_id>((me + i) % n);
      auto f = armi::opaque_rmi(d, h, &service::compute, i);
      while (!f.ready()) armi::rmi_poll();
      ARMI_CHECK(f.ready());  // stays ready
      ARMI_CHECK(f.valid());
      ARMI_CHECK_EQ(f.get(), f_of(d, i));
    }
    // Several outstanding at once, polled round robin.
    std::vector<armi::future<std::uint64_t>> fs;
    for (std::uint64_t i = 0; i < 50; ++i)
      fs.push_back(armi::opaque_rmi(static_cast<armi::location_id>((me + 1 + i) % n), h,
                                    &service::compute, i));
    std::vector<bool> done(fs.size(), false);
    std::size_t remaining = fs.size();
    while (remaining > 0) {
      for (std::size_t i = 0; i < fs.size(); ++i) {
        if (!done[i] && fs[i].ready()) {
          ARMI_CHECK_EQ(fs[i].get(), f_of(static_cast<armi::location_id>((me + 1 + i) % n), i));
          done[i] = true;
          --remaining;
        }
      }
      armi::rmi_poll();
    }
    armi::rmi_fence();
  });
}

TEST_CASE("futures: future<void>", "[futures]") {
  armi_test::run([&] {
    service s;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = s.get_rmi_handle();
    std::vector<armi::future<void>> fs;
    for (armi::location_id d = 0; d < n; ++d)
      for (std::uint64_t k = 1; k <= 10; ++k)
        fs.push_back(armi::opaque_rmi(d, h, &service::poke, k * (me + 1)));
    for (auto& f : fs) {
      ARMI_CHECK(f.valid());
      f.get();
      ARMI_CHECK(!f.valid());
    }
    // get() returned for the requests to self: they have run here.
    auto self = armi::opaque_rmi(me, h, &service::poke, std::uint64_t{0});
    while (!self.ready()) armi::rmi_poll();
    self.get();
    armi::rmi_fence();
    // Every location poked every location with 55 * (src + 1).
    std::uint64_t const expected = 55ULL * n * (n + 1) / 2;
    ARMI_CHECK_EQ(s.poked(), expected);
    armi::rmi_fence();
  });
}

TEST_CASE("futures: moved futures keep their value; moved-from ones are invalid", "[futures]") {
  armi_test::run([&] {
    service s;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = s.get_rmi_handle();
    auto const d = static_cast<armi::location_id>((me + 1) % n);

    armi::future<std::uint64_t> a = armi::opaque_rmi(d, h, &service::compute, std::uint64_t{1});
    armi::future<std::uint64_t> b(std::move(a));
    ARMI_CHECK(!a.valid());  // NOLINT(bugprone-use-after-move)
    ARMI_CHECK(b.valid());

    armi::future<std::uint64_t> c = armi::opaque_rmi(d, h, &service::compute, std::uint64_t{2});
    armi::future<std::uint64_t> e = armi::opaque_rmi(d, h, &service::compute, std::uint64_t{3});
    c = std::move(e);        // c's first request is dropped; c now waits for x = 3
    ARMI_CHECK(!e.valid());  // NOLINT(bugprone-use-after-move)
    ARMI_CHECK(c.valid());

    std::swap(b, c);
    ARMI_CHECK_EQ(b.get(), f_of(d, 3));
    ARMI_CHECK_EQ(c.get(), f_of(d, 1));

    // Futures moved around inside a growing vector (reallocation moves them).
    std::vector<armi::future<std::uint64_t>> fs;
    for (std::uint64_t i = 0; i < 200; ++i)
      fs.push_back(armi::opaque_rmi(d, h, &service::compute, i));
    std::vector<armi::future<std::uint64_t>> moved;
    for (auto& f : fs) moved.push_back(std::move(f));
    for (auto const& f : fs) ARMI_CHECK(!f.valid());
    for (std::uint64_t i = 0; i < moved.size(); ++i) ARMI_CHECK_EQ(moved[i].get(), f_of(d, i));

    // A default-constructed-equivalent: a moved-from future can be assigned again.
    a = armi::opaque_rmi(d, h, &service::compute, std::uint64_t{7});
    ARMI_CHECK(a.valid());
    ARMI_CHECK_EQ(a.get(), f_of(d, 7));
    armi::rmi_fence();
  });
}

TEST_CASE(
    "futures: futures destroyed without get(); their requests still run and the fence terminates",
    "[futures]") {
  armi_test::run([&] {
    service s;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = s.get_rmi_handle();
    std::uint64_t const per_dest = armi_test::scaled(200);
    for (armi::location_id d = 0; d < n; ++d) {
      for (std::uint64_t i = 0; i < per_dest; ++i) {
        auto f = armi::opaque_rmi(d, h, &service::compute, i);  // dropped at once
        if (i % 3 == 0) {
          auto g = armi::opaque_rmi(d, h, &service::text, std::uint32_t{5}, 'z');
          auto v = armi::opaque_rmi(d, h, &service::poke, std::uint64_t{1});
          (void)g.ready();  // polled once, then dropped
        }
      }
    }
    {
      // Dropped while the value has certainly arrived but was never fetched.
      auto f = armi::opaque_rmi(me, h, &service::compute, std::uint64_t{9});
      while (!f.ready()) armi::rmi_poll();
    }
    armi::rmi_fence();
    std::uint64_t const third = (per_dest + 2) / 3;
    // Each location received per_dest + 2 * third calls from every location, plus its own extra
    // one.
    ARMI_CHECK_EQ(s.calls(), n * (per_dest + 2 * third) + 1);
    ARMI_CHECK_EQ(s.poked(), std::uint64_t{n * third});
    armi::rmi_fence();
  });
}

TEST_CASE("futures: get() inside a request waiting on futures to every location", "[futures]") {
  armi_test::run([&] {
    service s;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = s.get_rmi_handle();
    for (std::uint64_t x = 0; x < armi_test::scaled(50); ++x) {
      std::uint64_t expected = 0;
      for (armi::location_id d = 0; d < n; ++d) expected += f_of(d, x);
      auto f = armi::opaque_rmi(static_cast<armi::location_id>((me + x) % n), h,
                                &service::sum_from_others, x);
      ARMI_CHECK_EQ(f.get(), expected);
    }
    armi::rmi_fence();
  });
}

TEST_CASE("futures: get() rethrows the target's exception as armi::remote_error", "[futures]") {
  armi_test::run([&] {
    service s;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = s.get_rmi_handle();
    auto const d = static_cast<armi::location_id>((me + 1) % n);

    std::vector<armi::future<std::uint64_t>> fs;
    for (std::uint64_t code = 0; code < 20; ++code)
      fs.push_back(armi::opaque_rmi(d, h, &service::fail, code));
    for (std::uint64_t code = 0; code < 20; ++code) {
      if (code == 0) {
        ARMI_CHECK_EQ(fs[code].get(), std::uint64_t{0});
        continue;
      }
      bool thrown = false;
      try {
        (void)fs[code].get();
      } catch (armi::remote_error const& e) {
        thrown = true;
        ARMI_CHECK_EQ(std::string(e.what()),
                      "failure #" + std::to_string(code) + " at location " + std::to_string(d));
        ARMI_CHECK_EQ(e.location(), d);
        ARMI_CHECK(e.type_name().find("custom_failure") != std::string::npos);
      } catch (...) {
        ARMI_CHECK(!"get() threw something other than armi::remote_error");
      }
      ARMI_CHECK(thrown);
    }

    // future<void>, and the same through sync_rmi.
    auto fv = armi::opaque_rmi(d, h, &service::fail_void);
    bool thrown = false;
    try {
      fv.get();
    } catch (armi::remote_error const& e) {
      thrown = true;
      ARMI_CHECK_EQ(std::string(e.what()), std::string("void method failed"));
    }
    ARMI_CHECK(thrown);
    thrown = false;
    try {
      (void)armi::sync_rmi(me, h, &service::fail, std::uint64_t{77});
    } catch (armi::remote_error const& e) {
      thrown = true;
      ARMI_CHECK_EQ(std::string(e.what()), "failure #77 at location " + std::to_string(me));
      ARMI_CHECK_EQ(e.location(), me);
    }
    ARMI_CHECK(thrown);

    // The runtime keeps working afterwards.
    ARMI_CHECK_EQ(armi::opaque_rmi(d, h, &service::compute, std::uint64_t{4}).get(), f_of(d, 4));
    armi::rmi_fence();
  });
}

TEST_CASE("futures: then() chains continuations that run where the value arrives", "[futures][then]") {
  armi_test::run([] {
    service s;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = s.get_rmi_handle();
    armi::location_id const peer = (me + 1) % n;
    // A chain of two, and a continuation that makes an RMI of its own.
    auto twice = armi::opaque_rmi(peer, h, &service::compute, std::uint64_t{7})
                     .then([](std::uint64_t v) { return v * 2; })
                     .then([](std::uint64_t v) { return std::to_string(v); });
    ARMI_CHECK(twice.valid());
    ARMI_CHECK_EQ(twice.get(), std::to_string(f_of(peer, 7) * 2));
    auto const h2 = h;
    auto nested = armi::opaque_rmi(peer, h, &service::compute, std::uint64_t{3}).then([h2, peer](std::uint64_t v) {
      return armi::sync_rmi(peer, h2, &service::compute, v);  // a blocking call inside a continuation
    });
    ARMI_CHECK_EQ(nested.get(), f_of(peer, f_of(peer, 3)));
    // then() on a future<void>, and one returning void.
    int ran = 0;
    armi::future<int> after_void = armi::opaque_rmi(peer, h, &service::poke, std::uint64_t{1}).then([&ran] {
      ++ran;
      return 5;
    });
    ARMI_CHECK_EQ(after_void.get(), 5);
    armi::future<void> done = armi::opaque_rmi(peer, h, &service::compute, std::uint64_t{1}).then([&ran](std::uint64_t) {
      ++ran;
    });
    done.get();
    ARMI_CHECK_EQ(ran, 2);
    // A continuation runs before get() is called: ready() polls it in.
    bool seen = false;
    auto watched = armi::opaque_rmi(peer, h, &service::compute, std::uint64_t{9}).then([&seen](std::uint64_t v) {
      seen = true;
      return v;
    });
    while (!watched.ready()) armi::rmi_poll();
    ARMI_CHECK(seen);
    ARMI_CHECK_EQ(watched.get(), f_of(peer, 9));
    // then() on a future that is already ready runs at once.
    auto ready = armi::opaque_rmi(me, h, &service::compute, std::uint64_t{4});
    while (!ready.ready()) armi::rmi_poll();
    bool at_once = false;
    auto chained = ready.then([&at_once](std::uint64_t v) {
      at_once = true;
      return v + 1;
    });
    ARMI_CHECK(at_once);
    ARMI_CHECK(!ready.valid());
    ARMI_CHECK_EQ(chained.get(), f_of(me, 4) + 1);
    armi::rmi_fence();
  });
}

TEST_CASE("futures: failures travel through then(): the target's, and the continuation's own", "[futures][then]") {
  armi_test::run([] {
    service s;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const h = s.get_rmi_handle();
    armi::location_id const peer = (me + 1) % armi::get_num_locations();
    bool ran = false;
    auto skipped = armi::opaque_rmi(peer, h, &service::fail, std::uint64_t{3}).then([&ran](std::uint64_t v) {
      ran = true;
      return v;
    });
    try {
      (void)skipped.get();
      armi_test::failures().add("get() returned");
    } catch (armi::remote_error const& e) {
      ARMI_CHECK_EQ(e.location(), peer);
      ARMI_CHECK(std::string(e.what()).find("failure #3") != std::string::npos);
    }
    ARMI_CHECK(!ran);
    auto thrown = armi::opaque_rmi(peer, h, &service::compute, std::uint64_t{1}).then([](std::uint64_t) -> int {
      throw custom_failure("from the continuation");
    });
    auto passed_on = std::move(thrown).then([](int v) { return v; });
    try {
      (void)passed_on.get();
      armi_test::failures().add("get() returned");
    } catch (custom_failure const& e) {
      ARMI_CHECK_EQ(std::string(e.what()), std::string("from the continuation"));
    }
    armi::rmi_fence();
  });
}

TEST_CASE("futures: when_all joins futures of every kind, in the order given", "[futures][when_all]") {
  armi_test::run([] {
    service s;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = s.get_rmi_handle();
    armi::location_id const peer = (me + 1) % n;
    auto all = armi::when_all(armi::opaque_rmi(peer, h, &service::compute, std::uint64_t{2}),
                              armi::opaque_rmi(me, h, &service::text, std::uint32_t{3}, 'z'),
                              armi::opaque_rmi(peer, h, &service::poke, std::uint64_t{1}),
                              armi::opaque_rmi(peer, h, &service::compute, std::uint64_t{5}).then([](std::uint64_t v) {
                                return v + 1;
                              }));
    auto const [a, b, c, d] = all.get();
    ARMI_CHECK_EQ(a, f_of(peer, 2));
    ARMI_CHECK_EQ(b, std::string("zzz") + std::to_string(me));
    ARMI_CHECK(c == std::monostate{});
    ARMI_CHECK_EQ(d, f_of(peer, 5) + 1);

    std::vector<armi::future<std::uint64_t>> each;
    for (armi::location_id dest = 0; dest < n; ++dest)
      each.push_back(armi::opaque_rmi(dest, h, &service::compute, std::uint64_t{dest}));
    std::vector<std::uint64_t> const got = armi::when_all(std::move(each)).get();
    ARMI_CHECK_EQ(got.size(), std::size_t{n});
    for (armi::location_id dest = 0; dest < n && dest < got.size(); ++dest) ARMI_CHECK_EQ(got[dest], f_of(dest, dest));
    ARMI_CHECK(armi::when_all().get() == std::tuple<>{});
    ARMI_CHECK(armi::when_all(std::vector<armi::future<int>>{}).get().empty());

    // The first failure in the order given, once all are in.
    std::vector<armi::future<std::uint64_t>> mixed;
    std::uint64_t calls_before = 0;
    {
      // A direct call: under --armi-progress=thread requests (fail(3) too) may run meanwhile.
      armi::hold_requests const hold;
      mixed.push_back(armi::opaque_rmi(peer, h, &service::compute, std::uint64_t{1}));
      mixed.push_back(armi::opaque_rmi(peer, h, &service::fail, std::uint64_t{2}));
      mixed.push_back(armi::opaque_rmi(me, h, &service::fail, std::uint64_t{3}));
      calls_before = s.calls();
    }
    try {
      (void)armi::when_all(std::move(mixed)).get();
      armi_test::failures().add("get() returned");
    } catch (armi::remote_error const& e) {
      ARMI_CHECK(std::string(e.what()).find("failure #2") != std::string::npos);
    }
    {
      armi::hold_requests const hold;             // a direct call, as above
      ARMI_CHECK(s.calls() >= calls_before + 1);  // its own fail(3) ran before the join completed
    }
    armi::rmi_fence();
  });
}
