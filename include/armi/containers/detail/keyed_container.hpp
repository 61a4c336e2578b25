// detail::keyed_container: the part that punordered_map and punordered_set
// share (after YGM's container/detail/base_*.hpp): the owner of a key, the
// local part, erase, and the collectives size, clear and gather.
//
// The owner of key k is key_owner(Hash{}(k), P) (detail/key_owner.hpp).
// Hash must give a key the same value on every location (std::hash does,
// for integers and strings, within one build of a program).
//
// Derived is the container; Local its location's node_hash_map or
// node_hash_set, Gathered the std::unordered_map or std::unordered_set that
// gather() returns.  Derived fences in its own constructor and destructor
// (a base cannot: the derived part, which requests reach, does not exist
// yet, or any longer, while the base's run).
#pragma once

#include <armi/containers/collective.hpp>
#include <armi/containers/detail/key_owner.hpp>
#include <armi/hold_requests.hpp>
#include <armi/p_object.hpp>
#include <armi/rmi.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <utility>
#include <vector>

namespace armi::detail {

template <class K, class Hash, class Local, class Gathered>
class keyed_container : public p_object {
 public:
  using key_type = K;          ///< The key type.
  using hasher = Hash;         ///< The hash that places keys.
  using local_type = Local;    ///< This location's part.

  /// The location that owns key k.  Local only.
  location_id owner(K const& k) const {
    return key_owner(static_cast<std::uint64_t>(m_hash(k)), m_locations);
  }

  /// Removes k (nothing if absent); fire-and-forget: directly when this
  /// location owns k, else one async_rmi to the owner.
  void erase(K const& k) {
    hold_requests const hold;
    location_id const at = owner(k);
    if (at == m_here)
      m_local.erase(k);
    else
      async_rmi(at, get_rmi_handle(), armi::method<&keyed_container::serve_erase>, k);
  }

  /// This location's part: the keys it owns.  Local only; requests that
  /// reach this location change it whenever the location is inside an armi call.
  Local& local() noexcept { return m_local; }
  /// This location's part, read-only.  Local only.
  Local const& local() const noexcept { return m_local; }

  /// Collective: the number of keys on all locations.  Starts with an
  /// rmi_fence, so every insert and erase issued before it is counted.
  std::size_t size() const {
    hold_requests const hold;
    rmi_fence();
    return allreduce_value(m_local.size(), std::plus<>{});
  }

  /// Collective: removes every key.  Fences first (requests in flight land,
  /// then go) and last (no location inserts before every location cleared).
  void clear() {
    hold_requests const hold;
    rmi_fence();
    m_local.clear();
    rmi_fence();
  }

  /// Collective: every location's part in one container, on every location.
  /// Fences first.  Moves every element to every location: for small
  /// containers, tests and output.
  Gathered gather() const {
    hold_requests const hold;
    rmi_fence();
    std::vector<Gathered> parts = allgather_value(Gathered(m_local.begin(), m_local.end(), m_local.size(), m_hash));
    Gathered all(0, m_hash);
    for (Gathered& part : parts) all.insert(std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    return all;
  }

 protected:
  explicit keyed_container(Hash hash) : m_hash(std::move(hash)), m_local(m_hash) {}
  ~keyed_container() override = default;

  location_id here() const noexcept { return m_here; }
  Hash const& hash() const noexcept { return m_hash; }

  // Set at construction: whether the container's destructor runs during an
  // unwinding (then it must not fence: other locations may never get there).
  bool unwinding() const noexcept { return std::uncaught_exceptions() != m_uncaught; }

 private:
  void serve_erase(K const& k) { m_local.erase(k); }

  int m_uncaught = std::uncaught_exceptions();
  location_id m_here = get_location_id();
  location_id m_locations = get_num_locations();
  Hash m_hash;
  Local m_local;  // the keys this location owns
};

}  // namespace armi::detail
