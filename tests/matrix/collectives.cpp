// broadcast_rmi, reduce_rmi and allreduce_rmi (docs/design.md §2), over all
// locations and over groups: odd locations, a single location, a group that
// does not contain the caller.  An allreduce_rmi that throws on one member
// throws on all of them, and the next one works.  reduce_rmi combines in member order,
// ((v0 op v1) op v2) ..., which non-commutative and non-associative operators
// check.
#include "support/test_support.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

std::uint64_t value_of(armi::location_id loc) {
  return 3ULL * loc + 11;
}
std::uint64_t value_of(armi::location_id loc, std::uint64_t iter) {
  return (loc + 1) * 1000003ULL + iter * iter;
}

struct max_op {
  std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const { return std::max(a, b); }
};
struct min_op {
  std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const { return std::min(a, b); }
};
// Neither commutative nor associative: only a left fold in member order gives
// the expected value.
struct poly_op {
  std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const { return a * 31 + b; }
};
struct refusing_op {
  std::uint64_t operator()(std::uint64_t, std::uint64_t) const { throw std::overflow_error("op refused"); }
};
struct concat_op {
  std::string operator()(std::string a, std::string const& b) const { return a + b; }
};
// Associative but not commutative, and declared associative (below): an
// allreduce_rmi combines it up the tree, in member order.
struct joined_op {
  std::string operator()(std::string a, std::string const& b) const { return a + b; }
};
struct vec_plus {
  std::vector<std::uint64_t> operator()(std::vector<std::uint64_t> a,
                                        std::vector<std::uint64_t> const& b) const {
    ARMI_CHECK_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) a[i] += b[i];
    return a;
  }
};

class member : public armi::p_object {
 public:
  member() : m_value(value_of(armi::get_location_id())) {}

  // broadcast targets
  void mark(std::uint32_t channel, armi::location_id src, std::uint64_t payload) {
    ++m_marks[{channel, src}];
    ARMI_CHECK_EQ(payload, src * 1000ULL + channel);
  }
  // Broadcasts from one caller to one group run in the order it made them
  // (stream: which group).
  void next_in_order(std::uint32_t stream, armi::location_id src, std::uint64_t seq) {
    std::uint64_t& next = m_next[std::pair(stream, src)];
    ARMI_CHECK_EQ(seq, next);
    next = seq + 1;
  }
  std::uint64_t next_expected(std::uint32_t stream, armi::location_id src) const {
    auto const it = m_next.find(std::pair(stream, src));
    return it == m_next.end() ? 0 : it->second;
  }
  std::uint64_t marks(std::uint32_t channel, armi::location_id src) const {
    auto const it = m_marks.find({channel, src});
    return it == m_marks.end() ? 0 : it->second;
  }
  std::uint64_t marks_total() const {
    std::uint64_t t = 0;
    for (auto const& kv : m_marks) t += kv.second;
    return t;
  }

  // reduction sources
  std::uint64_t value() const { return m_value; }
  std::uint64_t scaled_value(std::uint64_t k, std::uint64_t add) const {
    return m_value * k + add + armi::get_location_id();
  }
  std::string name() const { return std::to_string(armi::get_location_id()) + ";"; }
  std::string name_with(std::string const& prefix, char suffix) const {
    return prefix + name() + suffix;
  }
  std::vector<std::uint64_t> vec(std::uint32_t len) const {
    std::vector<std::uint64_t> v(len);
    for (std::uint32_t i = 0; i < len; ++i) v[i] = (armi::get_location_id() + 1) * (i + 1ULL);
    return v;
  }
  void set_value(std::uint64_t v) { m_value = v; }
  std::uint64_t value_at(std::uint64_t iter) const {
    return value_of(armi::get_location_id(), iter);
  }
  // value(), except on the locations in `fail`.
  std::uint64_t value_unless(std::vector<armi::location_id> const& fail) const {
    armi::location_id const me = armi::get_location_id();
    if (std::find(fail.begin(), fail.end(), me) != fail.end())
      throw std::domain_error("no value at " + std::to_string(me));
    return m_value;
  }

 private:
  std::uint64_t m_value;
  std::map<std::pair<std::uint32_t, armi::location_id>, std::uint64_t> m_marks;
  std::map<std::pair<std::uint32_t, armi::location_id>, std::uint64_t> m_next;
};

class counter : public armi::p_object {
 public:
  explicit counter(std::uint64_t v) : m_v(v) {}
  std::uint64_t get() const { return m_v; }

 private:
  std::uint64_t m_v;
};

std::vector<armi::location_id> all_locations() {
  std::vector<armi::location_id> v(armi::get_num_locations());
  for (armi::location_id i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}
std::vector<armi::location_id> odd_locations() {
  std::vector<armi::location_id> v;
  for (armi::location_id i = 1; i < armi::get_num_locations(); i += 2) v.push_back(i);
  return v;
}
std::vector<armi::location_id> even_locations() {
  std::vector<armi::location_id> v;
  for (armi::location_id i = 0; i < armi::get_num_locations(); i += 2) v.push_back(i);
  return v;
}

template <class Op>
std::uint64_t fold(std::vector<armi::location_id> const& members, Op op) {
  std::uint64_t acc = value_of(members.front());
  for (std::size_t i = 1; i < members.size(); ++i) acc = op(acc, value_of(members[i]));
  return acc;
}
std::string names(std::vector<armi::location_id> const& members) {
  std::string s;
  for (auto m : members) s += std::to_string(m) + ";";
  return s;
}

}  // namespace

template <>
struct armi::associative<joined_op, std::string> : std::true_type {};

TEST_CASE("collectives: broadcast_rmi from every location reaches every location once",
          "[collectives]") {
  armi_test::run([&] {
    member m;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    std::uint32_t const rounds = 5;
    for (std::uint32_t ch = 0; ch < rounds; ++ch)
      armi::broadcast_rmi(m.get_rmi_handle(), &member::mark, ch, me, me * 1000ULL + ch);
    armi::broadcast_rmi(armi::group::all(), m.get_rmi_handle(), &member::mark, std::uint32_t{99},
                        me, me * 1000ULL + 99);
    armi::rmi_fence();
    for (armi::location_id src = 0; src < n; ++src) {
      for (std::uint32_t ch = 0; ch < rounds; ++ch)
        ARMI_CHECK_EQ(m.marks(ch, src), std::uint64_t{1});
      ARMI_CHECK_EQ(m.marks(99, src), std::uint64_t{1});
    }
    ARMI_CHECK_EQ(m.marks_total(), std::uint64_t{(rounds + 1) * n});
    armi::rmi_fence();
  });
}

TEST_CASE(
    "collectives: broadcast_rmi to groups - odd locations - one location - a group without the "
    "caller",
    "[collectives]") {
  armi_test::run([&] {
    member m;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = m.get_rmi_handle();
    auto const odds = odd_locations();
    // channel 1: everyone broadcasts to the odd locations
    if (!odds.empty())
      armi::broadcast_rmi(armi::group(odds), h, &member::mark, std::uint32_t{1}, me,
                          me * 1000ULL + 1);
    // channel 2: everyone broadcasts to the single last location
    armi::broadcast_rmi(armi::group({n - 1}), h, &member::mark, std::uint32_t{2}, me,
                        me * 1000ULL + 2);
    // channel 3: location 0 broadcasts to all the others (not itself)
    if (me == 0 && n > 1) {
      std::vector<armi::location_id> others;
      for (armi::location_id i = 1; i < n; ++i) others.push_back(i);
      armi::group const g(others);
      ARMI_CHECK(!g.contains(0));
      armi::broadcast_rmi(g, h, &member::mark, std::uint32_t{3}, me, me * 1000ULL + 3);
    }
    // channel 4: the last location broadcasts to the evens, with members given unsorted and twice
    if (me == n - 1) {
      auto evens = even_locations();
      std::vector<armi::location_id> messy(evens.rbegin(), evens.rend());
      messy.insert(messy.end(), evens.begin(), evens.end());
      armi::group const g(messy);
      ARMI_CHECK(g.members() == evens);
      ARMI_CHECK_EQ(g.size(), evens.size());
      armi::broadcast_rmi(g, h, &member::mark, std::uint32_t{4}, me, me * 1000ULL + 4);
    }
    armi::rmi_fence();
    bool const odd = me % 2 == 1;
    for (armi::location_id src = 0; src < n; ++src) {
      ARMI_CHECK_EQ(m.marks(1, src), std::uint64_t{odd ? 1u : 0u});
      ARMI_CHECK_EQ(m.marks(2, src), std::uint64_t{me == n - 1 ? 1u : 0u});
      ARMI_CHECK_EQ(m.marks(3, src), std::uint64_t{src == 0 && me != 0 ? 1u : 0u});
      ARMI_CHECK_EQ(m.marks(4, src), std::uint64_t{src == n - 1 && !odd ? 1u : 0u});
    }
    armi::rmi_fence();
  });
}

TEST_CASE("collectives: broadcast_rmis from one caller to one group run in issue order on every member",
          "[collectives]") {
  armi_test::run([&] {
    member m;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const h = m.get_rmi_handle();
    std::uint64_t const count = armi_test::scaled(300);
    // Every location broadcasts at once, to everyone (stream 0) and to the
    // odd locations (stream 1): two trees with different roots.  A reduce_rmi
    // over a group follows the broadcasts to that group before it.
    auto odds = odd_locations();
    if (odds.empty()) odds.push_back(0);
    armi::group const g(odds);
    for (std::uint64_t i = 0; i < count; ++i) {
      armi::broadcast_rmi(h, &member::next_in_order, std::uint32_t{0}, me, i);
      armi::broadcast_rmi(g, h, &member::next_in_order, std::uint32_t{1}, me, i);
      if (i % 50 == 49) {
        ARMI_CHECK_EQ(armi::reduce_rmi(h, &member::next_expected, std::plus<>{}, std::uint32_t{0}, me),
                      (i + 1) * armi::get_num_locations());
        ARMI_CHECK_EQ(armi::reduce_rmi(g, h, &member::next_expected, std::plus<>{}, std::uint32_t{1}, me),
                      (i + 1) * g.size());
      }
    }
    armi::rmi_fence();
    for (armi::location_id src = 0; src < armi::get_num_locations(); ++src) {
      ARMI_CHECK_EQ(m.next_expected(0, src), count);
      ARMI_CHECK_EQ(m.next_expected(1, src), g.contains(me) ? count : 0);
    }
    armi::rmi_fence();
  });
}

TEST_CASE("collectives: reduce_rmi over all locations with plus max min and order-sensitive ops",
          "[collectives]") {
  armi_test::run([&] {
    member m;
    armi::rmi_fence();
    auto const n = armi::get_num_locations();
    auto const h = m.get_rmi_handle();
    auto const all = all_locations();
    // Every location runs its own one-sided reductions at the same time.
    for (int rep = 0; rep < 20; ++rep) {
      ARMI_CHECK_EQ(armi::reduce_rmi(h, &member::value, std::plus<>{}),
                    fold(all, std::plus<std::uint64_t>{}));
      ARMI_CHECK_EQ(armi::reduce_rmi(h, &member::value, max_op{}), value_of(n - 1));
      ARMI_CHECK_EQ(armi::reduce_rmi(h, &member::value, min_op{}), value_of(0));
      ARMI_CHECK_EQ(armi::reduce_rmi(h, &member::value, poly_op{}), fold(all, poly_op{}));
      ARMI_CHECK_EQ(armi::reduce_rmi(h, &member::name, concat_op{}), names(all));
      ARMI_CHECK_EQ(armi::reduce_rmi(armi::group::all(), h, &member::name, concat_op{}),
                    names(all));
    }
    armi::rmi_fence();
  });
}

TEST_CASE("collectives: reduce_rmi with arguments", "[collectives]") {
  armi_test::run([&] {
    member m;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = m.get_rmi_handle();
    for (std::uint64_t k = 1; k < 30; ++k) {
      std::uint64_t expected = 0;
      for (armi::location_id i = 0; i < n; ++i) expected += value_of(i) * k + me + i;
      ARMI_CHECK_EQ(armi::reduce_rmi(h, &member::scaled_value, std::plus<>{}, k, std::uint64_t{me}),
                    expected);
    }
    std::string expected;
    for (armi::location_id i = 0; i < n; ++i) expected += "<" + std::to_string(i) + ";>";
    ARMI_CHECK_EQ(armi::reduce_rmi(h, &member::name_with, concat_op{}, std::string("<"), '>'),
                  expected);
    armi::rmi_fence();
  });
}

TEST_CASE(
    "collectives: reduce_rmi over groups called by one location while the others wait in a fence",
    "[collectives]") {
  armi_test::run([&] {
    member m;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = m.get_rmi_handle();
    auto const odds = odd_locations();
    auto const evens = even_locations();
    if (me == n - 1) {
      // odd locations (the caller may or may not be one)
      if (!odds.empty()) {
        armi::group const g(odds);
        ARMI_CHECK_EQ(armi::reduce_rmi(g, h, &member::name, concat_op{}), names(odds));
        ARMI_CHECK_EQ(armi::reduce_rmi(g, h, &member::value, poly_op{}), fold(odds, poly_op{}));
        ARMI_CHECK_EQ(armi::reduce_rmi(g, h, &member::value, std::plus<>{}),
                      fold(odds, std::plus<std::uint64_t>{}));
      }
      // a single location
      for (armi::location_id only = 0; only < n; ++only) {
        armi::group const g({only});
        ARMI_CHECK_EQ(armi::reduce_rmi(g, h, &member::value, poly_op{}), value_of(only));
        ARMI_CHECK_EQ(armi::reduce_rmi(g, h, &member::name, concat_op{}),
                      std::to_string(only) + ";");
      }
      // a group without the caller
      if (n > 1) {
        std::vector<armi::location_id> others;
        for (armi::location_id i = 0; i + 1 < n; ++i) others.push_back(i);
        armi::group const g(others);
        ARMI_CHECK(!g.contains(me));
        ARMI_CHECK_EQ(armi::reduce_rmi(g, h, &member::name, concat_op{}), names(others));
        ARMI_CHECK_EQ(armi::reduce_rmi(g, h, &member::value, max_op{}), value_of(n - 2));
      }
      // vector values
      armi::group const g(evens);
      auto const v = armi::reduce_rmi(g, h, &member::vec, vec_plus{}, std::uint32_t{6});
      ARMI_CHECK_EQ(v.size(), std::size_t{6});
      for (std::size_t i = 0; i < v.size(); ++i) {
        std::uint64_t e = 0;
        for (auto loc : evens) e += (loc + 1) * (i + 1);
        ARMI_CHECK_EQ(v[i], e);
      }
    }
    armi::rmi_fence();
  });
}

TEST_CASE("collectives: allreduce_rmi over all locations - many in a row on changing local values",
          "[collectives]") {
  armi_test::run([&] {
    member m;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = m.get_rmi_handle();
    auto const all = all_locations();
    std::uint64_t const rounds = armi_test::scaled(300);
    for (std::uint64_t iter = 0; iter < rounds; ++iter) {
      // Each location's contribution is its state at the time it calls.
      m.set_value(value_of(me, iter));
      std::uint64_t sum = 0, mx = 0;
      for (armi::location_id i = 0; i < n; ++i) {
        sum += value_of(i, iter);
        mx = std::max(mx, value_of(i, iter));
      }
      ARMI_CHECK_EQ(armi::allreduce_rmi(h, &member::value, std::plus<>{}), sum);
      ARMI_CHECK_EQ(armi::allreduce_rmi(h, &member::value_at, max_op{}, iter), mx);
      if (iter % 10 == 0) {
        std::uint64_t p = value_of(0, iter);
        for (armi::location_id i = 1; i < n; ++i) p = p * 31 + value_of(i, iter);
        ARMI_CHECK_EQ(armi::allreduce_rmi(armi::group::all(), h, &member::value, poly_op{}), p);
      }
    }
    ARMI_CHECK_EQ(armi::allreduce_rmi(h, &member::name, concat_op{}), names(all));
    armi::rmi_fence();
  });
}

TEST_CASE("collectives: allreduce_rmi of std::vector and std::string values", "[collectives]") {
  armi_test::run([&] {
    member m;
    armi::rmi_fence();
    auto const n = armi::get_num_locations();
    auto const h = m.get_rmi_handle();
    for (std::uint32_t len : {0u, 1u, 17u, 1000u}) {
      auto const v = armi::allreduce_rmi(h, &member::vec, vec_plus{}, len);
      ARMI_CHECK_EQ(v.size(), std::size_t{len});
      bool ok = true;
      for (std::size_t i = 0; i < v.size(); ++i) ok = ok && v[i] == (n * (n + 1ULL) / 2) * (i + 1);
      ARMI_CHECK(ok);
    }
    for (int rep = 0; rep < 10; ++rep) {
      std::string const s =
          armi::allreduce_rmi(h, &member::name_with, concat_op{}, std::string(rep, '#'), '|');
      std::string expected;
      for (armi::location_id i = 0; i < n; ++i)
        expected += std::string(rep, '#') + std::to_string(i) + ";|";
      ARMI_CHECK_EQ(s, expected);
    }
    armi::rmi_fence();
  });
}

TEST_CASE(
    "collectives: allreduce_rmi over groups - only members call - disjoint groups at the same time",
    "[collectives]") {
  armi_test::run([&] {
    member m;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = m.get_rmi_handle();
    auto const odds = odd_locations();
    auto const evens = even_locations();
    auto const all = all_locations();
    armi::group const mine(me % 2 == 1 ? odds : evens);
    auto const& mine_members = me % 2 == 1 ? odds : evens;
    ARMI_CHECK(mine.contains(me));
    for (std::uint64_t iter = 0; iter < armi_test::scaled(100); ++iter) {
      // The odd and the even locations reduce over their own group at once.
      ARMI_CHECK_EQ(armi::allreduce_rmi(mine, h, &member::name, concat_op{}), names(mine_members));
      ARMI_CHECK_EQ(armi::allreduce_rmi(mine, h, &member::value, poly_op{}),
                    fold(mine_members, poly_op{}));
      // Then everyone, over all.
      ARMI_CHECK_EQ(armi::allreduce_rmi(h, &member::value, std::plus<>{}),
                    fold(all, std::plus<std::uint64_t>{}));
      // Then only location 0 and the last location, over {0, n-1}.
      if (me == 0 || me == n - 1) {
        armi::group const ends({0, n - 1});
        std::vector<armi::location_id> const ends_members =
            n > 1 ? std::vector<armi::location_id>{0, n - 1} : std::vector<armi::location_id>{0};
        ARMI_CHECK_EQ(armi::allreduce_rmi(ends, h, &member::name, concat_op{}),
                      names(ends_members));
      }
      // A single-member group: only that member calls.
      if (me == n / 2) {
        ARMI_CHECK_EQ(armi::allreduce_rmi(armi::group({me}), h, &member::value, std::plus<>{}),
                      value_of(me));
      }
    }
    armi::rmi_fence();
  });
}

TEST_CASE(
    "collectives: allreduce_rmi that throws on one member throws on every member - the next one "
    "works",
    "[collectives][exceptions]") {
  armi_test::run([&] {
    member m;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = m.get_rmi_handle();
    auto const all = all_locations();
    auto const odds = odd_locations();
    auto const evens = even_locations();
    std::uint64_t const sum = fold(all, std::plus<std::uint64_t>{});
    // The member `at` rethrows its own exception (of `type`); every other
    // member a remote_error that names it.
    auto const fails = [&](auto&& call, armi::location_id at, std::string const& type, std::string const& what) {
      armi_test::thrown_error const e = armi_test::collective_failure(at, call);
      ARMI_CHECK_EQ(e.type, type);
      ARMI_CHECK_EQ(e.what, what);
    };
    auto const no_value_at = [](armi::location_id l) { return "no value at " + std::to_string(l); };
    for (int round = 0; round < 3; ++round) {
      // The last member's method throws.
      fails([&] { (void)armi::allreduce_rmi(h, &member::value_unless, std::plus<>{}, std::vector{n - 1}); }, n - 1,
            "std::domain_error", no_value_at(n - 1));
      ARMI_CHECK_EQ(armi::allreduce_rmi(h, &member::value, std::plus<>{}), sum);
      // Several throw: the first in member order is the one every member sees.
      if (n > 1)
        fails([&] { (void)armi::allreduce_rmi(h, &member::value_unless, std::plus<>{}, odds); }, odds.front(),
              "std::domain_error", no_value_at(odds.front()));
      fails([&] { (void)armi::allreduce_rmi(h, &member::value_unless, std::plus<>{}, all); }, 0, "std::domain_error",
            no_value_at(0));
      // The operation throws (at the leader, which combines).
      if (n > 1)
        fails([&] { (void)armi::allreduce_rmi(h, &member::value, refusing_op{}); }, 0, "std::overflow_error",
              "op refused");
      // A handle that names nothing, on one member only.
      armi::rmi_handle const bad{};
      fails([&] { (void)armi::allreduce_rmi(me == n - 1 ? bad : h, &member::value, std::plus<>{}); }, n - 1,
            "std::invalid_argument", "armi::allreduce_rmi: invalid rmi_handle (not from get_rmi_handle())");
      ARMI_CHECK_EQ(armi::allreduce_rmi(h, &member::value, std::plus<>{}), sum);
      // Over a group: its last member throws, while the other group's
      // allreduce_rmi succeeds at the same time.
      if (me % 2 == 1)
        fails(
            [&] {
              (void)armi::allreduce_rmi(armi::group(odds), h, &member::value_unless, std::plus<>{},
                                        std::vector{odds.back()});
            },
            odds.back(), "std::domain_error", no_value_at(odds.back()));
      else
        ARMI_CHECK_EQ(armi::allreduce_rmi(armi::group(evens), h, &member::value, std::plus<>{}),
                      fold(evens, std::plus<std::uint64_t>{}));
      ARMI_CHECK_EQ(armi::allreduce_rmi(h, &member::name, concat_op{}), names(all));
    }
    armi::rmi_fence();
  });
}

TEST_CASE("collectives: reduce_rmi rethrows a member's exception at the caller - the others still run",
          "[collectives][exceptions]") {
  armi_test::run([&] {
    member m;
    armi::rmi_fence();
    auto const h = m.get_rmi_handle();
    auto const all = all_locations();
    auto const odds = odd_locations();
    // Every location asks at once; the odd members throw.  The caller sees
    // the first failure in member order.
    if (!odds.empty()) {
      try {
        (void)armi::reduce_rmi(h, &member::value_unless, std::plus<>{}, odds);
        ARMI_CHECK(!"reduce_rmi returned");
      } catch (armi::remote_error const& e) {
        ARMI_CHECK_EQ(e.location(), odds.front());
        ARMI_CHECK_EQ(e.type_name(), std::string("std::domain_error"));
        ARMI_CHECK_EQ(std::string(e.what()), "no value at " + std::to_string(odds.front()));
      }
    }
    // The answers still owed to the abandoned call do not disturb the next.
    ARMI_CHECK_EQ(armi::reduce_rmi(h, &member::value_unless, std::plus<>{}, std::vector<armi::location_id>{}),
                  fold(all, std::plus<std::uint64_t>{}));
    ARMI_CHECK_EQ(armi::reduce_rmi(h, &member::name, concat_op{}), names(all));
    armi::rmi_fence();
  });
}

TEST_CASE("collectives: allreduce_rmi combines a declared-associative op up the tree in member order",
          "[collectives]") {
  armi_test::run([&] {
    member m;
    armi::rmi_fence();
    auto const h = m.get_rmi_handle();
    static_assert(armi::associative_v<joined_op, std::string> && !armi::associative_v<concat_op, std::string>);
    static_assert(armi::associative_v<std::plus<>, std::uint64_t> && !armi::associative_v<std::plus<>, double>);
    auto odds = odd_locations();
    if (odds.empty()) odds.push_back(0);
    armi::group const g(odds);
    for (int round = 0; round < 20; ++round) {
      ARMI_CHECK_EQ(armi::allreduce_rmi(h, &member::name, joined_op{}), names(all_locations()));
      if (g.contains(armi::get_location_id()))
        ARMI_CHECK_EQ(armi::allreduce_rmi(g, h, &member::name, joined_op{}), names(odds));
    }
    armi::rmi_fence();
  });
}

// The tree's bound (docs/design.md, collectives): per allreduce_rmi a member
// sends at most one message up and one to each of its children, and handles
// as many; over all members, 2 (P - 1) messages.
TEST_CASE("collectives: allreduce_rmi sends and handles at most arity + 1 messages per member",
          "[collectives][tree]") {
  armi_test::run([&] {
    member m;
    auto const h = m.get_rmi_handle();
    auto& ctx = armi::detail::current("test");
    std::size_t const kind = static_cast<std::size_t>(armi::detail::rmi_kind::collective);
    // A member has at most --armi-tree-arity children on each level of the
    // machine it leads (mpi, mixed: its node, its process, itself).
    std::uint64_t const arity = ctx.collectives().tree_arity() * (ctx.transport_of().layered() ? 3 : 1);
    std::uint64_t const n = armi::get_num_locations();
    constexpr std::uint64_t rounds = 10;
    std::uint64_t sent0 = 0, handled0 = 0;
    {
      // Under --armi-progress=thread others' allreduce messages could run (and count) once the fence returns.
      armi::hold_requests const hold;
      armi::rmi_fence();
      sent0 = ctx.stats().sent[kind];
      handled0 = ctx.stats().executed[kind];
    }
    for (std::uint64_t r = 0; r < rounds; ++r) (void)armi::allreduce_rmi(h, &member::value, std::plus<>{});
    for (std::uint64_t r = 0; r < rounds; ++r) (void)armi::allreduce_rmi(h, &member::value, poly_op{});
    armi::rmi_fence();
    std::uint64_t const sent = ctx.stats().sent[kind] - sent0, handled = ctx.stats().executed[kind] - handled0;
    ARMI_CHECK(sent <= 2 * rounds * (arity + 1));
    ARMI_CHECK(handled <= 2 * rounds * (arity + 1));
    counter const mine(sent);
    armi::rmi_fence();
    ARMI_CHECK_EQ(armi::allreduce_rmi(mine.get_rmi_handle(), &counter::get, std::plus<>{}), 2 * rounds * 2 * (n - 1));
    armi::rmi_fence();
  });
}

// broadcast_rmi and reduce_rmi: the caller sends one request, to the first
// member; each member handles one and passes it on to at most arity
// children; under reduce_rmi each member sends one collective message (its
// subtree's values) and handles one from each child.
TEST_CASE("collectives: broadcast_rmi and reduce_rmi send and handle at most arity + 1 messages per member",
          "[collectives][tree]") {
  armi_test::run([&] {
    member m;
    auto const h = m.get_rmi_handle();
    auto& ctx = armi::detail::current("test");
    auto const& stats = ctx.stats();
    auto const me = armi::get_location_id();
    // A member has at most --armi-tree-arity children on each level of the
    // machine it leads (mpi, mixed: its node, its process, itself).
    std::uint64_t const arity = ctx.collectives().tree_arity() * (ctx.transport_of().layered() ? 3 : 1);
    std::uint64_t const n = armi::get_num_locations();
    armi::location_id const caller = static_cast<armi::location_id>(n - 1);  // not the tree's root when n > 1
    constexpr std::uint64_t rounds = 10;
    using armi::detail::rmi_kind;
    auto count = [](auto const& a, rmi_kind k) { return a[static_cast<std::size_t>(k)]; };
    decltype(stats.sent) sent0{}, handled0{};
    {
      // Under --armi-progress=thread the caller's broadcasts could run (and count) once the fence returns.
      armi::hold_requests const hold;
      armi::rmi_fence();
      sent0 = stats.sent;
      handled0 = stats.executed;
    }
    for (std::uint64_t r = 0; r < rounds && me == caller; ++r) {
      armi::broadcast_rmi(h, &member::mark, std::uint32_t{7}, caller, caller * 1000ULL + 7);
      ARMI_CHECK_EQ(armi::reduce_rmi(h, &member::value, poly_op{}), fold(all_locations(), poly_op{}));
    }
    armi::rmi_fence();
    std::uint64_t const own = me == caller ? rounds : 0;  // the caller's requests to the root
    for (rmi_kind k : {rmi_kind::broadcast, rmi_kind::reduce}) {
      ARMI_CHECK_EQ(count(stats.executed, k) - count(handled0, k), rounds);
      ARMI_CHECK(count(stats.sent, k) - count(sent0, k) <= rounds * arity + own);
    }
    std::uint64_t const contributions = count(stats.sent, rmi_kind::collective) - count(sent0, rmi_kind::collective);
    ARMI_CHECK_EQ(contributions, rounds);
    ARMI_CHECK(count(stats.executed, rmi_kind::collective) - count(handled0, rmi_kind::collective) <=
               rounds * arity + own);
    ARMI_CHECK_EQ(m.marks(7, caller), rounds);
    counter const mine(count(stats.sent, rmi_kind::broadcast) - count(sent0, rmi_kind::broadcast));
    armi::rmi_fence();
    ARMI_CHECK_EQ(armi::allreduce_rmi(mine.get_rmi_handle(), &counter::get, std::plus<>{}), rounds * n);
    armi::rmi_fence();
  });
}

TEST_CASE("collectives: opaque_allreduce_rmi and opaque_reduce_rmi return futures; order with the blocking ones holds",
          "[collectives][opaque]") {
  armi_test::run([&] {
    member m;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = m.get_rmi_handle();
    auto const all = all_locations();
    std::uint64_t const sum = fold(all, std::plus<std::uint64_t>{});
    // Two opaque allreduces with a blocking one between them, all on the
    // same (whole) group, collected in reverse order; async traffic around.
    auto first = armi::opaque_allreduce_rmi(h, &member::value, std::plus<>{});
    for (armi::location_id d = 0; d < n; ++d) armi::async_rmi(d, h, &member::mark, 7u, me, me * 1000ULL + 7);
    std::uint64_t const biggest = armi::allreduce_rmi(h, &member::value, max_op{});
    auto names_future = armi::opaque_allreduce_rmi(h, &member::name, concat_op{});
    auto reduced = armi::opaque_reduce_rmi(h, &member::scaled_value, std::plus<>{}, std::uint64_t{3}, std::uint64_t{1});
    ARMI_CHECK_EQ(names_future.get(), names(all));
    ARMI_CHECK_EQ(first.get(), sum);
    ARMI_CHECK_EQ(biggest, fold(all, max_op{}));
    std::uint64_t expect_reduced = 0;
    for (armi::location_id l = 0; l < n; ++l) expect_reduced += value_of(l) * 3 + 1 + l;
    ARMI_CHECK_EQ(reduced.get(), expect_reduced);
    // Many in flight at once, then a continuation on one.
    std::vector<armi::future<std::uint64_t>> many;
    for (int i = 0; i < 6; ++i) many.push_back(armi::opaque_allreduce_rmi(h, &member::value, std::plus<>{}));
    auto doubled = armi::opaque_allreduce_rmi(h, &member::value, std::plus<>{}).then([](std::uint64_t v) { return 2 * v; });
    for (auto& f : many) ARMI_CHECK_EQ(f.get(), sum);
    ARMI_CHECK_EQ(doubled.get(), 2 * sum);
    // Over a group of the odd locations, while the others run a blocking one.
    auto const odds = odd_locations();
    auto const evens = even_locations();
    if (me % 2 == 1)
      ARMI_CHECK_EQ(armi::opaque_allreduce_rmi(armi::group(odds), h, &member::value, std::plus<>{}).get(),
                    fold(odds, std::plus<std::uint64_t>{}));
    else
      ARMI_CHECK_EQ(armi::allreduce_rmi(armi::group(evens), h, &member::value, std::plus<>{}),
                    fold(evens, std::plus<std::uint64_t>{}));
    armi::rmi_fence();
    ARMI_CHECK_EQ(m.marks(7, (me + 1) % n), std::uint64_t{1});
  });
}

TEST_CASE("collectives: an opaque_allreduce_rmi that throws on one member fails every member's future",
          "[collectives][opaque][exceptions]") {
  armi_test::run([&] {
    member m;
    armi::rmi_fence();
    auto const n = armi::get_num_locations();
    auto const h = m.get_rmi_handle();
    auto f = armi::opaque_allreduce_rmi(h, &member::value_unless, std::plus<>{}, std::vector{n - 1});
    auto next = armi::opaque_allreduce_rmi(h, &member::value, std::plus<>{});
    armi_test::thrown_error const e = armi_test::collective_failure(n - 1, [&] { (void)f.get(); });
    ARMI_CHECK_EQ(e.type, std::string("std::domain_error"));
    ARMI_CHECK_EQ(e.what, "no value at " + std::to_string(n - 1));
    ARMI_CHECK_EQ(next.get(), fold(all_locations(), std::plus<std::uint64_t>{}));  // the next one works
    armi::rmi_fence();
  });
}
