// The encoding of one-sided operations that a transport carries out at the
// owner by itself (core/remote_memory.hpp): headers short and long round
// trip, each operation does what it says at each width, and a malformed
// operation is refused with a reason, leaving the block untouched.
#include <armi/core/remote_memory.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace d = armi::detail;

namespace {

// A message: op's header, then the operands.
template <class... V>
std::vector<std::byte> message(d::remote_op const& op, V const&... operands) {
  std::vector<std::byte> m;
  d::write_remote_header(m, op);
  [[maybe_unused]] auto add = [&m](auto const& v) {
    std::size_t const at = m.size();
    m.resize(at + sizeof v);
    std::memcpy(m.data() + at, &v, sizeof v);
  };
  (add(operands), ...);
  return m;
}

// Decodes and applies m to block; the reason it was refused, or empty.
// outcome: what became of it (a header that does not read is malformed).
std::string run(std::vector<std::byte> const& m, std::vector<std::byte>& block, std::vector<std::byte>& result,
                d::remote_outcome* outcome = nullptr) {
  d::remote_op op{};
  std::size_t header = 0;
  std::string why = d::read_remote_header(m, op, header);
  d::remote_outcome o = d::remote_outcome::malformed;
  if (why.empty())
    o = d::apply_remote(op, block.data(), block.size(), m.data() + header, m.size() - header, result, why);
  if (outcome != nullptr) *outcome = o;
  return o == d::remote_outcome::applied ? std::string() : why;
}

template <class T>
T as(std::vector<std::byte> const& bytes) {
  REQUIRE(bytes.size() == sizeof(T));
  T v;
  std::memcpy(&v, bytes.data(), sizeof v);
  return v;
}

}  // namespace

TEST_CASE("remote memory: a header is short when it can be, long otherwise, and reads back", "[remote_memory]") {
  struct shape {
    std::uint32_t region;
    std::uint64_t offset;
    std::size_t bytes;
  };
  for (auto [region, offset, bytes] : {shape{0, 0, 8}, shape{65535, 0xffffffffULL, 8}, shape{65536, 0, 16},
                                       shape{7, 1ULL << 32, 16}, shape{0xffffffffU, ~0ULL, 16}}) {
    for (std::uint8_t width : {1, 2, 4, 8}) {
      d::remote_op const op{d::remote_code::exchange, width, region, offset};
      std::vector<std::byte> m;
      d::write_remote_header(m, op);
      REQUIRE(m.size() == bytes);
      d::remote_op back{};
      std::size_t header = 0;
      REQUIRE(d::read_remote_header(m, back, header).empty());
      CHECK(header == bytes);
      CHECK(back.code == op.code);
      CHECK(back.width == width);
      CHECK(back.region == region);
      CHECK(back.offset == offset);
    }
  }
}

TEST_CASE("remote memory: an 8-byte get, put or add fits one 16-byte SP-AM request", "[remote_memory]") {
  CHECK(message(d::remote_op{d::remote_code::get, 1, 3, 800}, std::uint64_t{8}).size() == 16);
  CHECK(message(d::remote_op{d::remote_code::put, 1, 3, 800}, 2.5).size() == 16);
  CHECK(message(d::remote_op{d::remote_code::add_int, 8, 3, 800}, std::int64_t{-1}).size() == 16);
}

TEST_CASE("remote memory: get, put, add and exchange at every width", "[remote_memory]") {
  std::vector<std::byte> block(64, std::byte{0});
  std::vector<std::byte> result;
  // put then get, bytes 10..15
  std::array<std::uint8_t, 6> const six{1, 2, 3, 4, 5, 6};
  REQUIRE(run(message(d::remote_op{d::remote_code::put, 1, 0, 10}, six), block, result).empty());
  CHECK(result.empty());
  REQUIRE(run(message(d::remote_op{d::remote_code::get, 1, 0, 10}, std::uint64_t{6}), block, result).empty());
  CHECK(as<std::array<std::uint8_t, 6>>(result) == six);
  // integer adds wrap as the element type does; the old value comes back
  REQUIRE(run(message(d::remote_op{d::remote_code::add_int, 1, 0, 20}, std::uint8_t{250}), block, result).empty());
  REQUIRE(run(message(d::remote_op{d::remote_code::add_int, 1, 0, 20}, std::uint8_t{10}), block, result).empty());
  CHECK(as<std::uint8_t>(result) == 250);
  CHECK(static_cast<std::uint8_t>(block[20]) == 4);
  REQUIRE(run(message(d::remote_op{d::remote_code::add_int, 2, 0, 22}, std::int16_t{-3}), block, result).empty());
  REQUIRE(run(message(d::remote_op{d::remote_code::add_int, 4, 0, 24}, std::int32_t{-7}), block, result).empty());
  REQUIRE(run(message(d::remote_op{d::remote_code::add_int, 8, 0, 32}, std::int64_t{-9}), block, result).empty());
  CHECK(as<std::int64_t>(result) == 0);
  std::int16_t i16;
  std::int32_t i32;
  std::int64_t i64;
  std::memcpy(&i16, block.data() + 22, 2);
  std::memcpy(&i32, block.data() + 24, 4);
  std::memcpy(&i64, block.data() + 32, 8);
  CHECK(i16 == -3);
  CHECK(i32 == -7);
  CHECK(i64 == -9);
  // floating adds
  REQUIRE(run(message(d::remote_op{d::remote_code::add_float, 8, 0, 40}, 1.5), block, result).empty());
  REQUIRE(run(message(d::remote_op{d::remote_code::add_float, 8, 0, 40}, 2.25), block, result).empty());
  CHECK(as<double>(result) == 1.5);
  REQUIRE(run(message(d::remote_op{d::remote_code::add_float, 4, 0, 48}, 0.5f), block, result).empty());
  CHECK(as<float>(result) == 0.0f);
  double dv;
  std::memcpy(&dv, block.data() + 40, 8);
  CHECK(dv == 3.75);
  // exchange: replaced when equal, left when not; the old value either way
  REQUIRE(
      run(message(d::remote_op{d::remote_code::exchange, 8, 0, 56}, std::uint64_t{0}, std::uint64_t{77}), block, result)
          .empty());
  CHECK(as<std::uint64_t>(result) == 0);
  REQUIRE(
      run(message(d::remote_op{d::remote_code::exchange, 8, 0, 56}, std::uint64_t{0}, std::uint64_t{88}), block, result)
          .empty());
  CHECK(as<std::uint64_t>(result) == 77);
  REQUIRE(
      run(message(d::remote_op{d::remote_code::exchange, 2, 0, 22}, std::int16_t{-3}, std::int16_t{5}), block, result)
          .empty());
  std::memcpy(&i16, block.data() + 22, 2);
  CHECK(i16 == 5);
}

TEST_CASE("remote memory: a malformed operation is refused with a reason and changes nothing", "[remote_memory]") {
  std::vector<std::byte> block(16, std::byte{0x11});
  std::vector<std::byte> const before = block;
  std::vector<std::byte> result;
  // Out of range: the owner's block is smaller than the caller's (an error
  // for the caller); anything else: a forged message.
  auto refused = [&](std::vector<std::byte> const& m, std::string const& reason) {
    d::remote_outcome outcome = d::remote_outcome::applied;
    std::string const why = run(m, block, result, &outcome);
    INFO(why);
    CHECK(why.find(reason) != std::string::npos);
    CHECK(outcome == (reason.find("of a block") != std::string::npos ? d::remote_outcome::out_of_range
                                                                     : d::remote_outcome::malformed));
    CHECK(block == before);
  };
  auto m = message(d::remote_op{d::remote_code::get, 1, 0, 0}, std::uint64_t{8});
  m[0] = std::byte{0x07};
  refused(m, "unknown code");
  m[0] = std::byte{0x40};
  refused(m, "unknown code");
  m = message(d::remote_op{d::remote_code::get, 1, 0, 0}, std::uint64_t{8});
  m[1] = std::byte{0x01};
  refused(m, "unknown code");
  refused(std::vector<std::byte>(7), "shorter than its header");
  auto long_header = message(d::remote_op{d::remote_code::get, 1, 70000, 0});
  long_header.resize(12);
  refused(long_header, "shorter than its header");
  refused(message(d::remote_op{d::remote_code::get, 1, 0, 0}), "without its byte count");
  refused(message(d::remote_op{d::remote_code::get, 1, 0, 9}, std::uint64_t{8}), "bytes [9, 17) of a block of 16");
  refused(message(d::remote_op{d::remote_code::get, 1, 0, 0}, ~std::uint64_t{0}), "of a block of 16");
  refused(message(d::remote_op{d::remote_code::put, 1, 0, 12}, std::uint64_t{1}), "bytes [12, 20) of a block of 16");
  refused(message(d::remote_op{d::remote_code::add_int, 8, 0, 16}, std::uint64_t{1}),
          "bytes [16, 24) of a block of 16");
  refused(message(d::remote_op{d::remote_code::add_int, 8, 0, 0}, std::uint32_t{1}),
          "4 bytes of operands (8 expected)");
  refused(message(d::remote_op{d::remote_code::exchange, 4, 0, 0}, std::uint32_t{1}), "(8 expected)");
  refused(message(d::remote_op{d::remote_code::add_int, 4, 0, 2}, std::uint32_t{1}), "misaligned");
  refused(message(d::remote_op{d::remote_code::add_float, 2, 0, 0}, std::uint16_t{1}), "floating-point add of width 2");
}
