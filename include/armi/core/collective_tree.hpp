// The tree a group collective runs over.  Ranks are positions in the
// group's member order; rank 0 is the root.  A node of rank r roots the
// ranks [r, end) of its subtree and splits the others, (r, end), into at
// most `arity` contiguous runs of near-equal length, each the subtree of
// its first rank.  Every subtree is a contiguous run of ranks, so a node
// that combines its own value and then its children's, in child order,
// combines in member order.  A node sends and receives at most arity + 1
// messages each way; the depth is about log_arity(P).
#pragma once

#include <cstddef>
#include <vector>

namespace armi::detail {

struct tree_links {
  static constexpr std::size_t no_parent = static_cast<std::size_t>(-1);
  std::size_t parent = no_parent;     // rank of the parent, no_parent at the root
  std::size_t end = 0;                // one past the last rank of this node's subtree
  std::vector<std::size_t> children;  // first rank of each child's subtree, ascending

  // One past the last rank of child i's subtree.
  std::size_t child_end(std::size_t i) const { return i + 1 < children.size() ? children[i + 1] : end; }
};

// Where rank sits in the tree over n ranks (rank < n, arity >= 1).
inline tree_links tree_links_of(std::size_t rank, std::size_t n, std::size_t arity) {
  tree_links t;
  std::size_t lo = 0, hi = n;
  // Descends from the root to the run that starts at rank: O(arity log P).
  for (;;) {
    std::size_t const others = hi - lo - 1;
    std::size_t const runs = others < arity ? others : arity;
    auto run_begin = [&](std::size_t i) { return lo + 1 + i * others / runs; };
    if (rank == lo) {
      t.end = hi;
      for (std::size_t i = 0; i < runs; ++i) t.children.push_back(run_begin(i));
      return t;
    }
    std::size_t i = (rank - lo - 1) * runs / others;  // a first guess, then exact
    while (i + 1 < runs && run_begin(i + 1) <= rank) ++i;
    while (run_begin(i) > rank) --i;
    t.parent = lo;
    hi = i + 1 < runs ? run_begin(i + 1) : hi;
    lo = run_begin(i);
  }
}

}  // namespace armi::detail
