// armi::view parameters (docs/design.md §2, "Views"): a target reads the
// request's elements in place.  What is pinned down: every byte arrives,
// from empty to 8 MiB (scaled), for elements of 1, 2 and 8 bytes after
// arguments that leave the payload unaligned; the caller may change its data
// as soon as the call returns (the range is copied at the call); requests
// with views keep per-pair order with by-value requests; a view stays valid
// for the whole call, even when the target waits and its location serves
// (and finishes) the buffer meanwhile; views work in sync_rmi, opaque_rmi
// and broadcast_rmi; a lent range (armi::lend) is read before the caller's
// next flush point returns; a 1 MiB view is copied once on its way (counted
// by the runtime), a lent one not at all where it goes by reference (within
// a process) or from the caller's memory (mpi, off the node's rings), a
// std::vector twice.
#include "support/test_support.hpp"

#include <armi/serialization/bulk_copies.hpp>
#include <armi/view.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <vector>

#include <unistd.h>

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

// The runtime's bulk copies (serialization/bulk_copies.hpp) between a mark
// and a count, over the whole run.  The count is an OS process's, which
// sp2's nodes (threads of one process) share: each location gives its
// process id with it, and a process counts once.
class copy_probe : public armi::p_object {
 public:
  void mark() { m_base = armi::detail::bulk_copies().bytes; }
  std::vector<std::uint64_t> share() const {
    return {static_cast<std::uint64_t>(::getpid()), armi::detail::bulk_copies().bytes - m_base};
  }
  static std::uint64_t run_total(std::vector<std::uint64_t> const& shares) {
    std::map<std::uint64_t, std::uint64_t> by_process;
    for (std::size_t i = 0; i + 1 < shares.size(); i += 2) by_process[shares[i]] = shares[i + 1];
    std::uint64_t total = 0;
    for (auto const& [pid, bytes] : by_process) total += bytes;
    return total;
  }
  bool take_view(armi::view<std::uint8_t> v, armi::location_id from) { return matches(v, from, 0, v.size()); }
  bool take_vector(std::vector<std::uint8_t> const& v, armi::location_id from) {
    return matches(armi::view<std::uint8_t>(v), from, 0, v.size());
  }
  void take_loan(armi::view<std::uint8_t> v, armi::location_id from) { m_good_loans += matches(v, from, 0, v.size()); }
  unsigned good_loans() const { return m_good_loans; }

 private:
  std::uint64_t m_base = 0;
  unsigned m_good_loans = 0;
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
    // Lent (8000 bytes: by reference within a process), then changed after the flush point.
    ARMI_CHECK_EQ(armi::sync_rmi((me + 1) % n, r.get_rmi_handle(), &receiver::sum, armi::lend(v)), want);
    auto g = armi::opaque_rmi((me + n - 1) % n, r.get_rmi_handle(), &receiver::sum, armi::lend(v));
    ARMI_CHECK_EQ(g.get(), want);
    v.assign(v.size(), 0);
    if (me == 0) {
      auto const b = make<std::uint8_t>(0, 999, 333);
      armi::broadcast_rmi(r.get_rmi_handle(), &receiver::bytes, 'b', b, armi::location_id{0}, std::uint64_t{999},
                          std::uint64_t{333});
    }
    expect_all_good(r, 1u);
  });
}

// Views lent with armi::lend: the caller leaves its data unchanged until its
// next flush point, then overwrites it.  Each kind of flush point must return
// only once the target has read the range (by reference within a process,
// where an unfinished read would see the overwrite; copied at the call
// elsewhere), for ranges from empty to 8 MiB (scaled) and elements of 1 and
// 8 bytes, mixed with by-value requests.
TEST_CASE("views: a lent view (armi::lend) is read before the caller's next flush point returns", "[views]") {
  armi_test::run([&] {
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const to = (me + 1) % n;
    receiver r;
    armi::rmi_fence();
    std::uint64_t call = 0, sent = 0, seq = 0;
    int flush_kind = 0;
    // Ends the loans with a flush point of one kind after another.
    auto flush_point = [&] {
      switch (flush_kind++ % 5) {
        case 0:
          armi::rmi_flush();
          break;
        case 1:
          (void)armi::sync_rmi((me + n - 1) % n, r.get_rmi_handle(), &receiver::echo, std::uint64_t{1});
          break;
        case 2:
          (void)armi::opaque_rmi(to, r.get_rmi_handle(), &receiver::echo, std::uint64_t{2}).get();
          break;
        case 3:
          (void)armi::allreduce_rmi(r.get_rmi_handle(), &receiver::bad, std::plus<>{});
          break;
        default:
          armi::rmi_fence();
      }
    };
    for (int round = 0; round < 2; ++round)
      for (std::size_t bytes :
           {std::size_t{0}, std::size_t{64}, std::size_t{4096}, std::size_t{65536}, armi_test::scaled(std::size_t{1} << 20),
            armi_test::scaled(std::size_t{8} << 20)}) {
        auto u8 = make<std::uint8_t>(me, call, bytes);
        armi::async_rmi(to, r.get_rmi_handle(), &receiver::bytes, 'x', armi::lend(u8), me, call, std::uint64_t{bytes});
        ++call;
        auto f64 = make<double>(me, call, bytes / 8);
        armi::async_rmi(to, r.get_rmi_handle(), &receiver::doubles, 'x', armi::lend(f64), me, call,
                        std::uint64_t{bytes / 8});
        ++call;
        armi::async_rmi(to, r.get_rmi_handle(), &receiver::in_order, me, seq++);  // by value between
        sent += 2;
        flush_point();
        std::fill(u8.begin(), u8.end(), std::uint8_t{0xEE});  // the loans are over: the targets have read them
        f64.assign(f64.size(), -1.0);
      }
    expect_all_good(r, sent + 12);  // in_order records its sequence too
  });
}

// A 1 MiB view between two locations is copied once, at the call: a large
// buffer moves by pointer within a process and from the caller's buffer
// through MPI between processes, and the target reads it in place.  A
// std::vector costs a second copy, into the target's object.  Under
// --armi-routing each location that passes the request on copies it into
// its buffer for the next hop.  A lent one on a direct path is not copied
// where it goes by reference or from the caller's memory (location::lends_to).
// What the layers below copy (MPI, sp2's emulated network) is not armi's to
// count.
TEST_CASE("views: a 1 MiB view is copied once on its way, a std::vector twice", "[views]") {
  armi_test::run([&] {
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    armi::location_id const from = 0, to = n - 1;
    std::size_t const bytes = std::size_t{1} << 20;  // not scaled: what is checked is a count
    copy_probe p;
    auto const payload = make<std::uint8_t>(from, 0, bytes);
    // Copies of the payload made between the call and the target, in units of its size.
    auto copies_of = [&](auto send) {
      {
        armi::hold_requests const hold;  // share() runs as a request
        p.mark();
      }
      armi::rmi_fence();  // every location marked before the bytes leave
      if (me == from) ARMI_CHECK(send());
      armi::rmi_fence();
      auto const shares = armi::allreduce_rmi(p.get_rmi_handle(), &copy_probe::share, [](auto a, auto const& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
      });
      return double(copy_probe::run_total(shares)) / double(bytes);
    };
    double const by_view =
        copies_of([&] { return armi::sync_rmi(to, p.get_rmi_handle(), &copy_probe::take_view, payload, from); });
    double const by_value =
        copies_of([&] { return armi::sync_rmi(to, p.get_rmi_handle(), &copy_probe::take_vector, payload, from); });
    double const by_loan = copies_of([&] {
      armi::async_rmi(to, p.get_rmi_handle(), &copy_probe::take_loan, armi::lend(payload), from);
      armi::rmi_flush();  // the flush point: the target has read the range
      return true;
    });
    auto const& routes = armi::detail::current("views test").routes();
    unsigned forwards = 0;
    for (auto at = routes.next_hop(from, to); at != to; at = routes.next_hop(at, to)) ++forwards;
    // A loan goes without a copy on a direct path, by reference within the process, from the caller's
    // memory where the transport sends from there (mpi and mixed, to another rank): as `from` sees it.
    std::size_t const uncopied_from = armi::detail::current("views test").lends_to(to);
    bool const uncopied = uncopied_from != 0 && uncopied_from <= bytes;
    if (me == from)
      std::printf("views: 1 MiB from %u to %u, %u forwarding locations: view %.2f copies, std::vector %.2f, "
                  "lent %.2f\n",
                  from, to, forwards, by_view, by_value, by_loan);
    // Whole copies (a forwarded copy carries the request's few other bytes too).
    ARMI_CHECK_EQ(std::lround(by_view), 1L + forwards);
    ARMI_CHECK_EQ(std::lround(by_value), 2L + forwards);  // the copy into the target's vector: the counter sees it
    if (me == from) ARMI_CHECK_EQ(std::lround(by_loan), uncopied ? 0L : 1L + forwards);
    ARMI_CHECK_EQ(p.good_loans(), me == to ? 1u : 0u);
    armi::rmi_fence();
  });
}
