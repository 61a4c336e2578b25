// associative — the update rate of the hashed pContainers against
// parray::update on the same keys (issue 40's word-count target: a
// punordered_map update at least 0.5x as fast as a parray update).
//
// For each key count K of --keys, every location makes --updates updates to
// keys drawn uniformly from [0, K) (the same stream for every row), then
// fences; the rows:
//
//   parray::update          a[k] += 1 on a parray of K words (the baseline)
//   punordered_map::update  m[k] += 1 on an empty punordered_map<uint64_t, uint64_t>
//   word count              m[w] += 1 on an empty punordered_map<std::string, uint64_t>,
//                           w the k-th word of a vocabulary of K words
//   punordered_set::insert  s.insert(k) on an empty punordered_set<uint64_t>
//   pdisjoint_set::unite    unite(k, k') on an empty pdisjoint_set<uint64_t>, one
//                           pair of keys per update
//   local array             no RMI: each location adds 1 at the keys of every
//                           location's stream it owns under parray's
//                           distribution, in a zeroed std::vector of its part
//   local node_hash_map     no RMI: the same with the keys it owns under
//                           punordered_map's, in an empty node_hash_map (what
//                           the map's owners do, without the RMIs)
//
// Few keys (many updates per key) is a word count's regime; with K near the
// number of updates nearly every update adds a key or reads one that is in
// no cache, and the owners' tables (node_hash_map) dominate: the two local
// rows show how much of the gap the tables alone account for.
// Each rep runs every row once (rows interleaved), timing from the first
// update to the end of the fence after the last; the table gives the median
// rate over --reps in millions of updates per second (all locations) and
// the ratio to parray::update of the same run.  Every row is checked: the
// counts sum to the number of updates, the set has the keys the stream
// drew, and the disjoint set's size is the number of keys united.
//
//   ./associative --armi-locations=2
//   mpiexec -bind-to core -n 2 ./associative --armi-backend=mpi
//
// Exit status: 0 if every check passed, 1 if one failed, 2 on a usage error.

#include "bench_common.hpp"

#include <armi/armi.hpp>
#include <armi/containers/parray.hpp>
#include <armi/containers/pdisjoint_set.hpp>
#include <armi/containers/punordered_map.hpp>
#include <armi/containers/punordered_set.hpp>

#include <fmt/core.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

using armi_bench::json;

struct setup {
  std::uint64_t updates = 1'000'000;  // per location
  std::vector<std::uint64_t> keys{1u << 12, 1u << 16, 1u << 20};  // all locations
  std::uint64_t reps = 3;
};

constexpr char const* row_names[] = {
    "parray::update",       "punordered_map::update", "word count (string keys)",    "punordered_set::insert",
    "pdisjoint_set::unite", "local array (no RMI)",   "local node_hash_map (no RMI)"};
constexpr std::size_t row_count = std::size(row_names);

// The k-th word of the vocabulary: 6 to 13 letters, distinct for distinct k.
std::string word(std::uint64_t k) {
  std::string w;
  std::uint64_t x = k;
  do {
    w.push_back(static_cast<char>('a' + x % 26));
    x /= 26;
  } while (x != 0);
  while (w.size() < 6 + k % 8) w.push_back('q');
  return w;
}

// Location loc's stream for a key count.
std::vector<std::uint64_t> make_stream(armi::location_id loc, std::uint64_t keys, std::uint64_t updates) {
  armi_bench::splitmix64 rng{loc * 0x9E3779B97F4A7C15ULL + keys};
  std::vector<std::uint64_t> stream(updates);
  for (std::uint64_t& k : stream) k = rng() % keys;
  return stream;
}

// The keys of every location's stream that this location owns: under
// parray's distribution (as indices into its part) and under
// punordered_map's.  What the owners serve, for the local rows.
struct served_keys {
  std::vector<std::uint64_t> array_part;
  std::size_t part_size = 0;
  std::vector<std::uint64_t> map_keys;
};
// Collective (it makes a parray and a punordered_map to ask them).
served_keys owned_keys(setup const& s, std::uint64_t keys) {
  armi::location_id const me = armi::get_location_id();
  armi::parray<std::uint64_t> const a(keys);
  armi::punordered_map<std::uint64_t, std::uint64_t> const m;
  served_keys out;
  out.part_size = a.local().size();
  for (armi::location_id loc = 0; loc < armi::get_num_locations(); ++loc)
    for (std::uint64_t k : make_stream(loc, keys, s.updates)) {
      if (a.owner(k) == me) out.array_part.push_back(a.distribution().local_index(k));
      if (m.owner(k) == me) out.map_keys.push_back(k);
    }
  return out;
}

// One location's part of one rep: seconds per row, and whether the checks held.
struct rep_result {
  std::vector<double> seconds = std::vector<double>(row_count, 0.0);
  bool ok = true;
};

template <class Body>
double timed(Body&& body) {
  armi::rmi_fence();
  std::int64_t const t0 = armi_bench::now_ns();
  body();
  armi::rmi_fence();
  return static_cast<double>(armi_bench::now_ns() - t0) * 1e-9;
}

rep_result run_rep(setup const& s, std::uint64_t keys, std::vector<std::uint64_t> const& stream,
                   std::vector<std::string> const& words, served_keys const& served) {
  rep_result r;
  std::uint64_t const total = s.updates * armi::get_num_locations();
  {
    armi::parray<std::uint64_t> a(keys);
    r.seconds[0] = timed([&] {
      for (std::uint64_t k : stream) a.update(k, armi::plus_op{}, 1);
    });
    std::uint64_t mine = 0;
    for (std::uint64_t c : a.local()) mine += c;
    r.ok &= armi::detail::allreduce_value(mine, std::plus<>{}) == total;
  }
  {
    armi::punordered_map<std::uint64_t, std::uint64_t> m;
    r.seconds[1] = timed([&] {
      for (std::uint64_t k : stream) m.update(k, armi::plus_op{}, 1);
    });
    std::uint64_t mine = 0;
    for (auto const& [k, c] : m.local()) mine += c;
    r.ok &= armi::detail::allreduce_value(mine, std::plus<>{}) == total;
  }
  {
    armi::punordered_map<std::string, std::uint64_t> m;
    r.seconds[2] = timed([&] {
      for (std::string const& w : words) m.update(w, armi::plus_op{}, 1);
    });
    std::uint64_t mine = 0;
    for (auto const& [k, c] : m.local()) mine += c;
    r.ok &= armi::detail::allreduce_value(mine, std::plus<>{}) == total;
  }
  std::size_t distinct = 0;
  {
    armi::punordered_set<std::uint64_t> set;
    r.seconds[3] = timed([&] {
      for (std::uint64_t k : stream) set.insert(k);
    });
    distinct = set.size();
    r.ok &= distinct > 0 && distinct <= keys;
  }
  {
    armi::pdisjoint_set<std::uint64_t> sets;
    r.seconds[4] = timed([&] {
      for (std::size_t i = 0; i + 1 < stream.size(); i += 2) sets.unite(stream[i], stream[i + 1]);
    });
    r.ok &= sets.size() <= keys && sets.num_sets() >= 1;
  }
  {
    std::vector<std::uint64_t> part(served.part_size);  // zeroed outside the timing, as parray's part
    r.seconds[5] = timed([&] {
      for (std::uint64_t i : served.array_part) part[i] += 1;
    });
    std::uint64_t mine = 0;
    for (std::uint64_t c : part) mine += c;
    r.ok &= armi::detail::allreduce_value(mine, std::plus<>{}) == total;
  }
  {
    armi::node_hash_map<std::uint64_t, std::uint64_t> m;
    r.seconds[6] = timed([&] {
      for (std::uint64_t k : served.map_keys) m[k] += 1;
    });
    std::uint64_t mine = 0;
    for (auto const& [k, c] : m) mine += c;
    r.ok &= armi::detail::allreduce_value(mine, std::plus<>{}) == total;
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  armi::config cfg;
  if (int const code = armi_bench::take_armi_options(argc, argv, cfg); code >= 0) return code;
  if (cfg.locations == 0 && armi::effective_backend(cfg) == "threads") cfg.locations = 2;
  setup s;
  std::string json_path;
  try {
    armi_bench::flags f(argc, argv);
    s.updates = f.get_uint("updates", s.updates);
    s.keys = f.get_uint_list("keys", s.keys);
    s.reps = f.get_uint("reps", s.reps);
    json_path = f.get_string("json", "");
    f.finish();
    if (s.updates < 2) throw armi_bench::usage_error("--updates must be at least 2");
    for (std::uint64_t k : s.keys)
      if (k == 0) throw armi_bench::usage_error("--keys: a key count must be at least 1");
    if (s.reps == 0) throw armi_bench::usage_error("--reps must be at least 1");
  } catch (armi_bench::usage_error const& e) {
    std::fprintf(stderr, "associative: %s\n", e.what());
    return 2;
  }

  std::vector<std::vector<std::vector<double>>> seconds;  // [key count][row][rep], location 0's clock
  unsigned locations = 0;
  bool reporter = false;
  int const rc = armi::execute(cfg, [&]() -> int {
    bool ok = true;
    std::vector<std::vector<std::vector<double>>> mine;
    for (std::uint64_t keys : s.keys) {
      std::vector<std::uint64_t> const stream = make_stream(armi::get_location_id(), keys, s.updates);
      served_keys const served = owned_keys(s, keys);
      std::vector<std::string> words;
      words.reserve(stream.size());
      for (std::uint64_t k : stream) words.push_back(word(k));
      mine.emplace_back(row_count);
      for (std::uint64_t rep = 0; rep < s.reps; ++rep) {
        rep_result const r = run_rep(s, keys, stream, words, served);
        ok &= r.ok;
        for (std::size_t i = 0; i < row_count; ++i) mine.back()[i].push_back(r.seconds[i]);
      }
    }
    if (armi::get_location_id() == 0) {
      seconds = std::move(mine);
      locations = armi::get_num_locations();
      reporter = true;
    }
    return ok ? 0 : 1;
  });
  if (!reporter) return rc;

  double const updates = static_cast<double>(s.updates) * locations;
  fmt::print("associative pContainers: {} updates per location, {} locations ({} backend, aggregation {}), "
             "median of {}\n",
             s.updates, locations, armi::effective_backend(cfg), armi_bench::aggregation_text(cfg.aggregation), s.reps);
  json::array rows;
  for (std::size_t j = 0; j < s.keys.size(); ++j) {
    fmt::print("\n{} keys ({:.1f} updates per key)\n", s.keys[j], updates / static_cast<double>(s.keys[j]));
    fmt::print("  {:<28} {:>14} {:>14}\n", "row", "M updates/s", "x parray");
    double const baseline = armi_bench::median(seconds[j][0]);
    for (std::size_t i = 0; i < row_count; ++i) {
      double const t = armi_bench::median(seconds[j][i]);
      fmt::print("  {:<28} {:>14.2f} {:>13.2f}x\n", row_names[i], updates / t * 1e-6, baseline / t);
      rows.push_back(json::object{{"keys", s.keys[j]},
                                  {"row", row_names[i]},
                                  {"mupdates_per_s", updates / t * 1e-6},
                                  {"over_parray", baseline / t}});
    }
  }
  fmt::print("\ntarget: punordered_map::update >= 0.5x parray::update{}\n", rc == 0 ? "" : "  ** CHECK FAILED **");
  json const out = json::object{{"benchmark", "associative"},
                                {"backend", armi::effective_backend(cfg)},
                                {"locations", locations},
                                {"updates_per_location", s.updates},
                                {"reps", s.reps},
                                {"machine", armi_bench::machine_context()},
                                {"rows", rows},
                                {"verified", rc == 0}};
  if (!armi_bench::write_json(json_path, out)) return 1;
  return rc;
}
