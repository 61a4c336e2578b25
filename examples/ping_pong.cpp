// ping_pong — round-trip latency of armi's two kinds of remote call.
//
// Location 0 and location 1 (its partner) play two games on a shared object:
//
//   1. async_rmi ping-pong: location 0 sends ping() to its partner; ping()
//      answers with an async_rmi pong() back to location 0; pong() counts the
//      round trip and sends the next ping.  Both locations wait in
//      rmi_wait(), which serves what has arrived, sends out partially filled
//      aggregation buffers when it has nothing to do (so the game runs at any
//      --armi-aggregation) and, when nothing comes for a while, sleeps
//      instead of spinning — kind to a machine with more locations than
//      cores.  (A loop of rmi_poll() works too, but never sleeps.)
//   2. sync_rmi round trips: location 0 calls echo() on its partner in a loop;
//      each call blocks until the answer is back.  The partner needs no code
//      for it: it serves the calls while it waits in rmi_fence().
//
// It prints microseconds per round trip for each game and checks the counts.
// With one location, location 0 plays both parts and pings itself; with more
// than two, the others only take part in the fences.
//
//   ./ping_pong --armi-locations=2 --rounds=100000
//
// Exit status: 0 if every check passed, 1 if one failed, 2 on a usage error.

#include <armi/armi.hpp>

#include <fmt/core.h>

#include "example_flags.hpp"

#include <chrono>
#include <cstddef>
#include <cstdio>

namespace {

// Handlers run on the location that owns the representative, one at a time,
// so the counters need no synchronization.
class ping_pong : public armi::p_object {
 public:
  ping_pong(armi::location_id partner, std::size_t rounds) : m_partner(partner), m_rounds(rounds) {}

  // Location 0: send the first ping of the game.
  void start() {
    if (m_rounds > 0)
      armi::async_rmi(m_partner, get_rmi_handle(), &ping_pong::ping, armi::get_location_id(), 0);
  }

  // Runs on the partner: count the ping and answer it.
  void ping(armi::location_id from, std::size_t round) {
    ++m_pings;
    armi::async_rmi(from, get_rmi_handle(), &ping_pong::pong, round);
  }

  // Runs on location 0: one round trip completed; start the next one.
  void pong(std::size_t round) {
    if (round != m_pongs) ++m_out_of_order;  // per-pair ordering makes this impossible
    ++m_pongs;
    if (m_pongs < m_rounds)
      armi::async_rmi(m_partner, get_rmi_handle(), &ping_pong::ping, armi::get_location_id(),
                      m_pongs);
  }

  // The sync_rmi game: answer with a value the caller can check.
  std::size_t echo(std::size_t x) {
    ++m_echoes;
    return x + 1;
  }

  std::size_t pings() const { return m_pings; }
  std::size_t pongs() const { return m_pongs; }
  std::size_t echoes() const { return m_echoes; }
  std::size_t out_of_order() const { return m_out_of_order; }

 private:
  armi::location_id m_partner;
  std::size_t m_rounds;
  std::size_t m_pings = 0;
  std::size_t m_pongs = 0;
  std::size_t m_echoes = 0;
  std::size_t m_out_of_order = 0;
};

double micros_per(std::chrono::duration<double> d, std::size_t count) {
  return count == 0 ? 0.0 : d.count() * 1e6 / static_cast<double>(count);
}

int run(int argc, char** argv) {
  armi_example::flags f(argc, argv, "ping_pong", "round-trip latency of async_rmi and sync_rmi");
  std::size_t const rounds = f.size("rounds", 100'000, "round trips in each game");
  if (auto const status = f.finish()) return *status;

  auto const me = armi::get_location_id();
  auto const n = armi::get_num_locations();
  armi::location_id const partner = n > 1 ? 1 : 0;

  ping_pong game(partner, rounds);
  auto const h = game.get_rmi_handle();

  if (me == 0) {
    if (n == 1)
      fmt::print(
          "ping_pong: 1 location: location 0 pings itself (use --armi-locations=2 for a real "
          "ping-pong)\n");
    else
      fmt::print(
          "ping_pong: location 0 <-> location 1 ({} locations, {} idle), {} rounds, aggregation "
          "{}\n",
          n, n - 2, rounds, armi_example::aggregation_text());
  }

  // 1. async_rmi ping-pong.
  armi::rmi_fence();
  auto const async_start = std::chrono::steady_clock::now();
  if (me == 0) {
    game.start();
    while (game.pongs() < rounds) armi::rmi_wait();
  } else if (me == partner) {
    while (game.pings() < rounds) armi::rmi_wait();
  }
  std::chrono::duration<double> const async_time = std::chrono::steady_clock::now() - async_start;
  armi::rmi_fence();

  // 2. sync_rmi round trips; the partner serves them from inside the fence.
  std::size_t wrong_answers = 0;
  auto const sync_start = std::chrono::steady_clock::now();
  if (me == 0)
    for (std::size_t i = 0; i < rounds; ++i)
      if (armi::sync_rmi(partner, h, &ping_pong::echo, i) != i + 1) ++wrong_answers;
  std::chrono::duration<double> const sync_time = std::chrono::steady_clock::now() - sync_start;

  // Check the counts on both sides; the partner's are read through sync_rmi
  // while `game` still exists everywhere (the fence below keeps it alive).
  std::size_t pings = 0;
  std::size_t echoes = 0;
  if (me == 0) {
    pings = armi::sync_rmi(partner, h, &ping_pong::pings);
    echoes = armi::sync_rmi(partner, h, &ping_pong::echoes);
  }
  armi::rmi_fence();
  if (me != 0) return 0;

  bool const async_ok = game.pongs() == rounds && pings == rounds && game.out_of_order() == 0;
  bool const sync_ok = echoes == rounds && wrong_answers == 0;

  fmt::print("  async_rmi ping-pong: {} round trips in {:.3f} s, {:.2f} us per round trip  {}\n",
             game.pongs(), async_time.count(), micros_per(async_time, rounds),
             async_ok ? "OK" : "FAILED");
  fmt::print("  sync_rmi round trip: {} calls in {:.3f} s, {:.2f} us per call  {}\n", echoes,
             sync_time.count(), micros_per(sync_time, rounds), sync_ok ? "OK" : "FAILED");
  if (!async_ok)
    fmt::print(stderr, "ping_pong: pings {} pongs {} (expected {}), {} pongs out of order\n", pings,
               game.pongs(), rounds, game.out_of_order());
  if (!sync_ok)
    fmt::print(stderr, "ping_pong: {} echo() calls (expected {}), {} wrong answers\n", echoes,
               rounds, wrong_answers);
  return async_ok && sync_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return armi::execute(argc, argv, run);
}
