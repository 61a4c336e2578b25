// The fence: termination detection.  Every location sums (requests sent,
// requests executed) over all locations, round after round, until two
// consecutive rounds give the same sums and sent == executed; then the
// epoch advances.  Buffers from a location already past the fence we are
// still in wait in the next-epoch queue until ours ends.
#pragma once

#include <armi/core/buffer.hpp>
#include <armi/core/stats.hpp>
#include <armi/core/trace.hpp>
#include <armi/core/transport.hpp>
#include <armi/core/wait_record.hpp>
#include <armi/runtime/location_errors.hpp>

#include <cstdint>
#include <deque>
#include <vector>

namespace armi::detail {

class fence_state {
 public:
  std::uint32_t epoch() const { return m_epoch; }
  // Inside fence(): its waits count as fence time, not as blocked.
  bool fencing() const { return m_fencing; }
  // Whether an arrived buffer b runs now, or after our fence ends (it was
  // sent by a location already past it; epochs differ by at most 1).
  bool early(buffer const& b) const { return ((b.epoch ^ m_epoch) & 1) != 0; }
  void hold(buffer* b) { m_next_epoch.push_back(b); }
  std::vector<buffer*> const& held() const { return m_next_epoch; }

  // The fence of location ctx (collective; never inside a request).
  template <class Ctx>
  void fence(Ctx& ctx) {
    if (ctx.in_request()) errors::fence_in_request(ctx.id());
    location_stats& stats = ctx.mutable_stats();
    ++stats.fences;
    wait_scope const waiting(ctx.diag().watch(), wait_kind::fence, no_peer, nullptr, m_epoch);
    stopwatch const timed(ctx.diag().timing(), stats.ns_fence);
    trace_scope const traced(ctx.diag().tracer(), "rmi_fence", m_epoch);
    m_fencing = true;
    struct fencing_done {
      bool& flag;
      ~fencing_done() { flag = false; }
    } const done{m_fencing};
    transport& tr = ctx.transport_of();
    std::uint64_t prev[2] = {~std::uint64_t{0}, ~std::uint64_t{0}};
    for (;;) {
      do ctx.flush_all(flush_cause::fence);
      while (ctx.poll_once() || ctx.receiver().ready_count() != 0);
      ctx.end_bursts();
      ctx.outgoing().return_released();  // owners free them at teardown
      std::uint64_t sums[2] = {stats.total_sent(), stats.total_executed()};
      std::uint64_t const round = m_round++;
      tr.sum_contribute(ctx.id(), round, sums);
      ctx.wait_until([&] { return tr.sum_ready(round); });
      tr.sum_result(round, sums);
      ++stats.fence_rounds;
      if (sums[0] == sums[1] && sums[0] == prev[0] && sums[1] == prev[1]) {
        ++m_epoch;
        for (buffer* b : m_next_epoch) ctx.receiver().push_ready(b);
        m_next_epoch.clear();
        return;
      }
      prev[0] = sums[0];
      prev[1] = sums[1];
    }
  }

 private:
  std::uint32_t m_epoch = 0;          // fences completed
  std::uint64_t m_round = 0;          // sum rounds started
  bool m_fencing = false;
  std::vector<buffer*> m_next_epoch;  // arrived from locations past our fence
};

}  // namespace armi::detail
