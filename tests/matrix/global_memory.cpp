// global_array, global_ptr and the one-sided operations (docs/design.md §2,
// "One-sided operations"): rget/rput of one element and in bulk, fetch_add
// and compare_exchange, on every backend and shape.  What is pinned down:
// a put's future is ready when the write is visible at the owner, rmi_fence
// completes every operation (even one whose future was dropped), atomics
// are atomic across every location, and misuse throws at the caller.
#include "support/test_support.hpp"

#include <armi/global_array.hpp>

#include <cstdint>
#include <numeric>
#include <set>
#include <span>
#include <stdexcept>
#include <vector>

namespace {

std::uint64_t value_of(armi::location_id writer, armi::location_id owner, std::uint64_t j) {
  return (std::uint64_t{writer} << 40) ^ (std::uint64_t{owner} << 20) ^ (j * 2654435761ULL % 1000003ULL);
}

// True when f() throws an E.
template <class E, class F>
bool throws(F&& f) {
  try {
    f();
  } catch (E const&) {
    return true;
  } catch (...) {
    return false;
  }
  return false;
}

// Reads an array's local block on its owner, by RMI: what the owner sees.
class inspector : public armi::p_object {
 public:
  explicit inspector(armi::global_array<std::uint64_t>& a) : m_array(a) {}
  std::uint64_t local(std::uint64_t i) const { return m_array.local_data()[i]; }
  // Reads through a pointer another location made and sent here.
  std::uint64_t read_through(armi::global_ptr<std::uint64_t> p) const { return armi::rget(p).get(); }

 private:
  armi::global_array<std::uint64_t>& m_array;
};

}  // namespace

TEST_CASE("global memory: puts, then a fence, then gets read back what was put", "[global_memory]") {
  armi_test::run([&] {
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    std::size_t const per_writer = 16;
    armi::global_array<std::uint64_t> a(per_writer * n, 7);
    ARMI_CHECK_EQ(a.block_size(), per_writer * n);
    ARMI_CHECK_EQ(a.size(), per_writer * n * n);
    for (auto v : a.local_data()) ARMI_CHECK_EQ(v, 7u);
    armi::rmi_fence();  // everyone has looked before anyone writes
    // Location me writes elements [me * per_writer, (me + 1) * per_writer) of every block;
    // half the futures are waited for, half dropped: the fence completes those.
    std::vector<armi::future<void>> kept;
    for (armi::location_id d = 0; d < n; ++d)
      for (std::uint64_t j = 0; j < per_writer; ++j) {
        auto f = armi::rput(a.pointer(d, me * per_writer + j), value_of(me, d, j));
        if (j % 2 == 0) kept.push_back(std::move(f));
      }
    for (auto& f : kept) f.get();
    armi::rmi_fence();
    for (armi::location_id w = 0; w < n; ++w)
      for (std::uint64_t j = 0; j < per_writer; ++j) ARMI_CHECK_EQ(a.local_data()[w * per_writer + j], value_of(w, me, j));
    // Split-phase gets: all issued, then waited for.
    std::vector<armi::future<std::uint64_t>> gets;
    for (armi::location_id d = 0; d < n; ++d)
      for (std::uint64_t i = 0; i < a.block_size(); ++i) gets.push_back(armi::rget(a.pointer(d, i)));
    std::size_t k = 0;
    for (armi::location_id d = 0; d < n; ++d)
      for (std::uint64_t i = 0; i < a.block_size(); ++i)
        ARMI_CHECK_EQ(gets[k++].get(), value_of(static_cast<armi::location_id>(i / per_writer), d, i % per_writer));
    armi::rmi_fence();
  });
}

TEST_CASE("global memory: a put's ready future means the owner sees the write; pointers travel in RMIs",
          "[global_memory]") {
  armi_test::run([&] {
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    armi::global_array<std::uint64_t> a(4);
    inspector look(a);
    armi::rmi_fence();
    armi::location_id const next = (me + 1) % n;
    // Slot 0 of next's block is written only by me.
    for (std::uint64_t k = 1; k <= 20; ++k) {
      armi::rput(a.pointer(next, 0), k * 1000 + me).get();
      // Ready: an RMI issued after it finds the value at the owner.
      ARMI_CHECK_EQ(armi::sync_rmi(next, look.get_rmi_handle(), &inspector::local, std::uint64_t{0}), k * 1000 + me);
    }
    armi::rmi_fence();
    // A global_ptr made here, sent to another location, read there.
    armi::rput(a.pointer(me, 1), 4242 + me).get();
    armi::rmi_fence();
    auto const p = a.pointer(me, 1);
    ARMI_CHECK_EQ(armi::sync_rmi(next, look.get_rmi_handle(), &inspector::read_through, p), 4242u + me);
    // Arithmetic within a block.
    auto q = a.pointer(next, 1);
    ++q;
    ARMI_CHECK(q == a.pointer(next, 2));
    ARMI_CHECK(q - 2 == a.pointer(next, 0));
    ARMI_CHECK_EQ(q.where(), next);
    ARMI_CHECK_EQ(q.index(), 2u);
    armi::rmi_fence();
  });
}

TEST_CASE("global memory: concurrent fetch_add from every location sums exactly", "[global_memory]") {
  armi_test::run([&] {
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    std::uint64_t const rounds = armi_test::scaled(200);
    armi::global_array<std::uint64_t> counts(2);
    armi::global_array<double> sums(1);
    std::set<std::uint64_t> seen;  // old values of the unit counter at location 0
    std::vector<armi::future<std::uint64_t>> olds;
    for (std::uint64_t r = 0; r < rounds; ++r) {
      for (armi::location_id d = 0; d < n; ++d) {
        armi::fetch_add(counts.pointer(d, 0), std::uint64_t{me} + 1);  // future dropped: the fence completes it
        armi::fetch_add(sums.pointer(d, 0), 0.5 * (me + 1));
      }
      olds.push_back(armi::fetch_add(counts.pointer(0, 1), std::uint64_t{1}));
    }
    for (auto& f : olds) seen.insert(f.get());
    // Every old value of the unit counter is distinct: no two adds saw the same value.
    ARMI_CHECK_EQ(seen.size(), rounds);
    ARMI_CHECK(*seen.rbegin() < rounds * n);
    armi::rmi_fence();
    std::uint64_t const per_round = std::uint64_t{n} * (n + 1) / 2;
    ARMI_CHECK_EQ(counts.local_data()[0], rounds * per_round);
    ARMI_CHECK_EQ(sums.local_data()[0], 0.5 * static_cast<double>(rounds * per_round));
    if (me == 0) ARMI_CHECK_EQ(counts.local_data()[1], rounds * n);
    ARMI_CHECK_EQ(armi::rget(counts.pointer((me + 1) % n, 0)).get(), rounds * per_round);
    armi::rmi_fence();
  });
}

TEST_CASE("global memory: compare_exchange builds a lock-free counter", "[global_memory]") {
  armi_test::run([&] {
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    std::uint64_t const increments = armi_test::scaled(100);
    armi::global_array<std::int64_t> counter(1);
    // Where gets are MPI RMA and atomics are not (--armi-mpi-rma=on), a get
    // racing an atomic on the element is a data race (design.md §2): the
    // counter is read atomically there, with fetch_add(p, 0).
    auto const& tr = armi::detail::current("test").transport_of();
    bool const gets_race_atomics = tr.remote_memory() && !tr.remote_atomics();
    auto read = [&](armi::global_ptr<std::int64_t> p) {
      return gets_race_atomics ? armi::fetch_add(p, std::int64_t{0}).get() : armi::rget(p).get();
    };
    // Every location increments the counter of location 0 and of its right neighbour.
    for (armi::location_id target : {armi::location_id{0}, static_cast<armi::location_id>((me + 1) % n)}) {
      auto const p = counter.pointer(target, 0);
      for (std::uint64_t k = 0; k < increments; ++k) {
        std::int64_t seen = read(p);
        for (;;) {
          std::int64_t const old = armi::compare_exchange(p, seen, seen + 1).get();
          if (old == seen) break;  // ours
          seen = old;              // someone else's came first: retry from theirs
        }
      }
    }
    armi::rmi_fence();
    std::int64_t const expected = static_cast<std::int64_t>(increments) * (me == 0 ? n + 1 : 1);
    ARMI_CHECK_EQ(counter.local_data()[0], expected);
    // A failed exchange leaves the element and returns the value it holds.
    armi::rmi_fence();
    auto const p = counter.pointer((me + 1) % n, 0);
    std::int64_t const now = armi::rget(p).get();
    ARMI_CHECK_EQ(armi::compare_exchange(p, now + 12345, std::int64_t{-1}).get(), now);
    ARMI_CHECK_EQ(armi::rget(p).get(), now);
    armi::rmi_fence();
  });
}

TEST_CASE("global memory: bulk transfers of 0 bytes to 1 MiB", "[global_memory]") {
  armi_test::run([&] {
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    std::size_t const block = (std::size_t{1} << 20) / sizeof(double);  // 1 MiB of doubles
    armi::global_array<double> a(block, -1.0);
    armi::location_id const next = (me + 1) % n;  // each location writes and reads only next's block
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{20}, std::size_t{1000}, block / 2 + 3, block}) {
      std::size_t const offset = count == block ? 0 : (block - count) / 3;
      std::vector<double> out(count);
      for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<double>(me) * 1e7 + static_cast<double>(count + i);
      armi::rput(a.pointer(next, offset), std::span<double const>(out)).get();
      std::vector<double> back(count, -2.0);
      armi::rget(a.pointer(next, offset), std::span<double>(back)).get();
      bool same = back == out;
      ARMI_CHECK(same);
      armi::rmi_fence();
      // The owner sees what was put, and nothing outside the range changed.
      auto const mine = a.local_data();
      armi::location_id const writer = (me + n - 1) % n;
      for (std::size_t i = 0; i < count; i += 1 + count / 64)
        ARMI_CHECK_EQ(mine[offset + i], static_cast<double>(writer) * 1e7 + static_cast<double>(count + i));
      if (offset > 0) ARMI_CHECK_EQ(mine[offset - 1], -1.0);
      if (offset + count < block) ARMI_CHECK_EQ(mine[offset + count], -1.0);
      armi::rmi_fence();
      std::fill(mine.begin(), mine.end(), -1.0);
      armi::rmi_fence();
    }
  });
}

TEST_CASE("global memory: misuse throws at the caller", "[global_memory]") {
  armi_test::run([&] {
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    armi::global_ptr<std::uint64_t> kept;
    {
      armi::global_array<std::uint64_t> a(10);
      ARMI_CHECK(throws<std::out_of_range>([&] { (void)a.pointer(me, 10); }));
      ARMI_CHECK(throws<std::out_of_range>([&] { (void)a.pointer(n, 0); }));
      auto const last = a.pointer((me + 1) % n, 9);
      ARMI_CHECK(throws<std::out_of_range>([&] { (void)armi::rget(last + 1); }));
      ARMI_CHECK(throws<std::out_of_range>([&] { (void)armi::rput(last - 10, std::uint64_t{1}); }));
      ARMI_CHECK(throws<std::out_of_range>([&] { (void)armi::fetch_add(last + 5, std::uint64_t{1}); }));
      std::vector<std::uint64_t> two(2);
      ARMI_CHECK(throws<std::out_of_range>([&] { (void)armi::rget(last, std::span<std::uint64_t>(two)); }));
      ARMI_CHECK(throws<std::out_of_range>([&] { (void)armi::rput(last, std::span<std::uint64_t const>(two)); }));
      ARMI_CHECK(throws<std::invalid_argument>([&] { (void)armi::rget(armi::global_ptr<std::uint64_t>{}); }));
      // In range still works after the errors.
      armi::rput(last, std::uint64_t{99}).get();
      ARMI_CHECK_EQ(armi::rget(last).get(), 99u);
      kept = last;
    }
    // The array is destroyed on every location (its destructor fenced).
    ARMI_CHECK(throws<std::logic_error>([&] { (void)armi::rget(kept); }));
    ARMI_CHECK(throws<std::logic_error>([&] { (void)armi::compare_exchange(kept, std::uint64_t{0}, std::uint64_t{1}); }));
    // A new array at the same handle index is another array: the old pointer stays dead.
    armi::global_array<std::uint64_t> b(10);
    ARMI_CHECK(b.get_rmi_handle().index == kept.array().index);
    ARMI_CHECK(throws<std::logic_error>([&] { (void)armi::rget(kept); }));
    armi::rmi_fence();
  });
}

TEST_CASE("global memory: operations on other processes' blocks go by the transport's one-sided messages where "
          "it has them",
          "[global_memory]") {
  armi_test::run([&] {
    auto& ctx = armi::detail::current("test");
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const next = (me + 1) % n;
    armi::global_array<std::uint64_t> a(8);
    armi::global_array<double> f(2);
    armi::global_array<std::int16_t> s(2);
    std::size_t const one_sided = static_cast<std::size_t>(armi::detail::rmi_kind::one_sided);
    std::size_t const opaque = static_cast<std::size_t>(armi::detail::rmi_kind::opaque);
    decltype(ctx.stats().sent) sent0{}, executed0{};
    {
      // Under --armi-progress=thread others' operations here could run (and count) once the fence returns.
      armi::hold_requests const hold;
      armi::rmi_fence();
      sent0 = ctx.stats().sent;
      executed0 = ctx.stats().executed;
    }
    std::vector<std::uint64_t> four{1, 2, 3, 4}, back(4);
    armi::rput(a.pointer(next, 0), std::uint64_t{5}).get();
    armi::rput(a.pointer(next, 4), std::span<std::uint64_t const>(four)).get();
    armi::rget(a.pointer(next, 3), std::span<std::uint64_t>(back)).get();
    ARMI_CHECK_EQ(armi::rget(a.pointer(next, 0)).get(), 5u);
    ARMI_CHECK_EQ(armi::fetch_add(a.pointer(next, 1), std::uint64_t{3}).get(), 0u);
    ARMI_CHECK_EQ(armi::compare_exchange(a.pointer(next, 1), std::uint64_t{3}, std::uint64_t{9}).get(), 3u);
    ARMI_CHECK_EQ(armi::fetch_add(f.pointer(next, 1), 0.25).get(), 0.0);
    ARMI_CHECK_EQ(armi::fetch_add(s.pointer(next, 1), std::int16_t{-2}).get(), 0);
    ARMI_CHECK_EQ(back[0], 0u);
    ARMI_CHECK_EQ(back[1], 1u);
    ARMI_CHECK_EQ(back[3], 3u);
    std::uint64_t const ops = 8;
    std::uint64_t const by_transport = ctx.stats().sent[one_sided] - sent0[one_sided];
    std::uint64_t const by_request = ctx.stats().sent[opaque] - sent0[opaque];
    // Each operation is counted once, executed when its result is back.
    ARMI_CHECK_EQ(ctx.stats().executed[one_sided] - executed0[one_sided], by_transport);
    bool const by_address = a.direct(a.pointer(next, 0)) != nullptr;
    // By address: the locations of this process, and (mpi, and mixed with
    // several ranks on a node) those of the node's other ranks.  (With
    // --armi-mpi-rma=on mixed makes every rank's blocks in a window of its
    // own, shared with the node or not: no check of the node then.)
    auto& tr = ctx.transport_of();
    bool const same_process = next - tr.process_first(me) < tr.process_locations();
    bool const node_window = tr.shared_blocks() && !tr.remote_memory() && tr.node_of(next) == tr.node_of(me);
    if (same_process || node_window) ARMI_CHECK(by_address);
    if (tr.remote_memory() && !by_address) {
      // sp2: every operation by SP-AM handlers, no request to the owner's
      // runtime; mpi with --armi-mpi-rma=on: the 4 gets and puts by RMA, the
      // 4 atomics by request.
      std::uint64_t const atomics = 4;
      bool const all = tr.remote_atomics();
      ARMI_CHECK_EQ(by_transport, all ? ops : ops - atomics);
      ARMI_CHECK_EQ(by_request, all ? 0u : atomics);
    } else {
      ARMI_CHECK_EQ(by_transport, 0u);  // memory, or requests (ranks of other processes without a window)
      ARMI_CHECK(by_request == 0 || by_request == ops);
    }
    armi::rmi_fence();
    ARMI_CHECK_EQ(a.local_data()[1], 9u);
    ARMI_CHECK_EQ(f.local_data()[1], 0.25);
    ARMI_CHECK_EQ(s.local_data()[1], -2);
    armi::rmi_fence();
  });
}
