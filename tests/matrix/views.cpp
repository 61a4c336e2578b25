// armi::view parameters (docs/design.md §2, "Views"): a target reads the
// request's elements in place.  What is pinned down: every byte arrives,
// from empty to 8 MiB (scaled), for elements of 1, 2 and 8 bytes after
// arguments that leave the payload unaligned; the caller may change its data
// as soon as the call returns (the range is copied at the call); requests
// with views keep per-pair order with by-value requests; a view stays valid
// for the whole call, even when the target waits and its location serves
// (and finishes) the buffer meanwhile; views work in sync_rmi, opaque_rmi
// and broadcast_rmi.
#include "support/test_support.hpp"

#include <armi/view.hpp>

#include <cstdint>
#include <numeric>
#include <vector>

namespace {

// The element j of the range that `sender` sends in its call number `call`.
template <class T>
T pattern(armi::location_id sender, std::uint64_t call, std::uint64_t j) {
  std::uint64_t const x = (std::uint64_t{sender} * 1000003u + call * 7919u + j) * 0x9E3779B97F4A7C15ULL;
  return static_cast<T>(x >> 40);
}

struct pair16 {
  std::int32_t a;
  std::int16_t b;
  friend bool operator==(pair16 const&, pair16 const&) = default;
};
template <>
pair16 pattern<pair16>(armi::location_id sender, std::uint64_t call, std::uint64_t j) {
  return {pattern<std::int32_t>(sender, call, j), pattern<std::int16_t>(sender, call, j + 1)};
}

template <class T>
bool matches(armi::view<T> v, armi::location_id sender, std::uint64_t call, std::uint64_t count) {
  if (v.size() != count) return false;
  if (reinterpret_cast<std::uintptr_t>(v.data()) % alignof(T) != 0) return false;
  for (std::uint64_t j = 0; j < count; ++j)
    if (!(v[j] == pattern<T>(sender, call, j))) return false;
  return true;
}

class receiver : public armi::p_object {
 public:
  // A one-byte argument first, so the view's elements need padding.
  void bytes(char, armi::view<std::uint8_t> v, armi::location_id from, std::uint64_t call, std::uint64_t n) {
    record(matches(v, from, call, n));
  }
  void shorts(char, armi::view<std::uint16_t> v, armi::location_id from, std::uint64_t call, std::uint64_t n) {
    record(matches(v, from, call, n));
  }
  void doubles(char, armi::view<double> v, armi::location_id from, std::uint64_t call, std::uint64_t n) {
    record(matches(v, from, call, n));
  }
  void pairs(armi::view<pair16> v, armi::location_id from, std::uint64_t call, std::uint64_t n) {
    record(matches(v, from, call, n));
  }
  // Per-pair order: by-value and view requests share one sequence.
  void in_order(armi::location_id from, std::uint64_t seq) { sequence(from, seq); }
  void in_order_view(armi::location_id from, std::uint64_t seq, armi::view<std::uint64_t> v) {
    sequence(from, seq);
    record(v.size() == 3 && v[0] == seq && v[2] == seq + 2);
  }
  // Reads its view, waits (serving requests, which may finish the buffer
  // the view points into), and reads it again.
  void across_a_wait(armi::view<std::uint64_t> v, armi::location_id from, std::uint64_t call) {
    bool const before = matches(v, from, call, v.size());
    (void)armi::sync_rmi(from, get_rmi_handle(), &receiver::echo, call);
    record(before && matches(v, from, call, v.size()));
  }
  std::uint64_t echo(std::uint64_t x) const { return x; }
  std::uint64_t sum(armi::view<std::uint64_t> v) const { return std::accumulate(v.begin(), v.end(), 0ull); }

  std::uint64_t good() const { return m_good; }
  std::uint64_t bad() const { return m_bad; }

 private:
  void record(bool ok) { ++(ok ? m_good : m_bad); }
  void sequence(armi::location_id from, std::uint64_t seq) {
    if (m_next.size() <= from) m_next.resize(from + 1, 0);
    record(seq == m_next[from]);
    m_next[from] = seq + 1;
  }
  std::uint64_t m_good = 0;
  std::uint64_t m_bad = 0;
  std::vector<std::uint64_t> m_next;
};

// After every location's requests: all of them ran here and checked out.
void expect_all_good(receiver const& r, std::uint64_t good) {
  armi::rmi_fence();
  ARMI_CHECK_EQ(r.bad(), 0u);
  ARMI_CHECK_EQ(r.good(), good);
  armi::rmi_fence();
}

template <class T>
std::vector<T> make(armi::location_id me, std::uint64_t call, std::uint64_t n) {
  std::vector<T> v(n);
  for (std::uint64_t j = 0; j < n; ++j) v[j] = pattern<T>(me, call, j);
  return v;
}

}  // namespace

TEST_CASE("views: every byte arrives, empty to 8 MiB, and the caller may change its data at once", "[views]") {
  armi_test::run([&] {
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const to = (me + 1) % n;
    receiver r;
    armi::rmi_fence();
    std::uint64_t call = 0, sent = 0;
    for (std::size_t bytes :
         {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{4096}, std::size_t{65536},
          armi_test::scaled(std::size_t{1} << 20), armi_test::scaled(std::size_t{8} << 20)}) {
      auto u8 = make<std::uint8_t>(me, call, bytes);
      armi::async_rmi(to, r.get_rmi_handle(), &receiver::bytes, 'x', u8, me, call, std::uint64_t{bytes});
      std::fill(u8.begin(), u8.end(), std::uint8_t{0});  // copied at the call: the target sees the pattern
      ++call;
      auto u16 = make<std::uint16_t>(me, call, bytes / 2);
      armi::async_rmi(to, r.get_rmi_handle(), &receiver::shorts, 'x', u16, me, call, std::uint64_t{bytes / 2});
      ++call;
      auto f64 = make<double>(me, call, bytes / 8);
      armi::async_rmi(to, r.get_rmi_handle(), &receiver::doubles, 'x', f64, me, call, std::uint64_t{bytes / 8});
      f64.assign(f64.size(), -1.0);
      ++call;
      auto p = make<pair16>(me, call, bytes / 8);
      armi::async_rmi(to, r.get_rmi_handle(), &receiver::pairs, p, me, call, std::uint64_t{bytes / 8});
      ++call;
      sent += 4;
    }
    expect_all_good(r, sent);
  });
}

TEST_CASE("views: requests with views keep per-pair order with by-value requests", "[views]") {
  armi_test::run([&] {
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    receiver r;
    armi::rmi_fence();
    std::uint64_t const per_peer = armi_test::scaled(3000);
    std::vector<std::uint64_t> seq(n, 0);
    for (std::uint64_t i = 0; i < per_peer; ++i) {
      for (armi::location_id to = 0; to < n; ++to) {
        std::uint64_t const s = seq[to]++;
        if (i % 3 == 1) {
          std::vector<std::uint64_t> const v{s, s + 1, s + 2};
          armi::async_rmi(to, r.get_rmi_handle(), &receiver::in_order_view, me, s, v);
        } else {
          armi::async_rmi(to, r.get_rmi_handle(), &receiver::in_order, me, s);
        }
      }
    }
    expect_all_good(r, per_peer * n + (per_peer + 1) / 3 * n);  // views (i % 3 == 1) record twice
  });
}

TEST_CASE("views: a view stays valid while its target waits and serves the rest of its buffer", "[views]") {
  armi_test::run([&] {
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const to = (me + 1) % n;
    receiver r;
    armi::rmi_fence();
    // Many small requests, each of whose targets waits on a sync_rmi back to
    // the sender: while it waits, its location serves what has arrived,
    // finishing (and, without the runtime's pin, giving back for reuse) the
    // buffer its view points into.
    std::uint64_t const calls = armi_test::scaled(2000);
    for (std::uint64_t call = 0; call < calls; ++call) {
      auto const v = make<std::uint64_t>(me, call, 1 + call % 40);
      armi::async_rmi(to, r.get_rmi_handle(), &receiver::across_a_wait, v, me, call);
    }
    expect_all_good(r, calls);
  });
}

TEST_CASE("views: sync_rmi, opaque_rmi and broadcast_rmi take views", "[views]") {
  armi_test::run([&] {
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    receiver r;
    armi::rmi_fence();
    std::vector<std::uint64_t> v(1000);
    std::iota(v.begin(), v.end(), std::uint64_t{me});
    std::uint64_t const want = std::accumulate(v.begin(), v.end(), 0ull);
    ARMI_CHECK_EQ(armi::sync_rmi((me + 1) % n, r.get_rmi_handle(), &receiver::sum, v), want);
    auto f = armi::opaque_rmi((me + n - 1) % n, r.get_rmi_handle(), &receiver::sum, v);
    ARMI_CHECK_EQ(f.get(), want);
    if (me == 0) {
      auto const b = make<std::uint8_t>(0, 999, 333);
      armi::broadcast_rmi(r.get_rmi_handle(), &receiver::bytes, 'b', b, armi::location_id{0}, std::uint64_t{999},
                          std::uint64_t{333});
    }
    expect_all_good(r, 1u);
  });
}
