// --armi-trace=FILE: a Chrome trace-event file (chrome://tracing, Perfetto's
// ui.perfetto.dev) with one track per location: rmi_fence, blocking waits
// (sync_rmi, future::get, collectives, rmi_wait, flow control), buffer
// flushes (instant events with destination, requests and bytes) and request
// executions.  Executions are sampled: a location records at most one per
// `sample_gap` of wall time, so a run of millions of tiny requests gives a
// readable, bounded file.  Each location keeps at most `max_events` events
// and counts the rest as dropped (written in the file's metadata).
//
// When tracing is off, each recording point costs one test of a null
// pointer; nothing else runs.  Timestamps are CLOCK_MONOTONIC, the same for
// every process of a node (ranks of other nodes are not aligned).
//
// Thread safety: a trace_log belongs to its location; written out after the
// location has finished.
#pragma once

#include <armi/core/clock.hpp>
#include <armi/core/error.hpp>
#include <armi/core/handle.hpp>
#include <armi/core/handlers.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace armi::detail {

// A handler's name as a trace (and --armi-stats) shows it: "async: void (T::*)(int)" for a
// method stub (kind and method type), "async: &T::f" for one of a method
// constant, the demangled type otherwise.
inline std::string handler_title(char const* mangled) {
  std::string name = demangle(mangled);
  std::string const stub = "armi::detail::method_stub<(armi::detail::rmi_kind)";
  if (name.starts_with(stub)) {
    std::size_t const k = static_cast<std::size_t>(name[stub.size()] - '0');
    std::size_t const begin = name.find(", ", stub.size());
    std::size_t const end = name.find(", armi::detail::type_list", begin);
    if (k < num_rmi_kinds && begin != std::string::npos && end != std::string::npos)
      return std::string(rmi_kind_names[k]) + ": " + method_name(name.substr(begin + 2, end - begin - 2));
  }
  if (name.starts_with("armi::detail::")) name.erase(0, 14);
  return name;
}

class trace_log {
 public:
  static constexpr std::uint64_t sample_gap_ns = 20'000;  // at most one execution span per 20 µs
  static constexpr std::size_t max_events = 1'000'000;

  static std::uint64_t now_ns() { return static_cast<std::uint64_t>(steady_ns()); }

  // A span [start, end) named `name` (a string literal or another static
  // string; `mangled` names are demangled when written).
  void span(char const* name, std::uint64_t start, std::uint64_t end, std::int64_t arg = -1, bool mangled = false) {
    add({name, start, end - start, 'X', arg, 0, 0, mangled});
  }
  // A buffer leaving for dest with `requests` requests and `bytes` bytes.
  void flush(std::uint64_t at, location_id dest, std::uint32_t requests, std::uint64_t bytes) {
    add({"flush", at, 0, 'i', dest, requests, bytes, false});
  }

  // Whether an execution starting now should be recorded (sampling).
  bool sample_execution(std::uint64_t now) {
    if (now < m_next_sample) return false;
    m_next_sample = now + sample_gap_ns;
    return true;
  }

  std::uint64_t dropped() const { return m_dropped; }

  // One recorded event: a span ('X') or a flush ('i').
  struct event {
    char const* name;
    std::uint64_t ts;
    std::uint64_t dur;
    char ph;
    std::int64_t arg;
    std::uint64_t a;
    std::uint64_t b;
    bool mangled;
  };
  std::vector<event> const& events() const { return m_events; }

 private:
  void add(event const& e) {
    if (m_events.size() >= max_events) {
      ++m_dropped;
      return;
    }
    m_events.push_back(e);
  }

  std::vector<event> m_events;
  std::uint64_t m_next_sample = 0;
  std::uint64_t m_dropped = 0;
};

// Records its scope as a span when the log is there.
class trace_scope {
 public:
  trace_scope(trace_log* log, char const* name, std::int64_t arg = -1)
      : m_log(log), m_name(name), m_arg(arg), m_start(log != nullptr ? trace_log::now_ns() : 0) {}
  trace_scope(trace_scope const&) = delete;
  trace_scope& operator=(trace_scope const&) = delete;
  ~trace_scope() {
    if (m_log != nullptr) m_log->span(m_name, m_start, trace_log::now_ns(), m_arg);
  }

 private:
  trace_log* m_log;
  char const* m_name;
  std::int64_t m_arg;
  std::uint64_t m_start;
};

}  // namespace armi::detail
