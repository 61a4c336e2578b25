// armi::save and armi::load on every backend: each container written and
// read back into another distribution; damaged, truncated, missing and
// mismatched files refused on every location with the file named, and the
// container left as it was.  (Loading on another number of locations:
// tests/unit/save_load_locations.cpp.)
#include "support/test_support.hpp"

#include <armi/containers/save_load.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using armi_test::mix64;
namespace fs = std::filesystem;

// A fresh directory that every location names the same (location 0 picks it).
fs::path shared_directory(std::string const& what) {
  std::string mine;
  if (armi::get_location_id() == 0)
    mine = (fs::temp_directory_path() /
            ("armi_save_" + what + "_" + std::to_string(::getpid()) + "_" + std::to_string(mix64(static_cast<std::uint64_t>(
                                                                              std::chrono::steady_clock::now().time_since_epoch().count())) % 100000)))
               .string();
  return armi::detail::allgather_value(mine)[0];
}

// Removes dir once every location is done with it.
void remove_directory(fs::path const& dir) {
  armi::rmi_fence();
  if (armi::get_location_id() == 0) fs::remove_all(dir);
  armi::rmi_fence();
}

// Runs load(), which must throw armi::file_error on every location with a
// message naming `file` and containing `words`.
template <class Load>
void expect_file_error(Load&& load, fs::path const& file, std::string const& words) {
  try {
    load();
    armi_test::failures().add("load accepted a bad file: " + file.string());
  } catch (armi::file_error const& e) {
    std::string const what = e.what();
    if (what.find(file.string()) == std::string::npos || what.find(words) == std::string::npos)
      armi_test::failures().add("file_error '" + what + "' does not name " + file.string() + " and '" + words + "'");
  }
}

// Location 0 rewrites byte `at` of file (negative: from the end) and every
// location waits for it.
void damage(fs::path const& file, std::int64_t at) {
  armi::rmi_fence();
  if (armi::get_location_id() == 0) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    std::int64_t const size = f.tellg();
    std::int64_t const pos = at < 0 ? size + at : at;
    f.seekg(pos);
    char c = 0;
    f.get(c);
    f.seekp(pos);
    f.put(static_cast<char>(c ^ 0x5a));
  }
  armi::rmi_fence();
}

std::string text_of(std::size_t i) { return std::string(i % 13, 'x') + std::to_string(mix64(i) % 1000); }

}  // namespace

TEST_CASE("save/load: pvector and parray into other distributions", "[save_load]") {
  armi_test::run([] {
    auto const p = armi::get_num_locations();
    fs::path const dir = shared_directory("indexed");
    std::size_t const n = 31 * p + 4;
    {
      armi::pvector<std::string> v(n);
      for (std::size_t i = armi::get_location_id(); i < n; i += p) v.set(i, text_of(i));
      armi::save(v, dir / "v");
    }
    armi::pvector<std::string, armi::cyclic_distribution> w(3, "old");
    armi::load(w, dir / "v");
    ARMI_CHECK_EQ(w.size(), n);
    std::vector<std::string> const all = w.gather();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += all[i] != text_of(i) ? 1 : 0;
    ARMI_CHECK_EQ(wrong, std::size_t{0});
    armi::saved_container const info = armi::saved_info(dir / "v");
    ARMI_CHECK(info.kind == "pvector" && info.size == n && info.parts == p);

    armi::parray<double, armi::block_cyclic_distribution> a(armi::block_cyclic_distribution(n, p, 3), 0.0);
    for (std::size_t i = armi::get_location_id(); i < n; i += p) a.set(i, 0.5 * static_cast<double>(i));
    armi::save(a, dir / "a");
    armi::parray<double> b(n, -1.0);
    armi::load(b, dir / "a");
    std::vector<double> const got = b.gather();
    for (std::size_t i = 0; i < n; ++i) wrong += got[i] != 0.5 * static_cast<double>(i) ? 1 : 0;
    ARMI_CHECK_EQ(wrong, std::size_t{0});
    // An empty pvector saves and loads too.
    armi::pvector<int> empty(0);
    armi::save(empty, dir / "empty");
    armi::pvector<int> into(5, 1);
    armi::load(into, dir / "empty");
    ARMI_CHECK_EQ(into.size(), std::size_t{0});
    remove_directory(dir);
  });
}

TEST_CASE("save/load: pgraph with properties, punordered_map replaced", "[save_load]") {
  armi_test::run([] {
    auto const me = armi::get_location_id();
    auto const p = armi::get_num_locations();
    fs::path const dir = shared_directory("graph");
    std::uint64_t const n = 17 * p + 2;
    armi::pgraph<std::uint64_t, double> g(n);
    for (auto& vx : g.local()) vx.property = vx.id * 3;
    for (std::uint64_t e = me; e < 5 * n; e += p) g.add_edge(mix64(e) % n, mix64(e + 1) % n, static_cast<double>(e));
    armi::save(g, dir / "g");
    armi::pgraph<std::uint64_t, double, armi::cyclic_distribution> h(n);
    armi::load(h, dir / "g");
    ARMI_CHECK_EQ(h.num_edges(), std::uint64_t{5 * n});
    std::size_t wrong = 0;
    for (auto const& vx : h.local()) {
      wrong += vx.property != vx.id * 3 ? 1 : 0;
      wrong += vx.edges != g.get_out_edges(vx.id) ? 1 : 0;  // same edges, same order
    }
    ARMI_CHECK_EQ(wrong, std::size_t{0});
    armi::rmi_fence();

    armi::punordered_map<std::string, std::vector<int>> m;
    for (int i = 0; i < 40; ++i) m.insert(std::to_string(me) + ":" + std::to_string(i), std::vector<int>(i % 4, i));
    armi::save(m, dir / "m");
    armi::punordered_map<std::string, std::vector<int>> other;
    other.insert("stale" + std::to_string(me), {1});
    armi::load(other, dir / "m");
    ARMI_CHECK(other.gather() == m.gather());
    remove_directory(dir);
  });
}

TEST_CASE("save/load: damaged, truncated, missing and mismatched files load nothing", "[save_load]") {
  armi_test::run([] {
    auto const p = armi::get_num_locations();
    fs::path const dir = shared_directory("bad");
    std::size_t const n = 9 * p + 1;
    armi::parray<std::uint64_t> a(n, 7);
    armi::save(a, dir / "a");
    armi::parray<std::uint64_t> b(n, 1);
    fs::path const last = dir / "a" / ("part-" + std::to_string(p - 1) + ".armi");

    // Mismatches: another kind, another element type, another size.
    armi::pvector<std::uint64_t> v(2, 1);
    expect_file_error([&] { armi::load(v, dir / "a"); }, dir / "a" / "part-0.armi", "not a pvector");
    armi::parray<std::int32_t> narrow(n, 1);
    expect_file_error([&] { armi::load(narrow, dir / "a"); }, dir / "a" / "part-0.armi", "of int");
    armi::parray<std::uint64_t> longer(n + 1, 1);
    expect_file_error([&] { armi::load(longer, dir / "a"); }, dir / "a" / "part-0.armi", "elements");

    // A payload byte, then a header byte; then the file cut short.
    damage(last, -1);
    expect_file_error([&] { armi::load(b, dir / "a"); }, last, "payload checksum");
    damage(last, -1);  // repaired
    damage(last, 30);
    expect_file_error([&] { armi::load(b, dir / "a"); }, last, "header checksum");
    damage(last, 30);
    armi::rmi_fence();
    if (armi::get_location_id() == 0) fs::resize_file(last, fs::file_size(last) - 3);
    expect_file_error([&] { armi::load(b, dir / "a"); }, last, "truncated");
    armi::rmi_fence();
    if (armi::get_location_id() == 0) fs::remove(last);
    expect_file_error([&] { armi::load(b, dir / "a"); }, last, "cannot open");
    expect_file_error([&] { armi::load(b, dir / "nothing"); }, dir / "nothing" / "part-0.armi", "cannot open");
    for (std::uint64_t x : b.local()) ARMI_CHECK_EQ(x, std::uint64_t{1});  // nothing was loaded

    // A pvector with push_backs not made global is refused, on every location.
    armi::pvector<int> grown(p, 0);
    if (armi::get_location_id() == 0) grown.push_back(5);
    try {
      armi::save(grown, dir / "grown");
      armi_test::failures().add("save accepted push_backs not made global");
    } catch (std::logic_error const& e) {
      ARMI_CHECK(std::string(e.what()).find("update_distribution") != std::string::npos);
    }
    remove_directory(dir);
  });
}
