// random_access_mpi — HPCC RandomAccess, exact, on armi next to a
// hand-written MPI RandomAccess in the bulk-synchronous style of HPCC's
// Sandia variant, on the same table and update stream, in the same run.
//
//   armi         examples/random_updates's kernel: armi::random_updates on a
//                parray of 2^log-size words, one t.update(i, xor_op{}, a)
//                per update (an aggregated async_rmi to the owner of i).
//   hand-written plain MPI on MPI_COMM_WORLD: the same block distribution
//                and the same stream parts (each rank starts at its part's
//                first value).  Per round, each rank takes the next --chunk
//                updates of its part and routes them over the hypercube
//                (HPCC's Sandia algorithm): in each dimension, from the
//                highest, the updates whose owner differs from this rank in
//                that bit go to the partner (rank ^ bit) in one message
//                (MPI_Isend/MPI_Irecv of the values, the count read from the
//                status), and the partner's join the rest.  After the last
//                dimension every update it holds is its own, applied
//                table[a & (size-1)] ^= a.  It waits by polling with armi's
//                backoff (bench_mpi.hpp), as every baseline here.
//
// Both apply every update exactly (no look-ahead, no dropped conflicts):
// each is verified by applying the same stream again, after which every word
// must be back to table[i] = i (0 errors; HPCC would allow 1%).  The two
// alternate, --reps times each; each pass is timed from a barrier to the end
// of its last update everywhere.  Prints the median GUPS of each and the
// ratio armi / hand-written; the target (issue 38) is >= 1.0 at 2^22 words
// on 2 ranks.
//
//   mpiexec -bind-to core -n 2 ./random_access_mpi [--log-size=22] [--updates-per-entry=4]
//           [--chunk=1024] [--reps=5] [--json=FILE] [--armi-* flags]
//
// The number of ranks must be a power of two (the hypercube).
// Exit status: 0 if every verification found 0 errors, 1 if not, 2 on a usage error.

#include "bench_common.hpp"
#include "bench_mpi.hpp"

#include <armi/algorithms/random_updates.hpp>
#include <armi/armi.hpp>
#include <armi/containers/parray.hpp>

#include <fmt/core.h>
#include <mpi.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using u64 = std::uint64_t;
using armi::random_updates_stream;
using armi_bench::json;

// The hand-written side: this rank's block of the table and the buffers of
// one round.
class mpi_random_access {
 public:
  mpi_random_access(unsigned log_size, u64 updates, u64 chunk, armi_bench::mpi_backoff& backoff)
      : m_backoff(backoff), m_chunk(chunk), m_updates(updates) {
    MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m_ranks);
    m_dims = std::countr_zero(static_cast<unsigned>(m_ranks));
    m_mask = (u64{1} << log_size) - 1;
    m_owner_shift = log_size - static_cast<unsigned>(m_dims);
    m_first = static_cast<u64>(m_rank) << m_owner_shift;
    m_table.resize(std::size_t{1} << m_owner_shift);
    m_keep.reserve(chunk * static_cast<u64>(m_ranks));
    m_send.reserve(chunk * static_cast<u64>(m_ranks));
    m_received.resize(chunk * static_cast<u64>(m_ranks));
  }

  void init() {
    for (std::size_t k = 0; k < m_table.size(); ++k) m_table[k] = m_first + k;
  }

  // Updates 1..n of the stream, this rank's part of them.  Every rank runs
  // the same number of rounds (the largest part's), so the exchanges pair up.
  void run() {
    armi::block_distribution const parts(m_updates, static_cast<armi::location_id>(m_ranks));
    auto const me = static_cast<armi::location_id>(m_rank);
    u64 const count = parts.local_size(me);
    u64 const rounds = (parts.local_size(0) + m_chunk - 1) / m_chunk;  // part 0 is the largest
    u64 v = random_updates_stream::at(parts.first(me));
    u64 done = 0;
    for (u64 round = 0; round < rounds; ++round) {
      m_keep.clear();
      for (u64 end = std::min(count, done + m_chunk); done < end; ++done) {
        v = random_updates_stream::step(v);
        m_keep.push_back(v);
      }
      for (int d = m_dims - 1; d >= 0; --d) exchange(d);
      for (u64 a : m_keep) m_table[(a & m_mask) - m_first] ^= a;
    }
  }

  // Words not back to table[i] = i (after a second run).
  u64 errors() const {
    u64 wrong = 0;
    for (std::size_t k = 0; k < m_table.size(); ++k) wrong += m_table[k] != m_first + k ? 1 : 0;
    return wrong;
  }

 private:
  // One hypercube dimension: updates whose owner differs from this rank in
  // bit d go to rank ^ (1 << d); the partner's come back and join m_keep.
  void exchange(int d) {
    unsigned const bit = m_owner_shift + static_cast<unsigned>(d);
    u64 const mine = (static_cast<u64>(m_rank) >> d) & 1;
    m_send.clear();
    std::size_t kept = 0;
    for (u64 a : m_keep) {
      if ((((a & m_mask) >> bit) & 1) == mine)
        m_keep[kept++] = a;
      else
        m_send.push_back(a);
    }
    m_keep.resize(kept);
    int const partner = m_rank ^ (1 << d);
    MPI_Request r[2];
    MPI_Irecv(m_received.data(), static_cast<int>(m_received.size()), MPI_UINT64_T, partner, d, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(m_send.data(), static_cast<int>(m_send.size()), MPI_UINT64_T, partner, d, MPI_COMM_WORLD, &r[1]);
    MPI_Status received;
    armi_bench::mpi_wait_one(r[0], m_backoff, &received);
    armi_bench::mpi_wait_one(r[1], m_backoff);
    int got = 0;
    MPI_Get_count(&received, MPI_UINT64_T, &got);
    m_keep.insert(m_keep.end(), m_received.begin(), m_received.begin() + got);
  }

  armi_bench::mpi_backoff& m_backoff;
  u64 m_chunk;
  u64 m_updates;
  int m_rank = 0;
  int m_ranks = 1;
  int m_dims = 0;
  u64 m_mask = 0;
  unsigned m_owner_shift = 0;
  u64 m_first = 0;
  std::vector<u64> m_table;     // words [m_first, m_first + size / ranks)
  std::vector<u64> m_keep;      // the round's updates held here
  std::vector<u64> m_send;      // those leaving in this dimension
  std::vector<u64> m_received;  // what the partner sent (at most chunk x ranks)
};

double seconds_since(std::int64_t t0) {
  return static_cast<double>(armi_bench::now_ns() - t0) * 1e-9;
}

json seconds_json(std::vector<double> const& s) {
  return json::array(s.begin(), s.end());
}

}  // namespace

int main(int argc, char** argv) {
  armi::config cfg;
  if (int const code = armi_bench::take_armi_options(argc, argv, cfg); code >= 0) return code;
  cfg.backend = "mpi";
  cfg.backend_given = true;

  u64 log_size = 0, per_entry = 0, chunk = 0, reps = 0;
  std::string json_path;
  try {
    armi_bench::flags f(argc, argv);
    log_size = f.get_uint("log-size", 22);
    per_entry = f.get_uint("updates-per-entry", 4);
    chunk = f.get_uint("chunk", 1024);
    reps = f.get_uint("reps", 5);
    json_path = f.get_string("json", "");
    f.finish();
    if (log_size < 4 || log_size > 34) throw armi_bench::usage_error("--log-size must be in 4..34");
    if (per_entry < 1 || per_entry > 64) throw armi_bench::usage_error("--updates-per-entry must be in 1..64");
    if (chunk < 1 || chunk > (u64{1} << 20)) throw armi_bench::usage_error("--chunk must be in 1..2^20");
    if (reps < 1) throw armi_bench::usage_error("--reps must be at least 1");
  } catch (armi_bench::usage_error const& e) {
    std::fprintf(stderr, "random_access_mpi: %s\n", e.what());
    return 2;
  }

  u64 const size = u64{1} << log_size;
  u64 const updates = per_entry * size;
  std::vector<double> armi_s, mpi_s;
  u64 armi_errors = 0, mpi_errors = 0;
  int ranks = 0;
  bool oversubscribed = false;
  int const rc = armi::execute(cfg, [&]() -> int {
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!std::has_single_bit(static_cast<unsigned>(ranks)) || (u64{1} << std::countr_zero(unsigned(ranks))) > size) {
      if (rank == 0)
        std::fprintf(stderr, "random_access_mpi: the ranks must be a power of two, at most the table size (%d)\n",
                     ranks);
      return 2;
    }
    oversubscribed = armi_bench::mpi_oversubscribed(MPI_COMM_WORLD);
    armi_bench::mpi_backoff backoff(oversubscribed);

    armi::parray<u64> table(size);
    mpi_random_access hand(static_cast<unsigned>(log_size), updates, chunk, backoff);
    for (u64 rep = 0; rep < reps; ++rep) {
      armi::random_updates_init(table);  // ends with a fence
      armi_bench::mpi_polling_barrier(MPI_COMM_WORLD, backoff);
      std::int64_t t0 = armi_bench::now_ns();
      armi::random_updates(table, updates);  // ends with a fence: every update applied
      armi_s.push_back(seconds_since(t0));
      armi_errors += armi::random_updates_verify(table, updates);

      hand.init();
      armi_bench::mpi_polling_barrier(MPI_COMM_WORLD, backoff);
      t0 = armi_bench::now_ns();
      hand.run();
      armi_bench::mpi_polling_barrier(MPI_COMM_WORLD, backoff);
      mpi_s.push_back(seconds_since(t0));
      hand.run();  // the same stream again undoes it
      std::vector<u64> wrong{hand.errors()};
      armi_bench::mpi_polling_sum(MPI_COMM_WORLD, wrong, backoff);
      mpi_errors += wrong[0];
    }
    return armi_errors == 0 && mpi_errors == 0 ? 0 : 1;
  });
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return rc;
  if (rc == 2) return rc;

  double const gups_armi = static_cast<double>(updates) / armi_bench::median(armi_s) * 1e-9;
  double const gups_mpi = static_cast<double>(updates) / armi_bench::median(mpi_s) * 1e-9;
  double const ratio = gups_armi / gups_mpi;
  constexpr double target_ratio = 1.0;
  bool const met = ratio >= target_ratio;
  fmt::print("random_access_mpi: table 2^{} words, {} updates, {} ranks{}, aggregation {}, median of {}\n", log_size,
             updates, ranks, oversubscribed ? " (more ranks than cores)" : "",
             armi_bench::aggregation_text(cfg.aggregation), reps);
  fmt::print("  armi::random_updates (one async_rmi per update)      {:10.6f} GUPS  errors {}\n", gups_armi,
             armi_errors);
  fmt::print("  hand-written MPI (hypercube rounds of {:5} updates)  {:10.6f} GUPS  errors {}\n", chunk, gups_mpi,
             mpi_errors);
  fmt::print("  armi / hand-written: {:.3f} (target >= {:.1f}: {})\n", ratio, target_ratio, met ? "MET" : "NOT MET");
  if (rc != 0) std::fprintf(stderr, "random_access_mpi: FAILED: a verification found wrong words\n");

  json const summary = json::object{{"benchmark", "random_access_mpi"},
                                    {"backend", "mpi"},
                                    {"ranks", ranks},
                                    {"oversubscribed", oversubscribed},
                                    {"log_size", log_size},
                                    {"updates", updates},
                                    {"chunk", chunk},
                                    {"reps", reps},
                                    {"armi_gups", gups_armi},
                                    {"hand_written_gups", gups_mpi},
                                    {"armi_seconds", seconds_json(armi_s)},
                                    {"hand_written_seconds", seconds_json(mpi_s)},
                                    {"armi_errors", armi_errors},
                                    {"hand_written_errors", mpi_errors},
                                    {"ratio", ratio},
                                    {"machine", armi_bench::machine_context()},
                                    {"target", json::object{{"min_ratio", target_ratio}, {"met", met}}},
                                    {"verified", rc == 0}};
  if (!armi_bench::write_json(json_path, summary)) return 1;
  return rc;
}
