// Per-location counters, updated without atomics by the owning location and
// printed (with fmt) at exit when --armi-stats is on.
#pragma once

#include <armi/runtime/handlers.hpp>

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace armi::detail {

struct location_stats {
  std::array<std::uint64_t, num_rmi_kinds> sent{};
  std::array<std::uint64_t, num_rmi_kinds> executed{};
  std::uint64_t buffers_sent = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t buffers_received = 0;
  std::uint64_t fences = 0;
  std::uint64_t fence_rounds = 0;
  std::uint64_t sleeps = 0;  // times the location blocked waiting for work

  location_stats& operator+=(location_stats const& o) {
    for (std::size_t k = 0; k < num_rmi_kinds; ++k) {
      sent[k] += o.sent[k];
      executed[k] += o.executed[k];
    }
    buffers_sent += o.buffers_sent;
    bytes_sent += o.bytes_sent;
    buffers_received += o.buffers_received;
    fences += o.fences;
    fence_rounds += o.fence_rounds;
    sleeps += o.sleeps;
    return *this;
  }
  std::uint64_t total_sent() const {
    std::uint64_t s = 0;
    for (auto v : sent) s += v;
    return s;
  }
  std::uint64_t total_executed() const {
    std::uint64_t s = 0;
    for (auto v : executed) s += v;
    return s;
  }
};

inline std::string format_stats(std::vector<location_stats> const& per_location) {
  std::string out = "armi stats (requests sent/executed by kind; buffers; bytes; requests per buffer):\n";
  std::string header = fmt::format("{:>10}", "location");
  for (auto name : rmi_kind_names) header += fmt::format(" {:>19}", name);
  header += fmt::format(" {:>10} {:>13} {:>8} {:>7} {:>7}\n", "buffers", "bytes", "req/buf", "fences", "sleeps");
  out += header;
  location_stats total;
  auto row = [&](std::string const& who, location_stats const& s) {
    std::string line = fmt::format("{:>10}", who);
    for (std::size_t k = 0; k < num_rmi_kinds; ++k) line += fmt::format(" {:>9}/{:<9}", s.sent[k], s.executed[k]);
    double const per = s.buffers_sent == 0 ? 0.0 : double(s.total_sent()) / double(s.buffers_sent);
    line += fmt::format(" {:>10} {:>13} {:>8.1f} {:>7} {:>7}\n", s.buffers_sent, s.bytes_sent, per, s.fences, s.sleeps);
    out += line;
  };
  for (std::size_t i = 0; i < per_location.size(); ++i) {
    row(fmt::format("{}", i), per_location[i]);
    total += per_location[i];
  }
  row("total", total);
  return out;
}

}  // namespace armi::detail
