// A container saved on 3 locations loads on 2 and on 4 (threads backend;
// tests/matrix/save_load.cpp runs save and load on every backend): pvector,
// parray, pgraph and punordered_map, compared element by element with what
// was saved.
#include "support/test_support.hpp"

#include <armi/containers/save_load.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using armi_test::mix64;
namespace fs = std::filesystem;

constexpr std::size_t n = 1000;

std::uint64_t value_of(std::size_t i) { return mix64(i) % 100000; }
std::uint64_t target_of(std::uint64_t e) { return mix64(e * 7 + 1) % n; }

armi::config with_locations(unsigned locations) {
  armi::config cfg = armi_test::run_config();
  cfg.locations = locations;
  return cfg;
}

}  // namespace

TEST_CASE("save on 3 locations, load on 2 and on 4", "[save_load]") {
  fs::path const dir = fs::temp_directory_path() / ("armi_save_locations_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  armi_test::run(with_locations(3), [&] {
    auto const me = armi::get_location_id();
    armi::pvector<std::uint64_t> v(n);
    armi::parray<std::string, armi::cyclic_distribution> a(n);
    armi::pgraph<std::uint64_t> g(n);
    armi::punordered_map<std::uint64_t, std::string> m;
    for (std::size_t i = me; i < n; i += 3) {
      v.set(i, value_of(i));
      a.set(i, std::to_string(value_of(i)));
      g.add_edge(i, target_of(i));
      g.add_edge(i, target_of(i + n));
      m.insert(i * 31 + 7, "k" + std::to_string(i));
    }
    for (auto& vx : g.local()) vx.property = vx.id + 5;
    armi::save(v, dir / "v");
    armi::save(a, dir / "a");
    armi::save(g, dir / "g");
    armi::save(m, dir / "m");
  });
  for (unsigned locations : {2u, 4u}) {
    INFO("loading on " << locations << " locations");
    armi_test::run(with_locations(locations), [&] {
      armi::pvector<std::uint64_t, armi::cyclic_distribution> v(0);
      armi::load(v, dir / "v");
      armi::parray<std::string> a(n);
      armi::load(a, dir / "a");
      armi::pgraph<std::uint64_t> g(n);
      armi::load(g, dir / "g");
      armi::punordered_map<std::uint64_t, std::string> m;
      armi::load(m, dir / "m");
      ARMI_CHECK_EQ(v.size(), n);
      std::size_t wrong = 0;
      std::vector<std::uint64_t> const vs = v.gather();
      std::vector<std::string> const as = a.gather();
      for (std::size_t i = 0; i < n; ++i) {
        wrong += vs[i] != value_of(i) ? 1 : 0;
        wrong += as[i] != std::to_string(value_of(i)) ? 1 : 0;
      }
      for (auto const& vx : g.local()) {
        wrong += vx.property != vx.id + 5 ? 1 : 0;
        wrong += vx.edges.size() != 2 || vx.edges[0].target != target_of(vx.id) ||
                         vx.edges[1].target != target_of(vx.id + n)
                     ? 1
                     : 0;
      }
      for (std::size_t i = 0; i < n; i += 11) wrong += m.get(i * 31 + 7) != "k" + std::to_string(i) ? 1 : 0;
      ARMI_CHECK_EQ(wrong, std::size_t{0});
      ARMI_CHECK_EQ(armi::saved_info(dir / "g").parts, std::uint64_t{3});
    });
  }
  fs::remove_all(dir);
}
