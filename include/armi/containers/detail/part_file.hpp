// detail::part_file: one location's part of a saved container, as a file,
// and the collective reading and writing of a directory of them (the
// machinery of containers/save_load.hpp; the format is documented in
// docs/guide/containers.md, "Save and load").
//
// A file is: the magic "ARMISAVE", u32 format version, u32 0x01020304 (the
// writer's byte order), u64 header length, the header, u64 checksum of the
// header, then the payload.  The header (armi's serialization: strings as
// u64 length + bytes, integers as their bytes) names the container kind and
// element type, the save's id, the number of parts, this part's index, the
// container's global size, the number of records here, the payload's length
// and checksum, and the distribution it was saved from.  A reader checks
// every field before it believes any: a short, damaged or foreign file is a
// file_error naming the file and what is wrong with it.
//
// Every error is agreed on (one allgather) before anything changes: a save
// either writes every part or reports, on every location, the first error;
// a load reads, checks and decodes every part it was given before any
// location applies a record.
#pragma once

#include <armi/containers/collective.hpp>
#include <armi/core/mix.hpp>
#include <armi/rmi.hpp>
#include <armi/serialization/packer.hpp>
#include <armi/serialization/serialize.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace armi {

/// A saved container could not be written or read: names the file and what is wrong.
///
/// Thrown by armi::save and armi::load on every location of the collective (each gets
/// the first error any location found), before anything of the container changed.
class file_error : public std::runtime_error {
 public:
  /// `path`: the file (or directory); `what`: the message, which names it.
  file_error(std::filesystem::path path, std::string const& what) : std::runtime_error(what), m_path(std::move(path)) {}
  /// The file or directory the error is about.
  std::filesystem::path const& path() const noexcept { return m_path; }

 private:
  std::filesystem::path m_path;
};

/// What a saved container's first part says about it (armi::saved_info).
struct saved_container {
  std::string kind;          ///< "pvector", "parray", "pgraph" or "punordered_map".
  std::string type;          ///< The element type(s), as the saving program named them.
  std::uint64_t size = 0;    ///< Elements, vertices or keys in the whole container.
  std::uint64_t parts = 0;   ///< The number of locations that saved it (one file each).
  std::string distribution;  ///< How it was distributed when saved (informative).
};

namespace detail {

inline constexpr char part_magic[8] = {'A', 'R', 'M', 'I', 'S', 'A', 'V', 'E'};
inline constexpr std::uint32_t part_version = 1;
inline constexpr std::uint32_t part_byte_order = 0x01020304;

// A 64-bit checksum of bytes: each 8-byte word (the tail zero-padded) mixed
// into the running value with mix64, seeded by the length.
inline std::uint64_t checksum64(std::byte const* data, std::size_t n) noexcept {
  std::uint64_t h = mix64(0x9E3779B97F4A7C15ULL ^ n);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, data + i, 8);
    h = mix64(h ^ w) + i;
  }
  if (i < n) {
    std::uint64_t w = 0;
    std::memcpy(&w, data + i, n - i);
    h = mix64(h ^ w) + i;
  }
  return h;
}

// The header of one part.
struct part_header {
  saved_container container;
  std::uint64_t save_id = 0;
  std::uint64_t part = 0;
  std::uint64_t records = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t payload_checksum = 0;

  void define_type(typer& t) {
    t.local(container.kind);
    t.local(container.type);
    t.local(save_id);
    t.local(container.parts);
    t.local(part);
    t.local(container.size);
    t.local(records);
    t.local(payload_bytes);
    t.local(payload_checksum);
    t.local(container.distribution);
  }
};

// The bytes of any travelling values, in armi's serialization: pack(p) is
// called twice (measure, then write).
template <class Pack>
std::vector<std::byte> packed_bytes(Pack&& pack) {
  packer measure;
  pack(measure);
  std::vector<std::byte> out(measure.size());
  packer write(out.data(), out.size());
  pack(write);
  return out;
}

inline std::filesystem::path part_path(std::filesystem::path const& dir, std::uint64_t part) {
  return dir / ("part-" + std::to_string(part) + ".armi");
}

// Collective: every location's error (empty: none), and the first one, as
// "location L: message", or "" when there is none.
inline std::pair<std::string, std::filesystem::path> first_error(std::string error, std::filesystem::path path) {
  std::vector<std::pair<std::string, std::string>> const all =
      allgather_value(std::pair<std::string, std::string>(std::move(error), path.string()));
  for (auto const& [message, where] : all)
    if (!message.empty()) return {message, where};
  return {};
}

// Collective: throws the first error any location found, on every location.
inline void agree_or_throw(std::string error, std::filesystem::path path = {}) {
  auto [message, where] = first_error(std::move(error), std::move(path));
  if (!message.empty()) throw file_error(where, message);
}

// Collective: writes this location's part.  `header` has the container's
// fields; records and pack (the payload, packed twice) are this location's.
// Location 0 creates the directory and draws the save's id first.
template <class Pack>
void save_parts(std::filesystem::path const& dir, part_header header, Pack&& pack) {
  location_id const me = get_location_id();
  std::string error;
  std::uint64_t id = 0;
  if (me == 0) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) error = "armi::save: cannot create the directory " + dir.string() + ": " + ec.message();
    std::random_device entropy;
    id = (std::uint64_t{entropy()} << 32) ^ entropy() ^
         static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  std::vector<std::uint64_t> const ids = allgather_value(id);
  agree_or_throw(me == 0 ? error : std::string(), dir);

  header.save_id = ids[0];
  header.container.parts = get_num_locations();
  header.part = me;
  std::vector<std::byte> const payload = packed_bytes(pack);
  header.payload_bytes = payload.size();
  header.payload_checksum = checksum64(payload.data(), payload.size());
  std::vector<std::byte> const head = packed_bytes([&](packer& p) { p.write(header); });
  std::uint64_t const head_bytes = head.size(), head_checksum = checksum64(head.data(), head.size());

  std::filesystem::path const path = part_path(dir, me);
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(part_magic, sizeof part_magic);
    out.write(reinterpret_cast<char const*>(&part_version), sizeof part_version);
    out.write(reinterpret_cast<char const*>(&part_byte_order), sizeof part_byte_order);
    out.write(reinterpret_cast<char const*>(&head_bytes), sizeof head_bytes);
    out.write(reinterpret_cast<char const*>(head.data()), static_cast<std::streamsize>(head.size()));
    out.write(reinterpret_cast<char const*>(&head_checksum), sizeof head_checksum);
    out.write(reinterpret_cast<char const*>(payload.data()), static_cast<std::streamsize>(payload.size()));
    out.close();
    if (!out) error = "armi::save: cannot write " + tmp.string();
  }
  if (error.empty()) {
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) error = "armi::save: cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message();
  }
  agree_or_throw(error, path);
}

// One part file, read and checked: its header and payload.
struct part_contents {
  part_header header;
  std::vector<std::byte> payload;
};

// Reads and checks the file at path; throws file_error naming it.
inline part_contents read_part(std::filesystem::path const& path) {
  auto const fail = [&](std::string const& what) -> file_error {
    return file_error(path, "armi::load: " + path.string() + ": " + what);
  };
  std::ifstream in(path, std::ios::binary);
  if (!in) throw fail("cannot open the file (missing, or not readable)");
  in.seekg(0, std::ios::end);
  std::streamoff const length = in.tellg();
  in.seekg(0, std::ios::beg);
  std::vector<std::byte> bytes(static_cast<std::size_t>(length < 0 ? 0 : length));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!in) throw fail("cannot read the file");

  std::size_t const prefix = sizeof part_magic + 2 * sizeof(std::uint32_t) + sizeof(std::uint64_t);
  if (bytes.size() < prefix || std::memcmp(bytes.data(), part_magic, sizeof part_magic) != 0)
    throw fail("not a container saved by armi (no ARMISAVE magic)");
  std::uint32_t version = 0, order = 0;
  std::uint64_t head_bytes = 0;
  std::memcpy(&version, bytes.data() + 8, 4);
  std::memcpy(&order, bytes.data() + 12, 4);
  std::memcpy(&head_bytes, bytes.data() + 16, 8);
  if (order != part_byte_order) throw fail("written on a machine of the other byte order");
  if (version != part_version)
    throw fail("format version " + std::to_string(version) + ", this armi reads " + std::to_string(part_version));
  if (head_bytes > bytes.size() - prefix || bytes.size() - prefix - head_bytes < sizeof(std::uint64_t))
    throw fail("truncated header");
  std::byte const* head = bytes.data() + prefix;
  std::uint64_t head_checksum = 0;
  std::memcpy(&head_checksum, head + head_bytes, sizeof head_checksum);
  if (head_checksum != checksum64(head, head_bytes)) throw fail("header checksum mismatch (the file is damaged)");

  part_contents out;
  try {
    unpacker u(head, head_bytes);
    u.read_into(out.header);
    if (u.remaining() != 0) throw decode_error("trailing bytes");
  } catch (decode_error const& e) {
    throw fail(std::string("undecodable header: ") + e.what());
  }
  std::size_t const payload_at = prefix + head_bytes + sizeof head_checksum;
  if (out.header.payload_bytes != bytes.size() - payload_at)
    throw fail("the payload is " + std::to_string(bytes.size() - payload_at) + " bytes, the header says " +
               std::to_string(out.header.payload_bytes) + " (truncated or appended to)");
  if (checksum64(bytes.data() + payload_at, out.header.payload_bytes) != out.header.payload_checksum)
    throw fail("payload checksum mismatch (the file is damaged)");
  out.payload.assign(bytes.begin() + static_cast<std::ptrdiff_t>(payload_at), bytes.end());
  return out;
}

// Collective: reads the parts of the container saved in dir that this
// location is given (part j goes to location j mod P), checks that they are
// one save of a `kind` of `type` and that check(description) has nothing
// against it (it returns an error message, or ""), and decodes each record
// with decode(description, unpacker&, out), which appends to out and throws
// decode_error on bad input.  Every location throws the first error any
// found, before any returns.  Returns this location's records and the saved
// container's description.
template <class Record, class Check, class Decode>
std::pair<std::vector<Record>, saved_container> load_parts(std::filesystem::path const& dir, std::string const& kind,
                                                           std::string const& type, Check&& check, Decode&& decode) {
  location_id const me = get_location_id(), p = get_num_locations();
  std::vector<Record> records;
  saved_container info;
  std::string error;
  std::filesystem::path where = part_path(dir, 0);
  try {
    part_contents first = read_part(where);
    info = first.header.container;
    std::uint64_t const save_id = first.header.save_id;
    if (info.kind != kind || info.type != type)
      throw file_error(where, "armi::load: " + where.string() + ": holds a " + info.kind + " of " + info.type +
                                  ", not a " + kind + " of " + type);
    if (info.parts == 0) throw file_error(where, "armi::load: " + where.string() + ": says it is one of 0 parts");
    if (std::string const against = check(info); !against.empty())
      throw file_error(where, "armi::load: " + where.string() + ": " + against);
    for (std::uint64_t j = me; j < info.parts; j += p) {
      where = part_path(dir, j);
      part_contents part = j == 0 ? std::move(first) : read_part(where);
      part_header const& h = part.header;
      if (h.save_id != save_id || h.part != j || h.container.parts != info.parts ||
          h.container.kind != info.kind || h.container.type != info.type || h.container.size != info.size)
        throw file_error(where, "armi::load: " + where.string() + ": is not part " + std::to_string(j) + " of the save " +
                                    "that " + part_path(dir, 0).string() + " belongs to");
      try {
        unpacker u(part.payload.data(), part.payload.size());
        for (std::uint64_t r = 0; r < h.records; ++r) decode(info, u, records);
        if (u.remaining() != 0) throw decode_error(std::to_string(u.remaining()) + " bytes after the last record");
      } catch (decode_error const& e) {
        throw file_error(where, "armi::load: " + where.string() + ": corrupt record: " + e.what());
      }
    }
  } catch (file_error const& e) {
    error = e.what();
    where = e.path();
  }
  agree_or_throw(error, where);
  return {std::move(records), std::move(info)};
}

}  // namespace detail
}  // namespace armi
