// The tree a group collective runs over.  Ranks are positions in the
// group's member order; rank 0 is the root.  A node of rank r roots the
// ranks [r, end) of its subtree and splits the others, (r, end), into at
// most `arity` contiguous runs of near-equal length, each the subtree of
// its first rank.  Every subtree is a contiguous run of ranks, so a node
// that combines its own value and then its children's, in child order,
// combines in member order.  A node sends and receives at most arity + 1
// messages each way; the depth is about log_arity(P).
#pragma once

#include <algorithm>
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

// The same over domains: levels[0] lists the ranks where a domain of the
// coarsest level (a node, say) starts, levels[1] those of the next (a
// process), and so on, each ascending, each from 0, each level's starts
// among the next one's; the finest level, single ranks, is implied.  The
// tree joins the domains of one level within the domain above it by a tree of
// their first ranks, and so on down, so that one message (each way) enters
// and leaves a domain whose first rank is not the root, and subtrees are
// still contiguous runs of ranks.  A rank may have up to `arity` children
// on each level it leads; children stay in ascending order.
inline tree_links tree_links_of(std::size_t rank, std::size_t n, std::size_t arity,
                                std::vector<std::vector<std::size_t>> const& levels) {
  tree_links t;
  std::vector<std::vector<std::size_t>> by_level;  // children, from the first level rank leads on
  std::size_t lo = 0, hi = n;  // the domain of rank one level up
  for (std::size_t level = 0; level <= levels.size(); ++level) {
    // The domains of this level within [lo, hi), by their first ranks.
    std::vector<std::size_t> units;
    if (level < levels.size()) {
      auto const& starts = levels[level];
      for (auto it = std::lower_bound(starts.begin(), starts.end(), lo); it != starts.end() && *it < hi; ++it)
        units.push_back(*it);
      if (units.empty() || units.front() != lo) units.insert(units.begin(), lo);
    } else {
      for (std::size_t r = lo; r < hi; ++r) units.push_back(r);
    }
    std::size_t const j = std::size_t(std::upper_bound(units.begin(), units.end(), rank) - units.begin()) - 1;
    if (units[j] == rank) {
      tree_links const u = tree_links_of(j, units.size(), arity);
      if (by_level.empty()) {  // the coarsest level rank leads: where its parent and its subtree's end are
        if (u.parent != tree_links::no_parent) t.parent = units[u.parent];
        t.end = u.end < units.size() ? units[u.end] : hi;
      }
      by_level.emplace_back();
      for (std::size_t c : u.children) by_level.back().push_back(units[c]);
    }
    lo = units[j];
    hi = j + 1 < units.size() ? units[j + 1] : hi;
  }
  for (auto it = by_level.rbegin(); it != by_level.rend(); ++it)
    t.children.insert(t.children.end(), it->begin(), it->end());
  return t;
}

}  // namespace armi::detail
