// Arguments travel by value (docs/design.md §2): the callee never shares memory
// with the caller, on any backend, for any destination (itself included).
//  - the caller mutates its argument right after async_rmi / opaque_rmi: the
//    callee sees the value at the time of the call (no lazy packing from a
//    reference, no pointer kept for local delivery);
//  - the callee mutates its parameter (taken by value, or by reference to the
//    received copy): the caller's object is unchanged;
//  - a reference returned by the method is not the callee's object.
#include "support/test_support.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
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

// A define_type class owning a heap block, with a pointer into that block and
// a fixed array: a shallow copy anywhere would share memory.
class blob {
 public:
  blob() = default;
  blob(std::size_t n, std::uint64_t tag)
      : m_n(n), m_tag(tag), m_data(n == 0 ? nullptr : new std::int64_t[n]) {
    for (std::size_t i = 0; i < n; ++i) m_data[i] = static_cast<std::int64_t>(tag * 7 + i);
    for (int i = 0; i < 4; ++i) m_fixed[i] = static_cast<std::int32_t>(tag + i);
    m_mid = m_data == nullptr ? nullptr : m_data + n / 2;
  }
  blob(blob const& o)
      : m_n(o.m_n), m_tag(o.m_tag), m_data(o.m_n == 0 ? nullptr : new std::int64_t[o.m_n]) {
    if (m_n != 0) std::memcpy(m_data, o.m_data, m_n * sizeof(std::int64_t));
    std::memcpy(m_fixed, o.m_fixed, sizeof m_fixed);
    m_mid = o.m_mid == nullptr ? nullptr : m_data + (o.m_mid - o.m_data);
  }
  blob(blob&& o) noexcept
      : m_n(std::exchange(o.m_n, 0)),
        m_tag(o.m_tag),
        m_data(std::exchange(o.m_data, nullptr)),
        m_mid(std::exchange(o.m_mid, nullptr)) {
    std::memcpy(m_fixed, o.m_fixed, sizeof m_fixed);
  }
  blob& operator=(blob o) noexcept {
    std::swap(m_n, o.m_n);
    std::swap(m_tag, o.m_tag);
    std::swap(m_data, o.m_data);
    std::swap(m_mid, o.m_mid);
    std::swap(m_fixed, o.m_fixed);
    return *this;
  }
  ~blob() { delete[] m_data; }

  void define_type(armi::typer& t) {
    t.local(m_n);
    t.local(m_tag);
    t.local(m_fixed, 4);
    t.dynamic(m_data, m_n);
    t.offset(m_mid, m_data);
  }

  friend bool operator==(blob const& a, blob const& b) {
    if (a.m_n != b.m_n || a.m_tag != b.m_tag) return false;
    for (int i = 0; i < 4; ++i)
      if (a.m_fixed[i] != b.m_fixed[i]) return false;
    for (std::size_t i = 0; i < a.m_n; ++i)
      if (a.m_data[i] != b.m_data[i]) return false;
    if ((a.m_mid == nullptr) != (b.m_mid == nullptr)) return false;
    if (a.m_mid != nullptr && (a.m_mid - a.m_data) != (b.m_mid - b.m_data)) return false;
    // Each object's pointer must point into its OWN block.
    if (a.m_mid != nullptr && (a.m_mid < a.m_data || a.m_mid > a.m_data + a.m_n)) return false;
    if (b.m_mid != nullptr && (b.m_mid < b.m_data || b.m_mid > b.m_data + b.m_n)) return false;
    return true;
  }

  // Mutates in place, through the block and through the inner pointer.
  void scribble() {
    m_tag ^= 0xdead;
    m_fixed[0] = -1;
    for (std::size_t i = 0; i < m_n; ++i) m_data[i] = -static_cast<std::int64_t>(i) - 1;
    if (m_mid != nullptr && m_mid != m_data + m_n) *m_mid = 424242;
  }

 private:
  std::uint64_t m_n = 0;
  std::uint64_t m_tag = 0;
  std::int32_t m_fixed[4] = {0, 0, 0, 0};
  std::int64_t* m_data = nullptr;
  std::int64_t* m_mid = nullptr;
};

using vv_t = std::vector<std::vector<int>>;
using map_t = std::map<std::string, int>;
using opt_t = std::optional<std::string>;
using var_t = std::variant<int, std::string, std::vector<double>>;
using tup_t = std::tuple<int, std::string, std::vector<int>>;
using arr_t = std::array<std::string, 3>;

// make(seq): the value a call with sequence number seq carries.
std::string make(std::type_identity<std::string>, std::uint64_t s) {
  return std::string(s % 40, static_cast<char>('a' + s % 26)) + std::to_string(s);
}
vv_t make(std::type_identity<vv_t>, std::uint64_t s) {
  vv_t v(s % 5);
  for (std::size_t i = 0; i < v.size(); ++i) v[i].assign(i + s % 3, static_cast<int>(s + i));
  return v;
}
map_t make(std::type_identity<map_t>, std::uint64_t s) {
  map_t m;
  for (std::uint64_t i = 0; i < s % 6; ++i)
    m["k" + std::to_string(i)] = static_cast<int>(s * 10 + i);
  return m;
}
opt_t make(std::type_identity<opt_t>, std::uint64_t s) {
  if (s % 3 == 0) return std::nullopt;
  return "opt" + std::to_string(s);
}
var_t make(std::type_identity<var_t>, std::uint64_t s) {
  switch (s % 3) {
    case 0:
      return static_cast<int>(s);
    case 1:
      return "var" + std::to_string(s);
    default:
      return std::vector<double>(s % 7, static_cast<double>(s) / 4);
  }
}
tup_t make(std::type_identity<tup_t>, std::uint64_t s) {
  return {static_cast<int>(s), "tup" + std::to_string(s),
          std::vector<int>(s % 4, static_cast<int>(s))};
}
arr_t make(std::type_identity<arr_t>, std::uint64_t s) {
  return {std::to_string(s), std::string(s % 9, 'x'), "third"};
}
blob make(std::type_identity<blob>, std::uint64_t s) {
  return blob(s % 33, s);
}

template <class T>
T make_value(std::uint64_t s) {
  return make(std::type_identity<T>{}, s);
}

// mutate(v): changes v in place (never leaves it equal to any make() value).
void mutate(std::string& v) {
  if (!v.empty()) v[0] = '#';
  v += "#mutated";
}
void mutate(vv_t& v) {
  for (auto& inner : v)
    for (auto& x : inner) x = -x - 1;
  v.push_back({-99});
}
void mutate(map_t& m) {
  for (auto& kv : m) kv.second = -1;
  m["#mutated"] = 1;
}
void mutate(opt_t& o) {
  if (o)
    (*o)[0] = '#';
  else
    o = "#mutated";
}
void mutate(var_t& v) {
  if (auto* s = std::get_if<std::string>(&v)) {
    (*s)[0] = '#';
    *s += "#";
  } else if (auto* d = std::get_if<std::vector<double>>(&v)) {
    for (auto& x : *d) x = -1;
    d->push_back(-2);
  } else {
    v = std::string("#mutated");
  }
}
void mutate(tup_t& t) {
  std::get<0>(t) = -1;
  std::get<1>(t) += "#";
  std::get<2>(t).push_back(-1);
}
void mutate(arr_t& a) {
  for (auto& s : a) s += "#";
}
void mutate(blob& b) {
  b.scribble();
}

template <class T>
class receiver : public armi::p_object {
 public:
  void by_value(std::uint64_t seq, T v) {
    ARMI_CHECK(v == make_value<T>(seq));
    mutate(v);
    ++m_received;
  }
  void by_cref(std::uint64_t seq, T const& v) {
    ARMI_CHECK(v == make_value<T>(seq));
    ++m_received;
  }
  void by_ref(std::uint64_t seq, T& v) {
    ARMI_CHECK(v == make_value<T>(seq));
    mutate(v);
    ++m_received;
  }
  // Mutates its parameter and returns it.
  T mutate_and_return(std::uint64_t seq, T v) {
    ARMI_CHECK(v == make_value<T>(seq));
    mutate(v);
    ++m_received;
    return v;
  }
  // Where the callee's parameter lives (compared on the same location only).
  std::uintptr_t address_of(T const& v) {
    ++m_received;
    return reinterpret_cast<std::uintptr_t>(&v);
  }
  // Returns a reference to the callee's own member.
  T const& stored() const { return m_stored; }
  void store(std::uint64_t seq) { m_stored = make_value<T>(seq); }
  T& stored_mutable() { return m_stored; }

  std::uint64_t received() const { return m_received; }
  void set_sent(std::uint64_t s) { m_sent = s; }
  std::uint64_t sent_total() const { return m_sent; }

 private:
  std::uint64_t m_received = 0;
  std::uint64_t m_sent = 0;
  T m_stored{};
};

template <class T>
void check_type() {
  receiver<T> r;
  r.store(1000 + armi::get_location_id());
  armi::rmi_fence();
  auto const me = armi::get_location_id();
  auto const n = armi::get_num_locations();
  auto const h = r.get_rmi_handle();
  splitmix64 rng{0xb1ULL + me};
  std::vector<std::uint64_t> sent(n, 0);
  std::size_t const iters = armi_test::scaled(300);

  // One variable reused for every call and mutated right after each call: a
  // runtime that kept a reference to it (aggregation, local delivery) would
  // deliver a later or mutated value.
  T v{};
  std::vector<armi::future<T>> futures;
  std::vector<std::uint64_t> future_seqs;
  for (std::size_t i = 0; i < iters; ++i) {
    // Every fourth call goes to self.
    auto const d = i % 4 == 0 ? me : static_cast<armi::location_id>(rng() % n);
    std::uint64_t const seq = rng() % 100000;
    v = make_value<T>(seq);
    // Every other round of five names the methods as constants (armi::method).
    bool const constant = (i / 5) % 2 == 1;
    auto const async = [&](auto m) { armi::async_rmi(d, h, m, seq, v); };
    switch (i % 5) {
      case 0:
        armi_test::either_form<&receiver<T>::by_value>(constant, async);
        break;
      case 1:
        armi_test::either_form<&receiver<T>::by_cref>(constant, async);
        break;
      case 2:
        armi_test::either_form<&receiver<T>::by_ref>(constant, async);
        break;
      case 3:
        futures.push_back(armi_test::either_form<&receiver<T>::mutate_and_return>(
            constant, [&](auto m) { return armi::opaque_rmi(d, h, m, seq, v); }));
        future_seqs.push_back(seq);
        break;
      default: {
        // sync: the callee mutates its copy; ours is unchanged, and what it
        // returns is its mutated copy, not ours.
        T const result = armi_test::either_form<&receiver<T>::mutate_and_return>(
            constant, [&](auto m) { return armi::sync_rmi(d, h, m, seq, v); });
        ARMI_CHECK(v == make_value<T>(seq));
        T expected = make_value<T>(seq);
        mutate(expected);
        ARMI_CHECK(result == expected);
        break;
      }
    }
    ++sent[d];
    mutate(v);
    if (i % 7 == 0) v = make_value<T>(seq + 1);  // reassign too, not only mutate
  }
  for (std::size_t k = 0; k < futures.size(); ++k) {
    T expected = make_value<T>(future_seqs[k]);
    mutate(expected);
    ARMI_CHECK(futures[k].get() == expected);
  }

  // sync_rmi to self with a reference parameter: the callee's reference is to
  // a copy, so our object is unchanged and lives elsewhere.
  for (std::uint64_t seq = 0; seq < 20; ++seq) {
    T mine = make_value<T>(seq);
    armi::sync_rmi(me, h, &receiver<T>::by_ref, seq, mine);
    ARMI_CHECK(mine == make_value<T>(seq));
    std::uintptr_t const where = armi::sync_rmi(me, h, &receiver<T>::address_of, mine);
    ARMI_CHECK(where != reinterpret_cast<std::uintptr_t>(&mine));
    sent[me] += 2;
  }
  // A reference returned by the method: the caller gets its own copy.
  {
    decltype(auto) got = armi::sync_rmi(me, h, &receiver<T>::stored);
    ARMI_CHECK(static_cast<void const*>(&got) != static_cast<void const*>(&r.stored()));
    ARMI_CHECK(got == make_value<T>(1000 + me));
    decltype(auto) got2 = armi::sync_rmi(me, h, &receiver<T>::stored_mutable);
    ARMI_CHECK(static_cast<void const*>(&got2) != static_cast<void const*>(&r.stored()));
    auto copy = got2;
    mutate(copy);
    ARMI_CHECK(r.stored() == make_value<T>(1000 + me));
    auto const d = static_cast<armi::location_id>((me + 1) % n);
    auto remote = armi::opaque_rmi(d, h, &receiver<T>::stored).get();
    ARMI_CHECK(remote == make_value<T>(1000 + d));
  }
  armi::rmi_fence();

  // Nothing lost or doubled: the requests received everywhere add up to the
  // requests sent everywhere.
  std::uint64_t total_sent = 0;
  for (auto s : sent) total_sent += s;
  r.set_sent(total_sent);
  std::uint64_t const all_received = armi::allreduce_rmi(h, &receiver<T>::received, std::plus<>{});
  std::uint64_t const all_sent = armi::allreduce_rmi(h, &receiver<T>::sent_total, std::plus<>{});
  ARMI_CHECK_EQ(all_received, all_sent);
  armi::rmi_fence();
}

// Results of sizes around what one answer cell carries (answers.hpp: 56
// bytes of a type that travels as its bytes): between locations of one
// process a sync_rmi's result is written into the caller's cell, others go
// back as reply messages.  Either way the caller gets the callee's value.
template <std::size_t N>
struct bytes_of {
  std::array<unsigned char, N> b;
  bool operator==(bytes_of const&) const = default;
};
static_assert(sizeof(bytes_of<56>) == 56 && sizeof(bytes_of<57>) == 57);

template <std::size_t N>
bytes_of<N> pattern(std::uint64_t seed) {
  bytes_of<N> r;
  splitmix64 g{seed};
  for (auto& c : r.b) c = static_cast<unsigned char>(g());
  return r;
}

class answerer : public armi::p_object {
 public:
  template <std::size_t N>
  bytes_of<N> bytes(std::uint64_t seed) const {
    return pattern<N>(seed + armi::get_location_id());
  }
  bool odd(std::uint64_t x) const { return x % 2 != 0; }
  double half(std::uint64_t x) const { return static_cast<double>(x) / 2.0 + armi::get_location_id(); }
  std::string text(std::uint64_t x) const {
    return std::string(x % 90, static_cast<char>('a' + x % 26)) + std::to_string(armi::get_location_id());
  }
  void poke(std::uint64_t x) { m_poked += x; }
  std::uint64_t poked() const { return m_poked; }
  void count_sent(std::uint64_t x) { m_sent += x; }
  std::uint64_t sent() const { return m_sent; }

 private:
  std::uint64_t m_poked = 0;
  std::uint64_t m_sent = 0;  // what this location poked, everywhere
};

}  // namespace

TEST_CASE("by_value: sync_rmi results that fit an answer cell and results that do not", "[by_value]") {
  armi_test::run([&] {
    answerer a;
    auto const h = a.get_rmi_handle();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    armi::rmi_fence();
    for (std::uint64_t round = 0; round < 5; ++round) {
      for (armi::location_id d = 0; d < n; ++d) {
        std::uint64_t const x = 1000 * round + 10 * me + d;
        ARMI_CHECK(armi::sync_rmi(d, h, &answerer::bytes<1>, x) == pattern<1>(x + d));
        ARMI_CHECK(armi::sync_rmi(d, h, &answerer::bytes<8>, x) == pattern<8>(x + d));
        ARMI_CHECK(armi::sync_rmi(d, h, &answerer::bytes<55>, x) == pattern<55>(x + d));
        ARMI_CHECK(armi::sync_rmi(d, h, &answerer::bytes<56>, x) == pattern<56>(x + d));
        ARMI_CHECK(armi::sync_rmi(d, h, &answerer::bytes<57>, x) == pattern<57>(x + d));
        ARMI_CHECK(armi::sync_rmi(d, h, &answerer::bytes<300>, x) == pattern<300>(x + d));
        ARMI_CHECK_EQ(armi::sync_rmi(d, h, &answerer::odd, x), x % 2 != 0);
        ARMI_CHECK_EQ(armi::sync_rmi(d, h, &answerer::half, x), static_cast<double>(x) / 2.0 + d);
        ARMI_CHECK_EQ(armi::sync_rmi(d, h, &answerer::text, x),
                      std::string(x % 90, static_cast<char>('a' + x % 26)) + std::to_string(d));
        // A void call has run when it returns.
        std::uint64_t const before = armi::sync_rmi(d, h, &answerer::poked);
        armi::sync_rmi(d, h, &answerer::poke, x + 1);
        ARMI_CHECK(armi::sync_rmi(d, h, &answerer::poked) >= before + x + 1);
        a.count_sent(x + 1);
      }
    }
    armi::rmi_fence();
    // Every poke ran exactly once.
    ARMI_CHECK_EQ(armi::allreduce_rmi(h, &answerer::poked, std::plus<>{}),
                  armi::allreduce_rmi(h, &answerer::sent, std::plus<>{}));
    armi::rmi_fence();
  });
}

TEST_CASE("by_value: std::string", "[by_value]") {
  armi_test::run([&] { check_type<std::string>(); });
}
TEST_CASE("by_value: vector<vector<int>>", "[by_value]") {
  armi_test::run([&] { check_type<vv_t>(); });
}
TEST_CASE("by_value: map<string int>", "[by_value]") {
  armi_test::run([&] { check_type<map_t>(); });
}
TEST_CASE("by_value: optional<string>", "[by_value]") {
  armi_test::run([&] { check_type<opt_t>(); });
}
TEST_CASE("by_value: variant<int string vector<double>>", "[by_value]") {
  armi_test::run([&] { check_type<var_t>(); });
}
TEST_CASE("by_value: tuple<int string vector<int>>", "[by_value]") {
  armi_test::run([&] { check_type<tup_t>(); });
}
TEST_CASE("by_value: array<string 3>", "[by_value]") {
  armi_test::run([&] { check_type<arr_t>(); });
}
TEST_CASE("by_value: define_type class with a heap block and a pointer into it", "[by_value]") {
  armi_test::run([&] { check_type<blob>(); });
}

namespace {

class board : public armi::p_object {
 public:
  void post(std::vector<int> const& v, std::string s) {
    ARMI_CHECK(v == std::vector<int>({1, 2, 3}));
    ARMI_CHECK_EQ(s, std::string("original"));
    ++m_posts;
  }
  std::uint64_t sum(std::vector<std::uint64_t> v) const {
    std::uint64_t s = 0;
    for (auto x : v) s += x;
    v.clear();  // our copy only
    return s;
  }
  std::uint64_t posts() const { return m_posts; }

 private:
  std::uint64_t m_posts = 0;
};

}  // namespace

TEST_CASE("by_value: broadcast_rmi and reduce_rmi arguments are copied at the call", "[by_value]") {
  armi_test::run([&] {
    board b;
    armi::rmi_fence();
    auto const n = armi::get_num_locations();
    std::vector<int> v{1, 2, 3};
    std::string s = "original";
    armi::broadcast_rmi(b.get_rmi_handle(), &board::post, v, s);
    armi::broadcast_rmi(b.get_rmi_handle(), armi::method<&board::post>, v, s);
    v.assign({9, 9, 9, 9});
    s = "changed";
    std::vector<std::uint64_t> w{5, 6, 7};
    ARMI_CHECK_EQ(armi::reduce_rmi(b.get_rmi_handle(), &board::sum, std::plus<>{}, w),
                  std::uint64_t{18 * n});
    ARMI_CHECK_EQ(armi::reduce_rmi(b.get_rmi_handle(), armi::method<&board::sum>, std::plus<>{}, w),
                  std::uint64_t{18 * n});
    ARMI_CHECK(w == std::vector<std::uint64_t>({5, 6, 7}));
    armi::rmi_fence();
    ARMI_CHECK_EQ(b.posts(), std::uint64_t{2 * n});
    armi::rmi_fence();
  });
}

// ---- arguments and answers too large to send -----------------------------------------

namespace {

// Says, when measured, that it takes `bytes` bytes of payload without holding
// them, so a request too large to send can be tried without the memory.
// Asked to write them it throws instead, after its first 9 bytes: a packing
// that fails midway; unless `writable`, then it writes zeros.  (Not trivially
// copyable: it travels through this serializer only.)
struct claims {
  std::uint64_t bytes = 0;
  bool writable = false;
  ~claims() {}
};

}  // namespace

template <>
struct armi::serializer<claims> {
  static void pack(armi::packer& p, claims const& c) {
    p(c.bytes);
    p(c.writable);
    if (!p.measuring() && !c.writable) throw std::logic_error("claims: asked to write its bytes");
    static std::byte const zeros[1 << 16] = {};  // measured, never read
    for (std::uint64_t left = c.bytes; left != 0;) {
      std::size_t const n = static_cast<std::size_t>(std::min<std::uint64_t>(left, sizeof zeros));
      p.write_bytes(zeros, n);
      left -= n;
    }
  }
  static claims unpack(armi::unpacker& u) {
    claims c;
    c.bytes = u.read<std::uint64_t>();
    c.writable = u.read<bool>();
    u.take_bytes(static_cast<std::size_t>(c.bytes));  // the zeros
    return c;
  }
};

namespace {

class limits_target : public armi::p_object {
 public:
  void take(claims const&) { ++m_taken; }
  int take_sync(claims const&) { return ++m_taken; }
  claims answer(std::uint64_t bytes) { return claims{bytes}; }
  // A writable claim of `bytes` on location `at`, of 8 elsewhere.
  claims claim_at(armi::location_id at, std::uint64_t bytes, bool writable) const {
    return armi::get_location_id() == at ? claims{bytes, writable} : claims{8, true};
  }
  void add(int v) {
    m_sum += v;
    ++m_adds;
  }
  int sum() const { return m_sum; }
  int taken() const { return m_taken; }
  int adds() const { return m_adds; }

 private:
  int m_taken = 0, m_sum = 0, m_adds = 0;
};

// Runs f, which must throw E; returns its what() ("" and a failure if it
// threw nothing or something else).
template <class E, class F>
std::string thrown(F&& f) {
  std::string const where = "location " + std::to_string(armi::get_location_id()) + ": expected " +
                            armi::detail::type_name<E>() + ", ";
  try {
    f();
  } catch (E const& e) {
    return e.what();
  } catch (std::exception const& e) {
    armi_test::failures().add(where + "got " + armi::detail::demangle(typeid(e).name()) + ": " + e.what());
    return "";
  }
  armi_test::failures().add(where + "nothing was thrown");
  return "";
}

bool has(std::string const& s, char const* part) { return s.find(part) != std::string::npos; }

// Whether location b is in another MPI process than a (mpi, mixed); empty
// where the test cannot tell (mixed without --armi-locations).
std::optional<bool> other_mpi_process(armi::location_id a, armi::location_id b) {
  armi::config const& cfg = armi_test::run_config();
  std::string const backend = armi::effective_backend(cfg);
  if (backend == "mpi") return a != b;
  if (backend == "mixed") {
    if (cfg.locations == 0) return std::nullopt;
    return a / cfg.locations != b / cfg.locations;
  }
  return false;
}

}  // namespace

TEST_CASE("by_value: a request or an answer too large to send is an error at the caller, and loses nothing",
          "[by_value][limits]") {
  armi_test::run([&] {
    limits_target t;
    auto const h = t.get_rmi_handle();
    armi::rmi_fence();
    auto const me = armi::get_location_id();
    auto const n = armi::get_num_locations();
    auto const dest = (me + 1) % n;
    // Over 2^32 bytes: no backend's header can count them.
    constexpr std::uint64_t huge = std::uint64_t{5} << 30;
    char const* const too_large = "is larger than one can be";

    ARMI_CHECK(has(thrown<std::length_error>([&] { armi::async_rmi(dest, h, &limits_target::take, claims{huge}); }),
                   too_large));
    ARMI_CHECK(has(thrown<std::length_error>(
                       [&] { (void)armi::sync_rmi(dest, h, &limits_target::take_sync, claims{huge}); }),
                   too_large));
    ARMI_CHECK(has(thrown<std::length_error>(
                       [&] { (void)armi::opaque_rmi(dest, h, &limits_target::take_sync, claims{huge}); }),
                   too_large));
    if (me == 0) {  // all or none: it reaches no member
      ARMI_CHECK(has(thrown<std::length_error>([&] { armi::broadcast_rmi(h, &limits_target::take, claims{huge}); }),
                     too_large));
    }
    // A packing that throws midway leaves nothing of its request behind.
    ARMI_CHECK(has(thrown<std::logic_error>([&] { armi::async_rmi(dest, h, &limits_target::take, claims{64}); }),
                   "claims: asked to write"));
    ARMI_CHECK(has(thrown<std::logic_error>(
                       [&] { (void)armi::sync_rmi(dest, h, &limits_target::take_sync, claims{64}); }),
                   "claims: asked to write"));
    // An answer too large to send comes back as the caller's error.
    auto const answer_error = [&](auto&& call) {
      try {
        call();
        ARMI_CHECK(!"the answer arrived");
      } catch (armi::remote_error const& e) {
        ARMI_CHECK(has(e.type_name(), "length_error"));
        ARMI_CHECK(has(e.what(), too_large));
      }
    };
    answer_error([&] { (void)armi::sync_rmi(dest, h, &limits_target::answer, huge); });
    answer_error([&] { (void)armi::opaque_rmi(dest, h, &limits_target::answer, huge).get(); });
    // 3 GiB: over what one MPI message carries (an int counts its bytes),
    // under the wire format's limit.  To another MPI process it is too large;
    // anywhere else it is packed (and the claim throws).  Location 0 only:
    // packing it reserves that much address space.
    if (auto const other = other_mpi_process(me, dest); me == 0 && other) {
      claims const three{std::uint64_t{3} << 30};
      if (*other)
        ARMI_CHECK(has(thrown<std::length_error>([&] { armi::async_rmi(dest, h, &limits_target::take, three); }),
                       too_large));
      else
        ARMI_CHECK(has(thrown<std::logic_error>([&] { armi::async_rmi(dest, h, &limits_target::take, three); }),
                       "claims: asked to write"));
    }
    // allreduce_rmi fails on every member: a contribution too large to send,
    // a result too large to send back, a packing that throws.  The member
    // where it happened throws its own error, the others a remote_error.
    if (n > 1) {
      struct first {
        claims operator()(claims a, claims const&) const { return a; }
      };
      auto const fails_at = [&](armi::location_id at, std::uint64_t bytes, bool writable, char const* type,
                                char const* what) {
        armi_test::thrown_error const e = armi_test::collective_failure(
            at, [&] { (void)armi::allreduce_rmi(h, &limits_target::claim_at, first{}, at, bytes, writable); });
        ARMI_CHECK(has(e.type, type));
        ARMI_CHECK(has(e.what, what));
      };
      fails_at(n - 1, huge, true, "length_error", too_large);
      fails_at(0, huge, true, "length_error", too_large);  // the leader's result, op(huge, ...)
      fails_at(n - 1, 64, false, "logic_error", "claims: asked to write");
      ARMI_CHECK_EQ(armi::allreduce_rmi(h, &limits_target::claim_at, first{}, 0, 64, true).bytes, 64u);
    }
    // What is sent around these arrives, once each, in order.
    for (int i = 1; i <= 3; ++i) armi::async_rmi(dest, h, &limits_target::add, i);
    ARMI_CHECK_EQ(armi::sync_rmi(dest, h, &limits_target::sum), 6);
    armi::rmi_fence();
    ARMI_CHECK_EQ(t.taken(), 0);
    ARMI_CHECK_EQ(t.adds(), 3);
    armi::rmi_fence();
  });
}
