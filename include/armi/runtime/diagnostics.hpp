// The diagnostics' hooks of a location: the watchdog's wait record
// (--armi-watchdog), timing and per-handler counts (--armi-stats) and the
// trace (--armi-trace).  A program built with ARMI_DIAGNOSTICS=0 has none:
// each hook is then a constant, and the code behind it folds away.
#pragma once

#include <armi/core/config.hpp>
#include <armi/core/handlers.hpp>
#include <armi/core/stats.hpp>
#include <armi/core/trace.hpp>
#include <armi/core/wait_record.hpp>

#include <cstdint>
#include <memory>
#include <vector>

namespace armi::detail {

class diagnostics {
 public:
  diagnostics(bool timing, bool tracing)
      : m_timing(timing), m_trace(tracing ? std::make_unique<trace_log>() : nullptr) {}

  // The record the watchdog reads, or nullptr when it is off.
  wait_record* watch() const { return has_diagnostics ? m_watch : nullptr; }
  void set_watch(wait_record* r) { m_watch = r; }
  // --armi-stats: time fences, blocking waits and polls; count executions per handler.
  bool timing() const { return has_diagnostics && m_timing; }
  trace_log* tracer() const { return has_diagnostics ? m_trace.get() : nullptr; }

  // Out of line: with --armi-stats off, the receive loop pays one
  // predictable branch for it.
  [[gnu::noinline]] void count_execution(std::uint32_t handler) {
    if (handler >= m_executed_by_handler.size()) m_executed_by_handler.resize(handler_table::instance().size());
    ++m_executed_by_handler[handler];
  }
  method_counts executed_by_method() const { return method_counts_of(m_executed_by_handler); }

 private:
  wait_record* m_watch = nullptr;
  bool m_timing;
  std::unique_ptr<trace_log> m_trace;
  std::vector<std::uint64_t> m_executed_by_handler;  // requests executed, per handler id
};

}  // namespace armi::detail
