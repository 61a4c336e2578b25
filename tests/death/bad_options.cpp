// Option errors end the program before any location starts, with exit status
// 2 and one line "armi: error: ..." naming the flag or variable; --armi-help
// prints every option and exits 0; valid options are accepted and removed
// from the arguments the program sees (docs/design.md §3, "Options").
// (The output matched is stdout followed by stderr; "." matches a newline.)
//
// clang-format off
// CASE: unknown_flag | --armi-bogus=1 | armi: error: .*--armi-bogus
// CASE: unknown_flag_no_value | --armi-bogus | armi: error: .*--armi-bogus
// CASE: locations_abc | --armi-locations=abc | armi: error: .*--armi-locations=abc
// CASE: locations_zero | --armi-locations=0 | armi: error: .*--armi-locations
// CASE: locations_empty | --armi-locations= | armi: error: .*--armi-locations
// CASE: aggregation_zero | --armi-aggregation=0 | armi: error: .*--armi-aggregation
// CASE: aggregation_negative | --armi-aggregation=-3 | armi: error: .*--armi-aggregation
// CASE: aggregation_overflow | --armi-aggregation=99999999999999999999999 | armi: error: .*--armi-aggregation
// CASE: bad_backend | --armi-backend=nosuch | armi: error: .*--armi-backend
// CASE: aggregation_local_zero | --armi-aggregation-local=0 | armi: error: .*--armi-aggregation-local=0
// CASE: aggregation_remote_text | --armi-aggregation-remote=many | armi: error: .*--armi-aggregation-remote=many
// CASE: aggregation_autox | --armi-aggregation=autox | armi: error: --armi-aggregation=autox: not a number of requests or auto
// CASE: max_delay_negative | --armi-max-delay=-1 | armi: error: --armi-max-delay=-1: not a number of microseconds
// RUN: help_auto | --armi-help | --armi-aggregation=N.auto.*--armi-max-delay=US
// CASE: env_bad_aggregation_remote | ARMI_AGGREGATION_REMOTE=0 | armi: error: .*ARMI_AGGREGATION_REMOTE
// MPI_CASE: mixed_ranks_disagree | 2 --armi-backend=mixed locations-by-rank | armi: error: .*same --armi-locations on every rank .ranks asked for 1 to 2
// MPI_CASE: mpi_with_threads | 2 --armi-backend=mpi --armi-locations=2 | armi: error: .*one location per rank.*--armi-backend=mixed
// CASE: mpi_shm_maybe | --armi-mpi-shm=maybe | armi: error: --armi-mpi-shm=maybe: expected on or off
// RUN: help_mpi_shm | --armi-help | --armi-mpi-shm=on.off.*ARMI_MPI_SHM
// CASE: sp2_drop_one | --armi-backend=sp2 --armi-sp2-drop=1 | armi: error: --armi-sp2-drop=1: a probability must be below 1
// CASE: sp2_dup_text | --armi-sp2-dup=often | armi: error: --armi-sp2-dup=often: not a probability
// CASE: sp2_delay_negative | --armi-sp2-delay=-0.1 | armi: error: --armi-sp2-delay=-0.1: not a probability
// CASE: sp2_mode_unknown | --armi-sp2-mode=fibers | armi: error: --armi-sp2-mode=fibers: unknown mode .available: threads, process.
// CASE: sp2_seed_text | --armi-sp2-seed=x | armi: error: --armi-sp2-seed=x
// CASE: sp2_latency_text | --armi-sp2-latency=fast | armi: error: --armi-sp2-latency=fast: not a number of microseconds
// CASE: sp2_packet_small | --armi-sp2-packet-bytes=40 | armi: error: --armi-sp2-packet-bytes=40: out of range
// CASE: env_bad_sp2_drop | ARMI_SP2_DROP=2 | armi: error: ARMI_SP2_DROP=2
// RUN: sp2 | --armi-backend=sp2 --armi-locations=3 --armi-aggregation=4 --armi-sp2-drop=0.1 --armi-sp2-seed=9 x | bad_options: locations=3 aggregation=4 args=x
// RUN: sp2_stats | --armi-backend=sp2 --armi-locations=2 --armi-stats | sp2 stats.*retrans.*emulated time
// RUN: help_sp2 | --armi-help | --armi-sp2-mode.*--armi-sp2-drop.*--armi-sp2-dup.*--armi-sp2-delay.*--armi-sp2-seed.*--armi-sp2-latency
// CASE: env_bad_locations | ARMI_LOCATIONS=abc | armi: error: .*ARMI_LOCATIONS
// CASE: env_bad_aggregation | ARMI_AGGREGATION=0 | armi: error: .*ARMI_AGGREGATION
// RUN: help | --armi-help | --armi-backend.*--armi-locations.*--armi-aggregation.*--armi-buffer-bytes.*--armi-stats.*--armi-help
// RUN: help_defaults | --armi-help | --armi-backend.*threads.*--armi-aggregation.*64.*--armi-buffer-bytes.*32768.*--armi-stats
// RUN: normal | --armi-locations=3 --armi-aggregation=4 first --armi-buffer-bytes=4096 second | bad_options: locations=3 aggregation=4 args=first,second
// RUN: stats | --armi-locations=2 --armi-stats | bad_options: locations=2 aggregation=64 args=.armi stats.*fence s +blocked s +poll s.*requests executed by target method type .top 1 of 1.:. +4  async: void ..anonymous namespace.::counter::...int.
// CASE: stats_unwritable | --armi-locations=2 --armi-stats=json:/nonexistent-dir/s.json | armi: error: --armi-stats=json:/nonexistent-dir/s.json: cannot write the file
// MPI_CASE: mpi_stats_unwritable | 2 --armi-backend=mpi --armi-stats=json:/nonexistent-dir/s.json | armi: error: --armi-stats=json:/nonexistent-dir/s.json: cannot write the file
// MPI_RUN: mixed_stats | 2 --armi-backend=mixed --armi-locations=2 --armi-stats | bad_options: locations=4.*location +async.*total.*requests executed by target method type .top 1 of 1.:. +16  async: void ..anonymous namespace.::counter::...int.
// RUN: env | ARMI_LOCATIONS=2 ARMI_AGGREGATION=9 | bad_options: locations=2 aggregation=9 args=
// RUN: flag_wins | ARMI_LOCATIONS=5 ARMI_AGGREGATION=9 --armi-aggregation=3 x | bad_options: locations=5 aggregation=3 args=x
// clang-format on
#include <armi/armi.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

class counter : public armi::p_object {
 public:
  void add(int v) { m_sum += v; }
  int sum() const { return m_sum; }

 private:
  int m_sum = 0;
};

}  // namespace

int main(int argc, char** argv) {
  // locations-by-rank: rank r asks for r + 1 threads (ranks that disagree).
  if (argc > 1 && std::string(argv[argc - 1]) == "locations-by-rank") {
    char const* rank = std::getenv("PMI_RANK");
    setenv("ARMI_LOCATIONS", std::to_string(1 + std::atoi(rank != nullptr ? rank : "0")).c_str(), 1);
  }
  return armi::execute(argc, argv, [](int ac, char** av) -> int {
    counter c;
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    for (armi::location_id d = 0; d < n; ++d)
      armi::async_rmi(d, c.get_rmi_handle(), &counter::add, 1);
    armi::rmi_fence();
    if (c.sum() != static_cast<int>(n)) {
      std::printf("bad_options: wrong sum %d\n", c.sum());
      return 1;
    }
    for (int i = 1; i < ac; ++i) {
      if (std::string(av[i]).rfind("--armi-", 0) == 0) {
        std::printf("bad_options: argv still holds %s\n", av[i]);
        return 1;
      }
    }
    if (me == 0) {
      std::string args;
      for (int i = 1; i < ac; ++i) args += (i > 1 ? "," : "") + std::string(av[i]);
      std::printf("bad_options: locations=%u aggregation=%zu args=%s\n", static_cast<unsigned>(n),
                  armi::get_aggregation(), args.c_str());
      std::fflush(stdout);
    }
    return 0;
  });
}
