// The folders under include/armi are layers (docs/design.md §3): a header
// may include headers of its own folder and of folders in layers below its
// own, never above, and no two folders include each other.  This test reads
// every `#include <armi/...>` line under include/armi and fails on a header
// that breaks the rule, on a folder the layer table does not know, and on a
// cycle between folders; the checker itself is tested on made-up edges.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// Bottom to top.  A folder's headers may include folders of lower layers.
// The umbrella header of a folder (armi/containers.hpp for containers/)
// belongs to that folder; every other header directly under include/armi is
// the public API.
struct layer {
  char const* folder;
  int level;
};
constexpr layer layers[] = {
    {"serialization", 0},    //
    {"core", 1},             // what backends may include
    {"backend/threads", 2},  //
    {"backend/mpi", 2},      //
    {"backend/sp2", 2},      //
    {"backend/mixed", 3},    // built from threads and mpi
    {"runtime", 4},          // the engine
    {"", 5},                 // the public headers, include/armi/*.hpp
    {"containers", 6},       //
    {"algorithms", 7},       //
};

// The folder of a header, given its path relative to include/armi: its
// first component, or its first two under backend/; an umbrella header goes
// with the folder it is named after.
std::string folder_of(std::string const& rel) {
  auto const slash = rel.find('/');
  if (slash == std::string::npos) {
    std::string const stem = rel.substr(0, rel.rfind('.'));
    for (layer const& l : layers)
      if (stem == l.folder) return stem;
    return "";
  }
  std::string const first = rel.substr(0, slash);
  if (first != "backend") return first;
  auto const second = rel.find('/', slash + 1);
  return second == std::string::npos ? first : rel.substr(0, second);
}

std::optional<int> level_of(std::string const& folder) {
  for (layer const& l : layers)
    if (folder == l.folder) return l.level;
  return std::nullopt;
}

struct include_edge {
  std::string from;  // relative to include/armi
  std::string to;
};

// Every rule an edge list breaks, one line each; empty when it keeps them.
std::vector<std::string> violations(std::vector<include_edge> const& edges) {
  std::vector<std::string> found;
  std::map<std::string, std::set<std::string>> graph;  // folder -> folders it includes
  auto name = [](std::string const& f) { return f.empty() ? std::string("include/armi") : f + "/"; };
  for (auto const& e : edges) {
    std::string const a = folder_of(e.from), b = folder_of(e.to);
    auto const la = level_of(a), lb = level_of(b);
    if (!la) found.push_back(e.from + ": folder " + name(a) + " has no layer (add it to tests/unit/layering.cpp)");
    if (!lb) found.push_back(e.to + ": folder " + name(b) + " has no layer (add it to tests/unit/layering.cpp)");
    if (!la || !lb || a == b) continue;
    graph[a].insert(b);
    if (*lb >= *la)
      found.push_back(e.from + " includes " + e.to + ": " + name(a) + " (layer " + std::to_string(*la) +
                      ") may include only folders below it, and " + name(b) + " is layer " + std::to_string(*lb));
  }
  // Cycles between folders (depth-first search; grey = on the current path).
  std::map<std::string, int> colour;
  std::vector<std::string> path;
  auto visit = [&](auto&& self, std::string const& f) -> void {
    colour[f] = 1;
    path.push_back(f);
    for (auto const& g : graph[f]) {
      if (colour[g] == 1) {
        std::string cycle;
        for (auto it = std::find(path.begin(), path.end(), g); it != path.end(); ++it) cycle += name(*it) + " -> ";
        found.push_back("folders include each other: " + cycle + name(g));
      } else if (colour[g] == 0) {
        self(self, g);
      }
    }
    path.pop_back();
    colour[f] = 2;
  };
  for (auto const& [f, _] : graph)
    if (colour[f] == 0) visit(visit, f);
  return found;
}

fs::path include_root() { return fs::path(__FILE__).parent_path().parent_path().parent_path() / "include" / "armi"; }

std::vector<include_edge> read_includes(fs::path const& root, std::vector<std::string>& missing) {
  std::regex const line(R"(^\s*#\s*include\s*<armi/([^>]+)>)");
  std::vector<include_edge> edges;
  for (auto const& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".hpp") continue;
    std::string const from = fs::relative(entry.path(), root).generic_string();
    std::ifstream in(entry.path());
    std::string text;
    std::smatch m;
    while (std::getline(in, text))
      if (std::regex_search(text, m, line)) {
        edges.push_back({from, m[1]});
        if (!fs::exists(root / m[1].str())) missing.push_back(from + " includes <armi/" + m[1].str() + ">");
      }
  }
  return edges;
}

}  // namespace

TEST_CASE("every header under include/armi includes only its own folder and folders below it") {
  fs::path const root = include_root();
  REQUIRE(fs::is_directory(root));
  std::vector<std::string> missing;
  auto const edges = read_includes(root, missing);
  REQUIRE(edges.size() > 100);  // the tree was found and read
  for (auto const& m : missing) FAIL_CHECK("no such header: " << m);
  for (auto const& v : violations(edges)) FAIL_CHECK(v);
}

TEST_CASE("the layering checker: folders and umbrella headers") {
  CHECK(folder_of("rmi.hpp").empty());
  CHECK(folder_of("containers.hpp") == "containers");
  CHECK(folder_of("core/buffer.hpp") == "core");
  CHECK(folder_of("runtime/launch/mpi.hpp") == "runtime");
  CHECK(folder_of("backend/mixed/transport.hpp") == "backend/mixed");
}

TEST_CASE("the layering checker: downward includes pass") {
  CHECK(violations({{"rmi.hpp", "runtime/location.hpp"},
                    {"runtime/location.hpp", "core/buffer.hpp"},
                    {"backend/mixed/transport.hpp", "backend/mpi/channel.hpp"},
                    {"containers.hpp", "containers/pvector.hpp"},
                    {"algorithms/bfs.hpp", "containers/pgraph.hpp"},
                    {"runtime/launch/mpi.hpp", "runtime/location.hpp"}})
            .empty());
}

TEST_CASE("the layering checker: an upward include fails") {
  auto const v = violations({{"core/stats.hpp", "runtime/location.hpp"}});
  REQUIRE(v.size() == 1);
  CHECK(v[0].find("core/stats.hpp includes runtime/location.hpp") != std::string::npos);
  CHECK(violations({{"rmi.hpp", "containers/pvector.hpp"}}).size() == 1);  // the public API is below containers
  CHECK(violations({{"backend/threads/rings.hpp", "backend/sp2/am.hpp"}}).size() == 1);  // same layer
}

TEST_CASE("the layering checker: a cycle between folders fails, and so does an unknown folder") {
  auto const v = violations({{"core/stats.hpp", "runtime/location.hpp"}, {"runtime/location.hpp", "core/buffer.hpp"}});
  REQUIRE(v.size() == 2);
  CHECK(std::count_if(v.begin(), v.end(), [](auto const& s) { return s.find("include each other") != s.npos; }) == 1);
  CHECK(violations({{"gadgets/widget.hpp", "core/buffer.hpp"}}).size() == 1);
}
