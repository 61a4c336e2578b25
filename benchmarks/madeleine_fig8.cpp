// madeleine_fig8 — the Madeleine paper's Fig. 8: the round trip of a remote
// procedure call whose argument is a byte array, done by armi's sync_rmi and
// by the two-message scheme an RPC layer on top of MPI needs
// (../shared/papers/madeleine.txt §2.1.4 and §3.1).  Between two ranks, for
// arrays of 0, 16, 64, 256, 1 KiB, 4 KiB, 16 KiB and 64 KiB:
//
//   two-message  the client sends a header message (method id, length) and
//                then the body as a second message; the server receives the
//                header, dispatches on the method id, receives the body
//                (its length is known only now) into place, runs the
//                function and answers with one 8-byte message.  As in the
//                paper, the body message is sent even when it is empty.
//   one-message  the client sends the bytes as one message, the server
//                receives them into a buffer of the largest size, runs the
//                function and answers with 8 bytes: what one MPI message
//                each way costs, a lower bound (no method id, no length).
//   sync_rmi     armi::sync_rmi(1, h, &rpc_server::checksum, bytes): the
//                request (handler id, target handle, length, bytes) travels
//                as one message; it returns the same 8-byte value.  The
//                target takes a std::vector<std::byte> (a copy of the bytes
//                at the server), or, in the view column, an
//                armi::view<std::byte> (the bytes read where they arrived),
//                or, in the lent column, the same view of bytes the client
//                lends (armi::lend): between two locations of one process
//                (threads) read in the client's memory, with no copy;
//                between ranks (mpi, mixed), from 12 KiB (64 KiB between
//                hosts), sent by MPI from the client's memory as a message
//                of its own.
//
// With --armi-backend=threads (2 locations of one process) only the armi
// columns run: the raw MPI games need two ranks.  With --armi-backend=mixed
// and --armi-locations=1, two ranks of one thread each: every buffer an MPI
// message, from whichever thread holds the rank's MPI lock.
//
// The function sums the bytes (it touches every one) and returns the sum;
// rank 0 checks every answer (one byte of the array changes every round).
// The raw games use MPI_COMM_WORLD, armi its own duplicate.  Their waits
// never block inside MPI: they poll, yield, then nap, with the schedule of
// armi's mpi backend (bench_mpi.hpp).  Each figure is the median over --reps
// of the mean round trip over --rounds (the first tenth is warm-up), in us;
// ratio = sync_rmi / two-message.  The target: armi faster than the
// two-message scheme at every size (ratio < 1); with a view (or a lent one),
// at 64 KiB, 1.5x faster than with the vector (issue 38).
//
//   mpiexec -bind-to core -n 2 ./madeleine_fig8 [--rounds=N] [--reps=N]
//           [--sizes=0,16,64,...] [--json=FILE] [--armi-* flags]
//   ./madeleine_fig8 --armi-backend=threads --armi-locations=2 [...]
//   mpiexec -bind-to core -n 2 ./madeleine_fig8 --armi-backend=mixed --armi-locations=1 [...]
//
// Exit status: 0 if every answer checked out, 1 if one did not, 2 on a usage
// error (or not exactly 2 ranks).

#include "bench_common.hpp"
#include "bench_mpi.hpp"

#include <armi/armi.hpp>
#include <fmt/core.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace {

using armi_bench::json;

constexpr int header_tag = 81, body_tag = 82, reply_tag = 83, single_tag = 84;

// The remote procedure: touches every byte.
std::uint64_t checksum_bytes(std::byte const* p, std::size_t n) {
  std::uint64_t s = n;
  for (std::size_t i = 0; i < n; ++i) s += static_cast<std::uint8_t>(p[i]);
  return s;
}

class rpc_server : public armi::p_object {
 public:
  std::uint64_t checksum(std::vector<std::byte> const& b) { return checksum_bytes(b.data(), b.size()); }
  std::uint64_t checksum_view(armi::view<std::byte> b) { return checksum_bytes(b.data(), b.size()); }
};

// NaN: a column that did not run (the raw MPI games on threads); null in the JSON.
constexpr double not_run = std::numeric_limits<double>::quiet_NaN();
json value_or_null(double x) {
  return std::isnan(x) ? json(nullptr) : json(x);
}

// The two-message scheme's header: which procedure, and how long its body is.
struct rpc_header {
  std::uint32_t method;
  std::uint32_t pad;
  std::uint64_t length;
};
constexpr std::uint32_t checksum_method = 1;

// Rank 0's array for one size: byte 0 changes every round, so the expected
// answer is the sum of the other bytes (fixed) plus byte 0.
struct client_array {
  explicit client_array(std::size_t n) : bytes(n) {
    for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::byte>((i * 131 + n) & 0xff);
    rest = checksum_bytes(bytes.data(), n) - (n ? static_cast<std::uint8_t>(bytes[0]) : 0u);
  }
  // Sets byte 0 for round r; returns the answer the server must give.
  std::uint64_t round(std::uint64_t r) {
    if (bytes.empty()) return rest;
    bytes[0] = static_cast<std::byte>(r & 0xff);
    return rest + (r & 0xff);
  }
  std::vector<std::byte> bytes;
  std::uint64_t rest = 0;
};

// Mean microseconds per round trip over `rounds` (after a tenth of warm-up).
template <class Round>
double time_rounds(std::uint64_t rounds, Round&& round) {
  std::uint64_t const warm = rounds / 10;
  std::int64_t t0 = 0;
  for (std::uint64_t r = 0; r < rounds; ++r) {
    if (r == warm) t0 = armi_bench::now_ns();
    round(r);
  }
  return static_cast<double>(armi_bench::now_ns() - t0) / 1e3 / static_cast<double>(rounds - warm);
}

struct sample {
  double two_message = not_run, one_message = not_run, sync_rmi = 0, sync_rmi_view = 0, sync_rmi_lent = 0;
};

struct game {
  std::uint64_t rounds;
  std::size_t max_size;
  armi_bench::mpi_backoff& backoff;
  std::vector<std::byte>& server_buf;  // rank 1: where bodies land (the paper's static array)
  rpc_server& server;
  bool ok = true;

  void fail(char const* what, std::size_t size, std::uint64_t got, std::uint64_t want) {
    if (ok)  // the first wrong answer says it all
      std::fprintf(stderr, "madeleine_fig8: %s, %zu bytes: answer %llu, expected %llu\n", what, size,
                   static_cast<unsigned long long>(got), static_cast<unsigned long long>(want));
    ok = false;
  }

  // The server's handler for checksum_method: the body is received only now,
  // into place, because only now is its length known.
  void handle_checksum(rpc_header const& h, int client) {
    MPI_Request r;
    MPI_Irecv(server_buf.data(), static_cast<int>(h.length), MPI_BYTE, client, body_tag, MPI_COMM_WORLD, &r);
    armi_bench::mpi_wait_one(r, backoff);
    std::uint64_t const v = checksum_bytes(server_buf.data(), h.length);
    MPI_Isend(&v, 1, MPI_UINT64_T, client, reply_tag, MPI_COMM_WORLD, &r);
    armi_bench::mpi_wait_one(r, backoff);
  }

  double two_message(int rank, std::size_t size) {
    if (rank == 0) {
      client_array a(size);
      return time_rounds(rounds, [&](std::uint64_t r) {
        std::uint64_t const want = a.round(r);
        std::uint64_t got = 0;
        rpc_header const h{checksum_method, 0, size};
        MPI_Request q[3];
        MPI_Irecv(&got, 1, MPI_UINT64_T, 1, reply_tag, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(&h, sizeof h, MPI_BYTE, 1, header_tag, MPI_COMM_WORLD, &q[1]);
        MPI_Isend(a.bytes.data(), static_cast<int>(size), MPI_BYTE, 1, body_tag, MPI_COMM_WORLD, &q[2]);
        armi_bench::mpi_wait_all(3, q, backoff);
        if (got != want) fail("two-message", size, got, want);
      });
    }
    for (std::uint64_t r = 0; r < rounds; ++r) {
      rpc_header h{};
      MPI_Request q;
      MPI_Status st;
      MPI_Irecv(&h, sizeof h, MPI_BYTE, MPI_ANY_SOURCE, header_tag, MPI_COMM_WORLD, &q);
      armi_bench::mpi_wait_one(q, backoff, &st);
      if (h.method != checksum_method || h.length != size) {
        std::fprintf(stderr, "madeleine_fig8: two-message: bad header (method %u, length %llu; expected %u, %zu)\n",
                     h.method, static_cast<unsigned long long>(h.length), checksum_method, size);
        MPI_Abort(MPI_COMM_WORLD, 1);  // the body cannot be received: nothing sensible to do
      }
      handle_checksum(h, st.MPI_SOURCE);
    }
    return 0;
  }

  double one_message(int rank, std::size_t size) {
    if (rank == 0) {
      client_array a(size);
      return time_rounds(rounds, [&](std::uint64_t r) {
        std::uint64_t const want = a.round(r);
        std::uint64_t got = 0;
        MPI_Request q[2];
        MPI_Irecv(&got, 1, MPI_UINT64_T, 1, reply_tag, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(a.bytes.data(), static_cast<int>(size), MPI_BYTE, 1, single_tag, MPI_COMM_WORLD, &q[1]);
        armi_bench::mpi_wait_all(2, q, backoff);
        if (got != want) fail("one-message", size, got, want);
      });
    }
    for (std::uint64_t r = 0; r < rounds; ++r) {
      MPI_Request q;
      MPI_Status st;
      MPI_Irecv(server_buf.data(), static_cast<int>(max_size), MPI_BYTE, MPI_ANY_SOURCE, single_tag, MPI_COMM_WORLD,
                &q);
      armi_bench::mpi_wait_one(q, backoff, &st);
      int n = 0;
      MPI_Get_count(&st, MPI_BYTE, &n);
      std::uint64_t const v = checksum_bytes(server_buf.data(), static_cast<std::size_t>(n));
      MPI_Isend(&v, 1, MPI_UINT64_T, st.MPI_SOURCE, reply_tag, MPI_COMM_WORLD, &q);
      armi_bench::mpi_wait_one(q, backoff);
    }
    return 0;
  }

  // Rank 1 serves the requests from inside rmi_fence.  M: the target
  // (a vector, or a view of the bytes); lent: the client lends its array
  // (sync_rmi is the flush point that ends the loan, before the next round
  // changes byte 0).
  template <auto M, bool Lent = false>
  double sync_rmi(int rank, std::size_t size) {
    if (rank != 0) return 0;
    client_array a(size);
    armi::rmi_handle const h = server.get_rmi_handle();
    return time_rounds(rounds, [&](std::uint64_t r) {
      std::uint64_t const want = a.round(r);
      std::uint64_t got;
      if constexpr (Lent)
        got = armi::sync_rmi(1, h, M, armi::lend(a.bytes));
      else
        got = armi::sync_rmi(1, h, M, a.bytes);
      if (got != want) fail(Lent ? "sync_rmi, lent" : "sync_rmi", size, got, want);
    });
  }
};

}  // namespace

int main(int argc, char** argv) {
  armi::config cfg;
  if (int const code = armi_bench::take_armi_options(argc, argv, cfg); code >= 0) return code;
  if (!cfg.backend_given) {
    cfg.backend = "mpi";
    cfg.backend_given = true;
  }
  bool const raw = cfg.backend == "mpi" || cfg.backend == "mixed";  // the raw MPI games: between two ranks
  if (!raw && cfg.backend != "threads") {
    std::fprintf(stderr,
                 "madeleine_fig8: run it on --armi-backend=mpi (2 ranks), mixed (2 ranks x 1 location) "
                 "or threads (2 locations)\n");
    return 2;
  }

  std::uint64_t rounds = 0, reps = 0;
  std::vector<std::uint64_t> sizes;
  std::string json_path;
  try {
    armi_bench::flags f(argc, argv);
    rounds = f.get_uint("rounds", 10000);
    reps = f.get_uint("reps", 5);
    sizes = f.get_uint_list("sizes", {0, 16, 64, 256, 1024, 4096, 16384, 65536});
    json_path = f.get_string("json", "");
    f.finish();
    if (rounds < 10) throw armi_bench::usage_error("--rounds must be at least 10");
    if (reps < 1) throw armi_bench::usage_error("--reps must be at least 1");
    for (auto s : sizes)
      if (s > (std::uint64_t{1} << 30)) throw armi_bench::usage_error("--sizes: at most 1 GiB");
  } catch (armi_bench::usage_error const& e) {
    std::fprintf(stderr, "madeleine_fig8: %s\n", e.what());
    return 2;
  }
  std::size_t const max_size = *std::max_element(sizes.begin(), sizes.end());

  std::vector<std::vector<sample>> samples(sizes.size());
  int const rc = armi::execute(cfg, [&]() -> int {
    int ranks = 2;
    if (raw) MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (armi::get_num_locations() != 2 || ranks != 2) {
      if (armi::get_location_id() == 0)
        std::fprintf(stderr, "madeleine_fig8: run it on exactly 2 locations%s\n", raw ? ", one per rank" : "");
      return 2;
    }
    int const rank = static_cast<int>(armi::get_location_id());
    armi_bench::mpi_backoff backoff(raw && armi_bench::mpi_oversubscribed(MPI_COMM_WORLD));
    std::vector<std::byte> server_buf(std::max<std::size_t>(max_size, 1));
    rpc_server server;
    game g{rounds, max_size, backoff, server_buf, server};
    for (std::uint64_t rep = 0; rep < reps; ++rep)
      for (std::size_t s = 0; s < sizes.size(); ++s) {
        sample x;
        armi::rmi_fence();  // both ranks are here, nothing of armi's in flight
        if (raw) {
          x.two_message = g.two_message(rank, sizes[s]);
          armi::rmi_fence();
          x.one_message = g.one_message(rank, sizes[s]);
          armi::rmi_fence();
        }
        x.sync_rmi = g.sync_rmi<&rpc_server::checksum>(rank, sizes[s]);
        armi::rmi_fence();
        x.sync_rmi_view = g.sync_rmi<&rpc_server::checksum_view>(rank, sizes[s]);
        armi::rmi_fence();
        x.sync_rmi_lent = g.sync_rmi<&rpc_server::checksum_view, true>(rank, sizes[s]);
        armi::rmi_fence();
        if (rank == 0) samples[s].push_back(x);  // the client's times (on threads both share `samples`)
      }
    return g.ok ? 0 : 1;
  });
  int rank = 0;
  if (raw) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rc != 0) {
    if (rc == 1 && rank == 0) std::fprintf(stderr, "madeleine_fig8: FAILED (an answer did not check out)\n");
    return rc;
  }
  if (rank != 0) return 0;

  fmt::print(
      "Fig. 8 (Madeleine paper): RPC with a byte-array argument, round trip in us, 2 {} ({} backend), "
      "{} rounds x {} reps (median)\n",
      raw ? "ranks" : "locations", cfg.backend, rounds, reps);
  fmt::print("{:>6} {:>12} {:>12} {:>10} {:>13} {:>13} {:>10} {:>12} {:>10} {:>12}\n", "bytes", "two-message",
             "one-message", "sync_rmi", "armi/two-msg", "armi/one-msg", "view", "vector/view", "lent", "vector/lent");
  json::array rows;
  bool all_met = true;
  double view_speedup_64k = 0, lent_speedup_64k = 0;  // 0: 64 KiB not measured
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    auto med = [&](double sample::*field) {
      std::vector<double> v;
      for (auto const& x : samples[s]) v.push_back(x.*field);
      return raw || (field != &sample::two_message && field != &sample::one_message) ? armi_bench::median(v) : not_run;
    };
    double const two = med(&sample::two_message), one = med(&sample::one_message), sy = med(&sample::sync_rmi);
    double const view = med(&sample::sync_rmi_view), lent = med(&sample::sync_rmi_lent);
    bool const met = !raw || sy < two;
    all_met = all_met && met;
    if (sizes[s] == 65536) {
      view_speedup_64k = sy / view;
      lent_speedup_64k = sy / lent;
    }
    auto column = [](double x, char const* suffix) {
      return std::isnan(x) ? std::string("-") : fmt::format("{:.2f}{}", x, suffix);
    };
    fmt::print("{:>6} {:>12} {:>12} {:>10.2f} {:>13} {:>13} {:>10.2f} {:>11.2f}x {:>10.2f} {:>11.2f}x{}\n", sizes[s],
               column(two, ""), column(one, ""), sy, column(sy / two, "x"), column(sy / one, "x"), view, sy / view,
               lent, sy / lent, met ? "" : "  <- not faster");
    rows.push_back(json::object{{"bytes", sizes[s]},
                                {"two_message_us", value_or_null(two)},
                                {"one_message_us", value_or_null(one)},
                                {"sync_rmi_us", sy},
                                {"sync_rmi_view_us", view},
                                {"sync_rmi_lent_us", lent},
                                {"vector_over_view", sy / view},
                                {"vector_over_lent", sy / lent},
                                {"ratio_vs_two_message", value_or_null(sy / two)},
                                {"ratio_vs_one_message", value_or_null(sy / one)},
                                {"faster_than_two_message", met}});
  }
  if (raw) {
    fmt::print("(Madeleine paper, TCP/Fast-Ethernet: the MPI two-message RPC about 2x Madeleine's one message)\n");
    fmt::print("target: sync_rmi faster than the two-message scheme at every size: {}\n", all_met ? "MET" : "NOT MET");
  }
  double const best_64k = std::max(view_speedup_64k, lent_speedup_64k);
  if (best_64k > 0)
    fmt::print("target: at 64 KiB a view argument 1.5x faster than a vector: view {:.2f}x, lent {:.2f}x, {}\n",
               view_speedup_64k, lent_speedup_64k, best_64k >= 1.5 ? "MET" : "NOT MET");
  json::object fields{{"benchmark", "madeleine_fig8"},
                      {"paper", "Madeleine Fig. 8: RPC with a byte-array argument, one vs two messages"},
                      {"backend", cfg.backend},
                      {"ranks", raw ? 2 : 1},
                      {"locations", 2},
                      {"rounds", rounds},
                      {"reps", reps},
                      {"machine", armi_bench::machine_context()},
                      {"baseline", raw ? "two-message MPI RPC (header, then body; 8-byte reply)"
                                       : "sync_rmi with a std::vector argument"},
                      {"rows", rows},
                      {"view_target", json::object{{"min_vector_over_view_64k", 1.5},
                                                   {"vector_over_view_64k", view_speedup_64k},
                                                   {"vector_over_lent_64k", lent_speedup_64k},
                                                   {"met", best_64k >= 1.5}}},
                      {"verified", true}};
  if (raw) fields.emplace_back("target", json::object{{"max_ratio_exclusive", 1.0}, {"met", all_met}});
  json const summary = std::move(fields);
  return armi_bench::write_json(json_path, summary) ? 0 : 1;
}
