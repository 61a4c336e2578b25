// Sequential graph references for the pgraph and Graph500 tests: an
// adjacency list and breadth-first levels over it.
#pragma once

#include <armi/algorithms/bfs.hpp>

#include <cstdint>
#include <deque>
#include <vector>

namespace armi_test {

using adjacency = std::vector<std::vector<std::uint64_t>>;

// The BFS level of every vertex from source (armi::bfs_unreached if none).
inline std::vector<std::uint64_t> sequential_bfs_levels(adjacency const& adj, std::uint64_t source) {
  std::vector<std::uint64_t> level(adj.size(), armi::bfs_unreached);
  std::deque<std::uint64_t> q{source};
  level[source] = 0;
  while (!q.empty()) {
    std::uint64_t const u = q.front();
    q.pop_front();
    for (std::uint64_t v : adj[u])
      if (level[v] == armi::bfs_unreached) {
        level[v] = level[u] + 1;
        q.push_back(v);
      }
  }
  return level;
}

}  // namespace armi_test
