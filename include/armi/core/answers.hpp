// Answers in place: how a sync_rmi between two locations of one process
// gets its answer without a reply message.
//
// A reply message costs the answering location a request in its buffer to
// the caller, a flush and a ring slot, and the caller a receive, a copy, a
// decode and a lookup of the reply's tag: on the threads backend that was
// about a quarter of a sync_rmi round trip (table2_latency).  Between the
// threads of one process the caller can instead hand the callee a place to
// write the answer: a cell, one cache line of the caller's that the callee
// writes and the caller reads, the one line that has to move.
//
// Each location of a transport that keeps cells (threads, and the mixed
// backend's threads of a rank) has answer_cells_per_location of them, in
// the transport's memory: a sync_rmi whose result fits (answer_in_cell)
// takes the next one (nested calls take the ones after, so a location's
// waits use them as a stack), numbers the call (each cell counts its own
// calls, so the number left in a cell by its last call is never the
// next one's), and sends the request with a tag naming the cell and the
// number.  The callee writes the value, or a heap-allocated remote_error
// for a throw, then has the transport store the number into `answered` and
// wake the caller if it sleeps (transport::post_answer: the store is
// ordered before the look at the caller's sleeping flag, wake_fence.hpp);
// the caller waits for that number.  The caller never writes its
// cell: the line only moves from callee to caller.  Results that do not
// fit, calls to other processes and calls nested deeper than the cells go
// as before (reply.hpp).
//
// A tag with bit 0 set names a cell (reply_slots' tags have it clear): the
// cell's index in bits 1-31, the call's number in bits 32-63.  The callee
// checks that the caller shares its process and that the index is in
// range before it writes; a reply tag that names a cell any other way is a
// decode error.
//
// Thread safety: a cell is written by the one location answering the call
// that holds it, and read by its owner once `answered` says so.
#pragma once

#include <armi/serialization/traits.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace armi::detail {

inline constexpr std::size_t answer_value_bytes = 56;
inline constexpr std::uint32_t answer_cells_per_location = 32;

enum class answer_status : std::uint32_t { value = 0, error = 1 };

struct alignas(64) answer_cell {
  std::atomic<std::uint32_t> answered{0};  // the number of the last call answered here (0: none yet)
  answer_status status = answer_status::value;
  // The value's bytes, or (status error) a remote_error* that the caller deletes.
  alignas(8) std::byte value[answer_value_bytes];
};
static_assert(sizeof(answer_cell) == 64);

// What a sync_rmi's idle wait watches besides its transport (idle_wait):
// the word of its cell, until it holds the call's number.  No word: nothing.
struct answer_watch {
  std::atomic<std::uint32_t> const* word = nullptr;
  std::uint32_t number = 0;
  bool answered() const { return word != nullptr && word->load(std::memory_order_seq_cst) == number; }
};

// A result that a cell carries: nothing, or a type that travels as its bytes.
template <class R>
concept answer_in_cell = std::is_void_v<R> || (bitwise<R> && sizeof(R) <= answer_value_bytes && alignof(R) <= 8);

inline constexpr std::uint64_t answer_tag_bit = 1;

inline std::uint64_t answer_tag(std::uint32_t index, std::uint32_t number) {
  return (std::uint64_t{number} << 32) | (std::uint64_t{index} << 1) | answer_tag_bit;
}
inline bool is_answer_tag(std::uint64_t tag) { return (tag & answer_tag_bit) != 0; }
inline std::uint32_t answer_index(std::uint64_t tag) { return static_cast<std::uint32_t>(tag >> 1) & 0x7fff'ffff; }
inline std::uint32_t answer_number(std::uint64_t tag) { return static_cast<std::uint32_t>(tag >> 32); }

}  // namespace armi::detail
