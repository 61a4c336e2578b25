// graph500_mpi_bfs — Graph500's BFS on armi next to a hand-written MPI BFS,
// on the same graph, from the same search keys, in the same run.
//
//   armi         examples/graph500_bfs's kernel: armi::bfs_parents on the
//                pgraph that armi::generate_graph500 builds (one aggregated
//                async_rmi per edge to a remote vertex, a fence and an
//                allreduce per level).
//   hand-written plain MPI on MPI_COMM_WORLD: the same Kronecker edges
//                (detail::graph500::edge, same seed; each rank generates the
//                same block of [0, M) as armi's generator), exchanged by one
//                MPI_Alltoallv to the owners of both ends and stored as CSR
//                with the pgraph's block distribution.  The BFS is
//                level-synchronous: each rank scans its frontier's edges,
//                claims local targets at once (a range test, no division:
//                the same shortcut as armi::bfs_parents) and packs (target, parent)
//                pairs for the others; per level one MPI_Alltoall of the
//                counts, one MPI_Alltoallv of the pairs, one MPI_Allreduce of
//                the next frontier's size.  It waits by polling with armi's
//                backoff (bench_mpi.hpp), as every baseline here.
//
// Before the searches, each rank checks that the two graphs have the same
// degree at every vertex.  Each key is searched by both, interleaved (armi,
// then MPI); each tree is validated by armi::validate_bfs_tree (Graph500's
// five rules; the CSR uses the pgraph's vertex order, so the same validator
// checks both), which also counts nedge for the TEPS.  Prints both in the
// reference implementation's lines, then the ratio of the harmonic-mean
// TEPS, armi / hand-written; the target (issue 40) is >= 1.0.
//
//   mpiexec -bind-to core -n 2 ./graph500_mpi_bfs [--scale=18] [--edge-factor=16] [--nbfs=64]
//           [--seed=1] [--baseline-order=vertex|discovery] [--json=FILE] [--armi-* flags]
//
// --baseline-order: vertex (default) scans a large frontier in vertex order,
// as armi::bfs_parents does, so both run the same algorithm; discovery scans
// it in the order the vertices were reached (the plain textbook loop).
//
// Exit status: 0 if every tree validated and the graphs agree, 1 if not, 2 on a usage error.

#include "../examples/graph500_output.hpp"
#include "bench_common.hpp"
#include "bench_mpi.hpp"

#include <armi/algorithms/bfs.hpp>
#include <armi/algorithms/bfs_validate.hpp>
#include <armi/armi.hpp>
#include <armi/containers/kronecker.hpp>
#include <armi/containers/pgraph.hpp>

#include <fmt/core.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace {

using u64 = std::uint64_t;
using armi_bench::json;
constexpr double target_ratio = 1.0;
constexpr u64 none = ~u64{0};

// ---- hand-written MPI -------------------------------------------------------------

// The block distribution of [0, n) over p ranks (the first n % p get one more).
struct blocks {
  u64 n = 0, p = 1, q = 0, r = 0;
  blocks(u64 n_, u64 p_) : n(n_), p(p_), q(n_ / p_), r(n_ % p_) {}
  u64 first(u64 rank) const { return rank * q + std::min(rank, r); }
  u64 size(u64 rank) const { return q + (rank < r ? 1 : 0); }
  u64 owner(u64 v) const {
    u64 const big = r * (q + 1);
    return v < big ? v / (q + 1) : r + (v - big) / q;
  }
};

struct csr {
  blocks dist{0, 1};
  u64 me = 0, first = 0, local_n = 0;
  std::vector<u64> offsets, targets;
};

// Sends each rank its part of `out` (per-destination u64 lists) with one
// MPI_Alltoall of the counts and one MPI_Alltoallv; what arrived is the
// first (return value) words of `in`.  The buffers only grow: no allocation
// or clearing per level once they are large enough.
std::size_t exchange(std::vector<std::vector<u64>> const& out, std::vector<u64>& sendbuf, std::vector<u64>& in,
                     armi_bench::mpi_backoff& backoff) {
  int const P = static_cast<int>(out.size());
  std::vector<int> scount(P), rcount(P), sdispl(P), rdispl(P);
  std::size_t total = 0;
  for (int d = 0; d < P; ++d) {
    scount[d] = static_cast<int>(out[d].size());
    sdispl[d] = static_cast<int>(total);
    total += out[d].size();
  }
  if (sendbuf.size() < total) sendbuf.resize(total);
  for (int d = 0; d < P; ++d) std::copy(out[d].begin(), out[d].end(), sendbuf.begin() + sdispl[d]);
  MPI_Request req;
  MPI_Ialltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, MPI_COMM_WORLD, &req);
  armi_bench::mpi_wait_one(req, backoff);
  std::size_t rtotal = 0;
  for (int d = 0; d < P; ++d) {
    rdispl[d] = static_cast<int>(rtotal);
    rtotal += static_cast<std::size_t>(rcount[d]);
  }
  if (in.size() < rtotal) in.resize(rtotal);
  MPI_Ialltoallv(sendbuf.data(), scount.data(), sdispl.data(), MPI_UINT64_T, in.data(), rcount.data(), rdispl.data(),
                 MPI_UINT64_T, MPI_COMM_WORLD, &req);
  armi_bench::mpi_wait_one(req, backoff);
  return rtotal;
}

// The CSR graph of the Graph500 edges [block of M for this rank].
csr build_csr(unsigned scale, u64 edge_factor, u64 seed, armi_bench::mpi_backoff& backoff) {
  int me = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  u64 const n = u64{1} << scale, m = edge_factor * n, P = static_cast<u64>(ranks);
  csr g;
  g.dist = blocks(n, P);
  g.me = static_cast<u64>(me);
  g.first = g.dist.first(g.me);
  g.local_n = g.dist.size(g.me);
  blocks const edges(m, P);
  std::vector<std::vector<u64>> out(P);
  for (u64 e = edges.first(g.me), end = e + edges.size(g.me); e < end; ++e) {
    auto const [u, v] = armi::detail::graph500::edge(seed, scale, e);
    if (u == v) continue;
    out[g.dist.owner(u)].insert(out[g.dist.owner(u)].end(), {u, v});
    out[g.dist.owner(v)].insert(out[g.dist.owner(v)].end(), {v, u});
  }
  std::vector<u64> sendbuf, in;
  in.resize(exchange(out, sendbuf, in, backoff));
  g.offsets.assign(g.local_n + 1, 0);
  for (std::size_t k = 0; k < in.size(); k += 2) ++g.offsets[in[k] - g.first + 1];
  std::partial_sum(g.offsets.begin(), g.offsets.end(), g.offsets.begin());
  g.targets.resize(in.size() / 2);
  std::vector<u64> fill(g.offsets.begin(), g.offsets.end() - 1);
  for (std::size_t k = 0; k < in.size(); k += 2) g.targets[fill[in[k] - g.first]++] = in[k + 1];
  return g;
}

// Buffers a search keeps from one level (and one search) to the next.
struct bfs_buffers {
  std::vector<std::vector<u64>> out;
  std::vector<u64> sendbuf, in, frontier, next;
  std::vector<std::uint8_t> mark;
};

// Level-synchronous BFS from root: per local vertex its parent, or none.
// ordered: scan a large frontier (>= 1/64 of the vertices) in vertex order,
// as armi::bfs_parents does; else in the order of discovery.
std::vector<u64> mpi_bfs(csr const& g, u64 root, bool ordered, bfs_buffers& b, armi_bench::mpi_backoff& backoff) {
  std::vector<u64> parent(g.local_n, none);
  auto& frontier = b.frontier;  // local indices
  auto& next = b.next;
  auto& out = b.out;
  frontier.clear();
  out.resize(g.dist.p);
  if (g.dist.owner(root) == g.me) {
    parent[root - g.first] = root;
    frontier.push_back(root - g.first);
  }
  for (;;) {
    for (auto& o : out) o.clear();
    next.clear();
    if (ordered && frontier.size() >= g.local_n / 64) {
      b.mark.assign(g.local_n, 0);
      for (u64 li : frontier) b.mark[li] = 1;
      frontier.clear();
      for (u64 li = 0; li < g.local_n; ++li)
        if (b.mark[li]) frontier.push_back(li);
    }
    for (u64 li : frontier) {
      u64 const u = g.first + li;
      for (u64 k = g.offsets[li]; k < g.offsets[li + 1]; ++k) {
        u64 const w = g.targets[k];
        if (w - g.first < g.local_n) {  // local: no division
          u64& pw = parent[w - g.first];
          if (pw == none) {
            pw = u;
            next.push_back(w - g.first);
          }
        } else {
          auto& o = out[g.dist.owner(w)];
          o.push_back(w);
          o.push_back(u);
        }
      }
    }
    std::size_t const arrived = exchange(out, b.sendbuf, b.in, backoff);
    for (std::size_t k = 0; k < arrived; k += 2) {
      u64& pw = parent[b.in[k] - g.first];
      if (pw == none) {
        pw = b.in[k + 1];
        next.push_back(b.in[k] - g.first);
      }
    }
    std::vector<u64> size{next.size()};
    armi_bench::mpi_polling_sum(MPI_COMM_WORLD, size, backoff);
    if (size[0] == 0) break;
    std::swap(frontier, next);
  }
  return parent;
}

double seconds(std::int64_t t0, std::int64_t t1) { return static_cast<double>(t1 - t0) / 1e9; }

json run_json(graph500_output::run const& r) {
  auto const t = graph500_output::statistics_of(r.bfs_times);
  return json::object{{"harmonic_mean_teps", graph500_output::harmonic_mean_teps(r)},
                      {"median_time_s", t.median},
                      {"mean_time_s", t.mean},
                      {"bfs_times_s", json::array(r.bfs_times.begin(), r.bfs_times.end())},
                      {"construction_time_s", r.construction_time}};
}

}  // namespace

int main(int argc, char** argv) {
  armi::config cfg;
  if (int const code = armi_bench::take_armi_options(argc, argv, cfg); code >= 0) return code;
  cfg.backend = "mpi";
  cfg.backend_given = true;

  u64 scale = 0, edge_factor = 0, nbfs = 0, seed = 0, batch = 0;
  std::string json_path, order;
  try {
    armi_bench::flags f(argc, argv);
    scale = f.get_uint("scale", 18);
    edge_factor = f.get_uint("edge-factor", 16);
    nbfs = f.get_uint("nbfs", 64);
    seed = f.get_uint("seed", 1);
    json_path = f.get_string("json", "");
    order = f.get_string("baseline-order", "vertex");
    batch = f.get_uint("batch", armi::bfs_default_batch);
    if (batch == 0) throw armi_bench::usage_error("--batch must be at least 1 (the fine-grain form always runs too)");
    f.finish();
    if (order != "vertex" && order != "discovery")
      throw armi_bench::usage_error("--baseline-order must be vertex or discovery");
    if (scale < 1 || scale > 30) throw armi_bench::usage_error("--scale must be in 1..30");
    if (edge_factor < 1 || edge_factor > 1024) throw armi_bench::usage_error("--edge-factor must be in 1..1024");
    if (nbfs < 1 || nbfs > 1024) throw armi_bench::usage_error("--nbfs must be in 1..1024");
  } catch (armi_bench::usage_error const& e) {
    std::fprintf(stderr, "graph500_mpi_bfs: %s\n", e.what());
    return 2;
  }

  bool const ordered = order == "vertex";
  graph500_output::run ar, af, hw;  // armi batched (bfs_parents' default), armi fine-grain, hand-written
  bool oversubscribed = false;
  u64 stored = 0;
  int const rc = armi::execute(cfg, [&]() -> int {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    bool const loud = rank == 0;
    oversubscribed = armi_bench::mpi_oversubscribed(MPI_COMM_WORLD);
    armi_bench::mpi_backoff backoff(oversubscribed);
    for (auto* r : {&ar, &af, &hw}) {
      r->scale = static_cast<unsigned>(scale);
      r->edge_factor = edge_factor;
      r->processes = armi::get_num_locations();
    }

    // The armi graph.
    armi::pgraph<> g(u64{1} << scale);
    armi::rmi_fence();
    auto t0 = armi_bench::now_ns();
    armi::generate_graph500(g, edge_factor, seed);
    stored = g.num_edges();
    ar.graph_generation = ar.construction_time = seconds(t0, armi_bench::now_ns());
    // The hand-written graph (nothing of armi's in flight meanwhile).
    armi_bench::mpi_polling_barrier(MPI_COMM_WORLD, backoff);
    t0 = armi_bench::now_ns();
    csr const c = build_csr(static_cast<unsigned>(scale), edge_factor, seed, backoff);
    hw.graph_generation = hw.construction_time = seconds(t0, armi_bench::now_ns());
    std::vector<u64> bad{c.local_n == g.local_num_vertices() ? 0u : 1u};
    for (std::size_t i = 0; bad[0] == 0 && i < c.local_n; ++i)
      bad[0] += g.local()[i].id != c.first + i || g.local()[i].edges.size() != c.offsets[i + 1] - c.offsets[i];
    armi_bench::mpi_polling_sum(MPI_COMM_WORLD, bad, backoff);
    if (bad[0] != 0) {
      if (loud) std::fprintf(stderr, "graph500_mpi_bfs: the CSR graph and the pgraph differ\n");
      return 1;
    }

    auto const keys = armi::graph500_search_keys(g, nbfs, seed);
    bfs_buffers buffers;
    // One search: the kernel's parents, timed; validated (untimed), nedge kept.
    auto search = [&](graph500_output::run& r, std::size_t k, auto&& kernel) -> bool {
      armi::rmi_fence();  // nothing of armi's in flight before any kernel starts
      armi_bench::mpi_polling_barrier(MPI_COMM_WORLD, backoff);
      t0 = armi_bench::now_ns();
      auto const parents = kernel();
      r.bfs_times.push_back(seconds(t0, armi_bench::now_ns()));
      t0 = armi_bench::now_ns();
      auto const v = armi::validate_bfs_tree(g, keys[k], parents);
      r.validate_times.push_back(seconds(t0, armi_bench::now_ns()));
      r.nedges.push_back(static_cast<double>(v.component_edges));
      if (!v.ok() && loud)
        std::fprintf(stderr, "graph500_mpi_bfs: key %zu (%llu): %s\n", k, static_cast<unsigned long long>(keys[k]),
                     v.describe().c_str());
      return v.ok();
    };
    for (std::size_t k = 0; k < keys.size(); ++k) {
      bool const ok = search(ar, k, [&] { return armi::bfs_parents(g, keys[k], batch); }) &&
                      search(af, k, [&] { return armi::bfs_parents(g, keys[k], 0); }) &&
                      search(hw, k, [&] { return mpi_bfs(c, keys[k], ordered, buffers, backoff); });
      if (!ok || ar.nedges[k] != hw.nedges[k] || af.nedges[k] != hw.nedges[k]) {
        if (loud) std::fprintf(stderr, "graph500_mpi_bfs: key %zu: a tree failed validation or nedge differs\n", k);
        return 1;
      }
    }
    return 0;
  });
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rc != 0) {
    if (rc == 1 && rank == 0) std::fprintf(stderr, "graph500_mpi_bfs: FAILED\n");
    return rc;
  }
  if (rank != 0) return 0;

  double const teps_a = graph500_output::harmonic_mean_teps(ar), teps_f = graph500_output::harmonic_mean_teps(af);
  double const teps_h = graph500_output::harmonic_mean_teps(hw);
  double const ratio = teps_a / teps_h, ratio_f = teps_f / teps_h;
  bool const met = ratio >= target_ratio;
  fmt::print("graph500_mpi_bfs: SCALE {}, edgefactor {}, {} ranks{}, {} stored edges, {} keys, aggregation {}\n", scale,
             edge_factor, ar.processes, oversubscribed ? " (more ranks than cores)" : "", stored, ar.bfs_times.size(),
             armi_bench::aggregation_text(cfg.aggregation));
  fmt::print("== armi: bfs_parents(g, key) on a pgraph ({} (vertex, parent) pairs per async_rmi)\n", batch);
  graph500_output::print(ar, stdout, "armi ");
  fmt::print("== hand-written MPI: CSR, one MPI_Alltoallv per level, large frontiers scanned in {} order\n", order);
  graph500_output::print(hw, stdout, "mpi  ");
  fmt::print("== armi fine-grain: bfs_parents(g, key, 0), one async_rmi per remote edge\n");
  fmt::print("fine bfs  median_time:          {:g}\n", graph500_output::statistics_of(af.bfs_times).median);
  fmt::print("fine bfs  harmonic_mean_TEPS:   {:g}\n", teps_f);
  fmt::print("harmonic_mean_TEPS: armi {:.4g}, hand-written {:.4g}, ratio {:.3f} (target >= {:.1f}: {}); "
             "fine-grain {:.4g}, ratio {:.3f}\n",
             teps_a, teps_h, ratio, target_ratio, met ? "MET" : "NOT MET", teps_f, ratio_f);

  json summary = json::object{{"benchmark", "graph500_mpi_bfs"},
                              {"what", "Graph500 BFS: armi::bfs_parents vs hand-written MPI_Alltoallv BFS"},
                              {"backend", "mpi"},
                              {"ranks", ar.processes},
                              {"oversubscribed", oversubscribed},
                              {"scale", scale},
                              {"edge_factor", edge_factor},
                              {"nbfs", ar.bfs_times.size()},
                              {"stored_edges", stored},
                              {"baseline_order", order},
                              {"batch", batch},
                              {"armi", run_json(ar)},
                              {"armi_fine_grain", run_json(af)},
                              {"fine_grain_ratio", ratio_f},
                              {"hand_written", run_json(hw)},
                              {"ratio", ratio},
                              {"machine", armi_bench::machine_context()},
                              {"target", json::object{{"min_ratio", target_ratio}, {"met", met}}},
                              {"verified", true}};
  return armi_bench::write_json(json_path, summary) ? 0 : 1;
}
