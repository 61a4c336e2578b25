// Serialization (docs/design.md §2, "Arguments"; the ARMI paper §3.4, Fig. 4(a)):
//  - every travelling type round-trips through armi::packer / armi::unpacker
//    (measure, write, read back, nothing left over);
//  - define_type members declared local, dynamic and offset: the receiver
//    gets a NEW heap block with equal contents, and an offset pointer points
//    to the same position inside the receiver's block;
//  - the standard types armi knows, nested, empty and full; a user
//    armi::serializer<T>; trivially copyable structs;
//  - the same values through real RMIs (sync_rmi there and back, async_rmi,
//    opaque_rmi) with 1 and 3 locations and several aggregation factors,
//    including payloads far larger than one aggregation buffer.
#include "support/test_support.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

namespace {

// ---- the paper's Fig. 4(a) ---------------------------------------------------------

// objectB: a local size and a heap array of that size.
class objectB {
 public:
  int size = 0;
  int* array = nullptr;

  objectB() = default;
  explicit objectB(int n, int seed = 1)
      : size(n), array(n != 0 ? new int[static_cast<std::size_t>(n)] : nullptr) {
    for (int i = 0; i < n; ++i) array[i] = seed * 1000 + i * 7 - 3;
  }
  objectB(objectB const& o)
      : size(o.size), array(o.size != 0 ? new int[static_cast<std::size_t>(o.size)] : nullptr) {
    std::copy(o.array, o.array + o.size, array);
  }
  objectB(objectB&& o) noexcept
      : size(std::exchange(o.size, 0)), array(std::exchange(o.array, nullptr)) {}
  objectB& operator=(objectB o) noexcept {
    std::swap(size, o.size);
    std::swap(array, o.array);
    return *this;
  }
  ~objectB() { delete[] array; }

  void define_type(armi::typer& t) {
    t.local(size);
    t.dynamic(array, size);
  }

  friend bool operator==(objectB const& x, objectB const& y) {
    return x.size == y.size && std::equal(x.array, x.array + x.size, y.array);
  }
};

class objectA {
 public:
  double a[10] = {};
  objectB b;

  objectA() = default;
  explicit objectA(int seed) : b(seed + 3, seed) {
    for (int i = 0; i < 10; ++i) a[i] = seed + i * 0.25;
  }

  void define_type(armi::typer& t) {
    t.local(a, 10);
    t.local(b);
  }

  friend bool operator==(objectA const& x, objectA const& y) {
    return std::equal(x.a, x.a + 10, y.a) && x.b == y.b;
  }
};

// ---- offset: a growable buffer with a begin pointer and a cursor into it ------------

class cursor_buffer {
 public:
  cursor_buffer() = default;
  cursor_buffer(std::size_t cap, std::size_t used)
      : m_cap(cap), m_begin(cap != 0 ? new int[cap] : nullptr) {
    for (std::size_t i = 0; i < cap; ++i) m_begin[i] = static_cast<int>(i * i);
    m_cur = m_begin + used;
  }
  cursor_buffer(cursor_buffer const& o)
      : m_cap(o.m_cap), m_begin(o.m_cap != 0 ? new int[o.m_cap] : nullptr) {
    std::copy(o.m_begin, o.m_begin + o.m_cap, m_begin);
    m_cur = o.m_cur == nullptr ? nullptr : m_begin + (o.m_cur - o.m_begin);
  }
  cursor_buffer(cursor_buffer&& o) noexcept
      : m_cap(std::exchange(o.m_cap, 0)),
        m_begin(std::exchange(o.m_begin, nullptr)),
        m_cur(std::exchange(o.m_cur, nullptr)) {}
  cursor_buffer& operator=(cursor_buffer o) noexcept {
    std::swap(m_cap, o.m_cap);
    std::swap(m_begin, o.m_begin);
    std::swap(m_cur, o.m_cur);
    return *this;
  }
  ~cursor_buffer() { delete[] m_begin; }

  void clear_cursor() { m_cur = nullptr; }
  int const* block() const { return m_begin; }
  int const* cursor() const { return m_cur; }
  std::size_t capacity() const { return m_cap; }
  // -1 for a null cursor.
  std::ptrdiff_t used() const { return m_cur == nullptr ? -1 : m_cur - m_begin; }

  void define_type(armi::typer& t) {
    t.local(m_cap);
    t.dynamic(m_begin, m_cap);
    t.offset(m_cur, m_begin);
  }

  friend bool operator==(cursor_buffer const& x, cursor_buffer const& y) {
    return x.m_cap == y.m_cap && x.used() == y.used() &&
           std::equal(x.m_begin, x.m_begin + x.m_cap, y.m_begin);
  }

 private:
  std::size_t m_cap = 0;
  int* m_begin = nullptr;
  int* m_cur = nullptr;
};

// Two dynamic blocks of different element types, offsets into each (declared
// after both): each offset must resolve against its own block.
class two_blocks {
 public:
  two_blocks() = default;
  two_blocks(std::size_t n, std::size_t m, std::size_t i, std::size_t j)
      : m_n(n), m_m(m), m_a(new double[n]), m_b(new char[m]) {
    for (std::size_t k = 0; k < n; ++k) m_a[k] = static_cast<double>(k) + 0.5;
    for (std::size_t k = 0; k < m; ++k) m_b[k] = static_cast<char>('a' + k % 26);
    m_pa = m_a + i;
    m_pb = m_b + j;
  }
  two_blocks(two_blocks const&) = delete;
  two_blocks& operator=(two_blocks const&) = delete;
  two_blocks(two_blocks&& o) noexcept { swap(o); }
  two_blocks& operator=(two_blocks&& o) noexcept {
    swap(o);
    return *this;
  }
  ~two_blocks() {
    delete[] m_a;
    delete[] m_b;
  }
  void swap(two_blocks& o) noexcept {
    std::swap(m_n, o.m_n);
    std::swap(m_m, o.m_m);
    std::swap(m_a, o.m_a);
    std::swap(m_b, o.m_b);
    std::swap(m_pa, o.m_pa);
    std::swap(m_pb, o.m_pb);
  }

  void define_type(armi::typer& t) {
    t.local(m_n);
    t.local(m_m);
    t.dynamic(m_a, m_n);
    t.dynamic(m_b, m_m);
    t.offset(m_pb, m_b);
    t.offset(m_pa, m_a);
  }

  std::size_t n() const { return m_n; }
  std::size_t m() const { return m_m; }
  double const* a() const { return m_a; }
  char const* b() const { return m_b; }
  double const* pa() const { return m_pa; }
  char const* pb() const { return m_pb; }

 private:
  std::size_t m_n = 0, m_m = 0;
  double* m_a = nullptr;
  char* m_b = nullptr;
  double* m_pa = nullptr;
  char* m_pb = nullptr;
};

// ---- nested define_type ----------------------------------------------------------------

struct inner_record {
  std::string name;
  std::vector<int> values;
  void define_type(armi::typer& t) {
    t.local(name);
    t.local(values);
  }
  friend bool operator==(inner_record const&, inner_record const&) = default;
};

struct outer_record {
  int id = 0;
  inner_record first;
  std::vector<inner_record> rest;
  objectA fig4;
  std::map<std::string, objectB> blocks;
  std::optional<inner_record> maybe;
  void define_type(armi::typer& t) {
    t.local(id);
    t.local(first);
    t.local(rest);
    t.local(fig4);
    t.local(blocks);
    t.local(maybe);
  }
  friend bool operator==(outer_record const&, outer_record const&) = default;
};

// ---- a user armi::serializer<T> --------------------------------------------------------

// Not default-constructible, not trivially copyable, no define_type: it travels
// only through its serializer, which sends the value scaled and a tag, and
// marks what it unpacked so the test can see the serializer ran.
class temperature {
 public:
  explicit temperature(double kelvin, bool unpacked = false)
      : m_kelvin(kelvin), m_unpacked(unpacked) {}
  temperature(temperature const& o) : m_kelvin(o.m_kelvin), m_unpacked(o.m_unpacked) {}
  temperature& operator=(temperature const& o) {
    m_kelvin = o.m_kelvin;
    m_unpacked = o.m_unpacked;
    return *this;
  }
  ~temperature() {}
  double kelvin() const { return m_kelvin; }
  bool unpacked() const { return m_unpacked; }
  friend bool operator==(temperature const& x, temperature const& y) {
    return x.m_kelvin == y.m_kelvin;
  }

 private:
  double m_kelvin;
  bool m_unpacked;
};

constexpr std::uint32_t temperature_tag = 0x7e3a11feu;

}  // namespace

template <>
struct armi::serializer<temperature> {
  static void pack(armi::packer& p, temperature const& t) {
    p(temperature_tag);
    p(static_cast<std::int64_t>(t.kelvin() * 1000.0));
  }
  static temperature unpack(armi::unpacker& u) {
    auto const tag = u.read<std::uint32_t>();
    auto const milli = u.read<std::int64_t>();
    return temperature(tag == temperature_tag ? static_cast<double>(milli) / 1000.0 : -1.0, true);
  }
};

namespace {

// ---- trivially copyable -----------------------------------------------------------------

enum class colour : std::uint8_t { red = 1, green = 2, blue = 3 };

struct point {
  int x;
  double y;
  char tag[3];
  colour c;
  friend bool operator==(point const& a, point const& b) {
    return a.x == b.x && a.y == b.y && std::equal(a.tag, a.tag + 3, b.tag) && a.c == b.c;
  }
};
static_assert(std::is_trivially_copyable_v<point>);

// ---- sample values: sample<T>(k) is deterministic, so the receiver can rebuild
//      what the sender sent and compare without trusting the wire --------------------

template <class T>
struct tag {};

int pos(int k) {
  return k < 0 ? -k : k;
}

std::string sample(tag<std::string>, int k) {
  return "str-" + std::to_string(k) + std::string(static_cast<std::size_t>(pos(k) % 5), 'x');
}
int sample(tag<int>, int k) {
  return k * 31 - 7;
}
double sample(tag<double>, int k) {
  return k * 0.125 - 1.0;
}
char sample(tag<char>, int k) {
  return static_cast<char>('A' + pos(k) % 26);
}
point sample(tag<point>, int k) {
  return point{k, k * 1.5, {'p', static_cast<char>('0' + k % 10), 'q'}, colour::green};
}
objectB sample(tag<objectB>, int k) {
  return objectB(pos(k) % 7 + 1, k);
}
objectA sample(tag<objectA>, int k) {
  return objectA(pos(k));
}
cursor_buffer sample(tag<cursor_buffer>, int k) {
  std::size_t const cap = static_cast<std::size_t>(pos(k) % 9 + 1);
  return cursor_buffer(cap, static_cast<std::size_t>(pos(k)) % (cap + 1));
}
inner_record sample(tag<inner_record>, int k) {
  return inner_record{"inner" + std::to_string(k),
                      std::vector<int>(static_cast<std::size_t>(pos(k) % 4), k)};
}
outer_record sample(tag<outer_record>, int k) {
  outer_record r;
  r.id = k;
  r.first = sample(tag<inner_record>{}, k + 1);
  for (int i = 0; i < k % 4 + 1; ++i) r.rest.push_back(sample(tag<inner_record>{}, k + 10 + i));
  r.fig4 = objectA(k + 2);
  r.blocks.emplace("one", objectB(3, k));
  r.blocks.emplace("empty", objectB());
  if (k % 2 == 0) r.maybe = sample(tag<inner_record>{}, k + 100);
  return r;
}
temperature sample(tag<temperature>, int k) {
  return temperature(273.125 + k);
}

template <class T>
std::vector<T> sample(tag<std::vector<T>>, int k) {
  std::vector<T> v;
  for (int i = 0; i < k % 6 + 2; ++i) v.push_back(sample(tag<T>{}, k + i));
  return v;
}
template <class T>
std::deque<T> sample(tag<std::deque<T>>, int k) {
  std::deque<T> v;
  for (int i = 0; i < k % 5 + 2; ++i) v.push_front(sample(tag<T>{}, k * 2 + i));
  return v;
}
template <class T>
std::list<T> sample(tag<std::list<T>>, int k) {
  std::list<T> v;
  for (int i = 0; i < k % 5 + 3; ++i) v.push_back(sample(tag<T>{}, k * 3 + i));
  return v;
}
template <class T>
std::set<T> sample(tag<std::set<T>>, int k) {
  std::set<T> v;
  for (int i = 0; i < k % 5 + 3; ++i) v.insert(sample(tag<T>{}, k * 5 + i));
  return v;
}
template <class T>
std::unordered_set<T> sample(tag<std::unordered_set<T>>, int k) {
  std::unordered_set<T> v;
  for (int i = 0; i < k % 5 + 3; ++i) v.insert(sample(tag<T>{}, k * 5 + i));
  return v;
}
template <class K, class V>
std::map<K, V> sample(tag<std::map<K, V>>, int k) {
  std::map<K, V> v;
  for (int i = 0; i < k % 4 + 2; ++i) v.emplace(sample(tag<K>{}, k + i), sample(tag<V>{}, k - i));
  return v;
}
template <class K, class V>
std::unordered_map<K, V> sample(tag<std::unordered_map<K, V>>, int k) {
  std::unordered_map<K, V> v;
  for (int i = 0; i < k % 4 + 2; ++i) v.emplace(sample(tag<K>{}, k + i), sample(tag<V>{}, k - i));
  return v;
}
template <class A, class B>
std::pair<A, B> sample(tag<std::pair<A, B>>, int k) {
  return {sample(tag<A>{}, k), sample(tag<B>{}, k + 1)};
}
template <class... Ts>
std::tuple<Ts...> sample(tag<std::tuple<Ts...>>, int k) {
  return std::tuple<Ts...>(sample(tag<Ts>{}, k)...);
}
template <class T>
std::optional<T> sample(tag<std::optional<T>>, int k) {
  if (k % 3 == 0) return std::nullopt;
  return sample(tag<T>{}, k);
}
template <class T, std::size_t N>
std::array<T, N> sample(tag<std::array<T, N>>, int k) {
  std::array<T, N> a{};
  for (std::size_t i = 0; i < N; ++i) a[i] = sample(tag<T>{}, k + static_cast<int>(i));
  return a;
}
// A variant: the alternative chosen by k, cycling through all of them.
template <class... Ts>
std::variant<Ts...> sample(tag<std::variant<Ts...>>, int k) {
  std::size_t const which = static_cast<std::size_t>(k) % sizeof...(Ts);
  std::variant<Ts...> v;
  std::size_t i = 0;
  ((i++ == which ? (v.template emplace<Ts>(sample(tag<Ts>{}, k)), true) : false) || ...);
  return v;
}

template <class T>
T sample(int k) {
  return sample(tag<T>{}, k);
}

// ---- pack / unpack helper -------------------------------------------------------------------

template <class T>
T round_trip(T const& v) {
  armi::packer measure;
  measure(v);
  std::size_t const bytes = measure.size();
  std::vector<std::byte> buf(bytes);
  armi::packer p(buf.data(), buf.size());
  p.write(v);
  REQUIRE(p.size() == bytes);
  armi::unpacker u(buf.data(), buf.size());
  T out = u.read<T>();
  CHECK(u.remaining() == 0);
  return out;
}

template <class T>
void check_round_trip(T const& v) {
  T const out = round_trip(v);
  CHECK(out == v);
}

// ---- the shared object the RMI tests call -----------------------------------------------

class mailbox : public armi::p_object {
 public:
  template <class T>
  T echo(T v) {
    return v;
  }
  // Compares with the value the sender built from the same k.
  template <class T>
  bool matches(T v, int k) {
    return v == sample<T>(k);
  }
  // round: which call of rmi_round_trips sent it (requests of the next round
  // may arrive while this location still waits in the last fence of a round).
  template <class T>
  void deliver(T v, int k, int round) {
    ++m_by_round[round];
    ++m_received;
    if (!(v == sample<T>(k))) ++m_bad;
  }

  // Fig. 4(a): the receiver's heap blocks are new ones.
  bool check_b(objectB b, std::uintptr_t sender_block, int k) {
    return b == sample<objectB>(k) && reinterpret_cast<std::uintptr_t>(b.array) != sender_block;
  }
  bool check_a(objectA a, std::uintptr_t sender_block, int k) {
    return a == sample<objectA>(k) && reinterpret_cast<std::uintptr_t>(a.b.array) != sender_block;
  }
  bool check_cursor(cursor_buffer c, std::uintptr_t sender_block, std::ptrdiff_t used) {
    bool ok = reinterpret_cast<std::uintptr_t>(c.block()) != sender_block && c.used() == used;
    if (used >= 0) ok = ok && c.cursor() == c.block() + used;
    return ok;
  }
  objectB make_b(int k) { return sample<objectB>(k); }
  // broadcast_rmi target: counts the copies that arrived intact in a new block.
  void receive_broadcast(objectA a, std::uintptr_t sender_block, int k) {
    ++m_broadcasts;
    if (a == sample<objectA>(k) && reinterpret_cast<std::uintptr_t>(a.b.array) != sender_block)
      ++m_broadcasts_ok;
  }
  int broadcasts() const { return m_broadcasts; }
  int broadcasts_ok() const { return m_broadcasts_ok; }
  // The receiver keeps the pointers of what it got, so the sender can compare.
  std::uintptr_t block_of(objectB b) { return reinterpret_cast<std::uintptr_t>(b.array); }

  bool temperature_ok(temperature t, int k) { return t.unpacked() && t == sample<temperature>(k); }

  std::uint64_t checksum(std::vector<std::uint8_t> const& big) {
    std::uint64_t s = big.size();
    for (std::size_t i = 0; i < big.size(); ++i) s = s * 1099511628211ULL + big[i];
    return s;
  }
  void deliver_big(std::vector<std::uint8_t> big, std::uint64_t expected) {
    ++m_received;
    if (checksum(big) != expected) ++m_bad;
  }

  int received() const { return m_received; }
  int received_in(int round) const {
    auto const it = m_by_round.find(round);
    return it == m_by_round.end() ? 0 : it->second;
  }
  int bad() const { return m_bad; }
  int next_round() { return m_rounds++; }

 private:
  std::map<int, int> m_by_round;
  int m_broadcasts = 0;
  int m_broadcasts_ok = 0;
  int m_rounds = 0;
  int m_received = 0;
  int m_bad = 0;
};

std::vector<std::uint8_t> big_vector(std::size_t n, unsigned seed) {
  std::vector<std::uint8_t> v(n);
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<std::uint8_t>(x >> 24);
  }
  return v;
}

std::vector<armi::config> configs() {
  std::vector<armi::config> out;
  for (auto [n, agg] : {std::pair<std::uint32_t, std::size_t>{1, 64}, {3, 1}, {3, 5}, {3, 64}}) {
    armi::config c;
    c.locations = n;
    c.aggregation = agg;
    out.push_back(c);
  }
  return out;
}

// Sends sample<T>(k) for several k to the next location (and to itself):
// sync_rmi there and back, sync_rmi compared by the receiver, opaque_rmi,
// async_rmi counted by the receiver after a fence.
template <class T>
void rmi_round_trips(mailbox& mb) {
  auto const me = armi::get_location_id();
  auto const n = armi::get_num_locations();
  auto const h = mb.get_rmi_handle();
  int const round = mb.next_round();
  int const rounds = 6;
  for (armi::location_id dest : {static_cast<armi::location_id>((me + 1) % n), me}) {
    for (int k = 0; k < rounds; ++k) {
      int const key = k + static_cast<int>(me) * 3;
      T const v = sample<T>(key);
      T const back = armi::sync_rmi(dest, h, &mailbox::echo<T>, v);
      ARMI_CHECK(back == v);
      ARMI_CHECK(armi::sync_rmi(dest, h, &mailbox::matches<T>, v, key));
      armi::future<bool> f = armi::opaque_rmi(dest, h, &mailbox::matches<T>, v, key);
      ARMI_CHECK(f.get());
      armi::async_rmi(dest, h, &mailbox::deliver<T>, v, key, round);
    }
  }
  armi::rmi_fence();
  // Every location sent `rounds` to itself and `rounds` to its successor,
  // so it received 2 * rounds (with one location both are itself).
  ARMI_CHECK_EQ(mb.received_in(round), 2 * rounds);
  ARMI_CHECK_EQ(mb.bad(), 0);
  armi::rmi_fence();
}

}  // namespace

// =====================================================================================
// pack / unpack
// =====================================================================================

TEST_CASE("Fig. 4(a) objectB round-trips into a new heap block", "[serialization][define_type]") {
  objectB const b(12, 5);
  objectB const out = round_trip(b);
  CHECK(out.size == 12);
  REQUIRE(out.array != nullptr);
  CHECK(out.array != b.array);
  CHECK(out == b);

  objectB const empty;
  objectB const out_empty = round_trip(empty);
  CHECK(out_empty.size == 0);
  CHECK(out_empty == empty);
}

TEST_CASE("Fig. 4(a) objectA (local array + nested define_type) round-trips",
          "[serialization][define_type]") {
  objectA const a(9);
  objectA const out = round_trip(a);
  CHECK(out == a);
  for (int i = 0; i < 10; ++i) CHECK(out.a[i] == a.a[i]);
  REQUIRE(out.b.array != nullptr);
  CHECK(out.b.array != a.b.array);
  CHECK(out.b.size == a.b.size);
}

TEST_CASE("offset pointers land at the same position in the receiver's block",
          "[serialization][define_type]") {
  for (std::size_t cap : {1u, 4u, 17u}) {
    for (std::size_t used = 0; used <= cap; ++used) {  // used == cap: one past the end
      cursor_buffer const c(cap, used);
      cursor_buffer const out = round_trip(c);
      CHECK(out == c);
      REQUIRE(out.block() != nullptr);
      CHECK(out.block() != c.block());
      CHECK(out.cursor() == out.block() + used);
    }
  }
  cursor_buffer c(5, 2);
  c.clear_cursor();
  cursor_buffer const out = round_trip(c);
  CHECK(out.cursor() == nullptr);
  CHECK(out.capacity() == 5);

  cursor_buffer const none;  // no block, null cursor
  cursor_buffer const out_none = round_trip(none);
  CHECK(out_none.capacity() == 0);
  CHECK(out_none.cursor() == nullptr);
}

TEST_CASE("offsets resolve against their own dynamic block", "[serialization][define_type]") {
  two_blocks const t(7, 30, 3, 29);
  two_blocks const out = round_trip(t);
  REQUIRE(out.n() == 7);
  REQUIRE(out.m() == 30);
  CHECK(out.a() != t.a());
  CHECK(out.b() != t.b());
  CHECK(std::equal(t.a(), t.a() + 7, out.a()));
  CHECK(std::equal(t.b(), t.b() + 30, out.b()));
  CHECK(out.pa() == out.a() + 3);
  CHECK(out.pb() == out.b() + 29);
}

TEST_CASE("nested define_type objects and vectors of them round-trip",
          "[serialization][define_type]") {
  for (int k = 0; k < 6; ++k) {
    check_round_trip(sample<outer_record>(k));
    check_round_trip(sample<std::vector<objectB>>(k));
    check_round_trip(sample<std::vector<objectA>>(k));
    check_round_trip(sample<std::vector<inner_record>>(k));
    check_round_trip(sample<std::vector<cursor_buffer>>(k));
    check_round_trip(sample<std::map<std::string, objectA>>(k));
  }
  // Every element of a vector of objectB gets its own new block.
  auto const v = sample<std::vector<objectB>>(4);
  auto const out = round_trip(v);
  REQUIRE(out.size() == v.size());
  std::set<int const*> blocks;
  for (std::size_t i = 0; i < v.size(); ++i) {
    CHECK(out[i].array != v[i].array);
    blocks.insert(out[i].array);
  }
  CHECK(blocks.size() == v.size());
}

TEST_CASE("standard types round-trip", "[serialization][std]") {
  for (int k = 0; k < 9; ++k) {
    check_round_trip(sample<std::string>(k));
    check_round_trip(sample<std::vector<int>>(k));
    check_round_trip(sample<std::vector<double>>(k));
    check_round_trip(sample<std::vector<std::string>>(k));
    check_round_trip(sample<std::deque<int>>(k));
    check_round_trip(sample<std::deque<std::string>>(k));
    check_round_trip(sample<std::list<double>>(k));
    check_round_trip(sample<std::list<std::string>>(k));
    check_round_trip(sample<std::map<int, std::string>>(k));
    check_round_trip(sample<std::map<std::string, std::vector<int>>>(k));
    check_round_trip(sample<std::set<int>>(k));
    check_round_trip(sample<std::set<std::string>>(k));
    check_round_trip(sample<std::unordered_map<std::string, int>>(k));
    check_round_trip(sample<std::unordered_map<int, std::vector<std::string>>>(k));
    check_round_trip(sample<std::unordered_set<int>>(k));
    check_round_trip(sample<std::unordered_set<std::string>>(k));
    check_round_trip(sample<std::pair<int, std::string>>(k));
    check_round_trip(sample<std::pair<std::string, objectB>>(k));
    check_round_trip(sample<std::tuple<int, double, std::string, std::vector<int>>>(k));
    check_round_trip(sample<std::optional<std::string>>(k));
    check_round_trip(sample<std::optional<objectB>>(k));
    check_round_trip(sample<std::variant<int, std::string, std::vector<double>>>(k));
    check_round_trip(sample<std::array<int, 4>>(k));
    check_round_trip(sample<std::array<std::string, 3>>(k));
    check_round_trip(sample<point>(k));
    check_round_trip(sample<std::vector<point>>(k));
    check_round_trip(sample<std::array<point, 5>>(k));
  }
  std::vector<bool> bits{true, false, false, true, true, false, true};
  check_round_trip(bits);
  check_round_trip(std::tuple<>{});
  check_round_trip(std::make_tuple(std::string("a"), 'b', std::uint64_t{1} << 60, -3.5f));
  check_round_trip(colour::blue);
  check_round_trip(std::string("embedded\0nul", 12));
}

TEST_CASE("optional: empty and full", "[serialization][std]") {
  std::optional<int> const none;
  CHECK_FALSE(round_trip(none).has_value());
  std::optional<int> const some = 0;  // a full optional holding the value-initialised value
  auto const out = round_trip(some);
  REQUIRE(out.has_value());
  CHECK(*out == 0);
  std::optional<std::vector<std::string>> const empty_vec = std::vector<std::string>{};
  auto const out_vec = round_trip(empty_vec);
  REQUIRE(out_vec.has_value());
  CHECK(out_vec->empty());
}

TEST_CASE("variant: every alternative by index", "[serialization][std]") {
  using V = std::variant<int, std::string, std::vector<double>, objectB, std::monostate>;
  std::vector<V> values;
  values.emplace_back(std::in_place_index<0>, 42);
  values.emplace_back(std::in_place_index<1>, "forty-two");
  values.emplace_back(std::in_place_index<2>, std::vector<double>{4.0, 2.0});
  values.emplace_back(std::in_place_index<3>, objectB(4, 2));
  values.emplace_back(std::in_place_index<4>);
  for (auto const& v : values) {
    V const out = round_trip(v);
    CHECK(out.index() == v.index());
    CHECK(out == v);
  }
  // Two alternatives of the same type: the index must survive, not just the type.
  using W = std::variant<int, int, std::string>;
  W const second(std::in_place_index<1>, 7);
  W const out = round_trip(second);
  CHECK(out.index() == 1);
  CHECK(std::get<1>(out) == 7);
}

TEST_CASE("empty containers round-trip", "[serialization][std]") {
  check_round_trip(std::string{});
  check_round_trip(std::vector<int>{});
  check_round_trip(std::vector<std::string>{});
  check_round_trip(std::vector<objectB>{});
  check_round_trip(std::deque<double>{});
  check_round_trip(std::list<std::string>{});
  check_round_trip(std::map<int, int>{});
  check_round_trip(std::set<std::string>{});
  check_round_trip(std::unordered_map<int, std::string>{});
  check_round_trip(std::unordered_set<int>{});
  check_round_trip(std::vector<std::vector<int>>{{}, {}, {}});
  check_round_trip(std::map<std::string, std::vector<int>>{{"", {}}, {"x", {}}});
  check_round_trip(std::array<int, 0>{});
  check_round_trip(std::vector<bool>{});
}

TEST_CASE("nested standard types round-trip", "[serialization][std]") {
  using nested1 = std::vector<std::map<std::string, std::vector<std::pair<int, std::string>>>>;
  using nested2 = std::map<int, std::optional<std::variant<int, std::string, std::vector<double>>>>;
  using nested3 =
      std::unordered_map<std::string,
                         std::tuple<std::set<int>, std::deque<std::string>, std::list<double>>>;
  using nested4 = std::array<std::vector<std::optional<std::string>>, 3>;
  using nested5 = std::pair<std::vector<objectA>, std::map<std::string, std::vector<objectB>>>;
  for (int k = 0; k < 7; ++k) {
    check_round_trip(sample<nested1>(k));
    check_round_trip(sample<nested2>(k));
    check_round_trip(sample<nested3>(k));
    check_round_trip(sample<nested4>(k));
    check_round_trip(sample<nested5>(k));
  }
}

TEST_CASE("a user armi::serializer<T> is used", "[serialization][serializer]") {
  temperature const t(300.5);
  CHECK_FALSE(t.unpacked());
  temperature const out = round_trip(t);
  CHECK(out.unpacked());  // built by serializer<temperature>::unpack
  CHECK(out.kelvin() == 300.5);
  // Inside standard containers.
  std::vector<temperature> const v{temperature(1.0), temperature(2.5), temperature(-3.25)};
  auto const out_v = round_trip(v);
  REQUIRE(out_v.size() == 3);
  CHECK(out_v == v);
  for (auto const& e : out_v) CHECK(e.unpacked());
  std::optional<temperature> const o = temperature(4.0);
  auto const out_o = round_trip(o);
  REQUIRE(out_o.has_value());
  CHECK(out_o->unpacked());
  CHECK(out_o->kelvin() == 4.0);
  std::map<std::string, temperature> const m{{"a", temperature(10.0)}, {"b", temperature(20.0)}};
  auto const out_m = round_trip(m);
  CHECK(out_m == m);
  for (auto const& [key, value] : out_m) CHECK(value.unpacked());
}

TEST_CASE("a large payload round-trips", "[serialization][large]") {
  auto const big = big_vector(std::size_t{1} << 20, 3);
  CHECK(round_trip(big) == big);
  std::string const s(std::size_t{1} << 20, 'z');
  CHECK(round_trip(s) == s);
  objectB const b(1 << 18, 4);  // 1 MiB heap block
  objectB const out = round_trip(b);
  CHECK(out == b);
  CHECK(out.array != b.array);
}

TEST_CASE("truncated bytes do not decode", "[serialization][decode]") {
  auto const v = sample<std::vector<std::string>>(5);
  armi::packer measure;
  measure(v);
  std::vector<std::byte> buf(measure.size());
  armi::packer p(buf.data(), buf.size());
  p(v);
  for (std::size_t cut : {std::size_t{0}, std::size_t{3}, buf.size() / 2, buf.size() - 1}) {
    armi::unpacker u(buf.data(), cut);
    CHECK_THROWS(u.read<std::vector<std::string>>());
  }
}

// =====================================================================================
// through RMIs
// =====================================================================================

TEST_CASE("Fig. 4(a) objects through RMIs: new heap blocks and equal contents",
          "[serialization][rmi][define_type]") {
  for (auto const& cfg : configs()) {
    INFO("locations " << cfg.locations << " aggregation " << cfg.aggregation);
    armi_test::run(cfg, [] {
      mailbox mb;
      auto const me = armi::get_location_id();
      auto const n = armi::get_num_locations();
      auto const h = mb.get_rmi_handle();
      for (armi::location_id dest = 0; dest < n; ++dest) {
        for (int k = 0; k < 5; ++k) {
          int const key = k + static_cast<int>(me) * 10;
          objectB const b = sample<objectB>(key);
          objectA const a = sample<objectA>(key);
          auto const b_block = reinterpret_cast<std::uintptr_t>(b.array);
          auto const a_block = reinterpret_cast<std::uintptr_t>(a.b.array);
          ARMI_CHECK(armi::sync_rmi(dest, h, &mailbox::check_b, b, b_block, key));
          ARMI_CHECK(armi::sync_rmi(dest, h, &mailbox::check_a, a, a_block, key));
          // The receiver's block is not the sender's.
          ARMI_CHECK(armi::sync_rmi(dest, h, &mailbox::block_of, b) != b_block);
          // Returned by value: the caller gets a new block too.
          objectB const back = armi::sync_rmi(dest, h, &mailbox::echo<objectB>, b);
          ARMI_CHECK(back == b);
          ARMI_CHECK(back.array != b.array);
          objectA const back_a = armi::sync_rmi(dest, h, &mailbox::echo<objectA>, a);
          ARMI_CHECK(back_a == a);
          ARMI_CHECK(back_a.b.array != a.b.array);
          objectB const made = armi::sync_rmi(dest, h, &mailbox::make_b, key);
          ARMI_CHECK(made == b);

          cursor_buffer const c = sample<cursor_buffer>(key);
          ARMI_CHECK(armi::sync_rmi(dest, h, &mailbox::check_cursor, c,
                                    reinterpret_cast<std::uintptr_t>(c.block()), c.used()));
          cursor_buffer const back_c = armi::sync_rmi(dest, h, &mailbox::echo<cursor_buffer>, c);
          ARMI_CHECK(back_c == c);
          ARMI_CHECK(back_c.block() != c.block());
          ARMI_CHECK(back_c.cursor() == back_c.block() + c.used());
        }
      }
      armi::rmi_fence();
    });
  }
}

TEST_CASE("define_type objects as broadcast_rmi arguments", "[serialization][rmi][define_type]") {
  for (auto const& cfg : configs()) {
    INFO("locations " << cfg.locations << " aggregation " << cfg.aggregation);
    armi_test::run(cfg, [] {
      mailbox mb;
      auto const me = armi::get_location_id();
      auto const n = armi::get_num_locations();
      // Every location broadcasts one objectA; every location (the caller
      // included) gets its own copy of each.
      objectA const a = sample<objectA>(static_cast<int>(me) + 20);
      armi::broadcast_rmi(mb.get_rmi_handle(), &mailbox::receive_broadcast, a,
                          reinterpret_cast<std::uintptr_t>(a.b.array), static_cast<int>(me) + 20);
      armi::rmi_fence();
      ARMI_CHECK_EQ(mb.broadcasts(), static_cast<int>(n));
      ARMI_CHECK_EQ(mb.broadcasts_ok(), static_cast<int>(n));
      armi::rmi_fence();
    });
  }
}

TEST_CASE("define_type objects through every kind of RMI", "[serialization][rmi][define_type]") {
  for (auto const& cfg : configs()) {
    INFO("locations " << cfg.locations << " aggregation " << cfg.aggregation);
    armi_test::run(cfg, [] {
      mailbox mb;
      rmi_round_trips<objectB>(mb);
      rmi_round_trips<objectA>(mb);
      rmi_round_trips<cursor_buffer>(mb);
      rmi_round_trips<inner_record>(mb);
      rmi_round_trips<outer_record>(mb);
      rmi_round_trips<std::vector<objectB>>(mb);
      rmi_round_trips<std::vector<objectA>>(mb);
      rmi_round_trips<std::vector<outer_record>>(mb);
    });
  }
}

TEST_CASE("standard types through every kind of RMI", "[serialization][rmi][std]") {
  for (auto const& cfg : configs()) {
    INFO("locations " << cfg.locations << " aggregation " << cfg.aggregation);
    armi_test::run(cfg, [] {
      mailbox mb;
      rmi_round_trips<std::string>(mb);
      rmi_round_trips<std::vector<int>>(mb);
      rmi_round_trips<std::vector<std::string>>(mb);
      rmi_round_trips<std::deque<std::string>>(mb);
      rmi_round_trips<std::list<double>>(mb);
      rmi_round_trips<std::map<int, std::string>>(mb);
      rmi_round_trips<std::set<std::string>>(mb);
      rmi_round_trips<std::unordered_map<std::string, std::vector<int>>>(mb);
      rmi_round_trips<std::unordered_set<int>>(mb);
      rmi_round_trips<std::pair<int, std::string>>(mb);
      rmi_round_trips<std::tuple<int, double, std::string, std::vector<int>>>(mb);
      rmi_round_trips<std::optional<std::string>>(mb);  // empty for k % 3 == 0
      rmi_round_trips<std::variant<int, std::string, std::vector<double>>>(mb);  // each alternative
      rmi_round_trips<std::array<std::string, 3>>(mb);
      rmi_round_trips<std::array<int, 4>>(mb);
      rmi_round_trips<point>(mb);
      rmi_round_trips<std::vector<point>>(mb);
      rmi_round_trips<std::map<std::string, std::vector<std::pair<int, std::string>>>>(mb);
      rmi_round_trips<std::vector<std::optional<std::variant<int, std::string>>>>(mb);
      rmi_round_trips<temperature>(mb);
      rmi_round_trips<std::vector<temperature>>(mb);
    });
  }
}

// Standard types that are also trivially copyable (in libstdc++ optional<int>,
// variant<int, double>, array<double, 3>): the caller and the callee must agree
// on one encoding for them, as arguments and as results.
TEST_CASE("trivially copyable standard types through every kind of RMI",
          "[serialization][rmi][std]") {
  for (auto const& cfg : configs()) {
    INFO("locations " << cfg.locations << " aggregation " << cfg.aggregation);
    armi_test::run(cfg, [] {
      mailbox mb;
      rmi_round_trips<std::optional<int>>(mb);  // empty for k % 3 == 0
      rmi_round_trips<std::optional<double>>(mb);
      rmi_round_trips<std::optional<point>>(mb);
      rmi_round_trips<std::variant<int, double>>(mb);
      rmi_round_trips<std::variant<int, double, point>>(mb);
      rmi_round_trips<std::array<double, 3>>(mb);
      rmi_round_trips<std::pair<int, double>>(mb);
      rmi_round_trips<std::tuple<int, double, char>>(mb);
      rmi_round_trips<std::vector<std::optional<int>>>(mb);
    });
  }
}

TEST_CASE("a user serializer runs on the receiving side of an RMI",
          "[serialization][rmi][serializer]") {
  for (auto const& cfg : configs()) {
    INFO("locations " << cfg.locations << " aggregation " << cfg.aggregation);
    armi_test::run(cfg, [] {
      mailbox mb;
      auto const n = armi::get_num_locations();
      for (armi::location_id dest = 0; dest < n; ++dest) {
        for (int k = 0; k < 4; ++k) {
          ARMI_CHECK(armi::sync_rmi(dest, mb.get_rmi_handle(), &mailbox::temperature_ok,
                                    sample<temperature>(k), k));
          temperature const back = armi::sync_rmi(
              dest, mb.get_rmi_handle(), &mailbox::echo<temperature>, sample<temperature>(k));
          ARMI_CHECK(back.unpacked());
          ARMI_CHECK(back == sample<temperature>(k));
        }
      }
      armi::rmi_fence();
    });
  }
}

TEST_CASE("empty containers through RMIs", "[serialization][rmi][std]") {
  for (auto const& cfg : configs()) {
    armi_test::run(cfg, [] {
      mailbox mb;
      auto const h = mb.get_rmi_handle();
      auto const dest = (armi::get_location_id() + 1) % armi::get_num_locations();
      ARMI_CHECK(armi::sync_rmi(dest, h, &mailbox::echo<std::string>, std::string{}).empty());
      ARMI_CHECK(
          armi::sync_rmi(dest, h, &mailbox::echo<std::vector<int>>, std::vector<int>{}).empty());
      ARMI_CHECK(armi::sync_rmi(dest, h, &mailbox::echo<std::map<int, int>>, std::map<int, int>{})
                     .empty());
      ARMI_CHECK(
          armi::sync_rmi(dest, h, &mailbox::echo<std::list<std::string>>, std::list<std::string>{})
              .empty());
      ARMI_CHECK(armi::sync_rmi(dest, h, &mailbox::echo<std::unordered_set<int>>,
                                std::unordered_set<int>{})
                     .empty());
      ARMI_CHECK(
          armi::sync_rmi(dest, h, &mailbox::echo<std::vector<objectB>>, std::vector<objectB>{})
              .empty());
      ARMI_CHECK(!armi::sync_rmi(dest, h, &mailbox::echo<std::optional<int>>, std::optional<int>{})
                      .has_value());
      objectB const empty_b = armi::sync_rmi(dest, h, &mailbox::echo<objectB>, objectB{});
      ARMI_CHECK(empty_b.size == 0);
      armi::rmi_fence();
    });
  }
}

TEST_CASE("large payloads (1 MiB) through RMIs", "[serialization][rmi][large]") {
  std::size_t const mib = armi_test::scaled(std::size_t{1} << 20);
  for (auto const& cfg : configs()) {
    INFO("locations " << cfg.locations << " aggregation " << cfg.aggregation);
    armi_test::run(cfg, [mib] {
      mailbox mb;
      auto const me = armi::get_location_id();
      auto const h = mb.get_rmi_handle();
      auto const dest = (me + 1) % armi::get_num_locations();
      auto const big = big_vector(mib, me + 1);
      std::uint64_t const sum = mb.checksum(big);
      // sync there and back
      ARMI_CHECK_EQ(armi::sync_rmi(dest, h, &mailbox::checksum, big), sum);
      auto const back = armi::sync_rmi(dest, h, &mailbox::echo<std::vector<std::uint8_t>>, big);
      ARMI_CHECK(back == big);
      // async, mixed with small requests in the same buffers
      for (unsigned i = 0; i < 3; ++i) {
        armi::async_rmi(dest, h, &mailbox::deliver<int>, sample<int>(static_cast<int>(i)),
                        static_cast<int>(i), 0);
        auto const v = big_vector(mib / (i + 1), me * 10 + i);
        armi::async_rmi(dest, h, &mailbox::deliver_big, v, mb.checksum(v));
      }
      // opaque
      armi::future<std::uint64_t> f = armi::opaque_rmi(dest, h, &mailbox::checksum, big);
      ARMI_CHECK_EQ(f.get(), sum);
      // a big string and a big define_type block
      std::string const s(mib, static_cast<char>('a' + me));
      ARMI_CHECK(armi::sync_rmi(dest, h, &mailbox::echo<std::string>, s) == s);
      objectB const b(static_cast<int>(mib / sizeof(int)), static_cast<int>(me));
      objectB const back_b = armi::sync_rmi(dest, h, &mailbox::echo<objectB>, b);
      ARMI_CHECK(back_b == b);
      ARMI_CHECK(back_b.array != b.array);
      armi::rmi_fence();
      ARMI_CHECK_EQ(mb.received(), 6);  // a new mailbox: all of them are this test's
      ARMI_CHECK_EQ(mb.bad(), 0);
      armi::rmi_fence();
    });
  }
}
