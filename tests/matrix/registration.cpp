// Registration of shared objects (docs/design.md §2): symmetric registration is
// collective and the i-th object gets the same handle on every location; RMIs
// through a handle reach that object (of its dynamic class, whatever the base
// layout); a destroyed object's handle is not reused for its successor; an
// explicit handle addresses objects that exist only on some locations.
#include "support/test_support.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
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

std::uint64_t tag_of(std::uint64_t kind, std::uint64_t index, armi::location_id loc) {
  return kind * 1000000007ULL + index * 1009ULL + loc;
}

class item : public armi::p_object {
 public:
  explicit item(std::uint64_t index) : m_index(index) {}
  std::uint64_t tag() const { return tag_of(1, m_index, armi::get_location_id()); }
  void check(std::uint64_t index, armi::rmi_handle h) {
    ARMI_CHECK_EQ(m_index, index);
    ARMI_CHECK_EQ(get_rmi_handle(), h);
    ++m_hits;
  }
  void hit() { ++m_hits; }
  std::uint64_t hits() const { return m_hits; }

 private:
  std::uint64_t m_index;
  std::uint64_t m_hits = 0;
};

class other_item : public armi::p_object {
 public:
  explicit other_item(std::uint64_t index) : m_index(index) {}
  std::uint64_t tag() const { return tag_of(2, m_index, armi::get_location_id()); }
  std::uint64_t twice(std::uint64_t x) const { return 2 * x + m_index; }

 private:
  std::uint64_t m_padding[5] = {1, 2, 3, 4, 5};  // a different layout from item
  std::uint64_t m_index;
};

// Agrees on a list of handles: equal lists stay, different lists give {}.
struct same_handles {
  std::vector<armi::rmi_handle> operator()(std::vector<armi::rmi_handle> a,
                                           std::vector<armi::rmi_handle> const& b) const {
    if (a != b) return {};
    return a;
  }
};

// One per location, registered first; answers questions about the others.
class directory : public armi::p_object {
 public:
  std::vector<armi::rmi_handle> handles() const { return m_handles; }
  void set_handles(std::vector<armi::rmi_handle> h) { m_handles = std::move(h); }
  armi::rmi_handle shared_handle() const { return m_shared; }
  void set_shared(armi::rmi_handle h) { m_shared = h; }

 private:
  std::vector<armi::rmi_handle> m_handles;
  armi::rmi_handle m_shared{};
};

// Collective check: every location holds the same list of handles.
void check_same_everywhere(directory& dir, std::vector<armi::rmi_handle> const& mine) {
  dir.set_handles(mine);
  armi::rmi_fence();
  auto const agreed =
      armi::allreduce_rmi(dir.get_rmi_handle(), &directory::handles, same_handles{});
  ARMI_CHECK(agreed == mine);
  armi::rmi_fence();
}

}  // namespace

TEST_CASE(
    "registration: 1000 objects registered in the same order get equal handles everywhere "
    "and RMIs reach the right one",
    "[registration]") {
  armi_test::run([&] {
    directory dir;
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    std::size_t const count = armi_test::scaled(1000);
    std::vector<std::unique_ptr<item>> items;
    std::vector<armi::rmi_handle> handles;
    for (std::size_t i = 0; i < count; ++i) {
      items.push_back(std::make_unique<item>(i));
      handles.push_back(items.back()->get_rmi_handle());
    }
    // All handles of this location are distinct, and distinct from the directory's.
    std::vector<armi::rmi_handle> sorted = handles;
    sorted.push_back(dir.get_rmi_handle());
    std::sort(sorted.begin(), sorted.end(), [](armi::rmi_handle a, armi::rmi_handle b) {
      return a.index != b.index ? a.index < b.index : a.epoch < b.epoch;
    });
    ARMI_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
    check_same_everywhere(dir, handles);

    // Each object on the next location checks it is the i-th and has our handle.
    for (std::size_t i = 0; i < count; ++i)
      armi::async_rmi((me + 1) % n, handles[i], &item::check, std::uint64_t{i}, handles[i]);
    // Random hits, replayed below.
    auto const seed = [](armi::location_id src) { return 0x7e9ULL + src * 7919ULL; };
    std::size_t const hits = armi_test::scaled(5000);
    splitmix64 rng{seed(me)};
    for (std::size_t k = 0; k < hits; ++k) {
      auto const d = static_cast<armi::location_id>(rng() % n);
      auto const i = static_cast<std::size_t>(rng() % count);
      armi::async_rmi(d, handles[i], &item::hit);
    }
    // Some answers straight from the objects.
    for (std::size_t k = 0; k < 100; ++k) {
      auto const d = static_cast<armi::location_id>((me + k) % n);
      std::size_t const i = (k * 37) % count;
      ARMI_CHECK_EQ(armi::sync_rmi(d, handles[i], &item::tag), tag_of(1, i, d));
    }
    armi::rmi_fence();
    std::vector<std::uint64_t> expected(count, 0);
    for (std::size_t i = 0; i < count; ++i)
      expected[i] = 1;  // the check from the previous location
    for (armi::location_id src = 0; src < n; ++src) {
      splitmix64 r{seed(src)};
      for (std::size_t k = 0; k < hits; ++k) {
        auto const d = static_cast<armi::location_id>(r() % n);
        auto const i = static_cast<std::size_t>(r() % count);
        if (d == me) ++expected[i];
      }
    }
    for (std::size_t i = 0; i < count; ++i) ARMI_CHECK_EQ(items[i]->hits(), expected[i]);
    armi::rmi_fence();
  });
}

TEST_CASE("registration: destroy and re-register in a loop; RMIs reach the new object",
          "[registration]") {
  armi_test::run([&] {
    directory dir;
    item long_lived(424242);
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    std::optional<armi::rmi_handle> previous;
    std::uint64_t const rounds = armi_test::scaled(150);
    for (std::uint64_t round = 0; round < rounds; ++round) {
      // One to three objects per round, of two classes.
      auto a = std::make_unique<item>(round);
      std::unique_ptr<other_item> b;
      if (round % 3 == 0) b = std::make_unique<other_item>(round);
      auto c = std::make_unique<item>(round + 1000000);
      armi::rmi_fence();
      auto const h = a->get_rmi_handle();
      if (previous)
        ARMI_CHECK(h != *previous);  // the destroyed object's handle is not reused as is
      previous = h;
      ARMI_CHECK(h != c->get_rmi_handle());
      auto const d = static_cast<armi::location_id>((me + round) % n);
      ARMI_CHECK_EQ(armi::sync_rmi(d, h, &item::tag), tag_of(1, round, d));
      ARMI_CHECK_EQ(armi::sync_rmi(d, c->get_rmi_handle(), &item::tag),
                    tag_of(1, round + 1000000, d));
      if (b)
        ARMI_CHECK_EQ(armi::sync_rmi(d, b->get_rmi_handle(), &other_item::twice, std::uint64_t{5}),
                      10 + round);
      armi::async_rmi(d, h, &item::hit);
      armi::async_rmi(d, long_lived.get_rmi_handle(), &item::hit);
      if (round % 10 == 0) {
        std::vector<armi::rmi_handle> hs{h, c->get_rmi_handle(), long_lived.get_rmi_handle()};
        if (b) hs.push_back(b->get_rmi_handle());
        check_same_everywhere(dir, hs);
      }
      armi::rmi_fence();
      ARMI_CHECK_EQ(a->hits(),
                    std::uint64_t{1});  // exactly one location chose us: (src + round) % n == me
      ARMI_CHECK_EQ(long_lived.hits(), round + 1);
      armi::rmi_fence();
    }
  });
}

namespace {

class base_obj : public armi::p_object {
 public:
  explicit base_obj(std::uint64_t v) : m_v(v) {}
  virtual std::uint64_t kind() const { return 1; }
  std::uint64_t base_value() const { return m_v + armi::get_location_id(); }

 protected:
  std::uint64_t m_v;
};

class derived_obj : public base_obj {
 public:
  derived_obj() : base_obj(500) {}
  std::uint64_t kind() const override { return 2; }
  std::uint64_t extra(std::uint64_t x) {
    m_sum += x;
    return x * 2 + m_v;
  }
  std::uint64_t sum() const { return m_sum; }

 private:
  std::uint64_t m_sum = 0;
};

// p_object is not the first base: the runtime must adjust the pointer.
struct unrelated_base {
  virtual ~unrelated_base() = default;
  virtual std::uint64_t unrelated() const { return m_pad[1]; }
  std::uint64_t m_pad[3] = {11, 22, 33};
};
class multi : public unrelated_base, public armi::p_object {
 public:
  multi() : m_v(armi::get_location_id() * 5ULL + 1) {}
  std::uint64_t value() const { return m_v + m_pad[2]; }
  std::uint64_t call_unrelated() const { return unrelated(); }

 private:
  std::uint64_t m_v;
};

}  // namespace

TEST_CASE("registration: objects of a derived class and of a class with p_object as second base",
          "[registration]") {
  armi_test::run([&] {
    derived_obj d1;
    multi m1;
    derived_obj d2;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    for (armi::location_id dest = 0; dest < n; ++dest) {
      ARMI_CHECK_EQ(
          armi::sync_rmi(dest, d1.get_rmi_handle(), &derived_obj::extra, std::uint64_t{me}),
          2ULL * me + 500);
      ARMI_CHECK_EQ(armi::sync_rmi(dest, d1.get_rmi_handle(), &base_obj::kind),
                    std::uint64_t{2});  // virtual
      ARMI_CHECK_EQ(armi::sync_rmi(dest, d2.get_rmi_handle(), &base_obj::base_value),
                    500ULL + dest);
      ARMI_CHECK_EQ(armi::sync_rmi(dest, m1.get_rmi_handle(), &multi::value), dest * 5ULL + 1 + 33);
      ARMI_CHECK_EQ(armi::opaque_rmi(dest, m1.get_rmi_handle(), &multi::call_unrelated).get(),
                    std::uint64_t{22});
      armi::async_rmi(dest, d2.get_rmi_handle(), &derived_obj::extra, std::uint64_t{1});
    }
    armi::rmi_fence();
    ARMI_CHECK_EQ(d1.sum(), std::uint64_t{n * (n - 1ULL) / 2});
    ARMI_CHECK_EQ(d2.sum(), std::uint64_t{n});
    armi::rmi_fence();
  });
}

TEST_CASE("registration: two classes registered interleaved", "[registration]") {
  armi_test::run([&] {
    directory dir;
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    std::size_t const count = armi_test::scaled(200);
    std::vector<std::unique_ptr<item>> as;
    std::vector<std::unique_ptr<other_item>> bs;
    std::vector<armi::rmi_handle> hs;
    for (std::size_t i = 0; i < count; ++i) {
      as.push_back(std::make_unique<item>(i));
      bs.push_back(std::make_unique<other_item>(i));
      hs.push_back(as.back()->get_rmi_handle());
      hs.push_back(bs.back()->get_rmi_handle());
    }
    check_same_everywhere(dir, hs);
    for (std::size_t i = 0; i < count; ++i) {
      auto const d = static_cast<armi::location_id>((me + i) % n);
      ARMI_CHECK_EQ(armi::sync_rmi(d, as[i]->get_rmi_handle(), &item::tag), tag_of(1, i, d));
      ARMI_CHECK_EQ(armi::sync_rmi(d, bs[i]->get_rmi_handle(), &other_item::tag), tag_of(2, i, d));
    }
    armi::rmi_fence();
  });
}

namespace {

class special : public armi::p_object {
 public:
  explicit special(armi::explicit_handle h, std::uint64_t v) : armi::p_object(h), m_v(v) {}
  std::uint64_t who(std::uint64_t x) {
    ++m_calls;
    return m_v * 100 + x;
  }
  std::uint64_t calls() const { return m_calls; }

 private:
  std::uint64_t m_v;
  std::uint64_t m_calls = 0;
};

}  // namespace

TEST_CASE("registration: explicit_handle objects that exist only on some locations",
          "[registration]") {
  armi_test::run([&] {
    directory dir;
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    bool const even = me % 2 == 0;
    // On even locations only, registered between symmetric objects.
    item before(1);
    std::optional<special> on_evens;
    if (even) on_evens.emplace(armi::explicit_handle{777}, me + 1);
    item after(2);
    // On the last location only.
    std::optional<special> on_last;
    if (me == n - 1) on_last.emplace(armi::explicit_handle{31337}, 1000 + me);
    item after2(3);
    armi::rmi_fence();

    // Asymmetric registration does not disturb symmetric numbering.
    check_same_everywhere(
        dir, {before.get_rmi_handle(), after.get_rmi_handle(), after2.get_rmi_handle()});

    // Locations 0 and n-1 publish their explicit objects' handles.
    if (me == 0)
      armi::broadcast_rmi(dir.get_rmi_handle(), &directory::set_shared, on_evens->get_rmi_handle());
    armi::rmi_fence();
    auto const evens_handle = dir.shared_handle();
    if (even) ARMI_CHECK_EQ(on_evens->get_rmi_handle(), evens_handle);  // same id, same handle
    armi::rmi_fence();
    if (me == n - 1)
      armi::broadcast_rmi(dir.get_rmi_handle(), &directory::set_shared, on_last->get_rmi_handle());
    armi::rmi_fence();
    auto const last_handle = dir.shared_handle();
    if (n > 1) ARMI_CHECK(last_handle != evens_handle);

    // Everybody calls the even locations' objects and the last location's.
    std::uint64_t calls_to_evens = 0;
    for (armi::location_id d = 0; d < n; d += 2) {
      ARMI_CHECK_EQ(armi::sync_rmi(d, evens_handle, &special::who, std::uint64_t{me}),
                    (d + 1) * 100ULL + me);
      armi::async_rmi(d, evens_handle, &special::who, std::uint64_t{0});
      ++calls_to_evens;
    }
    // A sync_rmi to a location where the handle names nothing: the caller
    // gets an error answer (in an answer cell or a reply message).
    for (armi::location_id d = 1; d < n; d += 2) {
      bool caught = false;
      try {
        (void)armi::sync_rmi(d, evens_handle, &special::who, std::uint64_t{me});
      } catch (armi::remote_error const& e) {
        caught = true;
        ARMI_CHECK_EQ(e.type_name(), std::string("armi::unknown_handle"));
        ARMI_CHECK(std::string(e.what()).find("unknown or destroyed handle") != std::string::npos);
        ARMI_CHECK_EQ(e.location(), d);
      }
      ARMI_CHECK(caught);
    }
    ARMI_CHECK_EQ(armi::opaque_rmi(n - 1, last_handle, &special::who, std::uint64_t{7}).get(),
                  (1000ULL + n - 1) * 100 + 7);
    // The symmetric objects are still reached.
    ARMI_CHECK_EQ(armi::sync_rmi((me + 1) % n, after.get_rmi_handle(), &item::tag),
                  tag_of(1, 2, (me + 1) % n));
    armi::rmi_fence();
    if (even) ARMI_CHECK_EQ(on_evens->calls(), 2ULL * n);
    if (me == n - 1) ARMI_CHECK_EQ(on_last->calls(), std::uint64_t{n});
    (void)calls_to_evens;
    armi::rmi_fence();
  });
}
