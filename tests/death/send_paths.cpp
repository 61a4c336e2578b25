// Which way each pair's buffers go, read from --armi-stats: every location
// sends R one-request buffers to every other location, then rank 0 reads the
// counts by path (process, node, message) from the stats file and checks
// each location's against where its partners run: its own process (threads,
// or the threads of a rank on mixed), the node shared-memory rings (mpi
// ranks of one host, unless --armi-mpi-shm=off), or messages (everything
// else: other hosts, on mixed other ranks, on sp2 every other node).  A pair that took another
// path moves R buffers from one count to another; control traffic (fences,
// the end of the run) adds a few more, well under `slack`.
// clang-format off
// RUN: threads | --armi-locations=3 --armi-aggregation=1 | send_paths: ok, 3 locations on 1 host
// RUN: sp2 | --armi-backend=sp2 --armi-locations=3 --armi-aggregation=1 | send_paths: ok, 3 locations on 1 host .sp2 backend
// RUN: sp2p | --armi-backend=sp2 --armi-sp2-mode=process --armi-locations=3 --armi-aggregation=1 | send_paths: ok, 3 locations on 1 host .sp2 backend
// MPI_RUN: mpi_node | 2 --armi-backend=mpi --armi-aggregation=1 | send_paths: ok, 2 locations on 1 host
// MPI_RUN: mpi_noshm | 3 --armi-backend=mpi --armi-mpi-shm=off --armi-aggregation=1 | send_paths: ok, 3 locations on 1 host
// MPI_RUN: mixed | 2 --armi-backend=mixed --armi-locations=2 --armi-aggregation=1 | send_paths: ok, 4 locations on 1 host
// CLUSTER_RUN: mpi_h3 | 3x1 --armi-backend=mpi --armi-aggregation=1 | send_paths: ok, 3 locations on 3 hosts
// CLUSTER_RUN: mpi_h2x2 | 2x2 --armi-backend=mpi --armi-aggregation=1 | send_paths: ok, 4 locations on 2 hosts
// CLUSTER_RUN: mixed_h2x2x2 | 2x2 --armi-backend=mixed --armi-locations=2 --armi-aggregation=1 | send_paths: ok, 8 locations on 2 hosts
// clang-format on
#include <armi/armi.hpp>

#if ARMI_HAS_MPI
#include <mpi.h>
#endif

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int requests_per_pair = 500;
constexpr int slack = 250;

struct sink : armi::p_object {
  void take(int) { ++taken; }
  int taken = 0;
};

struct rank_layout {
  int ranks = 1;
  int rank = 0;
  std::vector<std::string> host_of_rank{"localhost"};
};

rank_layout layout() {
  rank_layout l;
#if ARMI_HAS_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return l;
  MPI_Comm_size(MPI_COMM_WORLD, &l.ranks);
  MPI_Comm_rank(MPI_COMM_WORLD, &l.rank);
  std::array<char, 64> mine{};
  gethostname(mine.data(), mine.size() - 1);
  std::vector<char> all(mine.size() * static_cast<std::size_t>(l.ranks));
  MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, all.data(), static_cast<int>(mine.size()),
                MPI_CHAR, MPI_COMM_WORLD);
  l.host_of_rank.clear();
  for (int r = 0; r < l.ranks; ++r) l.host_of_rank.emplace_back(all.data() + mine.size() * static_cast<std::size_t>(r));
#endif
  return l;
}

// The three counts of each location, in location order, from the stats file.
std::vector<std::array<long, 3>> paths_in(std::string const& text) {
  std::vector<std::array<long, 3>> out;
  std::size_t const start = text.find("\"per_location\"");
  if (start == std::string::npos) return out;
  std::regex const re(R"re("buffers_by_path": \{"process": (\d+), "node": (\d+), "message": (\d+)\})re");
  for (auto it = std::sregex_iterator(text.begin() + static_cast<std::ptrdiff_t>(start), text.end(), re);
       it != std::sregex_iterator(); ++it)
    out.push_back({std::stol((*it)[1]), std::stol((*it)[2]), std::stol((*it)[3])});
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  // Read before armi::execute, which takes its options out of argv.
  bool shm_off = false;
  for (int i = 1; i < argc; ++i) shm_off = shm_off || std::string(argv[i]) == "--armi-mpi-shm=off";
  std::string const stats_file = "/tmp/armi_send_paths_" + std::to_string(getpid()) + ".json";
  setenv("ARMI_STATS", ("json:" + stats_file).c_str(), 1);
  int const code = armi::execute(argc, argv, [] {
    sink s;
    auto const h = s.get_rmi_handle();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    armi::rmi_fence();
    for (armi::location_id d = 0; d < n; ++d)
      if (d != me)
        for (int i = 0; i < requests_per_pair; ++i) armi::async_rmi(d, h, &sink::take, i);
    armi::rmi_fence();
    return s.taken == requests_per_pair * static_cast<int>(n - 1) ? 0 : 1;  // the job's status
  });
  if (code != 0) return code;
  rank_layout const l = layout();
  if (l.rank != 0) return 0;

  std::ifstream in(stats_file);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(stats_file.c_str());
  std::smatch m;
  std::string const all = text.str();
  std::string const backend = std::regex_search(all, m, std::regex(R"re("backend": "(\w+)")re")) ? m[1].str() : "?";
  bool const rings = backend == "mpi" && !shm_off;
  // From the file: on sp2's process mode the locations ran in other processes.
  int const n = std::regex_search(all, m, std::regex(R"re("locations": (\d+))re")) ? std::stoi(m[1].str()) : 0;
  int const per_rank = n / l.ranks;
  // Locations that share an address space: a rank's (threads: all), but on
  // sp2 each node is a machine of its own, even when it is a thread here.
  auto process_of = [&](int loc) { return backend == "sp2" ? loc : loc / per_rank; };
  auto const counts = paths_in(all);
  if (static_cast<int>(counts.size()) != n) {
    std::printf("send_paths: the stats file %s holds %zu locations, not %d\n", stats_file.c_str(), counts.size(), n);
    return 1;
  }
  int bad = 0;
  for (int from = 0; from < n; ++from) {
    std::array<long, 3> expected{};
    for (int to = 0; to < n; ++to) {
      if (to == from) continue;
      int const a = from / per_rank, b = to / per_rank;  // ranks
      int const path = process_of(from) == process_of(to) ? 0 : rings && l.host_of_rank[a] == l.host_of_rank[b] ? 1 : 2;
      expected[path] += requests_per_pair;
    }
    for (int p = 0; p < 3; ++p) {
      long const got = counts[from][p];
      if (got < expected[p] || got > expected[p] + slack) {
        std::printf("send_paths: location %d (rank %d on %s) sent %ld buffers by path %d, expected %ld to %ld\n", from,
                    from / per_rank, l.host_of_rank[from / per_rank].c_str(), got, p, expected[p], expected[p] + slack);
        ++bad;
      }
    }
  }
  std::set<std::string> const hosts(l.host_of_rank.begin(), l.host_of_rank.end());
  if (bad != 0) return 1;
  std::printf("send_paths: ok, %d locations on %zu host%s (%s backend)\n", n, hosts.size(),
              hosts.size() == 1 ? "" : "s", backend.c_str());
  return 0;
}
