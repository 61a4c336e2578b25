// table1_overhead — the ARMI paper's Table 1: the cost of invoking an empty
// method directly, through a method pointer, and through a local RMI
// (create + execute, everything but the transfer).
//
// Google Benchmark cases, all on one object on one location (armi::execute
// with locations = 1; the benchmarks run on that location's thread):
//
//   direct                   obj.empty()             (not inlined)
//   method_pointer           (obj.*pm)()             (the compiler does not know pm)
//   std_function             f(obj), f = std::function<void(callee&)>(&callee::empty)
//   async_rmi/agg:A/batch:K  K async_rmi to self, then rmi_poll() until all K ran;
//                            time per RMI = time per iteration / K
//   async_rmi_fence/agg:64/batch:64   the same, finished by rmi_fence() instead
//   async_rmi_constant/agg:64/batch:64  async_rmi/agg:64/batch:64 with the
//                            method named as a constant, armi::method<&callee::empty>
//                            (its stub calls the method directly, not through
//                            a pointer; the method itself stays noinline)
//   sync_rmi                 sync_rmi to self of a method returning int
//   opaque_rmi               opaque_rmi to self, then future::get()
//
// The method bodies are one increment of a counter (so every call can be
// counted and checked) behind __attribute__((noinline)).  At the end the
// program prints each case's nanoseconds per call (thread CPU time, which
// leaves out time stolen by other processes; real time alongside) and its
// ratio to the method-pointer call, and checks the target: local async_rmi with
// aggregation 64 costs at most 5x the method-pointer call (the paper: 7-14x).
//
//   ./table1_overhead [--json=FILE] [--no-pin] [--benchmark_* flags] [--armi-* flags]
//   ./table1_overhead --benchmark_out=raw.json --benchmark_repetitions=5 --json=table1.json
//
// Exit status: 0 if every count checked out (whether or not the target was
// met), 1 if a count was wrong, 2 on a usage error.

#include "bench_common.hpp"

#include <armi/armi.hpp>
#include <benchmark/benchmark.h>
#include <fmt/core.h>

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace {

using armi_bench::json;

constexpr double target_ratio = 5.0;  // local async_rmi (aggregation 64) vs method pointer

class callee : public armi::p_object {
 public:
  __attribute__((noinline)) void empty() { ++m_calls; }
  __attribute__((noinline)) int ping() {
    ++m_calls;
    return 1;
  }
  std::uint64_t calls() const { return m_calls; }

 private:
  std::uint64_t m_calls = 0;
};

callee* g_callee = nullptr;          // the object of location 0 (the only location)
std::atomic<int> g_failures{0};      // counts that did not check out
std::map<std::string, double> g_batch;  // case name -> calls per benchmark iteration

void fail(benchmark::State& state, std::string const& what) {
  ++g_failures;
  std::fprintf(stderr, "table1_overhead: %s\n", what.c_str());
  state.SkipWithError(what.c_str());
}

void check_calls(benchmark::State& state, char const* name, std::uint64_t before, std::uint64_t per_iteration) {
  std::uint64_t const want = before + static_cast<std::uint64_t>(state.iterations()) * per_iteration;
  if (g_callee->calls() != want)
    fail(state, fmt::format("{}: {} calls ran, {} expected", name, g_callee->calls() - before, want - before));
}

void set_per_call(benchmark::State& state, double batch) {
  state.counters["per_call"] = benchmark::Counter(batch, benchmark::Counter::kIsIterationInvariantRate |
                                                             benchmark::Counter::kInvert);
}

// ---- the cases ----------------------------------------------------------------

void bm_direct(benchmark::State& state) {
  callee* obj = g_callee;
  benchmark::DoNotOptimize(obj);
  std::uint64_t const before = obj->calls();
  for (auto _ : state) {
    obj->empty();
    benchmark::ClobberMemory();
  }
  check_calls(state, "direct", before, 1);
  set_per_call(state, 1);
}

void bm_method_pointer(benchmark::State& state) {
  callee* obj = g_callee;
  void (callee::*pm)() = &callee::empty;
  benchmark::DoNotOptimize(obj);
  benchmark::DoNotOptimize(pm);  // from here on the compiler cannot see which method pm names
  std::uint64_t const before = obj->calls();
  for (auto _ : state) {
    (obj->*pm)();
    benchmark::ClobberMemory();
  }
  check_calls(state, "method_pointer", before, 1);
  set_per_call(state, 1);
}

void bm_std_function(benchmark::State& state) {
  callee* obj = g_callee;
  std::function<void(callee&)> f = &callee::empty;
  benchmark::DoNotOptimize(obj);
  benchmark::DoNotOptimize(f);
  std::uint64_t const before = obj->calls();
  for (auto _ : state) {
    f(*obj);
    benchmark::ClobberMemory();
  }
  check_calls(state, "std_function", before, 1);
  set_per_call(state, 1);
}

// K async_rmi to this location, then serve them: create + execute per RMI.
// Constant: the method named as armi::method<&callee::empty>.
template <bool Constant = false>
void bm_async_rmi(benchmark::State& state, std::size_t aggregation, std::uint64_t batch, bool fence) {
  std::size_t const old_aggregation = armi::get_aggregation();
  armi::set_aggregation(aggregation);
  callee* obj = g_callee;
  armi::rmi_handle const h = obj->get_rmi_handle();
  armi::location_id const me = armi::get_location_id();
  std::uint64_t const before = obj->calls();
  std::uint64_t expected = before;
  bool stuck = false;
  for (auto _ : state) {
    for (std::uint64_t i = 0; i < batch; ++i) {
      if constexpr (Constant)
        armi::async_rmi(me, h, armi::method<&callee::empty>);
      else
        armi::async_rmi(me, h, &callee::empty);
    }
    expected += batch;
    if (fence) {
      armi::rmi_fence();
    } else {
      // rmi_poll serves what arrived and, when nothing did, flushes partial buffers.
      for (std::uint64_t spins = 0; obj->calls() != expected; ++spins) {
        armi::rmi_poll();
        if (spins > (std::uint64_t{1} << 32)) {
          stuck = true;
          break;
        }
      }
    }
    if (stuck) break;
  }
  armi::rmi_fence();
  armi::set_aggregation(old_aggregation);
  if (stuck)
    fail(state, "async_rmi: the RMIs to self never ran");
  else
    check_calls(state, "async_rmi", before, batch);
  set_per_call(state, static_cast<double>(batch));
}

void bm_sync_rmi(benchmark::State& state) {
  callee* obj = g_callee;
  armi::rmi_handle const h = obj->get_rmi_handle();
  armi::location_id const me = armi::get_location_id();
  std::uint64_t const before = obj->calls();
  std::uint64_t sum = 0;
  for (auto _ : state) sum += static_cast<std::uint64_t>(armi::sync_rmi(me, h, &callee::ping));
  if (sum != static_cast<std::uint64_t>(state.iterations()))
    fail(state, fmt::format("sync_rmi: results add up to {}, expected {}", sum, state.iterations()));
  else
    check_calls(state, "sync_rmi", before, 1);
  set_per_call(state, 1);
}

void bm_opaque_rmi(benchmark::State& state) {
  callee* obj = g_callee;
  armi::rmi_handle const h = obj->get_rmi_handle();
  armi::location_id const me = armi::get_location_id();
  std::uint64_t const before = obj->calls();
  std::uint64_t sum = 0;
  for (auto _ : state) {
    armi::future<int> f = armi::opaque_rmi(me, h, &callee::ping);
    sum += static_cast<std::uint64_t>(f.get());
  }
  if (sum != static_cast<std::uint64_t>(state.iterations()))
    fail(state, fmt::format("opaque_rmi: results add up to {}, expected {}", sum, state.iterations()));
  else
    check_calls(state, "opaque_rmi", before, 1);
  set_per_call(state, 1);
}

// ---- registration and results ---------------------------------------------------

struct case_info {
  std::string name;
  std::string description;
};
std::vector<case_info> g_cases;

template <class Fn>
void add_case(std::string name, std::string description, double batch, Fn fn) {
  benchmark::RegisterBenchmark(name.c_str(), fn)->Unit(benchmark::kNanosecond);
  g_batch[name] = batch;
  g_cases.push_back({std::move(name), std::move(description)});
}

void register_cases() {
  add_case("direct", "direct call of an empty method (not inlined)", 1, bm_direct);
  add_case("method_pointer", "call through a pointer to member", 1, bm_method_pointer);
  add_case("std_function", "call through std::function", 1, bm_std_function);
  struct agg_case {
    std::size_t aggregation;
    std::uint64_t batch;
  };
  for (agg_case c : {agg_case{1, 1}, agg_case{64, 64}, agg_case{256, 1024}}) {
    add_case(fmt::format("async_rmi/agg:{}/batch:{}", c.aggregation, c.batch),
             fmt::format("local async_rmi, aggregation {}, {} per poll", c.aggregation, c.batch),
             static_cast<double>(c.batch),
             [c](benchmark::State& s) { bm_async_rmi(s, c.aggregation, c.batch, false); });
  }
  add_case("async_rmi_fence/agg:64/batch:64", "local async_rmi, aggregation 64, 64 per rmi_fence", 64,
           [](benchmark::State& s) { bm_async_rmi(s, 64, 64, true); });
  add_case("async_rmi_constant/agg:64/batch:64",
           "local async_rmi of armi::method<&callee::empty>, aggregation 64, 64 per poll", 64,
           [](benchmark::State& s) { bm_async_rmi<true>(s, 64, 64, false); });
  add_case("sync_rmi", "local sync_rmi (method returns int)", 1, bm_sync_rmi);
  add_case("opaque_rmi", "local opaque_rmi + future::get", 1, bm_opaque_rmi);
}

// Console output as usual, and every run's time per call kept for the summary.
class collecting_reporter : public benchmark::ConsoleReporter {
 public:
  using benchmark::ConsoleReporter::ConsoleReporter;
  void ReportRuns(std::vector<Run> const& runs) override {
    benchmark::ConsoleReporter::ReportRuns(runs);
    for (Run const& r : runs) {
      if (r.error_occurred) continue;
      std::string const& name = r.run_name.function_name;
      auto it = g_batch.find(name);
      double const batch = it == g_batch.end() ? 1.0 : it->second;
      if (r.run_type == Run::RT_Iteration) {
        // Time per iteration in seconds -> nanoseconds per call.
        double const per_call = 1e9 / batch / static_cast<double>(r.iterations);
        m_cpu[name].push_back(r.cpu_accumulated_time * per_call);
        m_real[name].push_back(r.real_accumulated_time * per_call);
      } else if (r.aggregate_name == "median") {
        // Only aggregates are reported (--benchmark_report_aggregates_only):
        // the median's per_call counter is CPU seconds per call.
        auto const c = r.counters.find("per_call");
        if (c != r.counters.end()) m_median_cpu[name] = c->second.value * 1e9;
        m_median_real[name] = r.GetAdjustedRealTime() / batch;  // the cases report in ns
      }
    }
  }

  // ns per call of each case: the median over the repetitions.  Thread CPU
  // time leaves out the time the thread was descheduled, which real time
  // counts; with one location all of armi's work runs on this thread.
  std::map<std::string, double> cpu_ns() const { return medians(m_cpu, m_median_cpu); }
  std::map<std::string, double> real_ns() const { return medians(m_real, m_median_real); }

 private:
  static std::map<std::string, double> medians(std::map<std::string, std::vector<double>> const& samples,
                                               std::map<std::string, double> out) {
    for (auto const& [name, v] : samples) out[name] = armi_bench::median(v);
    return out;
  }
  std::map<std::string, std::vector<double>> m_cpu, m_real;
  std::map<std::string, double> m_median_cpu, m_median_real;
};

}  // namespace

int main(int argc, char** argv) {
  armi::config cfg;
  if (int const code = armi_bench::take_armi_options(argc, argv, cfg); code >= 0) return code;
  cfg.locations = 1;  // Table 1 is local: one location

  benchmark::Initialize(&argc, argv);  // takes the --benchmark_* flags out of argv
  std::string json_path;
  bool pin = true;
  try {
    armi_bench::flags f(argc, argv);
    json_path = f.get_string("json", "");
    pin = !f.get_switch("no-pin");
    f.finish();
  } catch (armi_bench::usage_error const& e) {
    std::fprintf(stderr, "table1_overhead: %s\n", e.what());
    return 2;
  }

  register_cases();
  benchmark::AddCustomContext("armi.backend", cfg.backend);
  benchmark::AddCustomContext("armi.locations", "1");
  benchmark::AddCustomContext("armi.aggregation", "per case (see the names)");
  benchmark::AddCustomContext("armi.pinned", pin ? "yes" : "no");

  collecting_reporter reporter(isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_Defaults
                                                     : benchmark::ConsoleReporter::OO_Tabular);
  int const rc = armi::execute(cfg, [&]() -> int {
    armi_bench::pin_guard pinned(pin, 0);
    callee obj;
    g_callee = &obj;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    armi::rmi_fence();
    g_callee = nullptr;
    return g_failures.load() == 0 ? 0 : 1;
  });
  benchmark::Shutdown();

  // ---- summary: every case against the method-pointer call ----
  std::map<std::string, double> const ns = reporter.cpu_ns();
  std::map<std::string, double> real_ns = reporter.real_ns();
  auto const base_it = ns.find("method_pointer");
  double const base = base_it == ns.end() ? 0.0 : base_it->second;

  fmt::print("\nTable 1 (ARMI paper): overhead of method invocation, ns per call (thread CPU time, median "
             "over repetitions; ratio = case / method_pointer)\n");
  fmt::print("{:<34} {:>10} {:>10} {:>10}   {}\n", "case", "ns/call", "real ns", "ratio", "what");
  json::array rows;
  for (auto const& c : g_cases) {
    auto it = ns.find(c.name);
    if (it == ns.end()) continue;  // filtered out with --benchmark_filter
    double const ratio = base > 0 ? it->second / base : 0.0;
    std::string const ratio_text = base > 0 ? fmt::format("{:.2f}x", ratio) : "-";
    fmt::print("{:<34} {:>10.2f} {:>10.2f} {:>10}   {}\n", c.name, it->second, real_ns[c.name], ratio_text,
               c.description);
    rows.push_back(json::object{{"case", c.name},
                                {"description", c.description},
                                {"ns_per_call", it->second},
                                {"real_ns_per_call", real_ns[c.name]},
                                {"ratio_vs_method_pointer", base > 0 ? json(ratio) : json()}});
  }

  json target = nullptr;
  auto const async_it = ns.find("async_rmi/agg:64/batch:64");
  if (base > 0 && async_it != ns.end()) {
    double const ratio = async_it->second / base;
    bool const met = ratio <= target_ratio;
    fmt::print("\ntarget: local async_rmi (aggregation 64) <= {:.0f}x method pointer: {:.2f}x -> {} "
               "(ARMI paper: 7-14x)\n",
               target_ratio, ratio, met ? "MET" : "NOT MET");
    target = json::object{{"case", "async_rmi/agg:64/batch:64"},
                          {"max_ratio", target_ratio},
                          {"ratio", ratio},
                          {"met", met}};
  }
  if (rc != 0) fmt::print("\nFAILED: some counts did not check out (see above)\n");

  json summary = json::object{{"benchmark", "table1_overhead"},
                              {"paper", "ARMI (STAPL) Table 1: overhead of method invocation"},
                              {"backend", cfg.backend},
                              {"locations", 1},
                              {"pinned", pin},
                              {"machine", armi_bench::machine_context()},
                              {"baseline", "method_pointer"},
                              {"time", "thread CPU time per call (real time alongside)"},
                              {"cases", rows},
                              {"target", target},
                              {"verified", rc == 0}};
  if (!armi_bench::write_json(json_path, summary) && rc == 0) return 1;
  return rc;
}
