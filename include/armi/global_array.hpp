// armi::global_array<T> and the one-sided operations on it: Split-C's half
// of the CC++ vs Split-C comparison (design.md §2, "One-sided operations").
// Each location owns a block of the same number of elements; a global_ptr
// names one element anywhere, and rget, rput, the bulk rget/rput, fetch_add
// and compare_exchange read and write it without running user code at the
// owner, each returning a future (split-phase).
//
// How an operation reaches the block: where the caller's process can reach
// it by address (itself; the other threads on threads, the threads of its
// rank on mixed; on mpi and mixed the node's other ranks, whose blocks the
// transport put in a shared window) by memory, through the block directory
// (runtime/global_memory.hpp), the atomics with std::atomic_ref, the future
// ready at once; on sp2 by the transport's own messages (SP-AM request and
// reply handlers that touch the block without the owner's runtime, as
// Split-C on SP-AM); with --armi-mpi-rma=on, gets and puts to ranks of
// other nodes (mpi, mixed) by MPI-3 RMA (backend/mpi/rma_windows.hpp);
// anywhere else (ranks of other nodes) by one opaque request to
// the array's serve_* target on the owner, which the owner's runtime runs in
// its polls like any request and answers.
//
// Thread safety: a global_array, like any p_object, on its own location; the
// operations on the location that calls them (their futures too).  Each is
// an armi call (progress_claim.hpp): the communication thread keeps off the
// location while it sends.
#pragma once

#include <armi/future.hpp>
#include <armi/global_ptr.hpp>
#include <armi/hold_requests.hpp>
#include <armi/p_object.hpp>
#include <armi/rmi.hpp>
#include <armi/runtime/global_memory.hpp>
#include <armi/runtime/location.hpp>
#include <armi/serialization/traits.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <typeinfo>
#include <string>
#include <type_traits>
#include <vector>

namespace armi {

/// An array spread over the locations: every location owns a block of the same number
/// of elements, read and written anywhere through global_ptr by the one-sided
/// operations (rget, rput, fetch_add, compare_exchange) without running user code at
/// the owner.
///
/// Construction and destruction are collective and each includes an rmi_fence (so not
/// inside an RMI target): after the constructor returns every block exists, and the
/// destructor waits until every location is done with the array.  Not while an
/// exception unwinds: then the destructor does not fence, as the other locations may
/// never get there.
/// @tparam T trivially copyable, and a type that travels (not a pointer, not a view).
template <class T>
class global_array final : public p_object {
  static_assert(std::is_trivially_copyable_v<T>,
                "armi::global_array<T>: T must be trivially copyable; its bytes are read and written in place at "
                "the owner, without running any of T's code there");
  static_assert(!std::is_const_v<T> && !std::is_volatile_v<T>,
                "armi::global_array<T>: T must not be const or volatile; the array's elements are written");
  static_assert(detail::travels<T>::value,
                "armi::global_array<T>: T must travel by value (not a raw pointer, not a view such as std::span): "
                "its bytes go to other processes");

 public:
  /// The element type.
  using value_type = T;

  /// Collective: every location owns `per_location` elements, all equal to init.  Every
  /// location must pass the same count.  Fences once (twice where the transport sets the
  /// blocks up together: on mpi with node memory or RMA, on mixed with several ranks on a
  /// node, and on sp2).
  explicit global_array(std::size_t per_location, T const& init = T{}) : m_block(per_location) {
    hold_requests const hold;  // the collective set-up calls MPI: not while the communication thread does
    auto& ctx = detail::current("global_array (constructor)");
    auto& tr = ctx.transport_of();
    std::size_t const bytes = header_bytes + std::max<std::size_t>(per_location, 1) * sizeof(T);
    std::vector<void*> peers(ctx.size(), nullptr);
    if (tr.shared_blocks() || tr.remote_memory())
      rmi_fence();  // no location waits on a request while the transport sets up together
    if (tr.shared_blocks()) m_shared = tr.allocate_shared_block(ctx.id(), bytes, peers.data());
    m_storage = m_shared != nullptr ? m_shared : ::operator new(bytes, std::align_val_t{alignment});
    new (m_storage) std::atomic<std::uint32_t>(1);  // live until the destructor
    m_data = reinterpret_cast<T*>(static_cast<std::byte*>(m_storage) + header_bytes);
    std::uninitialized_fill_n(m_data, per_location, init);
    m_run = &ctx.world();
    m_directory = &detail::block_directories::attach(m_run, ctx.process_first(), get_rmi_handle(), ctx.size(),
                                                     ctx.id(), m_storage);
    for (location_id l = 0; l < ctx.size(); ++l)
      if (peers[l] != nullptr && l != ctx.id()) m_directory->set(l, peers[l]);
    if (tr.remote_memory())
      tr.expose_block(ctx.id(), get_rmi_handle().index, m_data, per_location * sizeof(T), header_bytes);
    rmi_fence();  // every block exists before anyone reaches one
  }

  /// Collective: fences (every operation on the array has completed), then frees this
  /// location's block.
  ~global_array() override {
    hold_requests const hold;
    auto& ctx = detail::current("~global_array");
    bool const collective = std::uncaught_exceptions() == m_uncaught;
    if (collective) rmi_fence();
    live(m_storage).store(0, std::memory_order_release);  // peers that still reach it fall back to a request
    bool released = true;  // (an MPI window left open without the fence still reaches it: it stays)
    if (ctx.transport_of().remote_memory())
      released = ctx.transport_of().withdraw_block(ctx.id(), get_rmi_handle().index, collective);
    detail::block_directories::detach(m_run, ctx.process_first(), get_rmi_handle(), *m_directory, ctx.id());
    if (m_shared == nullptr && released)
      ::operator delete(m_storage, std::align_val_t{alignment});
    else if (collective)  // (unwinding, the others may never free theirs: the window stays to the end of the run)
      ctx.transport_of().free_shared_block(ctx.id(), m_shared);
  }

  /// The number of elements each location owns.
  std::size_t block_size() const noexcept { return m_block; }
  /// The number of elements of the whole array: block_size() times the locations.
  std::size_t size() const { return m_block * get_num_locations(); }

  /// The element i of owner's block, computed here without communication.
  /// @throws std::out_of_range if owner is not a location or i >= block_size().
  global_ptr<T> pointer(location_id owner, std::size_t i) const {
    if (owner >= get_num_locations())
      throw std::out_of_range("armi::global_array::pointer: location " + std::to_string(owner) +
                              " is not a location (there are " + std::to_string(get_num_locations()) + ")");
    if (i >= m_block) detail::global_index_out_of_range("global_array::pointer", owner, i, 1, m_block);
    return global_ptr<T>(get_rmi_handle(), owner, i);
  }

  /// This location's block.  Local accesses race with one-sided operations of other
  /// locations on the same elements unless a fence or a future's get() orders them.
  std::span<T> local_data() noexcept { return {m_data, m_block}; }
  /// This location's block, read-only.
  std::span<T const> local_data() const noexcept { return {m_data, m_block}; }

  /// @cond armi_internal
  // ---- the one-sided operations' targets on the owner (requests from other
  // processes); a program calls rget, rput, fetch_add, compare_exchange.
  T serve_get(std::uint64_t i) { return load_at(m_data + checked(i, 1)); }
  void serve_put(std::uint64_t i, T value) { store_at(m_data + checked(i, 1), value); }
  std::vector<T> serve_get_bulk(std::uint64_t i, std::uint64_t count) {
    T const* from = m_data + checked(i, count);
    return std::vector<T>(from, from + count);
  }
  void serve_put_bulk(std::uint64_t i, std::vector<T> const& values) {
    std::copy(values.begin(), values.end(), m_data + checked(i, values.size()));
  }
  T serve_fetch_add(std::uint64_t i, T value) { return fetch_add_at(m_data + checked(i, 1), value); }
  T serve_compare_exchange(std::uint64_t i, T expected, T desired) {
    return compare_exchange_at(m_data + checked(i, 1), expected, desired);
  }

  // ---- the implementation of the free functions below.
  // The caller's representative of p's array, or the caller error.
  static global_array& of(detail::location& ctx, global_ptr<T> p, char const* what) {
    if (!p) detail::global_ptr_null(what);
    auto* e = ctx.registry().find(p.array().index, p.array().epoch);
    // The class is final: its type_info names it exactly, and comparing
    // that costs a load where a dynamic_cast is a library call on every
    // operation.
    auto* self = e != nullptr && typeid(*e->object) == typeid(global_array) ? static_cast<global_array*>(e->object)
                                                                           : nullptr;
    if (self == nullptr) [[unlikely]]
      detail::global_array_missing(what, ctx.id(), p.array());
    return *self;
  }
  // Checks [p, p + count) against the block; p.where() is a location (pointer() made it).
  void check_range(global_ptr<T> p, std::uint64_t count, char const* what) const {
    if (p.index() > m_block || count > m_block - p.index()) [[unlikely]]
      detail::global_index_out_of_range(what, p.where(), p.index(), count, m_block);
  }
  // The element's address when its block is in this process's memory (its
  // own, a thread's, a node peer's shared block) and still live, else null.
  T* direct(global_ptr<T> p) const {
    void* base = m_directory->base(p.where());
    if (base == nullptr || live(base).load(std::memory_order_acquire) == 0) [[unlikely]]
      return nullptr;
    return reinterpret_cast<T*>(static_cast<std::byte*>(base) + header_bytes) + p.index();
  }

  // Whether the transport carries gets and puts (atomics) to p's owner out
  // by itself (sp2's SP-AM handlers; MPI RMA with --armi-mpi-rma=on, gets
  // and puts only), rather than a request to the owner's runtime.
  static bool by_transport(detail::location& ctx) { return ctx.transport_of().remote_memory(); }
  static bool atomics_by_transport(detail::location& ctx) { return ctx.transport_of().remote_atomics(); }
  // Starts `code` on the elements from p through the transport, with
  // `operands` (copied at the call); make(result bytes, state) sets the
  // future's value when the result is back.
  template <class R, class Make>
  static future<R> remote(detail::location& ctx, global_ptr<T> p, detail::remote_code code,
                          std::span<std::byte const> operands, Make make, char const* what) {
    detail::remote_op const op{code, static_cast<std::uint8_t>(code == detail::remote_code::get ||
                                                                       code == detail::remote_code::put
                                                                   ? 1
                                                                   : sizeof(T)),
                               p.array().index, p.index() * sizeof(T)};
    auto state = std::make_shared<detail::reply_state<R>>();
    auto done = std::make_unique<detail::remote_result<R, Make>>(state, ctx.mutable_stats(), std::move(make));
    ctx.transport_of().start_remote(ctx.id(), p.where(), op, operands, done.get());
    done.release();  // the transport's until the result is back
    ++ctx.mutable_stats().sent[static_cast<std::size_t>(detail::rmi_kind::one_sided)];
    return future<R>(std::move(state), &ctx, p.where(), what);
  }
  // A remote operation's result as one T (its bytes: the transport checked the size).
  static void set_element(std::span<std::byte const> result, detail::reply_state<T>& s) {
    std::array<std::byte, sizeof(T)> raw;
    std::memcpy(raw.data(), result.data(), sizeof(T));
    s.value.emplace(std::bit_cast<T>(raw));
  }
  static void set_done(std::span<std::byte const>, detail::reply_state<void>& s) { s.value.emplace('\0'); }
  // An operation's operands as bytes.
  template <class... V>
  static std::array<std::byte, (sizeof(V) + ... + 0)> operand_bytes(V const&... v) {
    std::array<std::byte, (sizeof(V) + ... + 0)> out;
    std::size_t at = 0;
    ((std::memcpy(out.data() + at, &v, sizeof(V)), at += sizeof(V)), ...);
    return out;
  }
  // Whether the transport's atomics take T: its integer widths, float and double.
  static constexpr bool transport_atomic = sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8;

  // A single element is read and written whole (a relaxed atomic access where the
  // processor has one for T), so a get racing an atomic never sees half of it.
  static constexpr bool whole_access =
      std::atomic_ref<T>::is_always_lock_free && sizeof(T) % std::atomic_ref<T>::required_alignment == 0;
  static T load_at(T const* at) {
    if constexpr (whole_access)
      return std::atomic_ref<T>(*const_cast<T*>(at)).load(std::memory_order_relaxed);
    else
      return *at;
  }
  static void store_at(T* at, T value) {
    if constexpr (whole_access)
      std::atomic_ref<T>(*at).store(value, std::memory_order_relaxed);
    else
      *at = value;
  }
  static T fetch_add_at(T* at, T value) {
    static_assert((std::is_integral_v<T> && !std::is_same_v<T, bool>) || std::is_floating_point_v<T>,
                  "armi::fetch_add: the element type must be an integer (not bool) or a floating-point type");
    return std::atomic_ref<T>(*at).fetch_add(value);
  }
  static T compare_exchange_at(T* at, T expected, T desired) {
    static_assert(whole_access,
                  "armi::compare_exchange: the element type must be one the processor updates atomically "
                  "without a lock (std::atomic_ref<T>::is_always_lock_free)");
    std::atomic_ref<T>(*at).compare_exchange_strong(expected, desired);
    return expected;  // the old value, whether or not it was replaced
  }
  /// @endcond

 private:
  // A block: a header (the live word) of header_bytes, then the elements.
  static constexpr std::size_t alignment =
      std::max({alignof(T), std::atomic_ref<T>::required_alignment, alignof(std::atomic<std::uint32_t>)});
  static constexpr std::size_t header_bytes = std::max<std::size_t>(alignment, 64);
  static std::atomic<std::uint32_t>& live(void* block) { return *std::launder(static_cast<std::atomic<std::uint32_t>*>(block)); }
  // Index i of a request (the caller checked; this guards against a forged pointer).
  std::size_t checked(std::uint64_t i, std::uint64_t count) const {
    if (i > m_block || count > m_block - i)
      throw std::out_of_range("armi::global_array: elements [" + std::to_string(i) + ", " +
                              std::to_string(i + count) + ") are outside the block of " + std::to_string(m_block));
    return static_cast<std::size_t>(i);
  }

  std::size_t m_block;
  void* m_shared = nullptr;   // from the transport (a node's shared window), or
  void* m_storage = nullptr;  // allocated here
  T* m_data = nullptr;
  void const* m_run = nullptr;
  detail::block_directory* m_directory = nullptr;
  int m_uncaught = std::uncaught_exceptions();
};

namespace detail {
// The start of every one-sided operation: an armi call (the communication
// thread keeps off the location while it sends), the caller's location, and
// p's array, with [p, p + count) checked against its block; each step throws
// the caller error that names `what` (`caller`: the function, for errors
// outside an armi::execute).
template <class T>
struct one_sided_call {
  armi_call const call;
  location& ctx;
  global_array<T>& array;
  one_sided_call(global_ptr<T> p, std::uint64_t count, char const* what, char const* caller = nullptr)
      : ctx(current(caller != nullptr ? caller : what)), array(global_array<T>::of(ctx, p, what)) {
    array.check_range(p, count, what);
  }
};
}  // namespace detail

/// Reads the element p names.  Ready at once when its owner shares this process's
/// memory; otherwise one message of the transport's own (sp2; mpi with
/// --armi-mpi-rma=on) or one request to the owner.
/// @throws std::out_of_range (p outside its block), std::logic_error (p's array does not
/// exist here: destroyed, or never constructed), std::invalid_argument (p is null).
template <class T>
future<T> rget(global_ptr<T> p) {
  detail::one_sided_call<T> const op(p, 1, "rget");
  if (T const* at = op.array.direct(p)) return detail::ready_future(global_array<T>::load_at(at), "rget");
  if (global_array<T>::by_transport(op.ctx))
    return global_array<T>::template remote<T>(op.ctx, p, detail::remote_code::get,
                                               global_array<T>::operand_bytes(std::uint64_t{sizeof(T)}),
                                               &global_array<T>::set_element, "rget");
  return opaque_rmi(p.where(), p.array(), method<&global_array<T>::serve_get>, p.index());
}

/// Writes value into the element p names; the future is ready once the write is
/// visible at the owner.  Errors as rget.
template <class T>
future<void> rput(global_ptr<T> p, std::type_identity_t<T> const& value) {
  detail::one_sided_call<T> const op(p, 1, "rput");
  if (T* at = op.array.direct(p)) {
    global_array<T>::store_at(at, value);
    return detail::ready_future("rput");
  }
  if (global_array<T>::by_transport(op.ctx))
    return global_array<T>::template remote<void>(op.ctx, p, detail::remote_code::put,
                                                  global_array<T>::operand_bytes(value), &global_array<T>::set_done,
                                                  "rput");
  return opaque_rmi(p.where(), p.array(), method<&global_array<T>::serve_put>, p.index(), value);
}

/// Reads into.size() elements from p on into `into` (bulk get).  `into` must stay alive
/// until the future is ready.  Errors as rget (the whole range must be in p's block).
template <class T>
future<void> rget(global_ptr<T> p, std::span<T> into) {
  detail::one_sided_call<T> const op(p, into.size(), "rget (bulk)", "rget");
  if (into.empty()) return detail::ready_future("rget");
  if (T const* at = op.array.direct(p)) {
    std::memcpy(into.data(), at, into.size_bytes());
    return detail::ready_future("rget");
  }
  if (global_array<T>::by_transport(op.ctx))
    return global_array<T>::template remote<void>(
        op.ctx, p, detail::remote_code::get, global_array<T>::operand_bytes(std::uint64_t{into.size_bytes()}),
        [into](std::span<std::byte const> result, detail::reply_state<void>& s) {
          std::memcpy(into.data(), result.data(), result.size());
          s.value.emplace('\0');
        },
        "rget");
  return opaque_rmi(p.where(), p.array(), method<&global_array<T>::serve_get_bulk>, p.index(),
                    std::uint64_t{into.size()})
      .then([into](std::vector<T> values) { std::copy(values.begin(), values.end(), into.begin()); });
}

/// Writes from.size() elements of `from` into p on (bulk put); `from` is copied at the
/// call.  The future is ready once the writes are visible at the owner.  Errors as rget.
template <class T>
future<void> rput(global_ptr<T> p, std::span<T const> from) {
  detail::one_sided_call<T> const op(p, from.size(), "rput (bulk)", "rput");
  if (from.empty()) return detail::ready_future("rput");
  if (T* at = op.array.direct(p)) {
    std::memcpy(at, from.data(), from.size_bytes());
    return detail::ready_future("rput");
  }
  if (global_array<T>::by_transport(op.ctx))
    return global_array<T>::template remote<void>(op.ctx, p, detail::remote_code::put, std::as_bytes(from),
                                                  &global_array<T>::set_done, "rput");
  return opaque_rmi(p.where(), p.array(), method<&global_array<T>::serve_put_bulk>, p.index(),
                    std::vector<T>(from.begin(), from.end()));
}
/// rput of a span of non-const elements.
template <class T>
future<void> rput(global_ptr<T> p, std::span<T> from) {
  return rput(p, std::span<T const>(from));
}

/// Adds value to the element p names, atomically with every other atomic operation on
/// it, and returns the element's old value.  T: an integer (not bool) or floating-point
/// type.  Errors as rget.
template <class T>
future<T> fetch_add(global_ptr<T> p, std::type_identity_t<T> value) {
  detail::one_sided_call<T> const op(p, 1, "fetch_add");
  if (T* at = op.array.direct(p)) return detail::ready_future(global_array<T>::fetch_add_at(at, value), "fetch_add");
  if constexpr (global_array<T>::transport_atomic)
    if (global_array<T>::atomics_by_transport(op.ctx))
      return global_array<T>::template remote<T>(
          op.ctx, p, std::is_floating_point_v<T> ? detail::remote_code::add_float : detail::remote_code::add_int,
          global_array<T>::operand_bytes(value), &global_array<T>::set_element, "fetch_add");
  return opaque_rmi(p.where(), p.array(), method<&global_array<T>::serve_fetch_add>, p.index(), value);
}

/// Replaces the element p names by desired if it equals expected (bytewise), atomically
/// with every other atomic operation on it; returns the old value (equal to expected
/// when the exchange happened).  T: a type std::atomic_ref updates without a lock.
/// Errors as rget.
template <class T>
future<T> compare_exchange(global_ptr<T> p, std::type_identity_t<T> expected, std::type_identity_t<T> desired) {
  detail::one_sided_call<T> const op(p, 1, "compare_exchange");
  if (T* at = op.array.direct(p))
    return detail::ready_future(global_array<T>::compare_exchange_at(at, expected, desired), "compare_exchange");
  if constexpr (global_array<T>::transport_atomic)
    if (global_array<T>::atomics_by_transport(op.ctx))
      return global_array<T>::template remote<T>(op.ctx, p, detail::remote_code::exchange,
                                                 global_array<T>::operand_bytes(expected, desired),
                                                 &global_array<T>::set_element, "compare_exchange");
  return opaque_rmi(p.where(), p.array(), method<&global_array<T>::serve_compare_exchange>, p.index(), expected,
                    desired);
}

}  // namespace armi
