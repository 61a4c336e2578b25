// Locations, groups and execute (docs/design.md §2, "Locations", "Primitives"):
//  - get_location_id() in [0, get_num_locations()), each id on exactly one
//    location, for 1..16 locations; config::locations = 0 means one per
//    hardware thread; inside an RMI target the id is the executing location's;
//  - armi::group: sorted and deduplicated members, size/contains/all();
//    std::invalid_argument for an empty group or a member out of range;
//  - armi::execute: fn() or fn(int, char**), returning void or int; a
//    non-zero int from one location is the exit code, with the run still
//    finishing cleanly (final fence) on the others.
#include "support/test_support.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

class where : public armi::p_object {
 public:
  armi::location_id id_here() const { return armi::get_location_id(); }
  armi::location_id size_here() const { return armi::get_num_locations(); }
};

}  // namespace

TEST_CASE("location ids are unique and in range for 1..16 locations", "[locations]") {
  for (std::uint32_t n = 1; n <= 16; ++n) {
    INFO("locations " << n);
    armi::config cfg;
    cfg.locations = n;
    auto seen = std::make_unique<std::atomic<int>[]>(n);
    for (std::uint32_t i = 0; i < n; ++i) seen[i] = 0;
    std::atomic<int> out_of_range{0};
    std::atomic<int> bodies{0};
    armi_test::run(cfg, [&] {
      ++bodies;
      auto const me = armi::get_location_id();
      ARMI_CHECK_EQ(armi::get_num_locations(), n);
      if (me < n)
        ++seen[me];
      else
        ++out_of_range;
      // Stable across calls, and across blocking calls.
      ARMI_CHECK_EQ(armi::get_location_id(), me);
      where w;
      armi::rmi_fence();
      ARMI_CHECK_EQ(armi::get_location_id(), me);
      // Inside an RMI target, the executing location's id.
      for (armi::location_id dest = 0; dest < n; ++dest) {
        ARMI_CHECK_EQ(armi::sync_rmi(dest, w.get_rmi_handle(), &where::id_here), dest);
        ARMI_CHECK_EQ(armi::sync_rmi(dest, w.get_rmi_handle(), &where::size_here), n);
      }
      ARMI_CHECK_EQ(armi::get_location_id(), me);
      armi::rmi_fence();
    });
    CHECK(bodies == static_cast<int>(n));
    CHECK(out_of_range == 0);
    for (std::uint32_t i = 0; i < n; ++i) {
      INFO("location " << i);
      CHECK(seen[i] == 1);
    }
  }
}

TEST_CASE("locations = 0 means one location per hardware thread", "[locations]") {
  armi::config cfg;
  cfg.locations = 0;
  unsigned const hw = std::thread::hardware_concurrency();
  std::uint32_t const expected = hw == 0 ? 1 : hw;
  std::atomic<int> bodies{0};
  armi_test::run(cfg, [&] {
    ++bodies;
    ARMI_CHECK_EQ(armi::get_num_locations(), expected);
  });
  CHECK(bodies == static_cast<int>(expected));
}

TEST_CASE("each location runs on its own thread", "[locations]") {
  armi::config cfg;
  cfg.locations = 5;
  std::vector<std::thread::id> ids(5);
  armi_test::run(cfg, [&] {
    ids[armi::get_location_id()] = std::this_thread::get_id();
    armi::rmi_fence();
  });
  std::sort(ids.begin(), ids.end());
  CHECK(std::unique(ids.begin(), ids.end()) == ids.end());
}

TEST_CASE("group: members size and contains", "[groups]") {
  armi::config cfg;
  cfg.locations = 4;
  armi_test::run(cfg, [] {
    armi::group const all;
    ARMI_CHECK_EQ(all.size(), 4u);
    ARMI_CHECK(all.members() == (std::vector<armi::location_id>{0, 1, 2, 3}));
    for (armi::location_id l = 0; l < 4; ++l) ARMI_CHECK(all.contains(l));
    ARMI_CHECK(!all.contains(4));
    ARMI_CHECK(armi::group::all().members() == all.members());

    armi::group const g(std::vector<armi::location_id>{3, 1, 1, 2, 3});
    ARMI_CHECK(g.members() == (std::vector<armi::location_id>{1, 2, 3}));
    ARMI_CHECK_EQ(g.size(), 3u);
    ARMI_CHECK(!g.contains(0));
    ARMI_CHECK(g.contains(1));
    ARMI_CHECK(g.contains(2));
    ARMI_CHECK(g.contains(3));
    ARMI_CHECK(!g.contains(4));

    armi::group const single(std::vector<armi::location_id>{0});
    ARMI_CHECK_EQ(single.size(), 1u);
    ARMI_CHECK(single.contains(0));
    ARMI_CHECK(!single.contains(1));

    armi::group const top(std::vector<armi::location_id>{3});  // the last valid id
    ARMI_CHECK(top.members() == std::vector<armi::location_id>{3});
  });
}

TEST_CASE("group: invalid members throw std::invalid_argument", "[groups]") {
  for (std::uint32_t n : {1u, 4u}) {
    armi::config cfg;
    cfg.locations = n;
    INFO("locations " << n);
    armi_test::run(cfg, [n] {
      auto throws_invalid = [](std::vector<armi::location_id> members) {
        try {
          armi::group const g(std::move(members));
          return false;
        } catch (std::invalid_argument const& e) {
          return std::string(e.what()).size() > 0;
        }
      };
      ARMI_CHECK(throws_invalid({n}));         // one past the last location
      ARMI_CHECK(throws_invalid({0, n}));      // one bad member among good ones
      ARMI_CHECK(throws_invalid({n + 5, 0}));  // unsorted input, bad member first
      ARMI_CHECK(throws_invalid({0xFFFFFFFFu}));
      ARMI_CHECK(throws_invalid({}));  // empty
      ARMI_CHECK(!throws_invalid({n - 1}));
      // The runtime still works after the failed constructions.
      armi::rmi_fence();
    });
  }
}

TEST_CASE("group broadcast reaches exactly the members", "[groups]") {
  armi::config cfg;
  cfg.locations = 5;
  armi_test::run(cfg, [] {
    class counter : public armi::p_object {
     public:
      void hit() { ++m_hits; }
      int hits() const { return m_hits; }

     private:
      int m_hits = 0;
    };
    counter c;
    auto const me = armi::get_location_id();
    armi::group const odd(std::vector<armi::location_id>{1, 3});
    if (me == 0) armi::broadcast_rmi(odd, c.get_rmi_handle(), &counter::hit);
    armi::rmi_fence();
    ARMI_CHECK_EQ(c.hits(), odd.contains(me) ? 1 : 0);
    armi::rmi_fence();
  });
}

// ---- execute ---------------------------------------------------------------------------------

namespace {

class fake_argv {
 public:
  explicit fake_argv(std::vector<std::string> args) : m_storage(std::move(args)) {
    for (auto& s : m_storage) m_ptrs.push_back(s.data());
    m_ptrs.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(m_storage.size()); }
  char** argv() { return m_ptrs.data(); }

 private:
  std::vector<std::string> m_storage;
  std::vector<char*> m_ptrs;
};

}  // namespace

TEST_CASE("execute: fn(int char**) gets the program's arguments", "[execute]") {
  fake_argv a({"prog", "--armi-locations=3", "alpha", "beta"});
  std::atomic<int> calls{0};
  std::atomic<int> bad{0};
  int const rc = armi::execute(a.argc(), a.argv(), [&](int argc, char** argv) {
    ++calls;
    if (argc != 3 || std::string(argv[1]) != "alpha" || std::string(argv[2]) != "beta") ++bad;
    if (armi::get_num_locations() != 3) ++bad;
  });
  CHECK(rc == 0);
  CHECK(calls == 3);
  CHECK(bad == 0);
}

TEST_CASE("execute: fn(int char**) returning int", "[execute]") {
  fake_argv a({"prog", "--armi-locations=4", "code"});
  int const rc = armi::execute(a.argc(), a.argv(), [](int argc, char**) -> int {
    return armi::get_location_id() == 2 ? argc + 40 : 0;  // 42 from location 2
  });
  CHECK(rc == 42);
}

TEST_CASE("execute: fn returning int", "[execute]") {
  armi::config cfg;
  cfg.locations = 3;
  SECTION("all zero") {
    int const rc = armi::execute(cfg, [] { return 0; });
    CHECK(rc == 0);
  }
  SECTION("one location returns non-zero") {
    for (armi::location_id who = 0; who < 3; ++who) {
      INFO("location " << who);
      int const rc = armi::execute(cfg, [who] { return armi::get_location_id() == who ? 7 : 0; });
      CHECK(rc == 7);
    }
  }
  SECTION("non-zero after RMIs; the others still finish their work") {
    std::atomic<int> done{0};
    int const rc = armi::execute(cfg, [&done]() -> int {
      where w;
      auto const me = armi::get_location_id();
      auto const n = armi::get_num_locations();
      for (armi::location_id d = 0; d < n; ++d)
        if (armi::sync_rmi(d, w.get_rmi_handle(), &where::id_here) != d) return 99;
      armi::rmi_fence();
      ++done;
      return me == 1 ? 3 : 0;
    });
    CHECK(rc == 3);
    CHECK(done == 3);
  }
  SECTION("1 location") {
    armi::config one;
    one.locations = 1;
    CHECK(armi::execute(one, [] { return 5; }) == 5);
    CHECK(armi::execute(one, [] { return 0; }) == 0);
    CHECK(armi::execute(one, [] {}) == 0);
  }
}

TEST_CASE("execute: repeated runs in one process", "[execute]") {
  for (int run = 0; run < 5; ++run) {
    armi::config cfg;
    cfg.locations = static_cast<std::uint32_t>(1 + run % 3);
    std::atomic<int> sum{0};
    armi_test::run(cfg, [&sum] {
      where w;  // a fresh registry each run: the first object's handle works
      sum += static_cast<int>(armi::sync_rmi(0, w.get_rmi_handle(), &where::id_here)) + 1;
      armi::rmi_fence();
    });
    CHECK(sum == static_cast<int>(cfg.locations));
  }
}
