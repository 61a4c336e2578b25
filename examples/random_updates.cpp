// random_updates — HPCC RandomAccess on an armi::parray, the ARMI paper's
// pArray bandwidth test.
//
// A table of 2^log-size 64-bit words (table[i] = i), spread in blocks over
// the locations, receives updates-per-entry x 2^log-size updates
// table[a & (size-1)] ^= a, with a the HPCC random stream split into one
// contiguous part per location.  Each update to another location's word is
// one table.update(i, armi::xor_op{}, a): an async_rmi to the owner of word
// i; --armi-aggregation=A decides how many travel in one buffer.  A
// location's updates to its own words are applied in batches.
//
// Verification applies the same stream again and counts the words that are
// not back to table[i] == i.  armi runs every update atomically at its owner,
// so the count must be 0 (HPCC tolerates 1% for racy implementations; we do
// not need it).  Reports GUPS (giga-updates per second) for the timed pass;
// --armi-stats counts the whole run (the table's initialization, the timed
// pass and the verification), and the program says so.
//
//   ./random_updates --armi-locations=4 --log-size=20 --updates-per-entry=4
//
// Exit status: 0 if the verification found 0 errors, 1 if not, 2 on a usage error.

#include <armi/algorithms/random_updates.hpp>
#include <armi/armi.hpp>
#include <armi/containers/parray.hpp>

#include "example_flags.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cstdint>

namespace {

int run(int argc, char** argv) {
  armi_example::flags f(argc, argv, "random_updates", "HPCC RandomAccess on a parray: GUPS and verification");
  auto const log_size = f.size("log-size", 20, "the table has 2^N 64-bit words in all");
  auto const per_entry = f.size("updates-per-entry", 4, "updates = N x table size (HPCC uses 4)");
  auto const verify = f.choice("verify", "yes", {"yes", "no"}, "apply the stream again and count errors");
  if (auto const status = f.finish()) return *status;
  if (log_size > 40) {
    if (armi::get_location_id() == 0) fmt::print(stderr, "random_updates: --log-size={} is too large\n", log_size);
    return 2;
  }

  auto const me = armi::get_location_id();
  auto const p = armi::get_num_locations();
  std::size_t const size = std::size_t{1} << log_size;
  std::uint64_t const n_updates = per_entry * size;

  armi::parray<std::uint64_t> table(size);  // collective
  armi::random_updates_init(table);         // table[i] = i; ends with a fence

  auto const start = std::chrono::steady_clock::now();
  armi::random_updates(table, n_updates);  // ends with a fence: every update applied
  std::chrono::duration<double> const seconds = std::chrono::steady_clock::now() - start;

  std::uint64_t errors = 0;
  bool const checked = verify == "yes";
  if (checked) errors = armi::random_updates_verify(table, n_updates);

  if (me == 0) {
    double const gups = seconds.count() > 0 ? static_cast<double>(n_updates) / seconds.count() / 1e9 : 0.0;
    fmt::print("random_updates: {} location{}, table 2^{} = {} words ({:.1f} MiB), aggregation {}\n", p,
               p == 1 ? "" : "s", log_size, size, static_cast<double>(size) * 8 / (1 << 20), armi_example::aggregation_text());
    fmt::print("  {} updates ({} per word) in {:.6f} s: {:.6f} GUPS ({:.2f} M updates/s per location)\n", n_updates,
               per_entry, seconds.count(), gups, gups * 1e3 / p);
    if (checked)
      fmt::print("  verification: {} of {} words wrong (exact updates: 0 required): {}\n", errors, size,
                 errors == 0 ? "OK" : "FAILED");
    else
      fmt::print("  verification skipped (--verify=no)\n");
    fmt::print("  (--armi-stats, if asked for, count the whole run: initialization, updates{})\n",
               checked ? " and verification" : "");
  }
  return errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return armi::execute(argc, argv, run);
}
