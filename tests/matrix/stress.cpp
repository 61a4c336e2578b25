// Stress: millions of fine-grain async_rmis to random destinations.  Senders
// keep per-destination checksums (count, sum, xor of the values) and receivers
// keep per-source ones; after a fence they must agree exactly: nothing lost,
// nothing doubled, nothing corrupted.  Every request also carries its
// per-(source, destination) sequence number, so reordering is caught too.
#include "support/test_support.hpp"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace {

struct splitmix64 {
  std::uint64_t state;
  std::uint64_t operator()() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

struct checksum {
  std::uint64_t count = 0;
  std::uint64_t sum = 0;
  std::uint64_t bits = 0;  // xor of the values
  void add(std::uint64_t v) {
    ++count;
    sum += v;
    bits ^= v;
  }
  friend bool operator==(checksum const&, checksum const&) = default;
  friend std::ostream& operator<<(std::ostream& os, checksum const& c) {
    return os << "{count " << c.count << ", sum " << c.sum << ", xor " << c.bits << "}";
  }
};

class sink : public armi::p_object {
 public:
  sink() : m_from(armi::get_num_locations()), m_next(armi::get_num_locations(), 0) {}

  void put(armi::location_id src, std::uint64_t seq, std::uint64_t value) {
    if (seq != m_next[src] && m_reported < 3) {
      ++m_reported;
      ARMI_CHECK_EQ(seq, m_next[src]);
    }
    m_next[src] = seq + 1;
    m_from[src].add(value);
  }
  void put_many(armi::location_id src, std::uint64_t seq,
                std::vector<std::uint64_t> const& values) {
    if (seq != m_next[src] && m_reported < 3) {
      ++m_reported;
      ARMI_CHECK_EQ(seq, m_next[src]);
    }
    m_next[src] = seq + 1;
    for (auto v : values) m_from[src].add(v);
  }
  std::uint64_t put_and_count(armi::location_id src, std::uint64_t seq, std::uint64_t value) {
    put(src, seq, value);
    return m_from[src].count;
  }
  checksum from(armi::location_id src) const { return m_from[src]; }

 private:
  std::vector<checksum> m_from;
  std::vector<std::uint64_t> m_next;
  int m_reported = 0;
};

void compare_checksums(sink& s, std::vector<checksum> const& sent) {
  auto const me = armi::get_location_id();
  for (armi::location_id d = 0; d < armi::get_num_locations(); ++d)
    ARMI_CHECK_EQ(armi::sync_rmi(d, s.get_rmi_handle(), &sink::from, me), sent[d]);
}

}  // namespace

TEST_CASE("stress: 10 million random-destination async_rmis - per-destination checksums match",
          "[stress]") {
  armi_test::run([&] {
    sink s;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = s.get_rmi_handle();
    std::size_t const total = armi_test::scaled(10'000'000);
    // Split the total over the locations; the first ones take the remainder.
    std::size_t const mine = total / n + (me < total % n ? 1 : 0);
    std::vector<checksum> sent(n);
    std::vector<std::uint64_t> seq(n, 0);
    splitmix64 rng{0x57e55ULL * (me + 1)};
    for (std::size_t i = 0; i < mine; ++i) {
      std::uint64_t const r = rng();
      auto const d = static_cast<armi::location_id>(r % n);
      std::uint64_t const value = r >> 7;
      armi::async_rmi(d, h, &sink::put, me, seq[d]++, value);
      sent[d].add(value);
    }
    armi::rmi_fence();
    compare_checksums(s, sent);
    armi::rmi_fence();
  });
}

TEST_CASE(
    "stress: all locations flood location 0 with variable-size payloads and some opaque requests",
    "[stress]") {
  armi_test::run([&] {
    sink s;
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const h = s.get_rmi_handle();
    std::size_t const total = armi_test::scaled(1'000'000);
    std::size_t const mine = total / n + (me < total % n ? 1 : 0);
    std::vector<checksum> sent(n);
    std::vector<std::uint64_t> seq(n, 0);
    std::vector<armi::future<std::uint64_t>> futures;
    std::vector<std::uint64_t> future_counts;
    splitmix64 rng{0xf100dULL * (me + 1)};
    std::vector<std::uint64_t> values;
    for (std::size_t i = 0; i < mine; ++i) {
      std::uint64_t const r = rng();
      // Mostly location 0, sometimes a random one.
      auto const d =
          r % 8 == 0 ? static_cast<armi::location_id>((r >> 3) % n) : armi::location_id{0};
      switch ((r >> 11) % 64) {
        case 0: {
          values.assign((r >> 17) % 300, 0);
          for (auto& v : values) {
            v = rng();
            sent[d].add(v);
          }
          armi::async_rmi(d, h, &sink::put_many, me, seq[d]++, values);
          break;
        }
        case 1: {
          std::uint64_t const value = r >> 20;
          futures.push_back(armi::opaque_rmi(d, h, &sink::put_and_count, me, seq[d]++, value));
          sent[d].add(value);
          future_counts.push_back(sent[d].count);
          break;
        }
        default: {
          std::uint64_t const value = r >> 20;
          armi::async_rmi(d, h, &sink::put, me, seq[d]++, value);
          sent[d].add(value);
          break;
        }
      }
    }
    // Each opaque request saw exactly the values sent before it (ordering).
    for (std::size_t k = 0; k < futures.size(); ++k)
      ARMI_CHECK_EQ(futures[k].get(), future_counts[k]);
    armi::rmi_fence();
    compare_checksums(s, sent);
    armi::rmi_fence();
  });
}
