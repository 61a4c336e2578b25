// mpi_message_rate — how many fine-grain 8-byte requests per second armi
// moves between MPI ranks, next to a hand-written MPI program that moves the
// same payloads.  message_rate's game on the mpi backend.
//
//   armi         every rank sends --n async_rmi with a uint64 payload to
//                uniformly random ranks (itself included); the target adds
//                the payload to a per-rank sum.  Timed from an rmi_fence to
//                the rmi_fence after the last send.  Twice: the method named
//                as a constant, async_rmi(d, h, armi::method<&sink::add>, v)
//                (its stub calls sink::add directly, inlined), and by a
//                method pointer, async_rmi(d, h, &sink::add, v) (called
//                through the pointer).
//   hand-written the same payloads and destinations (same generator, same
//                seeds), packed by hand: B payloads per MPI message per
//                destination (B = the aggregation factor of the armi row, so
//                a message carries 8B bytes where armi's carries about
//                8B + 20: a full record, then one repeat record), MPI_Isend with at most
//                --in-flight sends outstanding, arrivals taken by
//                MPI_Improbe + MPI_Mrecv and summed, termination by counts
//                (each rank finally tells every other how many payloads it
//                sent it).  Payloads to oneself fill a buffer of their
//                own, summed when full: like armi, no branch on "to me?"
//                per payload.  Timed from a barrier to a barrier.
//
// Both verify every rank's sum and count against what the senders sent (an
// allreduce over the ranks).  The hand-written program never waits inside a
// blocking MPI call: it polls, yields, then naps with the schedule of armi's
// mpi backend (bench_mpi.hpp).  Each rate is the median of --reps
// repetitions (the three runs interleaved); ratio = armi / hand-written, the
// issue's target is at least 50%, judged on the method-constant form (the
// one the README recommends for the finest-grain methods); the pointer
// form's ratio is printed beside it.
//
//   mpiexec -bind-to core -n 2 ./mpi_message_rate [--n=N] [--aggregations=64,256,1024]
//           [--reps=N] [--in-flight=N] [--json=FILE] [--armi-* flags]
//   mpiexec -n 4 ./mpi_message_rate        # oversubscribed on a 2-core machine
//
// Exit status: 0 if every sum checked out, 1 if one did not, 2 on a usage error.

#include "bench_common.hpp"
#include "bench_mpi.hpp"

#include <armi/armi.hpp>
#include <fmt/core.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace {

using armi_bench::json;

constexpr double target_fraction = 0.5;
constexpr int data_tag = 91, end_tag = 92;

std::uint64_t seed_of(int rank) { return 0x5EED0000ull + 7919ull * static_cast<std::uint64_t>(rank); }

struct run_result {
  double seconds = 0;
  bool ok = true;
  double wire_bytes_per_request = 0;  // armi's, over every rank (wire_meter)
};

// True on every rank when every rank's received sum and count equal what the
// senders sent it.  sent_* are this rank's per-destination totals.
bool verify(char const* who, std::uint64_t agg, std::vector<std::uint64_t> sent, std::uint64_t got_sum,
            std::uint64_t got_count, armi_bench::mpi_backoff& backoff) {
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  std::size_t const ranks = sent.size() / 2;
  armi_bench::mpi_polling_sum(MPI_COMM_WORLD, sent, backoff);  // [0, ranks): sums, [ranks, 2 ranks): counts
  std::uint64_t const want_sum = sent[static_cast<std::size_t>(me)];
  std::uint64_t const want_count = sent[ranks + static_cast<std::size_t>(me)];
  std::vector<std::uint64_t> bad{want_sum != got_sum || want_count != got_count ? 1u : 0u};
  if (bad[0])
    std::fprintf(stderr, "mpi_message_rate: %s, rank %d, aggregation %llu: received %llu payloads, expected %llu%s\n",
                 who, me, static_cast<unsigned long long>(agg), static_cast<unsigned long long>(got_count),
                 static_cast<unsigned long long>(want_count), want_count == got_count ? " (sum differs)" : "");
  armi_bench::mpi_polling_sum(MPI_COMM_WORLD, bad, backoff);
  return bad[0] == 0;
}

// ---- hand-written MPI -------------------------------------------------------------

run_result hand_written(std::uint64_t n, std::size_t batch, std::size_t max_in_flight,
                        armi_bench::mpi_backoff& backoff) {
  MPI_Comm const comm = MPI_COMM_WORLD;
  int me = 0, ranks = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &ranks);
  auto const P = static_cast<std::size_t>(ranks);
  constexpr std::uint64_t none = ~std::uint64_t{0};

  // Send buffers: `max_in_flight` in flight plus one being filled per
  // destination, so a free one is missing only when max_in_flight are out.
  std::size_t const slots = max_in_flight + P;
  std::vector<std::uint64_t> pool(slots * batch);
  std::vector<std::size_t> free_slots;
  for (std::size_t s = slots; s-- > 0;) free_slots.push_back(s);
  std::vector<std::size_t> filling(P, none), fill(P, 0);
  std::vector<MPI_Request> in_flight;
  std::vector<std::size_t> in_flight_slot;
  std::vector<int> indices(slots);
  std::vector<std::uint64_t> inbox(batch);

  std::vector<std::uint64_t> sent(2 * P, 0);  // per destination: sums, then counts
  std::vector<std::uint64_t> from(P, 0), announced(P, none);
  std::uint64_t sum = 0, count = 0;
  std::size_t ends = 0;

  // Takes in and sums everything that has arrived; true if anything had.
  auto drain = [&] {
    bool any = false;
    for (;;) {
      int flag = 0;
      MPI_Message m;
      MPI_Status st;
      MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &m, &st);
      if (!flag) return any;
      any = true;
      auto const src = static_cast<std::size_t>(st.MPI_SOURCE);
      if (st.MPI_TAG == end_tag) {
        MPI_Mrecv(&announced[src], 1, MPI_UINT64_T, &m, MPI_STATUS_IGNORE);
        ++ends;
        continue;
      }
      int k = 0;
      MPI_Get_count(&st, MPI_UINT64_T, &k);
      MPI_Mrecv(inbox.data(), k, MPI_UINT64_T, &m, MPI_STATUS_IGNORE);
      for (int i = 0; i < k; ++i) sum += inbox[static_cast<std::size_t>(i)];
      count += static_cast<std::uint64_t>(k);
      from[src] += static_cast<std::uint64_t>(k);
    }
  };
  // Frees the buffers of completed sends; true if any completed.
  auto complete_sends = [&] {
    if (in_flight.empty()) return false;
    int done = 0;
    MPI_Testsome(static_cast<int>(in_flight.size()), in_flight.data(), &done, indices.data(), MPI_STATUSES_IGNORE);
    if (done == MPI_UNDEFINED || done == 0) return false;
    std::size_t out = 0;
    for (std::size_t k = 0; k < in_flight.size(); ++k) {
      if (in_flight[k] == MPI_REQUEST_NULL) {
        free_slots.push_back(in_flight_slot[k]);
        continue;
      }
      in_flight[out] = in_flight[k];
      in_flight_slot[out++] = in_flight_slot[k];
    }
    in_flight.resize(out);
    in_flight_slot.resize(out);
    return true;
  };
  auto post = [&](std::size_t dst) {
    std::size_t const s = filling[dst];
    if (dst == static_cast<std::size_t>(me)) {  // our own batch: summed here, its buffer free again
      for (std::size_t i = 0; i < fill[dst]; ++i) sum += pool[s * batch + i];
      count += fill[dst];
      free_slots.push_back(s);
      filling[dst] = none;
      return;
    }
    MPI_Request r;
    MPI_Isend(&pool[s * batch], static_cast<int>(fill[dst]), MPI_UINT64_T, static_cast<int>(dst), data_tag, comm, &r);
    in_flight.push_back(r);
    in_flight_slot.push_back(s);
    filling[dst] = none;
  };
  // A buffer to fill; while none is free, serve arrivals (a peer's sends may
  // be waiting for us to take them).
  auto acquire = [&] {
    backoff.reset();
    while (free_slots.empty()) {
      bool const moved = complete_sends();
      if (!drain() && !moved) backoff();
    }
    std::size_t const s = free_slots.back();
    free_slots.pop_back();
    return s;
  };

  armi_bench::splitmix64 rng{seed_of(me)};
  armi_bench::mpi_polling_barrier(comm, backoff);
  auto const t0 = armi_bench::now_ns();
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t const v = rng();
    std::size_t const dst = rng.below(static_cast<std::uint32_t>(ranks));
    sent[dst] += v;
    ++sent[P + dst];
    if (filling[dst] == none) {
      filling[dst] = acquire();
      fill[dst] = 0;
    }
    pool[filling[dst] * batch + fill[dst]++] = v;
    if (fill[dst] == batch) {
      post(dst);
      if (dst != static_cast<std::size_t>(me)) {
        complete_sends();
        drain();
      }
    }
  }
  std::vector<MPI_Request> end_requests;
  for (std::size_t dst = 0; dst < P; ++dst) {
    if (filling[dst] != none) post(dst);
    if (dst == static_cast<std::size_t>(me)) continue;
    end_requests.emplace_back();
    MPI_Isend(&sent[P + dst], 1, MPI_UINT64_T, static_cast<int>(dst), end_tag, comm, &end_requests.back());
  }
  auto all_arrived = [&] {
    if (ends != P - 1) return false;
    for (std::size_t src = 0; src < P; ++src)
      if (src != static_cast<std::size_t>(me) && from[src] != announced[src]) return false;
    return true;
  };
  backoff.reset();
  while (!all_arrived()) {
    bool const moved = complete_sends();
    if (drain() || moved)
      backoff.reset();
    else
      backoff();
  }
  backoff.reset();
  while (!in_flight.empty()) {
    if (complete_sends())
      backoff.reset();
    else
      backoff();
  }
  armi_bench::mpi_wait_all(static_cast<int>(end_requests.size()), end_requests.data(), backoff);
  armi_bench::mpi_polling_barrier(comm, backoff);
  auto const t1 = armi_bench::now_ns();

  run_result res;
  res.seconds = static_cast<double>(t1 - t0) / 1e9;
  res.ok = verify("hand-written", batch, sent, sum, count, backoff);
  return res;
}

// ---- armi -----------------------------------------------------------------------------

class sink : public armi::p_object {
 public:
  void add(std::uint64_t v) {
    m_sum += v;
    ++m_count;
  }
  void reset() { m_sum = m_count = 0; }
  std::uint64_t sum() const { return m_sum; }
  std::uint64_t count() const { return m_count; }
  void set_wire(std::pair<std::uint64_t, std::uint64_t> w) { m_wire = w; }
  std::uint64_t wire_bytes() const { return m_wire.first; }
  std::uint64_t wire_requests() const { return m_wire.second; }

 private:
  std::uint64_t m_sum = 0, m_count = 0;
  std::pair<std::uint64_t, std::uint64_t> m_wire{};
};

// Constant: name the method as armi::method<&sink::add>; else &sink::add.
template <bool Constant>
run_result armi_run(sink& s, std::uint64_t n, std::uint64_t agg, armi_bench::mpi_backoff& backoff) {
  int const me = static_cast<int>(armi::get_location_id());
  auto const locs = armi::get_num_locations();
  armi::rmi_handle const h = s.get_rmi_handle();
  std::vector<std::uint64_t> sent(2 * std::size_t{locs}, 0);
  armi::set_aggregation(agg);
  s.reset();
  armi_bench::splitmix64 rng{seed_of(me)};
  armi::rmi_fence();

  armi_bench::wire_meter const wire;
  auto const t0 = armi_bench::now_ns();
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t const v = rng();
    std::uint32_t const dst = rng.below(locs);
    sent[dst] += v;
    ++sent[locs + dst];
    if constexpr (Constant)
      armi::async_rmi(dst, h, armi::method<&sink::add>, v);
    else
      armi::async_rmi(dst, h, &sink::add, v);
  }
  armi::rmi_fence();
  auto const t1 = armi_bench::now_ns();
  s.set_wire(wire.since());

  run_result res;
  res.seconds = static_cast<double>(t1 - t0) / 1e9;
  auto const bytes = armi::allreduce_rmi(h, &sink::wire_bytes, std::plus<>{});
  auto const requests = armi::allreduce_rmi(h, &sink::wire_requests, std::plus<>{});
  res.wire_bytes_per_request = static_cast<double>(bytes) / static_cast<double>(std::max<std::uint64_t>(requests, 1));
  res.ok = verify(Constant ? "armi (method constant)" : "armi (method pointer)", agg, sent, s.sum(), s.count(),
                  backoff);
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  armi::config cfg;
  if (int const code = armi_bench::take_armi_options(argc, argv, cfg); code >= 0) return code;
  cfg.backend = "mpi";
  cfg.backend_given = true;

  std::uint64_t n = 0, reps = 0, in_flight = 0;
  std::vector<std::uint64_t> aggregations;
  std::string json_path;
  try {
    armi_bench::flags f(argc, argv);
    n = f.get_uint("n", 4000000);
    reps = f.get_uint("reps", 5);
    aggregations = f.get_uint_list("aggregations", {64, 256, 1024});
    in_flight = f.get_uint("in-flight", 64);
    json_path = f.get_string("json", "");
    f.finish();
    if (n == 0 || reps == 0 || in_flight == 0)
      throw armi_bench::usage_error("--n, --reps and --in-flight must be at least 1");
    for (auto a : aggregations)
      if (a < 1 || a > (1u << 24)) throw armi_bench::usage_error("--aggregations: each factor must be in [1, 2^24]");
  } catch (armi_bench::usage_error const& e) {
    std::fprintf(stderr, "mpi_message_rate: %s\n", e.what());
    return 2;
  }

  std::vector<std::vector<double>> armi_rate(aggregations.size()), pointer_rate(aggregations.size()),
      hw_rate(aggregations.size()), wire(aggregations.size());
  int ranks = 0;
  bool oversubscribed = false;
  int const rc = armi::execute(cfg, [&]() -> int {
    ranks = static_cast<int>(armi::get_num_locations());
    oversubscribed = armi_bench::mpi_oversubscribed(MPI_COMM_WORLD);
    armi_bench::mpi_backoff backoff(oversubscribed);
    sink s;
    double const total = static_cast<double>(n) * ranks;
    for (std::uint64_t rep = 0; rep < reps; ++rep)
      for (std::size_t a = 0; a < aggregations.size(); ++a) {
        armi::rmi_fence();  // nothing of armi's in flight during the hand-written run
        run_result const hw = hand_written(n, aggregations[a], in_flight, backoff);
        run_result const ar = armi_run<true>(s, n, aggregations[a], backoff);
        run_result const ap = armi_run<false>(s, n, aggregations[a], backoff);
        if (!hw.ok || !ar.ok || !ap.ok) return 1;
        hw_rate[a].push_back(total / hw.seconds);
        armi_rate[a].push_back(total / ar.seconds);
        pointer_rate[a].push_back(total / ap.seconds);
        wire[a].push_back(ar.wire_bytes_per_request);
      }
    return 0;
  });
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rc != 0) {
    if (rc == 1 && rank == 0) std::fprintf(stderr, "mpi_message_rate: FAILED (a sum or count did not check out)\n");
    return rc;
  }
  if (rank != 0) return 0;

  fmt::print("message rate on MPI ranks: random-destination 8-byte async_rmi, {} per rank, {} ranks{}, "
             "median of {} reps\n",
             n, ranks, oversubscribed ? " (more ranks than cores)" : "", reps);
  fmt::print("armi: {}; pointer: {}\n", armi_bench::rate_form_constant, armi_bench::rate_form_pointer);
  fmt::print("{:>5} {:>6} {:>14} {:>14} {:>16} {:>9} {:>11} {:>7} {:>8}\n", "ranks", "agg", "armi RMIs/s", "pointer/s",
             "hand-written/s", "armi/hw", "pointer/hw", "target", "B/RMI");
  json::array rows;
  bool all_met = true;
  for (std::size_t a = 0; a < aggregations.size(); ++a) {
    double const ar = armi_bench::median(armi_rate[a]), hr = armi_bench::median(hw_rate[a]);
    double const ap = armi_bench::median(pointer_rate[a]);
    double const frac = ar / hr;
    bool const met = frac >= target_fraction;
    all_met = all_met && met;
    double const bytes = armi_bench::median(wire[a]);
    fmt::print("{:>5} {:>6} {:>14.4g} {:>14.4g} {:>16.4g} {:>8.1f}% {:>10.1f}% {:>7} {:>8.2f}\n", ranks, aggregations[a],
               ar, ap, hr, 100 * frac, 100 * ap / hr, met ? "met" : "NOT MET", bytes);
    rows.push_back(json::object{{"ranks", ranks},
                                {"aggregation", aggregations[a]},
                                {"armi_rmis_per_s", ar},
                                {"armi_pointer_rmis_per_s", ap},
                                {"hand_written_per_s", hr},
                                {"armi_fraction_of_hand_written", frac},
                                {"armi_pointer_fraction_of_hand_written", ap / hr},
                                {"target_met", met},
                                {"armi_wire_bytes_per_rmi", bytes},
                                {"armi_samples", json::array(armi_rate[a].begin(), armi_rate[a].end())},
                                {"armi_pointer_samples", json::array(pointer_rate[a].begin(), pointer_rate[a].end())},
                                {"hand_written_samples", json::array(hw_rate[a].begin(), hw_rate[a].end())}});
  }
  fmt::print("target: armi (method constant) >= {:.0f}% of the hand-written rate in every row: {}\n",
             100 * target_fraction, all_met ? "MET" : "NOT MET");

  json summary = json::object{{"benchmark", "mpi_message_rate"},
                              {"what", "random-destination 8-byte async_rmi vs hand-packed MPI_Isend/MPI_Improbe"},
                              {"forms", json::object{{"armi", armi_bench::rate_form_constant},
                                                     {"armi_pointer", armi_bench::rate_form_pointer}}},
                              {"backend", "mpi"},
                              {"ranks", ranks},
                              {"oversubscribed", oversubscribed},
                              {"per_rank", n},
                              {"reps", reps},
                              {"hand_written_in_flight", in_flight},
                              {"machine", armi_bench::machine_context()},
                              {"rows", rows},
                              {"target", json::object{{"min_fraction", target_fraction}, {"met", all_met}}},
                              {"verified", true}};
  return armi_bench::write_json(json_path, summary) ? 0 : 1;
}
