// armi::pvector<T, Dist>: a distributed vector.  One representative per
// location (a p_object, so construction is collective: every location
// constructs its pvectors in the same order, with the same arguments); each
// representative stores its location's part of the global index space
// [0, size()) as laid out by the distribution Dist (block by default; any
// armi::distribution works).
//
//   armi::pvector<int> v(1000, 7);       // collective: 1000 sevens, in blocks
//   v.set(5, 1);                         // async_rmi to the owner of 5
//   int x = v.get(999);                  // sync_rmi (or a plain read if local)
//   auto f = v.get_async(998);           // opaque_rmi -> armi::future<int>
//   v[3] = v[5];                         // a proxy: get, then set
//   for (int& y : v.local()) y *= 2;     // the local part, no communication
//
// Remote access (the shared piece detail::element_access).  get(i) reads i:
// directly when this location owns it, else with one sync_rmi to the owner
// (which serves it when it polls).  get_async is the same as an opaque_rmi;
// a local read gives a future that is ready at once.  set(i, x) writes
// directly or with one async_rmi (aggregated; it has landed after the next
// rmi_fence, and before any later get/sync_rmi of this location to the same
// owner: requests from one location to one destination run in order).
// apply(i, f, args...) runs f(element, args...) at the owner with one
// async_rmi (f a stateless function object or captureless lambda; the owner
// runs its own default-constructed copy); update(i, op, x) is
// element = op(element, x) the same way.  operator[] returns a proxy:
// `T x = v[i]` is get, `v[i] = x` is set.  Compound assignment (`v[i] += x`)
// is deliberately not offered: as get + set it would not be atomic; use
// apply or update, which are.
// An index outside [0, size()) is a std::out_of_range on the caller, naming
// the index and the size.
//
// Growth.  push_back(x) appends to the local part (the target of the paper's
// Fig. 3: async_rmi(dest, v.get_rmi_handle(), &pvector<T>::push_back, x)
// appends at dest).  The global index map is not changed by it: size(),
// owner() and get() keep describing the distribution as of the last
// collective operation, and the new elements are visible only through
// local() (whose size can then exceed distribution().local_size(me)).
// update_distribution() (collective) makes them global without moving data:
// it fences (so remote push_backs have landed), gathers every location's
// local count and makes the distribution block_distribution::from_counts of
// them — location 0's elements first, then location 1's, and so on.
// rebalance() does the same and then moves elements so the blocks are even.
// push_back, update_distribution and rebalance exist for block distributions
// only.
//
// resize(n[, value]) is collective: every location calls it with the same n
// (checked; a mismatch throws std::invalid_argument everywhere).  Element i
// keeps its value for i < min(old size, n); new elements are `value`.  The
// result has the even distribution of n elements (for cyclic/block-cyclic:
// the same kind of distribution over n), so elements whose owner changes
// move: each location sends one async_rmi per destination carrying all its
// elements for it.  Why a collective call and not one location's
// broadcast_rmi: every location must also send its moving elements and wait
// for the ones it receives, which needs a fence on every location; an SPMD
// program reaches the resize on every location anyway, and the collective
// form costs one allgather and two fences instead of a broadcast plus a
// fence plus the same data movement.
//
// Global reads.  gather() (collective) returns every element, in index
// order, on every location.  get_range(first, last) fetches a range in index
// order from one location, with one RMI per owning location (not one per
// element); for_each_global(f[, chunk]) walks the whole vector in index order in
// chunks of `chunk` elements, fetching the next chunk (opaque_rmi) while f
// runs on the current one.  These are meant for small vectors or for output;
// large vectors are processed where they live, through local() and the
// algorithms in <armi/algorithms/...>.
//
// Communication costs: get: 0 or 1 round trip; get_async: 0 or 1 aggregated
// request + reply; set/apply/update: 0 or 1 aggregated request; push_back:
// none; construction, destruction: 1 fence each; update_distribution:
// 1 fence + 1 allgather of p counts; resize, rebalance: 2 fences + 1
// allgather + at most p-1 bulk messages per location; get_range:
// at most p round trips, overlapped; gather: 1 allgather of every element.
//
// Thread safety: a representative belongs to its location's thread; call its
// methods there (RMIs reach it only when that thread polls, so there is no
// race).  Distinct pvectors: safe.  Collective methods (constructor,
// update_distribution, rebalance, resize, swap, gather, destruction) are called by
// every location in the same order; no other location may access the
// pvector while a collective method is in progress.  Construction and
// destruction each include an rmi_fence: after the constructor returns,
// every location's representative exists (so RMIs to it are safe), and
// every RMI to a pvector has run before its representatives are destroyed.
// So construct and destroy pvectors in a location's main code, not inside
// an RMI target (where rmi_fence is refused).
//
// T must travel by RMI (trivially copyable, a standard container of such,
// or define_type) and be copyable; pvector<bool> is refused (local() is a
// span: use char or std::uint8_t).
#pragma once

#include <armi/containers/collective.hpp>
#include <armi/containers/detail/element_access.hpp>
#include <armi/containers/detail/gather.hpp>
#include <armi/containers/distribution.hpp>
#include <armi/containers/operations.hpp>
#include <armi/future.hpp>
#include <armi/hold_requests.hpp>
#include <armi/rmi.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace armi {

namespace detail {

// The distribution of the same kind for a new size.
inline block_distribution resized_distribution(block_distribution const&, std::size_t n,
                                               location_id p) {
  return block_distribution(n, p);
}
inline cyclic_distribution resized_distribution(cyclic_distribution const&, std::size_t n,
                                                location_id p) {
  return cyclic_distribution(n, p);
}
inline block_cyclic_distribution resized_distribution(block_cyclic_distribution const& d,
                                                      std::size_t n, location_id p) {
  return block_cyclic_distribution(n, p, d.block_size());
}

// (first local index, count) runs of one location's part.
using local_runs = std::vector<std::pair<std::size_t, std::size_t>>;

}  // namespace detail

/// A distributed vector that can grow: one part per location, laid out by Dist.
///
/// Construction, destruction, update_distribution, rebalance, resize, swap
/// and gather are Collective.  get / get_async / set / apply / update come
/// from detail::element_access: local elements directly, remote ones by one
/// RMI to the owner.
template <class T, distribution Dist = block_distribution>
class pvector : public detail::element_access<pvector<T, Dist>, T, std::size_t, std::size_t> {
  static_assert(!std::is_same_v<T, bool>,
                "armi::pvector<bool>: local() is a std::span, which std::vector<bool> cannot give; "
                "use pvector<char> or pvector<std::uint8_t>");
  static_assert(std::is_copy_constructible_v<T>, "armi::pvector<T>: T must be copyable");
  friend class detail::element_access<pvector, T, std::size_t, std::size_t>;

  static constexpr bool is_block = std::is_same_v<Dist, block_distribution>;

 public:
  using value_type = T;            ///< The element type.
  using distribution_type = Dist;  ///< The distribution type.
  using size_type = std::size_t;   ///< The index type.

  /// What operator[] returns: reads through get, writes through set.
  class reference {
   public:
    /// Reads the element (pvector::get).
    operator T() const { return m_vec->get(m_index); }
    /// Reads the element (pvector::get); blocks.
    T get() const { return m_vec->get(m_index); }
    /// Reads the element later (pvector::get_async); returns a future.
    future<T> get_async() const { return m_vec->get_async(m_index); }
    /// Writes the element (pvector::set); fire-and-forget.
    reference& operator=(T const& x) {
      m_vec->set(m_index, x);
      return *this;
    }
    /// v[i] = v[j]: a get of j, then a set of i.
    reference& operator=(reference const& other) {
      m_vec->set(m_index, other.get());
      return *this;
    }
    /// Another proxy for the same element.
    reference(reference const&) = default;

   private:
    friend class pvector;
    reference(pvector* v, std::size_t i) : m_vec(v), m_index(i) {}
    pvector* m_vec;
    std::size_t m_index;
  };

  // ---- construction (collective) ---------------------------------------------

  /// Collective: an empty vector.
  pvector() requires std::constructible_from<Dist, std::size_t, location_id>
      : pvector(Dist(0, get_num_locations())) {}

  /// Collective: n copies of value, laid out by Dist(n, get_num_locations()).
  explicit pvector(std::size_t n, T const& value = T{}) requires
      std::constructible_from<Dist, std::size_t, location_id>
      : pvector(Dist(n, get_num_locations()), value) {}

  /// Collective: d.size() copies of value, laid out by d (same d on every
  /// location; std::invalid_argument if d is not over all locations).
  explicit pvector(Dist d, T const& value = T{})
      : m_dist(std::move(d)), m_me(get_location_id()), m_locations(get_num_locations()) {
    if (m_dist.num_locations() != m_locations)
      throw std::invalid_argument("armi::pvector: the distribution is over " +
                                  std::to_string(m_dist.num_locations()) +
                                  " locations, the run has " + std::to_string(m_locations));
    m_data.assign(m_dist.local_size(m_me), value);
    rmi_fence();  // every location has registered its representative before anyone sends to it
  }

  /// Collective: fences first, so every RMI to this pvector has run before
  /// any representative goes away (not while an exception unwinds through
  /// it: the other locations may never get here, so the fence is skipped).
  ~pvector() override {
    if (std::uncaught_exceptions() == m_uncaught) rmi_fence();
  }

  // ---- shape ---------------------------------------------------------------------

  /// The global size as of the last collective operation (not counting
  /// push_backs since).  Local only.
  std::size_t size() const noexcept { return m_dist.size(); }
  /// True when size() is 0.  Local only.
  bool empty() const noexcept { return size() == 0; }
  /// The distribution (the same on every location).  Local only.
  Dist const& distribution() const noexcept { return m_dist; }
  /// The location that owns element i (std::out_of_range if i >= size()).  Local only.
  location_id owner(std::size_t i) const { return locate_element("owner", i).location; }

  /// This location's elements, in the order of their global indices (then
  /// any elements push_back'ed since the last update_distribution).  Local only.
  std::span<T> local() noexcept { return {m_data.data(), m_data.size()}; }
  /// This location's elements, read-only.  Local only.
  std::span<T const> local() const noexcept { return {m_data.data(), m_data.size()}; }
  /// The number of elements this location holds (push_backs included).  Local only.
  std::size_t local_size() const noexcept { return m_data.size(); }
  /// Reserves room for n local elements (before a run of push_backs).  Local only.
  void local_reserve(std::size_t n) { m_data.reserve(n); }

  // ---- element access (get, get_async, set, apply, update: element_access) -----------

  /// A proxy for element i: `T x = v[i]` is get, `v[i] = x` is set.
  reference operator[](std::size_t i) {
    (void)locate_element("operator[]", i);
    return reference(this, i);
  }
  /// Reads element i (get); blocks.
  T operator[](std::size_t i) const { return this->get(i); }

  // ---- growth ----------------------------------------------------------------------

  /// Appends x to this location's part; local only (see "Growth" above).  Also
  /// an RMI target: async_rmi(dest, h, &pvector::push_back, x) appends at dest.
  void push_back(T const& x) requires is_block {
    hold_requests const hold;
    m_data.push_back(x);
  }

  /// Collective: fence, then the distribution becomes the local counts (the
  /// push_backs become global, without moving data).
  void update_distribution() requires is_block {
    hold_requests const hold;
    rmi_fence();
    m_dist = block_distribution::from_counts(detail::allgather_value(m_data.size()));
  }

  /// Collective: update_distribution, then even blocks (elements move).
  void rebalance() requires is_block && std::default_initializable<T> {
    resize_to(std::nullopt, nullptr);
  }

  /// Collective: n elements (the same n everywhere, else std::invalid_argument
  /// everywhere); the first min(size(), n) keep their values, new ones are
  /// value; the result has the even distribution of n.
  void resize(std::size_t n, T const& value = T{}) { resize_to(n, &value); }

  /// Collective: exchanges the contents (local parts and distributions) of
  /// two pvectors, location by location.  No communication.
  void swap(pvector& other) noexcept {
    std::swap(m_data, other.m_data);
    std::swap(m_dist, other.m_dist);
  }

  // ---- global reads -------------------------------------------------------------------

  /// Collective: every element, in index order, on every location (push_backs
  /// not yet made global are left out).  One allgather; for small vectors.
  std::vector<T> gather() const { return detail::gather_indexed(m_dist, local()); }

  /// Elements [first, last) in index order, to this location alone; blocks
  /// for one RMI per owning location (std::out_of_range past size()).
  std::vector<T> get_range(std::size_t first,
                           std::size_t last) const requires std::default_initializable<T> {
    return fetch(first, last).take();
  }

  /// Calls f(x) — or f(i, x) if f takes an index — for every element in index
  /// order on this location alone, fetching `chunk` elements at a time, the
  /// next chunk while f runs.  Blocks.
  template <class F>
  void for_each_global(F f, std::size_t chunk = 4096) const requires std::default_initializable<T> {
    std::size_t const n = size();
    if (n == 0) return;
    if (chunk == 0) chunk = 1;
    range_fetch next = fetch(0, std::min(chunk, n));
    for (std::size_t a = 0; a < n;) {
      std::size_t const b = std::min(a + chunk, n);
      std::vector<T> const current = next.take();
      if (b < n) next = fetch(b, std::min(b + chunk, n));
      for (std::size_t j = 0; j < current.size(); ++j) {
        if constexpr (std::is_invocable_v<F&, std::size_t, T const&>)
          f(a + j, current[j]);
        else
          f(current[j]);
      }
      a = b;
    }
  }

 private:
  // For element_access.
  detail::element_location<std::size_t> locate_element(char const* method, std::size_t i) const {
    return detail::locate_index(m_dist, "armi::pvector", method, i);
  }
  T& local_element(char const* method, std::size_t k) { return detail::local_slot(m_data, "armi::pvector", method, k); }
  T const& local_element(char const* method, std::size_t k) const {
    return detail::local_slot(m_data, "armi::pvector", method, k);
  }

  // RMI targets (local indices on this location).
  std::vector<T> serve_runs(detail::local_runs const& runs) const {
    std::vector<T> out;
    for (auto const& [first, count] : runs) {
      if (count > m_data.size() || first > m_data.size() - count)
        detail::index_out_of_range("armi::pvector::get_range", first + count, m_data.size());
      out.insert(out.end(), m_data.begin() + static_cast<std::ptrdiff_t>(first),
                 m_data.begin() + static_cast<std::ptrdiff_t>(first + count));
    }
    return out;
  }
  void serve_receive(std::vector<std::size_t> const& at, std::vector<T> const& values) {  // resize
    m_incoming.emplace_back(at, values);
  }

  // A pending get_range: where each owner's answer goes.
  class range_fetch {
   public:
    std::vector<T> take() {
      for (std::size_t r = 0; r < m_remote.size(); ++r) place(m_remote[r].get(), m_remote_runs[r]);
      m_remote.clear();
      return std::move(m_out);
    }

   private:
    friend class pvector;
    // out positions of each run, in the order of the owner's answer
    using placement = std::vector<std::pair<std::size_t, std::size_t>>;  // (out position, count)
    void place(std::vector<T> values, placement const& where) {
      std::size_t from = 0;
      for (auto const& [at, count] : where) {
        if (from + count > values.size())
          throw std::logic_error("armi::pvector::get_range: short answer");
        std::move(values.begin() + static_cast<std::ptrdiff_t>(from),
                  values.begin() + static_cast<std::ptrdiff_t>(from + count),
                  m_out.begin() + static_cast<std::ptrdiff_t>(at));
        from += count;
      }
    }
    std::vector<T> m_out;
    std::vector<future<std::vector<T>>> m_remote;
    std::vector<placement> m_remote_runs;
  };

  range_fetch fetch(std::size_t first, std::size_t last) const {
    hold_requests const hold;
    if (first > last || last > size())
      detail::index_out_of_range("armi::pvector::get_range", first > last ? first : last, size());
    range_fetch f;
    f.m_out.resize(last - first);
    if (first == last) return f;
    std::vector<detail::local_runs> runs(m_locations);
    std::vector<typename range_fetch::placement> where(m_locations);
    if constexpr (is_block) {
      for (location_id loc = m_dist.owner(first); loc < m_locations && m_dist.first(loc) < last;
           ++loc) {
        std::size_t const lo = std::max(first, m_dist.first(loc));
        std::size_t const hi = std::min(last, m_dist.first(loc) + m_dist.local_size(loc));
        if (lo >= hi) continue;
        runs[loc].emplace_back(lo - m_dist.first(loc), hi - lo);
        where[loc].emplace_back(lo - first, hi - lo);
      }
    } else {
      for (std::size_t i = first; i < last; ++i) {
        auto const [loc, k] = m_dist.locate(i);
        auto& r = runs[loc];
        if (!r.empty() && r.back().first + r.back().second == k &&
            where[loc].back().first + where[loc].back().second == i - first) {
          ++r.back().second;
          ++where[loc].back().second;
        } else {
          r.emplace_back(k, 1);
          where[loc].emplace_back(i - first, 1);
        }
      }
    }
    for (location_id loc = 0; loc < m_locations; ++loc) {
      if (runs[loc].empty()) continue;
      if (loc == m_me) continue;
      f.m_remote.push_back(opaque_rmi(loc, this->get_rmi_handle(), &pvector::serve_runs, runs[loc]));
      f.m_remote_runs.push_back(std::move(where[loc]));
    }
    if (!runs[m_me].empty())
      f.place(serve_runs(runs[m_me]), where[m_me]);  // overlaps the remote ones
    return f;
  }

  // resize(n, value) (want set, value set) or rebalance() (neither).
  void resize_to(std::optional<std::size_t> want, T const* value) {
    hold_requests const hold;
    rmi_fence();  // every set/push_back issued before has landed
    // Every location's current count, and the size it asked for.
    constexpr std::size_t no_size = static_cast<std::size_t>(-1);
    auto const shape = detail::allgather_value(
        std::pair<std::size_t, std::size_t>(m_data.size(), want.value_or(no_size)));
    std::vector<std::size_t> counts;
    for (auto const& [count, asked] : shape) {
      counts.push_back(count);
      if (asked != shape.front().second)
        throw std::invalid_argument("armi::pvector::resize: locations asked for different sizes (" +
                                    std::to_string(shape.front().second) + " and " +
                                    std::to_string(asked) + ")");
    }
    Dist old = m_dist;
    if constexpr (is_block) old = block_distribution::from_counts(counts);
    std::size_t const n = want.value_or(old.size());
    Dist const target = detail::resized_distribution(old, n, m_locations);

    // Send each element whose owner changes; keep the rest.
    std::vector<std::vector<std::size_t>> at(m_locations);
    std::vector<std::vector<T>> values(m_locations);
    std::vector<std::pair<std::size_t, T>> kept;
    for (std::size_t k = 0; k < m_data.size(); ++k) {
      std::size_t const g = old.global_index(m_me, k);
      if (g >= n) continue;
      auto const [loc, nk] = target.locate(g);
      if (loc == m_me) {
        kept.emplace_back(nk, std::move(m_data[k]));
      } else {
        at[loc].push_back(nk);
        values[loc].push_back(std::move(m_data[k]));
      }
    }
    for (location_id loc = 0; loc < m_locations; ++loc)
      if (!at[loc].empty())
        async_rmi(loc, this->get_rmi_handle(), &pvector::serve_receive, at[loc], values[loc]);
    rmi_fence();  // everything sent has arrived (in m_incoming)

    std::vector<T> fresh;
    if (value != nullptr) {
      fresh.assign(target.local_size(m_me), *value);
    } else if constexpr (std::default_initializable<T>) {
      fresh.resize(target.local_size(m_me));  // rebalance: every slot is filled below
    }
    for (auto& [nk, x] : kept) fresh[nk] = std::move(x);
    for (auto& [where, xs] : m_incoming)
      for (std::size_t j = 0; j < where.size(); ++j) fresh.at(where[j]) = std::move(xs[j]);
    m_incoming.clear();
    m_data = std::move(fresh);
    m_dist = target;
    // No third fence: a request sent by a location that has left the fence
    // above is held back here until this location has left it too (the
    // runtime's fence epochs), and nothing between there and here serves
    // requests.
  }

  std::vector<T> m_data;
  Dist m_dist;
  location_id m_me;
  location_id m_locations;
  std::vector<std::pair<std::vector<std::size_t>, std::vector<T>>> m_incoming;  // resize arrivals
  int m_uncaught = std::uncaught_exceptions();
};

}  // namespace armi
