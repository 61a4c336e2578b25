// mrpc_table8 — the MRPC paper's Tables 8 and 9 on the sp2 backend: how much
// an RMI runtime adds over Active Messages on the (emulated) IBM SP2.
//
// Rows, each a round trip from node 0 to node 1 unless said otherwise:
//   AM 1-word req/rep   SP-AM directly: a 1-word short request whose handler
//                       replies with 1 word (Table 9: 51 us; the calibration)
//   null sync_rmi       sync_rmi of a method with no arguments and no result
//   1-word sync_rmi     one 4-byte argument
//   2-word sync_rmi     two 4-byte arguments
//   async_rmi           one-way: the sender's emulated cost of one async_rmi
//                       (aggregation 1), no reply
//   bulk write 40 words sync_rmi with a 40-word (160-byte) array argument
//   bulk read 40 words  sync_rmi returning a 40-word array
// Each row gives emulated microseconds per call (node 0's clock, the SP2
// model of backend/sp2/model.hpp), the paper's figure (CC++/MRPC Total of
// Table 8, its AM column, and Split-C where it has one), and this machine's
// real cost per call: wall-clock and node 0's thread CPU time (which
// includes the emulation itself).
//
//   ./mrpc_table8 [--calls=N] [--json=FILE] [--armi-sp2-* model flags]
//
// The run uses --armi-backend=sp2 with 2 locations and aggregation 1 (one
// request per AM message, as in MRPC).  Exit status: 0 when the AM row
// equals the model's calibrated round trip and every count checked out, 1
// otherwise, 2 on a usage error.

#include "bench_common.hpp"

#include <armi/armi.hpp>
#include <armi/backend/sp2/am.hpp>
#include <fmt/core.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace {

using armi_bench::json;
namespace sp2 = armi::detail::sp2;

using words40 = std::array<std::int32_t, 40>;

class target : public armi::p_object {
 public:
  void null() {}
  void one(std::int32_t a) { m_sum += a; }
  void two(std::int32_t a, std::int32_t b) { m_sum += a + b; }
  void write(words40 const& w) { m_sum += w[0] + w[39]; }
  words40 read() const {
    words40 w{};
    w[0] = 1;
    w[39] = 2;
    return w;
  }
  void count() { ++m_count; }
  std::int64_t sum() const { return m_sum; }
  std::int64_t counted() const { return m_count; }

 private:
  std::int64_t m_sum = 0;
  std::int64_t m_count = 0;
};

struct row {
  std::string name;
  double emulated_us = 0;
  double paper_total_us = -1;  // CC++/MRPC Total (Table 8) or Table 9
  double paper_am_us = -1;     // Table 8's AM column
  double paper_splitc_us = -1;
  double wall_us = 0;
  double cpu_us = 0;
};

double thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e9 + double(t.tv_nsec);
}

// SP-AM alone, two nodes on two threads.
row am_row(sp2::machine const& m, std::uint32_t calls) {
  sp2::memory_wire w(2);
  sp2::node a(0, w, m), b(1, w, m);
  std::uint32_t replies = 0;
  std::atomic<bool> done{false};
  b.set_handler(1, [](sp2::call& c, std::byte const* d, std::size_t) { c.reply(2, d, 4); });
  a.set_handler(2, [&](sp2::call&, std::byte const*, std::size_t) { ++replies; });
  std::thread server([&] {
    unsigned idle = 0;
    while (!done.load(std::memory_order_acquire)) {
      if (b.poll())
        idle = 0;
      else
        b.wait_a_little(idle);
    }
    while (!b.quiescent()) b.poll();
  });
  std::int32_t const word = 42;
  std::int64_t const t0 = a.clock_ns();
  std::int64_t const w0 = armi_bench::now_ns();
  double const c0 = thread_cpu_ns();
  for (std::uint32_t r = 0; r < calls; ++r) {
    a.request(1, 1, &word, sizeof word);
    unsigned idle = 0;
    while (replies <= r) {
      if (!a.poll()) a.wait_a_little(idle);
    }
  }
  row out{"AM 1-word req/rep", double(a.clock_ns() - t0) / 1e3 / calls, 51, -1, -1,
          double(armi_bench::now_ns() - w0) / 1e3 / calls, (thread_cpu_ns() - c0) / 1e3 / calls};
  while (!a.quiescent()) a.poll();
  done = true;
  server.join();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  armi::config cfg;
  if (int const code = armi_bench::take_armi_options(argc, argv, cfg); code >= 0) return code;
  std::uint32_t calls = 2000;
  std::string json_path;
  try {
    armi_bench::flags f(argc, argv);
    calls = static_cast<std::uint32_t>(f.get_uint("calls", calls));
    json_path = f.get_string("json", "");
    f.finish();
    if (calls == 0) throw armi_bench::usage_error("--calls must be at least 1");
  } catch (armi_bench::usage_error const& e) {
    std::fprintf(stderr, "mrpc_table8: %s\nusage: mrpc_table8 [--calls=N] [--json=FILE] [--armi-sp2-* flags]\n",
                 e.what());
    return 2;
  }
  cfg.backend = "sp2";
  cfg.backend_given = true;
  cfg.locations = 2;
  cfg.aggregation = cfg.aggregation_local = cfg.aggregation_remote = 1;

  std::vector<row> rows;
  rows.push_back(am_row(cfg.sp2, calls));
  bool ok = true;

  int const code = armi::execute(cfg, [&] {
    target t;
    armi::rmi_fence();
    auto const h = t.get_rmi_handle();
    if (armi::get_location_id() == 0) {
      auto measure = [&](std::string name, double paper, double paper_am, double splitc, auto&& op) {
        for (std::uint32_t i = 0; i < calls / 10 + 1; ++i) op();  // warm-up: method definitions, buffers
        std::int64_t const t0 = sp2::current_clock_ns();
        std::int64_t const w0 = armi_bench::now_ns();
        double const c0 = thread_cpu_ns();
        for (std::uint32_t i = 0; i < calls; ++i) op();
        rows.push_back({std::move(name), double(sp2::current_clock_ns() - t0) / 1e3 / calls, paper, paper_am, splitc,
                        double(armi_bench::now_ns() - w0) / 1e3 / calls, (thread_cpu_ns() - c0) / 1e3 / calls});
      };
      words40 w{};
      w[0] = 1;
      measure("null sync_rmi", 77, 55, -1, [&] { armi::sync_rmi(1, h, &target::null); });
      measure("1-word sync_rmi", 94, 70, -1, [&] { armi::sync_rmi(1, h, &target::one, std::int32_t{1}); });
      measure("2-word sync_rmi", 95, 70, -1,
              [&] { armi::sync_rmi(1, h, &target::two, std::int32_t{1}, std::int32_t{2}); });
      measure("async_rmi (one-way, sender)", -1, -1, -1, [&] { armi::async_rmi(1, h, &target::count); });
      measure("bulk write 40 words", 154, 70, 74, [&] { armi::sync_rmi(1, h, &target::write, w); });
      measure("bulk read 40 words", 177, 70, 75, [&] {
        words40 const r = armi::sync_rmi(1, h, &target::read);
        if (r[39] != 2) ok = false;
      });
    }
    armi::rmi_fence();
    if (armi::get_location_id() == 1 && t.counted() != calls + calls / 10 + 1) ok = false;
  });
  if (code != 0) return code;

  fmt::print("MRPC Tables 8/9 on the emulated SP2 (sp2 backend, model defaults unless overridden; {} calls/row)\n",
             calls);
  fmt::print("{:<28} {:>12} {:>12} {:>9} {:>9} {:>10} {:>10}\n", "", "emulated us", "paper total", "paper AM",
             "Split-C", "real us", "cpu us");
  auto fig = [](double v) { return v < 0 ? std::string("-") : fmt::format("{:.0f}", v); };
  json::array out;
  for (auto const& r : rows) {
    fmt::print("{:<28} {:>12.1f} {:>12} {:>9} {:>9} {:>10.2f} {:>10.2f}\n", r.name, r.emulated_us,
               fig(r.paper_total_us), fig(r.paper_am_us), fig(r.paper_splitc_us), r.wall_us, r.cpu_us);
    out.push_back(json::object{{"name", r.name},
                               {"emulated_us", r.emulated_us},
                               {"paper_total_us", r.paper_total_us < 0 ? json() : json(r.paper_total_us)},
                               {"paper_am_us", r.paper_am_us < 0 ? json() : json(r.paper_am_us)},
                               {"paper_splitc_us", r.paper_splitc_us < 0 ? json() : json(r.paper_splitc_us)},
                               {"real_us_per_call", r.wall_us},
                               {"cpu_us_per_call", r.cpu_us}});
  }
  double const calibrated = double(cfg.sp2.cost.am_round_trip_ns()) / 1e3;
  bool const am_ok = rows[0].emulated_us == calibrated;
  fmt::print("AM row: {:.1f} us emulated, model's calibrated round trip {:.1f} us: {}\n", rows[0].emulated_us,
             calibrated, am_ok ? "ok" : "MISMATCH");
  if (!ok) fmt::print("error: a count or a result did not check out\n");
  json summary = json::object{{"benchmark", "mrpc_table8"},
                              {"calls", calls},
                              {"calibrated_am_us", calibrated},
                              {"machine", armi_bench::machine_context()},
                              {"rows", out}};
  if (!armi_bench::write_json(json_path, summary)) return 1;
  return ok && am_ok ? 0 : 1;
}
