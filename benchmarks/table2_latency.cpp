// table2_latency — the ARMI paper's Table 2 (threads row): round-trip latency
// of explicit shared-memory communication and of ARMI's async_rmi / sync_rmi.
//
// Two parties, measured in the same run, repetitions interleaved:
//
//   explicit    two std::threads ping-pong through two atomic counters: A
//               stores round r, B waits for it (short spin, then yield, so it
//               is fair on a 2-core machine) and answers r, A waits for it.
//   async_rmi   armi::execute with 2 locations: location 0 async_rmi's ping()
//               to location 1, ping() async_rmi's pong() back; location 0
//               polls until the pong arrived, then sends the next ping.
//   sync_rmi    location 0 calls sync_rmi(1, null method returning int).
//
// Both armi games run with aggregation 1 (every request its own buffer, the
// paper's setting) and with aggregation 64 (the default; partial buffers go
// out when rmi_poll finds nothing to serve).  Each figure is the median of
// --reps repetitions of --rounds round trips.  Ratios are against the
// explicit ping-pong; the target is sync_rmi <= 1.5x explicit.
//
//   ./table2_latency [--rounds=N] [--reps=N] [--json=FILE] [--no-pin] [--armi-* flags]
//   taskset -c 0,1 ./table2_latency --rounds=200000 --json=table2.json
//
// Exit status: 0 if every count checked out (target met or not), 1 if one did
// not, 2 on a usage error.

#include "bench_common.hpp"

#include <armi/armi.hpp>
#include <fmt/core.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BENCH_CPU_RELAX() _mm_pause()
#else
#define BENCH_CPU_RELAX() ((void)0)
#endif

namespace {

using armi_bench::json;

constexpr double target_ratio = 1.5;  // sync_rmi vs explicit

// ---- explicit ping-pong ----------------------------------------------------------

struct alignas(64) padded_counter {
  std::atomic<std::uint64_t> value{0};
};

// Waits until c == want: a short spin, then yield between looks.
inline void wait_for(std::atomic<std::uint64_t> const& c, std::uint64_t want) {
  for (int spin = 0; c.load(std::memory_order_acquire) != want; ++spin) {
    if (spin < 4096)
      BENCH_CPU_RELAX();
    else
      std::this_thread::yield();
  }
}

// Returns microseconds per round trip; false in ok on a count mismatch.
double explicit_ping_pong(std::uint64_t rounds, bool pin, bool& ok) {
  padded_counter ping, pong;
  std::uint64_t answered = 0;
  std::thread b([&] {
    armi_bench::pin_guard pinned(pin, 1);
    for (std::uint64_t r = 1; r <= rounds; ++r) {
      wait_for(ping.value, r);
      ++answered;
      pong.value.store(r, std::memory_order_release);
    }
  });
  double us = 0;
  {
    armi_bench::pin_guard pinned(pin, 0);
    // Warm up: the first rounds include thread start-up.
    std::uint64_t const warm = rounds < 1000 ? rounds / 10 : 100;
    for (std::uint64_t r = 1; r <= warm; ++r) {
      ping.value.store(r, std::memory_order_release);
      wait_for(pong.value, r);
    }
    auto const t0 = armi_bench::now_ns();
    for (std::uint64_t r = warm + 1; r <= rounds; ++r) {
      ping.value.store(r, std::memory_order_release);
      wait_for(pong.value, r);
    }
    auto const t1 = armi_bench::now_ns();
    us = static_cast<double>(t1 - t0) / 1e3 / static_cast<double>(rounds - warm);
  }
  b.join();
  if (answered != rounds || pong.value.load() != rounds) {
    std::fprintf(stderr, "table2_latency: explicit ping-pong answered %llu of %llu rounds\n",
                 static_cast<unsigned long long>(answered), static_cast<unsigned long long>(rounds));
    ok = false;
  }
  return us;
}

// ---- armi ----------------------------------------------------------------------------

// Handlers run on the location owning the representative, one at a time: the
// counters need no synchronization.
class game : public armi::p_object {
 public:
  // On location 1: count and answer.
  void ping(std::uint64_t round) {
    if (round != m_pings) ++m_errors;  // per-pair ordering: rounds arrive in order
    ++m_pings;
    armi::async_rmi(0, get_rmi_handle(), &game::pong, round);
  }
  // On location 0.
  void pong(std::uint64_t round) {
    if (round != m_pongs) ++m_errors;
    ++m_pongs;
  }
  // The null method of the sync_rmi game (on location 1).
  int null_method() {
    ++m_served;
    return 1;
  }

  std::uint64_t pings() const { return m_pings; }
  std::uint64_t pongs() const { return m_pongs; }
  std::uint64_t served() const { return m_served; }
  std::uint64_t errors() const { return m_errors; }

 private:
  std::uint64_t m_pings = 0, m_pongs = 0, m_served = 0, m_errors = 0;
};

struct armi_times {
  std::vector<double> async_us, sync_us;  // one entry per aggregation setting
};

// Plays both games once for each aggregation in `aggs`; returns 0 or 1 (a count was wrong).
int armi_games(std::uint64_t rounds, std::vector<std::size_t> const& aggs, bool pin, armi_times& out) {
  armi::location_id const me = armi::get_location_id();
  armi_bench::pin_guard pinned(pin, me);
  int rc = 0;
  game g;
  armi::rmi_handle const h = g.get_rmi_handle();
  std::uint64_t const warm = rounds < 1000 ? rounds / 10 : 100;
  std::uint64_t pings_seen = 0, sync_seen = 0;
  for (std::size_t agg : aggs) {
    armi::set_aggregation(agg);
    armi::rmi_fence();

    // async_rmi ping-pong
    if (me == 0) {
      std::int64_t t0 = 0;
      std::uint64_t const base = g.pongs();
      for (std::uint64_t r = 0; r < rounds; ++r) {
        if (r == warm) t0 = armi_bench::now_ns();
        armi::async_rmi(1, h, &game::ping, base + r);
        while (g.pongs() != base + r + 1) armi::rmi_poll();
      }
      auto const t1 = armi_bench::now_ns();
      out.async_us.push_back(static_cast<double>(t1 - t0) / 1e3 / static_cast<double>(rounds - warm));
    } else if (me == 1) {
      pings_seen += rounds;
      while (g.pings() != pings_seen) armi::rmi_poll();
    }
    armi::rmi_fence();

    // sync_rmi round trips
    if (me == 0) {
      std::uint64_t sum = 0;
      std::int64_t t0 = 0;
      for (std::uint64_t r = 0; r < rounds; ++r) {
        if (r == warm) t0 = armi_bench::now_ns();
        sum += static_cast<std::uint64_t>(armi::sync_rmi(1, h, &game::null_method));
      }
      auto const t1 = armi_bench::now_ns();
      out.sync_us.push_back(static_cast<double>(t1 - t0) / 1e3 / static_cast<double>(rounds - warm));
      if (sum != rounds) {
        std::fprintf(stderr, "table2_latency: sync_rmi results add up to %llu, expected %llu\n",
                     static_cast<unsigned long long>(sum), static_cast<unsigned long long>(rounds));
        rc = 1;
      }
    } else if (me == 1) {
      sync_seen += rounds;
      while (g.served() != sync_seen) armi::rmi_poll();
    }
    armi::rmi_fence();
  }
  std::uint64_t const total = rounds * aggs.size();
  bool const counts_ok = g.errors() == 0 && (me != 0 || g.pongs() == total) &&
                         (me != 1 || (g.pings() == total && g.served() == total));
  if (!counts_ok) {
    std::fprintf(stderr,
                 "table2_latency: location %u: pings %llu pongs %llu served %llu out-of-order %llu "
                 "(expected %llu each)\n",
                 me, static_cast<unsigned long long>(g.pings()), static_cast<unsigned long long>(g.pongs()),
                 static_cast<unsigned long long>(g.served()), static_cast<unsigned long long>(g.errors()),
                 static_cast<unsigned long long>(total));
    rc = 1;
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  armi::config cfg;
  if (int const code = armi_bench::take_armi_options(argc, argv, cfg); code >= 0) return code;
  cfg.locations = 2;  // a ping-pong has two players

  std::uint64_t rounds = 0, reps = 0;
  std::string json_path;
  bool pin = true;
  try {
    armi_bench::flags f(argc, argv);
    rounds = f.get_uint("rounds", 100000);
    reps = f.get_uint("reps", 5);
    json_path = f.get_string("json", "");
    pin = !f.get_switch("no-pin") && armi_bench::default_pinning(2);
    f.finish();
    if (rounds < 10) throw armi_bench::usage_error("--rounds must be at least 10");
    if (reps < 1) throw armi_bench::usage_error("--reps must be at least 1");
  } catch (armi_bench::usage_error const& e) {
    std::fprintf(stderr, "table2_latency: %s\n", e.what());
    return 2;
  }

  std::vector<std::size_t> const aggs = {1, 64};
  std::vector<double> explicit_us;
  std::vector<std::vector<double>> async_us(aggs.size()), sync_us(aggs.size());
  bool ok = true;
  for (std::uint64_t rep = 0; rep < reps; ++rep) {
    explicit_us.push_back(explicit_ping_pong(rounds, pin, ok));
    armi_times t;
    int const rc = armi::execute(cfg, [&]() -> int {
      armi_times mine;
      int const r = armi_games(rounds, aggs, pin, mine);
      if (armi::get_location_id() == 0) t = mine;
      return r;
    });
    if (rc != 0 || t.async_us.size() != aggs.size() || t.sync_us.size() != aggs.size()) {
      ok = false;
      break;
    }
    for (std::size_t a = 0; a < aggs.size(); ++a) {
      async_us[a].push_back(t.async_us[a]);
      sync_us[a].push_back(t.sync_us[a]);
    }
  }
  if (!ok) {
    std::fprintf(stderr, "table2_latency: FAILED (a count did not check out)\n");
    return 1;
  }

  double const base = armi_bench::median(explicit_us);
  fmt::print("Table 2 (ARMI paper, threads row): round-trip latency, 2 locations, {} rounds x {} reps, "
             "pinned: {}\n",
             rounds, reps, pin ? "yes" : "no");
  fmt::print("{:<30} {:>12} {:>12} {:>10}\n", "ping-pong", "us/round", "best us", "ratio");
  json::array rows;
  auto row = [&](std::string const& name, std::vector<double> const& v, std::size_t agg) {
    double const med = armi_bench::median(v);
    fmt::print("{:<30} {:>12.3f} {:>12.3f} {:>9.2f}x\n", name, med, armi_bench::minimum(v), med / base);
    rows.push_back(json::object{{"name", name},
                                {"aggregation", agg == 0 ? json() : json(agg)},
                                {"us_per_round_trip", med},
                                {"best_us_per_round_trip", armi_bench::minimum(v)},
                                {"ratio_vs_explicit", med / base},
                                {"samples_us", json::array(v.begin(), v.end())}});
  };
  row("explicit (atomics)", explicit_us, 0);
  for (std::size_t a = 0; a < aggs.size(); ++a)
    row(fmt::format("async_rmi (aggregation {})", aggs[a]), async_us[a], aggs[a]);
  for (std::size_t a = 0; a < aggs.size(); ++a)
    row(fmt::format("sync_rmi (aggregation {})", aggs[a]), sync_us[a], aggs[a]);
  fmt::print("(ARMI paper, threads: explicit 2-15 us, ARMI async/sync 1.2-2.7x explicit)\n\n");

  json::array targets;
  for (std::size_t a = 0; a < aggs.size(); ++a) {
    double const ratio = armi_bench::median(sync_us[a]) / base;
    bool const met = ratio <= target_ratio;
    fmt::print("target: sync_rmi (aggregation {}) <= {:.1f}x explicit: {:.2f}x -> {}\n", aggs[a], target_ratio,
               ratio, met ? "MET" : "NOT MET");
    targets.push_back(json::object{{"case", fmt::format("sync_rmi (aggregation {})", aggs[a])},
                                   {"max_ratio", target_ratio},
                                   {"ratio", ratio},
                                   {"met", met}});
  }

  json summary = json::object{{"benchmark", "table2_latency"},
                              {"paper", "ARMI (STAPL) Table 2: latency of explicit communication and ARMI"},
                              {"backend", cfg.backend},
                              {"locations", 2},
                              {"rounds", rounds},
                              {"reps", reps},
                              {"pinned", pin},
                              {"machine", armi_bench::machine_context()},
                              {"baseline", "explicit (atomics)"},
                              {"rows", rows},
                              {"targets", targets},
                              {"verified", true}};
  return armi_bench::write_json(json_path, summary) ? 0 : 1;
}
