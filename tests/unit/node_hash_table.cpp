// node_hash_map and node_hash_set (containers/detail/node_hash_table.hpp)
// against std::unordered_map and std::unordered_set: random operation
// streams with integer and string keys and with a hash that sends every key
// to one slot; erased slots reused and cleared by rebuilds; references that
// survive growth; erase while iterating; copies and moves; a value whose
// construction throws changes nothing.
#include <armi/containers/node_hash_map.hpp>
#include <armi/containers/node_hash_set.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

struct one_slot_hash {  // every key collides: probes run the whole cluster
  std::size_t operator()(std::uint64_t) const noexcept { return 42; }
};

template <class Map, class Ref>
void require_same(Map const& m, Ref const& ref) {
  REQUIRE(m.size() == ref.size());
  std::size_t seen = 0;
  for (auto const& [k, v] : m) {
    auto const it = ref.find(k);
    REQUIRE(it != ref.end());
    REQUIRE(it->second == v);
    ++seen;
  }
  REQUIRE(seen == ref.size());
  for (auto const& [k, v] : ref) REQUIRE(m.at(k) == v);
}

template <class K, class Hash, class MakeKey>
void random_stream(std::size_t key_space, std::size_t operations, MakeKey make_key) {
  armi::node_hash_map<K, std::uint64_t, Hash> m;
  std::unordered_map<K, std::uint64_t> ref;
  std::mt19937_64 rng(key_space);
  for (std::size_t i = 0; i < operations; ++i) {
    K const k = make_key(rng() % key_space);
    switch (rng() % 6) {
      case 0:
      case 1:
        m[k] += i;
        ref[k] += i;
        break;
      case 2: {
        bool const added = m.try_emplace(k, i).second;
        REQUIRE(added == ref.try_emplace(k, i).second);
        break;
      }
      case 3:
        REQUIRE(m.erase(k) == ref.erase(k));
        break;
      case 4:
        m.insert_or_assign(k, i);
        ref.insert_or_assign(k, i);
        break;
      default: {
        auto const it = m.find(k);
        REQUIRE((it == m.end()) == !ref.contains(k));
        REQUIRE(m.contains(k) == ref.contains(k));
        if (it != m.end()) REQUIRE(it->second == ref.at(k));
      }
    }
    if (i % 997 == 0) require_same(m, ref);
  }
  require_same(m, ref);
}

}  // namespace

TEST_CASE("node_hash_map: random streams against std::unordered_map") {
  auto const same = [](std::uint64_t x) { return x; };
  random_stream<std::uint64_t, std::hash<std::uint64_t>>(50, 20'000, same);       // dense erase and reuse
  random_stream<std::uint64_t, std::hash<std::uint64_t>>(100'000, 60'000, same);  // growth
  random_stream<std::uint64_t, std::hash<std::uint64_t>>(1u << 20, 20'000, [](std::uint64_t x) {
    return x << 40;  // keys that differ only in their high bits
  });
  random_stream<std::uint64_t, one_slot_hash>(300, 5'000, same);
  random_stream<std::string, std::hash<std::string>>(5'000, 30'000,
                                                     [](std::uint64_t x) { return "key-" + std::to_string(x); });
}

TEST_CASE("node_hash_map: erased slots are reused and cleared without growing") {
  armi::node_hash_map<std::uint64_t, std::uint64_t> m;
  for (std::uint64_t i = 0; i < 100; ++i) m[i] = i;
  std::size_t slots = 0;
  for (std::uint64_t round = 0; round < 100; ++round) {  // 10,000 erasures at a steady size
    for (std::uint64_t i = 0; i < 100; ++i) REQUIRE(m.erase(round * 100 + i) == 1);
    for (std::uint64_t i = 0; i < 100; ++i) m[(round + 1) * 100 + i] = i;
    REQUIRE(m.size() == 100);
    if (round == 1) slots = m.bucket_count();  // erased slots may have doubled it once
  }
  CHECK(m.bucket_count() == slots);
  CHECK(slots <= 256);
  for (std::uint64_t i = 0; i < 100; ++i) REQUIRE(m.at(10'000 + i) == i);
  CHECK_FALSE(m.contains(0));
  CHECK_THROWS_AS(m.at(0), std::out_of_range);
}

TEST_CASE("node_hash_map: references survive growth, iterators walk every element once") {
  armi::node_hash_map<std::string, std::string> m;
  std::string& first = m["first"];
  first = "kept";
  std::string const* const where = &first;
  for (int i = 0; i < 50'000; ++i) m.try_emplace(std::to_string(i), std::to_string(i));
  CHECK(&m.at("first") == where);
  CHECK(*where == "kept");
  std::unordered_set<std::string> walked;
  for (auto const& [k, v] : m) REQUIRE(walked.insert(k).second);
  CHECK(walked.size() == m.size());
}

TEST_CASE("node_hash_map: erase while iterating, clear, copies and moves") {
  armi::node_hash_map<std::uint64_t, std::uint64_t> m;
  for (std::uint64_t i = 0; i < 1'000; ++i) m[i] = i * i;
  for (auto it = m.begin(); it != m.end();) it = it->first % 3 == 0 ? m.erase(it) : std::next(it);
  REQUIRE(m.size() == 666);
  for (std::uint64_t i = 0; i < 1'000; ++i) REQUIRE(m.contains(i) == (i % 3 != 0));

  armi::node_hash_map<std::uint64_t, std::uint64_t> copy = m;
  CHECK(copy == m);
  copy[1] = 0;
  CHECK_FALSE(copy == m);
  armi::node_hash_map<std::uint64_t, std::uint64_t> moved = std::move(copy);
  CHECK(moved.size() == 666);
  CHECK(moved.at(1) == 0);

  m.clear();
  CHECK(m.empty());
  CHECK(m.begin() == m.end());
  CHECK_FALSE(m.contains(2));
  m[2] = 5;
  CHECK(m.at(2) == 5);
}

TEST_CASE("node_hash_map: a value that throws while constructed adds nothing") {
  struct fussy {
    fussy() = default;
    explicit fussy(int v) : value(v) {
      if (v < 0) throw std::invalid_argument("negative");
    }
    int value = 0;
  };
  armi::node_hash_map<int, fussy> m;
  for (int i = 0; i < 14; ++i) m.try_emplace(i, i);  // the next insertion grows the slots
  CHECK_THROWS_AS(m.try_emplace(100, -1), std::invalid_argument);
  CHECK(m.size() == 14);
  CHECK_FALSE(m.contains(100));
  m.try_emplace(100, 7);
  CHECK(m.at(100).value == 7);
}

TEST_CASE("node_hash_set: random stream against std::unordered_set") {
  armi::node_hash_set<std::string> s;
  std::unordered_set<std::string> ref;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 40'000; ++i) {
    std::string const k = std::to_string(rng() % 3'000);
    if (rng() % 3 == 0) {
      REQUIRE(s.erase(k) == ref.erase(k));
    } else {
      REQUIRE(s.insert(k).second == ref.insert(k).second);
    }
  }
  REQUIRE(s.size() == ref.size());
  for (std::string const& k : s) REQUIRE(ref.contains(k));
  armi::node_hash_set<std::string> const built(ref.begin(), ref.end());
  CHECK(built == s);
}
