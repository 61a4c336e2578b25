// --armi-trace=FILE on every backend: the program runs a few RMIs, then
// (after armi::execute returned, so the file is complete) reads the trace
// back and prints what it found: one track per location, a fence span per
// fence per location, flushes, sampled executions named by RMI kind and method
// type, the blocking waits.  The file name comes from ARMI_TRACE.
// clang-format off
// RUN: threads | ARMI_TRACE=trace_threads.json --armi-locations=3 | trace: tracks=3 fences=9 flush=yes async=yes sync_wait=yes json=closed
// MPI_RUN: mpi | 3 ARMI_TRACE=trace_mpi.json --armi-backend=mpi | trace: tracks=3 fences=9 flush=yes async=yes sync_wait=yes json=closed
// MPI_RUN: mixed | 2 ARMI_TRACE=trace_mixed.json --armi-backend=mixed --armi-locations=2 | trace: tracks=4 fences=12 flush=yes async=yes sync_wait=yes json=closed
// CASE: unwritable | --armi-locations=2 --armi-trace=/nonexistent-dir/t.json | armi: error: --armi-trace=/nonexistent-dir/t.json: cannot write the file
// clang-format on
#include <armi/armi.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace {

class counter : public armi::p_object {
 public:
  void add(int v) { m_sum += v; }
  int sum() const { return m_sum; }

 private:
  int m_sum = 0;
};

std::size_t count(std::string const& text, std::string const& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  int const code = armi::execute(argc, argv, [] {
    counter c;
    auto const n = armi::get_num_locations();
    for (int i = 0; i < 1000; ++i) armi::async_rmi(static_cast<armi::location_id>(i) % n, c.get_rmi_handle(), &counter::add, i);
    armi::rmi_fence();
    (void)armi::sync_rmi((armi::get_location_id() + 1) % n, c.get_rmi_handle(), &counter::sum);
    armi::rmi_fence();
  });
  if (code != 0) return code;
  char const* path = std::getenv("ARMI_TRACE");
  if (path == nullptr) return 0;
  // Under MPI every rank gets here; one report is enough.
  for (char const* var : {"PMI_RANK", "OMPI_COMM_WORLD_RANK"})
    if (char const* r = std::getenv(var); r != nullptr && std::string(r) != "0") return 0;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string const text = ss.str();
  std::remove(path);
  std::printf("trace: tracks=%zu fences=%zu flush=%s async=%s sync_wait=%s json=%s\n",
              count(text, "\"name\": \"thread_name\""), count(text, "\"name\": \"rmi_fence\""),
              count(text, "\"name\": \"flush\"") > 0 ? "yes" : "no",
              count(text, "\"name\": \"async: void ((anonymous namespace)::counter::*)(int)\"") > 0 ? "yes" : "no",
              count(text, "\"name\": \"sync_rmi\"") > 0 ? "yes" : "no",
              text.starts_with("{\"traceEvents\": [") && text.find("\"otherData\"") != std::string::npos &&
                      text.ends_with("}\n")
                  ? "closed"
                  : "broken");
  return 0;
}
