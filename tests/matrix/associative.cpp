// The associative pContainers (punordered_map, punordered_set, pbag,
// pdisjoint_set), each against a sequential std:: computation of the same
// operations: integer, string and user-type keys, colliding hashes,
// erase-then-insert, the order of one location's requests to one owner, and
// unions from every location at once.
#include "support/test_support.hpp"

#include <armi/containers/pbag.hpp>
#include <armi/containers/pdisjoint_set.hpp>
#include <armi/containers/punordered_map.hpp>
#include <armi/containers/punordered_set.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

using armi_test::mix64;

// A key that travels through define_type, with a hash that collides on
// purpose: only `bucket` is hashed, so keys with equal buckets share an
// owner and a bucket there.
struct tagged_key {
  std::string name;
  int bucket = 0;
  void define_type(armi::typer& t) {
    t.local(name);
    t.local(bucket);
  }
  friend bool operator==(tagged_key const&, tagged_key const&) = default;
};
struct colliding_hash {
  std::size_t operator()(tagged_key const& k) const { return static_cast<std::size_t>(k.bucket); }
};

// A trivially copyable key (travels as bytes) with its own hash.
struct cell {
  std::int32_t row = 0;
  std::int32_t col = 0;
  friend bool operator==(cell const&, cell const&) = default;
  friend auto operator<=>(cell const&, cell const&) = default;
};
struct cell_hash {
  std::size_t operator()(cell const& c) const {
    return static_cast<std::size_t>(mix64(static_cast<std::uint64_t>(c.row) << 32 | static_cast<std::uint32_t>(c.col)));
  }
};

// The words location src adds in the word-count test: few distinct, so every
// location updates the same keys.
std::string word_of(armi::location_id src, std::size_t t) {
  return "w" + std::to_string(mix64(src * 7919 + t) % 97);
}

struct append_visit {
  void operator()(std::string const& key, std::string& value, std::string const& tail) const {
    value += key.substr(0, 1) + tail;
  }
};

}  // namespace

TEST_CASE("punordered_map: insert keeps the first value, insert_or_assign the last, get and get_async",
          "[associative]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    std::uint64_t const n = 40 * p + 3;
    armi::punordered_map<std::uint64_t, std::uint64_t> m;
    // Every location inserts every key with its own value; which one wins is
    // not fixed, but exactly one does and it stays.
    for (std::uint64_t k = 0; k < n; ++k) m.insert(k, k * 1000 + me);
    armi::rmi_fence();
    ARMI_CHECK_EQ(m.size(), n);
    std::vector<std::uint64_t> first(n);
    for (std::uint64_t k = 0; k < n; ++k) {
      std::optional<std::uint64_t> v = m.get(k);
      ARMI_CHECK(v.has_value() && *v / 1000 == k && *v % 1000 < p);
      first[k] = v.value_or(0);
    }
    for (std::uint64_t k = 0; k < n; ++k) m.insert(k, 7);  // present: no change
    armi::rmi_fence();
    for (std::uint64_t k = 0; k < n; ++k) ARMI_CHECK_EQ(m.get(k).value_or(0), first[k]);
    armi::rmi_fence();

    // insert_or_assign from one location at a time: the last one wins.
    for (armi::location_id turn = 0; turn < p; ++turn) {
      if (turn == me)
        for (std::uint64_t k = 0; k < n; k += 3) m.insert_or_assign(k, turn + 100);
      armi::rmi_fence();
    }
    std::vector<armi::future<std::optional<std::uint64_t>>> futures;
    for (std::uint64_t k = 0; k < n; ++k) futures.push_back(m.get_async(k));
    for (std::uint64_t k = 0; k < n; ++k) {
      std::optional<std::uint64_t> const v = futures[k].get();
      ARMI_CHECK_EQ(v.value_or(0), k % 3 == 0 ? std::uint64_t{p - 1 + 100} : first[k]);
      if (m.owner(k) == me) ARMI_CHECK(m.local().contains(k));
    }
    ARMI_CHECK(!m.get(n + 5).has_value());
    auto missing = m.get_async(n + 6);
    ARMI_CHECK(!missing.get().has_value());
    // A key this location owns is answered at once.
    for (auto const& [k, v] : m.local()) ARMI_CHECK(m.get_async(k).ready());
    armi::rmi_fence();
  });
}

TEST_CASE("punordered_map: update and visit against a sequential count, string keys", "[associative]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    std::size_t const count = armi_test::scaled(2000);
    armi::punordered_map<std::string, std::size_t> counts;
    for (std::size_t t = 0; t < count; ++t) counts.update(word_of(me, t), armi::plus_op{}, t % 5 + 1);
    std::map<std::string, std::size_t> expect;
    for (armi::location_id s = 0; s < p; ++s)
      for (std::size_t t = 0; t < count; ++t) expect[word_of(s, t)] += t % 5 + 1;

    std::unordered_map<std::string, std::size_t> const all = counts.gather();
    ARMI_CHECK_EQ(all.size(), expect.size());
    ARMI_CHECK_EQ(counts.size(), expect.size());
    std::size_t wrong = 0;
    for (auto const& [w, c] : expect) wrong += all.contains(w) && all.at(w) == c ? 0 : 1;
    ARMI_CHECK_EQ(wrong, std::size_t{0});
    for (auto const& [w, c] : counts.local()) ARMI_CHECK_EQ(counts.owner(w), me);

    // visit adds a missing key as V{}; visit_if_contains does not.
    armi::punordered_map<std::string, std::string> text;
    if (me == 0) {
      text.visit("alpha", append_visit{}, std::string("1"));
      text.visit("alpha", append_visit{}, std::string("2"));
      text.visit_if_contains("beta", append_visit{}, std::string("3"));
      text.visit_if_contains("alpha", append_visit{}, std::string("4"));
      ARMI_CHECK(text.get("alpha") == std::optional<std::string>("a1a2a4"));  // in order: one owner
      ARMI_CHECK(!text.get("beta").has_value());
    }
    ARMI_CHECK_EQ(text.size(), std::size_t{1});
    armi::rmi_fence();
  });
}

TEST_CASE("punordered_map: erase, erase then insert, clear; colliding user-type keys", "[associative]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    armi::punordered_map<tagged_key, int, colliding_hash> m;
    // Keys of location s: ("s/i", bucket i % 3): three buckets for all of
    // them, so at most three owners and long collision chains there.
    auto const key = [](armi::location_id s, int i) { return tagged_key{std::to_string(s) + "/" + std::to_string(i), i % 3}; };
    int const per = 60;
    for (int i = 0; i < per; ++i) m.insert(key(me, i), i);
    // From the same location, in order: erase then insert ends present with
    // the new value; insert then erase ends absent.
    for (int i = 0; i < per; i += 2) {
      m.erase(key(me, i));
      m.insert(key(me, i), -i);
    }
    for (int i = 1; i < per; i += 4) m.erase(key(me, i));
    ARMI_CHECK(m.get(key(me, 0)) == std::optional<int>(0));
    ARMI_CHECK(m.get(key(me, 2)) == std::optional<int>(-2));
    ARMI_CHECK(!m.get(key(me, 1)).has_value());
    std::size_t const per_location = per - (per + 2) / 4;  // i = 1, 5, 9, ... erased
    ARMI_CHECK_EQ(m.size(), per_location * p);
    std::unordered_map<tagged_key, int, colliding_hash> const all = m.gather();
    for (armi::location_id s = 0; s < p; ++s)
      for (int i = 0; i < per; ++i) {
        auto it = all.find(key(s, i));
        if (i % 4 == 1)
          ARMI_CHECK(it == all.end());
        else
          ARMI_CHECK(it != all.end() && it->second == (i % 2 == 0 ? -i : i));
      }
    std::set<armi::location_id> owners;
    for (int i = 0; i < 3; ++i) owners.insert(m.owner(key(0, i)));
    for (auto const& [k, v] : m.local()) ARMI_CHECK(owners.contains(me) && m.owner(k) == me);
    m.clear();
    ARMI_CHECK_EQ(m.size(), std::size_t{0});
    m.insert(key(me, 0), 1);
    ARMI_CHECK_EQ(m.size(), std::size_t{p});
  });
}

TEST_CASE("punordered_set: insert, contains, erase, gather; trivially copyable keys", "[associative]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    std::size_t const count = armi_test::scaled(1500);
    armi::punordered_set<cell, cell_hash> s;
    auto const cell_of = [](armi::location_id src, std::size_t t) {
      std::uint64_t const r = mix64(src * 104729 + t);
      return cell{static_cast<std::int32_t>(r % 40) - 20, static_cast<std::int32_t>((r >> 20) % 40)};
    };
    for (std::size_t t = 0; t < count; ++t) s.insert(cell_of(me, t));
    std::set<cell> expect;
    for (armi::location_id src = 0; src < p; ++src)
      for (std::size_t t = 0; t < count; ++t) expect.insert(cell_of(src, t));
    ARMI_CHECK_EQ(s.size(), expect.size());
    std::unordered_set<cell, cell_hash> const all = s.gather();
    ARMI_CHECK_EQ(all.size(), expect.size());
    for (cell const& c : expect) ARMI_CHECK(all.contains(c));

    // Every location asks about the same cells, half of them absent.
    std::vector<armi::future<bool>> asked;
    for (std::int32_t row = -20; row < 20; row += 3) asked.push_back(s.contains_async(cell{row, 45}));
    for (auto& f : asked) ARMI_CHECK(!f.get());
    for (std::size_t t = 0; t < 50; ++t) ARMI_CHECK(s.contains(cell_of((me + 1) % p, t)));
    armi::rmi_fence();

    // Location 0 erases the cells with an even row; then everyone checks.
    if (me == 0)
      for (cell const& c : expect)
        if (c.row % 2 == 0) s.erase(c);
    armi::rmi_fence();
    std::size_t wrong = 0;
    for (cell const& c : expect) wrong += s.contains(c) != (c.row % 2 != 0) ? 1 : 0;
    ARMI_CHECK_EQ(wrong, std::size_t{0});
    armi::rmi_fence();
  });
}

TEST_CASE("pbag: every push lands once, spread evenly", "[associative]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    std::size_t const count = armi_test::scaled(3000) + me;  // uneven on purpose
    armi::pbag<std::pair<std::uint32_t, std::uint64_t>> bag;
    for (std::size_t t = 0; t < count; ++t) bag.push({me, t});
    std::size_t total = 0;
    for (armi::location_id s = 0; s < p; ++s) total += armi_test::scaled(3000) + s;
    ARMI_CHECK_EQ(bag.size(), total);
    // Each pusher's elements differ by at most one between any two locations.
    std::vector<std::size_t> from(p, 0);
    for (auto const& [src, t] : bag.local()) ++from[src];
    for (armi::location_id s = 0; s < p; ++s) {
      std::size_t const pushed = armi_test::scaled(3000) + s;
      ARMI_CHECK(from[s] == pushed / p || from[s] == pushed / p + 1);
    }
    auto all = bag.gather();
    std::sort(all.begin(), all.end());
    ARMI_CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
    ARMI_CHECK_EQ(all.size(), total);
    bag.clear();
    ARMI_CHECK_EQ(bag.size(), std::size_t{0});
  });
}

namespace {

// A sequential union-find: the reference partition.
struct reference_sets {
  std::map<std::uint64_t, std::uint64_t> parent;
  std::uint64_t find(std::uint64_t x) {
    parent.try_emplace(x, x);
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(std::uint64_t a, std::uint64_t b) { parent[find(a)] = find(b); }
  std::size_t num_sets() {
    std::size_t n = 0;
    for (auto const& [x, px] : parent) n += find(x) == x ? 1 : 0;
    return n;
  }
};

// Checks that `got` (element -> representative) is the reference partition.
void check_partition(std::unordered_map<std::uint64_t, std::uint64_t> const& got, reference_sets& expect) {
  ARMI_CHECK_EQ(got.size(), expect.parent.size());
  std::map<std::uint64_t, std::uint64_t> rep_of_reference_root;  // reference root -> our representative
  std::size_t wrong = 0;
  for (auto const& [x, px] : expect.parent) {
    auto it = got.find(x);
    if (it == got.end()) {
      ++wrong;
      continue;
    }
    auto [slot, fresh] = rep_of_reference_root.try_emplace(expect.find(x), it->second);
    wrong += !fresh && slot->second != it->second ? 1 : 0;
  }
  std::set<std::uint64_t> reps;
  for (auto const& [root, rep] : rep_of_reference_root) reps.insert(rep);
  ARMI_CHECK_EQ(reps.size(), rep_of_reference_root.size());  // distinct sets, distinct representatives
  ARMI_CHECK_EQ(wrong, std::size_t{0});
}

}  // namespace

TEST_CASE("pdisjoint_set: unions from every location against a sequential union-find", "[associative]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    std::uint64_t const n = armi_test::scaled(3000);
    std::size_t const edges = n / 2;  // about as many components as the threshold of a giant one
    auto const edge = [&](armi::location_id src, std::size_t t) {
      std::uint64_t const r = mix64(src * 15485863 + t);
      return std::pair<std::uint64_t, std::uint64_t>{r % n, (r >> 32) % n};
    };
    armi::pdisjoint_set<std::uint64_t> sets;
    for (std::uint64_t v = me; v < n; v += p) sets.insert(v);
    for (std::size_t t = 0; t < edges / p + 1; ++t) sets.unite(edge(me, t).first, edge(me, t).second);
    reference_sets expect;
    for (std::uint64_t v = 0; v < n; ++v) expect.find(v);
    for (armi::location_id s = 0; s < p; ++s)
      for (std::size_t t = 0; t < edges / p + 1; ++t) expect.unite(edge(s, t).first, edge(s, t).second);

    ARMI_CHECK_EQ(sets.size(), n);
    ARMI_CHECK_EQ(sets.num_sets(), expect.num_sets());
    // find from every location agrees with the reference partition and with
    // the other locations' finds.
    std::vector<std::uint64_t> mine;
    for (std::uint64_t v = 0; v < n; v += 7) mine.push_back(sets.find(v));
    std::vector<std::vector<std::uint64_t>> const everyone = armi::detail::allgather_value(mine);
    for (auto const& other : everyone) ARMI_CHECK(other == mine);
    std::unordered_map<std::uint64_t, std::uint64_t> const all = sets.gather();
    check_partition(all, expect);
    for (std::size_t k = 0; k < mine.size(); ++k) ARMI_CHECK_EQ(mine[k], all.at(k * 7));
    // After compress, every element points at its representative.
    for (auto const& [x, rep] : sets.representatives()) ARMI_CHECK_EQ(rep, all.at(x));
    ARMI_CHECK_EQ(sets.find(n + 10), n + 10);  // never added: its own set
    ARMI_CHECK_EQ(sets.size(), n);              // and find did not add it
  });
}

TEST_CASE("pdisjoint_set: a long chain, repeated and reflexive unions, string elements", "[associative]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    std::uint64_t const n = armi_test::scaled(2000);
    // Every location unites a contiguous piece of one chain, in opposite
    // directions on neighbours; the pieces overlap by one element.
    armi::pdisjoint_set<std::uint64_t> chain;
    std::uint64_t const lo = n * me / p, hi = n * (me + 1) / p;
    for (std::uint64_t v = lo; v < hi; ++v) {
      std::uint64_t const a = me % 2 == 0 ? v : hi - 1 - (v - lo);
      chain.unite(a, a + 1);
      chain.unite(a + 1, a);  // again, reversed
      chain.unite(a, a);
    }
    ARMI_CHECK_EQ(chain.num_sets(), std::size_t{1});
    ARMI_CHECK_EQ(chain.size(), n + 1);
    ARMI_CHECK_EQ(chain.find(0), chain.find(n));

    armi::pdisjoint_set<std::string> names;
    // Location s joins "s.k" for k of one parity into two sets per location.
    for (int k = 2; k < 40; ++k) names.unite(std::to_string(me) + "." + std::to_string(k % 2), std::to_string(me) + "." + std::to_string(k));
    if (me + 1 < p) names.unite(std::to_string(me) + ".0", std::to_string(me + 1) + ".0");  // the even sets join up
    ARMI_CHECK_EQ(names.num_sets(), std::size_t{p} + 1);
    auto const all = names.gather();
    ARMI_CHECK_EQ(all.size(), std::size_t{40} * p);
    ARMI_CHECK(all.at("0.0") == all.at(std::to_string(p - 1) + ".38"));
    ARMI_CHECK(all.at(std::to_string(me) + ".1") == names.find(std::to_string(me) + ".39"));
    if (p > 1) ARMI_CHECK(all.at("0.1") != all.at("1.1"));
  });
}
