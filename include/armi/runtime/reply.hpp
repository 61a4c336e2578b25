// Where replies land: a sync_rmi or opaque_rmi registers a reply_sink under a
// tag (slot index + generation) that travels with the request; the reply
// names the tag, which the caller validates before delivering.  Tags have
// bit 0 clear: a set bit 0 names an answer cell instead (answers.hpp).
//
// Thread safety: used only by the owning location.
#pragma once

#include <armi/core/answers.hpp>
#include <armi/core/error.hpp>
#include <armi/core/handle.hpp>
#include <armi/serialization/serialize.hpp>

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace armi::detail {

enum class reply_status : std::uint32_t { value = 0, error = 1 };

struct reply_sink {
  virtual void deliver(unpacker& u, reply_status status, location_id from) = 0;

 protected:
  ~reply_sink() = default;
};

// The state of one pending call returning R, or of any future's result:
// a value, a remote_error, or (from a continuation or a collective that
// failed here) the exception thrown on this location.  on_ready, if set,
// runs once when the state becomes ready (future::then, when_all); whoever
// completes the state keeps it alive until it has.
template <class R>
struct reply_state final : reply_sink {
  bool ready = false;
  std::optional<std::conditional_t<std::is_void_v<R>, char, R>> value;
  std::unique_ptr<remote_error> error;
  std::exception_ptr thrown;
  std::function<void()> on_ready;

  // Marks the state ready and runs its continuation, if it has one.
  void complete() {
    ready = true;
    if (on_ready) {
      std::function<void()> const next = std::move(on_ready);
      on_ready = nullptr;
      next();
    }
  }

  bool failed() const { return thrown || error; }

  // Completes with src's failure (src.failed()), taking it.
  template <class S>
  void fail_like(reply_state<S>& src) {
    thrown = src.thrown;
    error = std::move(src.error);
    complete();
  }

  // Completes with the exception in flight (inside a catch block).
  void fail_here() {
    thrown = std::current_exception();
    complete();
  }

  void deliver(unpacker& u, reply_status status, location_id from) override {
    if (status == reply_status::error) {
      auto type = u.read<std::string>();
      auto what = u.read<std::string>();
      error = std::make_unique<remote_error>(what, std::move(type), from);
    } else if (status == reply_status::value) {
      if constexpr (std::is_void_v<R>)
        value.emplace('\0');
      else
        value.emplace(u.read<R>());
    } else {
      throw decode_error("armi: corrupt reply status");
    }
    if (u.remaining() != 0) throw decode_error("armi: reply longer than its value");
    complete();
  }

  R take() {
    if (thrown) std::rethrow_exception(thrown);
    if (error) throw remote_error(*error);
    if constexpr (!std::is_void_v<R>) return std::move(*value);
  }
};

class reply_slots {
 public:
  std::uint64_t acquire(reply_sink* sink, std::shared_ptr<void> keep_alive) {
    std::uint32_t index;
    if (!m_free.empty()) {
      index = m_free.back();
      m_free.pop_back();
    } else {
      index = static_cast<std::uint32_t>(m_slots.size());
      m_slots.emplace_back();
    }
    slot& s = m_slots[index];
    s.sink = sink;
    s.keep_alive = std::move(keep_alive);
    ++m_pending;
    return (std::uint64_t{s.generation} << 32) | (std::uint64_t{index} << 1);
  }

  // Delivers a reply; false when no pending call has that tag.
  bool deliver(std::uint64_t tag, unpacker& u, reply_status status, location_id from) {
    if (is_answer_tag(tag)) return false;
    std::uint32_t const index = static_cast<std::uint32_t>(tag) >> 1;
    std::uint32_t const generation = static_cast<std::uint32_t>(tag >> 32);
    if (index >= m_slots.size()) return false;
    slot& s = m_slots[index];
    if (s.sink == nullptr || s.generation != generation) return false;
    reply_sink* sink = s.sink;
    std::shared_ptr<void> keep = std::move(s.keep_alive);
    release(index);
    sink->deliver(u, status, from);
    return true;
  }

  // Gives back the slot of a call whose request was never sent (its send
  // threw): no reply will name tag.
  void cancel(std::uint64_t tag) {
    std::uint32_t const index = static_cast<std::uint32_t>(tag) >> 1;
    m_slots[index].keep_alive.reset();
    release(index);
  }

  std::size_t pending() const { return m_pending; }

 private:
  // Frees slot index for the next call; a tag naming it goes stale.
  void release(std::uint32_t index) {
    slot& s = m_slots[index];
    s.sink = nullptr;
    ++s.generation;
    m_free.push_back(index);
    --m_pending;
  }

  struct slot {
    reply_sink* sink = nullptr;
    std::shared_ptr<void> keep_alive;
    std::uint32_t generation = 1;
  };
  std::vector<slot> m_slots;
  std::vector<std::uint32_t> m_free;
  std::size_t m_pending = 0;
};

}  // namespace armi::detail
