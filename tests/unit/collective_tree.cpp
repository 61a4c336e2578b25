// The tree collectives run over (core/collective_tree.hpp), for every
// group size up to 300 and arities 1..9, and at 4096 ranks: every rank but
// the root has one parent, which lists it as a child; every subtree is the
// contiguous run of ranks the links say; no node has more than `arity`
// children; and the depth stays within ceil(log_arity(P)) + 1 levels for
// arity >= 2 (a chain, for arity 1).
#include <armi/core/collective_tree.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace {

using armi::detail::tree_links;
using armi::detail::tree_links_of;

// Checks the tree over n ranks (over domains, when levels are given);
// returns its depth (the root has depth 0).
std::size_t check_tree(std::size_t n, std::size_t arity, std::vector<std::vector<std::size_t>> const* levels = nullptr,
                       std::size_t fan_out = 0) {
  std::vector<tree_links> t;
  for (std::size_t r = 0; r < n; ++r) t.push_back(levels ? tree_links_of(r, n, arity, *levels) : tree_links_of(r, n, arity));
  if (fan_out == 0) fan_out = arity;
  std::vector<std::size_t> depth(n, 0);
  std::size_t deepest = 0;
  for (std::size_t r = 0; r < n; ++r) {
    INFO("n " << n << " arity " << arity << " rank " << r);
    REQUIRE(t[r].children.size() <= fan_out);
    // The subtree [r, end) is r followed by its children's runs, back to back.
    std::size_t next = r + 1;
    for (std::size_t i = 0; i < t[r].children.size(); ++i) {
      std::size_t const c = t[r].children[i];
      REQUIRE(c == next);
      REQUIRE(t[c].parent == r);
      REQUIRE(t[c].end == t[r].child_end(i));
      next = t[r].child_end(i);
    }
    REQUIRE(next == t[r].end);
    if (r == 0) {
      REQUIRE(t[r].parent == tree_links::no_parent);
      REQUIRE(t[r].end == n);
    } else {
      REQUIRE(t[r].parent < r);
      depth[r] = depth[t[r].parent] + 1;  // parents come first
    }
    deepest = depth[r] > deepest ? depth[r] : deepest;
  }
  return deepest;
}

std::size_t levels_bound(std::size_t n, std::size_t arity) {
  if (arity == 1) return n == 0 ? 0 : n - 1;
  std::size_t levels = 0;
  for (std::size_t reach = 1; reach < n; reach *= arity) ++levels;
  return levels + 1;
}

}  // namespace

TEST_CASE("collective tree: links are consistent, subtrees contiguous, fan-out and depth bounded", "[tree]") {
  for (std::size_t arity = 1; arity <= 9; ++arity)
    for (std::size_t n = 1; n <= 300; ++n) REQUIRE(check_tree(n, arity) <= levels_bound(n, arity));
  for (std::size_t arity : {2, 4, 8, 16}) REQUIRE(check_tree(4096, arity) <= levels_bound(4096, arity));
}

TEST_CASE("collective tree: the shapes it is documented to have", "[tree]") {
  // One rank: a root alone.
  CHECK(tree_links_of(0, 1, 4).children.empty());
  // Arity 1 is a chain.
  CHECK(tree_links_of(3, 6, 1).parent == 2);
  CHECK(tree_links_of(3, 6, 1).children == std::vector<std::size_t>{4});
  // 16 ranks, arity 4: the root splits the 15 others into [1, 4), [4, 8), [8, 12), [12, 16).
  CHECK(tree_links_of(0, 16, 4).children == std::vector<std::size_t>{1, 4, 8, 12});
  CHECK(tree_links_of(9, 16, 4).parent == 8);
  CHECK(tree_links_of(8, 16, 4).children == std::vector<std::size_t>{9, 10, 11});
}

// Domains of ranks: nodes of `per_node` ranks split into processes of
// `per_process` (the last of each may be short).
std::vector<std::vector<std::size_t>> domains(std::size_t n, std::size_t per_node, std::size_t per_process) {
  std::vector<std::vector<std::size_t>> levels(2);
  for (std::size_t node = 0; node < n; node += per_node) {
    levels[0].push_back(node);
    for (std::size_t p = node; p < node + per_node && p < n; p += per_process) levels[1].push_back(p);
  }
  return levels;
}

TEST_CASE("collective tree over domains: consistent, contiguous, one edge into each domain", "[tree]") {
  for (std::size_t arity : {1, 2, 4})
    for (std::size_t n : {1, 2, 5, 16, 37, 100})
      for (std::size_t per_node : {1, 3, 8, 64})
        for (std::size_t per_process : {1, 2, 3}) {
          if (per_process > per_node) continue;
          INFO("arity " << arity << " n " << n << " per node " << per_node << " per process " << per_process);
          auto const levels = domains(n, per_node, per_process);
          check_tree(n, arity, &levels, 3 * arity);
          // Exactly one edge enters each node and each process other than the root's.
          for (std::size_t level = 0; level < 2; ++level) {
            auto const& starts = levels[level];
            auto domain_of = [&](std::size_t r) {
              return std::size_t(std::upper_bound(starts.begin(), starts.end(), r) - starts.begin());
            };
            std::size_t crossing = 0;
            for (std::size_t r = 1; r < n; ++r) {
              std::size_t const parent = tree_links_of(r, n, arity, levels).parent;
              if (domain_of(parent) != domain_of(r)) ++crossing;
            }
            CHECK(crossing == starts.size() - 1);
          }
        }
}
