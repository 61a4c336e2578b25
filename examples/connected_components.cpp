// connected_components — the connected components of a random graph with a
// pdisjoint_set: one unite per edge, from wherever the edge was generated.
//
// The graph has --n vertices and --edges undirected edges, edge e joining
// two vertices drawn from a hash of (seed, e); location l generates the l-th
// block of the edges, so the components do not depend on the number of
// locations.  Every location inserts its share of the vertices (an isolated
// vertex is a component too) and unites the ends of its edges; after a
// fence, num_sets() counts the components, and the size of each component
// is counted in a punordered_map keyed by representative.  With --verify-max
// or fewer vertices, location 0 recomputes the components with a sequential
// union-find and compares the partition element by element.
//
//   ./connected_components --armi-locations=4 --n=1000000 --edges=600000
//   mpiexec -n 2 ./connected_components --armi-backend=mpi
//
// Exit status: 0 if every check passed, 1 if one failed, 2 on a usage error.
#include "example_flags.hpp"

#include <armi/armi.hpp>
#include <armi/containers/pdisjoint_set.hpp>
#include <armi/containers/punordered_map.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

using u64 = std::uint64_t;

u64 mix(u64 x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::pair<u64, u64> edge(u64 seed, u64 n, u64 e) {
  u64 const r = mix(seed * 0x9E3779B97F4A7C15ULL + e);
  return {r % n, mix(r) % n};
}

// The sequential reference: union by size with path halving.
class sequential_union_find {
 public:
  explicit sequential_union_find(u64 n) : m_parent(n), m_size(n, 1) { std::iota(m_parent.begin(), m_parent.end(), u64{0}); }
  u64 find(u64 x) {
    while (m_parent[x] != x) x = m_parent[x] = m_parent[m_parent[x]];
    return x;
  }
  void unite(u64 a, u64 b) {
    a = find(a), b = find(b);
    if (a == b) return;
    if (m_size[a] < m_size[b]) std::swap(a, b);
    m_parent[b] = a;
    m_size[a] += m_size[b];
  }

 private:
  std::vector<u64> m_parent, m_size;
};

// The largest component: the largest count in `sizes`, over all locations.
class largest_component : public armi::p_object {
 public:
  explicit largest_component(armi::punordered_map<u64, u64> const& sizes) : m_sizes(&sizes) {}
  u64 get() const { return armi::allreduce_rmi(get_rmi_handle(), &largest_component::local_max, armi::max_op{}); }

 private:
  u64 local_max() const {
    u64 best = 0;
    for (auto const& [rep, count] : m_sizes->local()) best = std::max(best, count);
    return best;
  }
  armi::punordered_map<u64, u64> const* m_sizes;
};

int run(int argc, char** argv) {
  armi_example::flags f(argc, argv, "connected_components", "connected components of a random graph (pdisjoint_set)");
  u64 const n = f.size("n", 1'000'000, "vertices");
  u64 const edges = f.size("edges", 600'000, "undirected edges (0.6 n: near the giant component's threshold)");
  u64 const seed = f.size("seed", 1, "random seed");
  u64 const verify_max = f.size("verify-max", 2'000'000, "compare with a sequential union-find up to this many vertices");
  if (auto const status = f.finish()) return *status;
  auto const me = armi::get_location_id();
  auto const p = armi::get_num_locations();
  if (n == 0) {
    if (me == 0) fmt::print(stderr, "connected_components: error: --n must be at least 1\n");
    return 2;
  }

  armi::pdisjoint_set<u64> sets;
  auto const t0 = std::chrono::steady_clock::now();
  for (u64 v = n * me / p; v < n * (me + 1) / p; ++v) sets.insert(v);
  for (u64 e = edges * me / p; e < edges * (me + 1) / p; ++e) {
    auto const [a, b] = edge(seed, n, e);
    sets.unite(a, b);
  }
  std::size_t const components = sets.num_sets();  // fences: every unite done
  auto const t1 = std::chrono::steady_clock::now();

  // Component sizes: one update per vertex, keyed by its representative.
  std::unordered_map<u64, u64> const mine = sets.representatives();
  armi::punordered_map<u64, u64> sizes;
  for (auto const& [v, rep] : mine) sizes.update(rep, armi::plus_op{}, 1);
  armi::rmi_fence();
  largest_component const largest_of(sizes);
  u64 const largest = largest_of.get();

  int failures = 0;
  bool const verified = n <= verify_max;
  if (verified) {
    std::unordered_map<u64, u64> const all = sets.gather();  // small graphs only
    if (me == 0) {
      sequential_union_find expect(n);
      for (u64 e = 0; e < edges; ++e) expect.unite(edge(seed, n, e).first, edge(seed, n, e).second);
      // Same partition: a bijection between their roots and our representatives.
      std::unordered_map<u64, u64> ours_of_theirs, theirs_of_ours;
      u64 wrong = all.size() == n ? 0 : 1, roots = 0;
      for (u64 v = 0; v < n; ++v) {
        auto it = all.find(v);
        if (it == all.end()) {
          ++wrong;
          continue;
        }
        u64 const theirs = expect.find(v);
        roots += theirs == v ? 1 : 0;
        wrong += ours_of_theirs.try_emplace(theirs, it->second).first->second != it->second ? 1 : 0;
        wrong += theirs_of_ours.try_emplace(it->second, theirs).first->second != theirs ? 1 : 0;
      }
      if (wrong != 0 || roots != components) {
        fmt::print(stderr, "connected_components: check failed: {} vertices disagree with a sequential union-find, "
                   "{} components there, {} here\n", wrong, roots, components);
        ++failures;
      }
    }
  }

  if (me == 0) {
    double const secs = std::chrono::duration<double>(t1 - t0).count();
    fmt::print("connected_components: {} vertices, {} edges, {} location{}, aggregation {}\n", n, edges, p,
               p == 1 ? "" : "s", armi_example::aggregation_text());
    fmt::print("  unite + fence: {:.6f} s, {:.2f} M edges/s\n", secs,
               secs > 0 ? static_cast<double>(edges) / secs / 1e6 : 0.0);
    fmt::print("  {} components, the largest {} vertices\n", components, largest);
    fmt::print("  {}: {}\n", verified ? "checked against a sequential union-find" : "not checked (--verify-max)",
               failures == 0 ? "OK" : "FAILED");
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return armi::execute(argc, argv, run);
}
