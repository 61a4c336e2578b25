// Aggregation factors (docs/design.md §2, options): a buffer leaves as soon as it
// holds the factor's number of requests -- the local factor for destinations
// in the sender's process, the remote one for the others (mixed, mpi) -- and
// not before.  Run under every backend with the matrix's --armi-aggregation*
// flags; each location also switches factors at run time and checks again.
// Routed (--armi-routing=grid|node), a buffer goes to a next hop with
// requests for several destinations, and a location sends the buffers of
// what it passes on as well: there only the order and the count of what
// arrives are checked.
#include "support/test_support.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace {

class sink : public armi::p_object {
 public:
  void take(std::uint32_t from, std::uint64_t seq) {
    ARMI_CHECK_EQ(seq, m_next[from]);
    m_next[from] = seq + 1;
    ++m_count;
  }
  std::uint64_t count() const { return m_count; }
  std::uint64_t sent() const { return m_sent; }
  void add_sent(std::uint64_t n) { m_sent += n; }
  void resize(std::size_t n) { m_next.assign(n, 0); }

 private:
  std::vector<std::uint64_t> m_next;
  std::uint64_t m_count = 0;
  std::uint64_t m_sent = 0;
};

std::uint64_t buffers_sent() { return armi::detail::current("test").stats().buffers_sent; }
bool same_process(armi::location_id d) { return armi::detail::current("test").same_process(d); }
bool routed() { return armi::detail::current("test").outgoing().routed(); }

// Sends `rounds` full buffers to every other location; no buffer may leave
// early or late.  Returns the requests sent.
std::uint64_t send_full_buffers(sink& s, std::uint64_t (&seq)[64], unsigned rounds) {
  auto const me = armi::get_location_id();
  auto const n = armi::get_num_locations();
  std::uint64_t const before = buffers_sent();
  std::uint64_t sent = 0, expected_buffers = 0;
  for (armi::location_id d = 0; d < n; ++d) {
    if (d == me) continue;
    std::size_t const factor = same_process(d) ? armi::get_aggregation_local() : armi::get_aggregation_remote();
    // Capped so the requests in flight stay far below the flow-control limit.
    if (factor > 64) continue;
    for (std::size_t i = 0; i < rounds * factor; ++i)
      armi::async_rmi(d, s.get_rmi_handle(), &sink::take, static_cast<std::uint32_t>(me), seq[d]++);
    sent += rounds * factor;
    expected_buffers += rounds;
  }
  if (!routed()) ARMI_CHECK_EQ(buffers_sent() - before, expected_buffers);
  // One more request per destination stays in its buffer until a flush.
  std::uint64_t const held = buffers_sent();
  for (armi::location_id d = 0; d < n; ++d) {
    if (d == me) continue;
    std::size_t const factor = same_process(d) ? armi::get_aggregation_local() : armi::get_aggregation_remote();
    if (factor == 1 || factor > 64) continue;
    armi::async_rmi(d, s.get_rmi_handle(), &sink::take, static_cast<std::uint32_t>(me), seq[d]++);
    ++sent;
  }
  if (!routed()) ARMI_CHECK_EQ(buffers_sent(), held);
  armi::rmi_flush();
  return sent;
}

}  // namespace

TEST_CASE("aggregation: a buffer leaves when it holds the factor's requests, local and remote factors apart",
          "[aggregation]") {
  armi_test::run([] {
    auto const n = armi::get_num_locations();
    if (n > 64) return;
    sink s;
    s.resize(n);
    std::uint64_t seq[64] = {};
    armi::rmi_fence();
    // Warm-up: the first request of a method to another process is preceded
    // by a request that defines the method there; that one is not counted.
    for (armi::location_id d = 0; d < n; ++d)
      armi::async_rmi(d, s.get_rmi_handle(), &sink::take, static_cast<std::uint32_t>(armi::get_location_id()), seq[d]++);
    s.add_sent(n);
    armi::rmi_fence();
    s.add_sent(send_full_buffers(s, seq, 3));
    // Switch both factors at run time (small, and local != remote).
    armi::set_aggregation(3, 5);
    ARMI_CHECK_EQ(armi::get_aggregation_local(), 3u);
    ARMI_CHECK_EQ(armi::get_aggregation_remote(), 5u);
    s.add_sent(send_full_buffers(s, seq, 2));
    armi::set_aggregation(4);
    ARMI_CHECK_EQ(armi::get_aggregation_local(), 4u);
    ARMI_CHECK_EQ(armi::get_aggregation_remote(), 4u);
    s.add_sent(send_full_buffers(s, seq, 2));
    armi::rmi_fence();
    auto const h = s.get_rmi_handle();
    ARMI_CHECK_EQ(armi::allreduce_rmi(h, &sink::count, std::plus<>{}), armi::allreduce_rmi(h, &sink::sent, std::plus<>{}));
  });
}
