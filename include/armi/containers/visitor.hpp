// Visitor-style traversal: send a piece of work to the location that owns a
// vertex (or any index), and run it there on that location's representative.
//
//   class my_state : public armi::visitable<my_state> {
//    public:
//     armi::location_id owner(std::uint64_t v) const;   // required
//     ...
//   };
//   armi::visit(state, v, [](my_state& s, std::uint64_t v, int level) { ... }, level);
//
// visit(obj, v, f, args...) runs f(rep, v, args...) where rep is the
// representative of obj on obj.owner(v):
//   - at once, on the calling thread, when v is local (no message; nested
//     local visits recurse, so a traversal that chains many local visits
//     should queue vertices itself instead — see algorithms/bfs.hpp);
//   - otherwise by one async_rmi to the owner (aggregated like any other).
// f travels by value, like every RMI argument: use a capture-less lambda or a
// function object whose state is trivially copyable (never a pointer or a
// reference to the caller's memory).  args travel by value too.  Because the
// work is an async_rmi, rmi_fence() returns only after every visit issued
// before it, and every visit those visits issued, has run: a traversal that
// only visits is terminated by one fence.
//
// pgraph is visitable: f gets the pgraph representative of v's owner, so it
// can read local_vertex_property(v) and local_out_edges(v) and visit v's
// neighbours.
//
// Thread safety: call from location threads; f runs on the owner's location
// thread, one request at a time, so it needs no locks for that location's data.
// Cost: a local visit is a function call; a remote one is one async_rmi
// carrying v, f's bytes and args.
#pragma once

#include <armi/p_object.hpp>
#include <armi/rmi.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace armi {

template <class Derived>
class visitable;

namespace detail {
// Names visitable's private RMI target for visit().
struct visitor_access {
  template <class G, class F, class... A>
  static constexpr auto serve_visit = armi::method<&visitable<G>::template serve_visit<F, A...>>;
};
}  // namespace detail

/// Base of a p_object that visit() can target.  Derived must be the class
/// that derives from visitable<Derived> and provide
/// `location_id owner(std::uint64_t v) const`.
template <class Derived>
class visitable : public p_object {
 protected:
  visitable() = default;
  ~visitable() override = default;

 private:
  friend struct detail::visitor_access;
  // The RMI target of a remote visit.
  template <class F, class... A>
  void serve_visit(std::uint64_t v, F f, A... args) {
    f(static_cast<Derived&>(*this), v, args...);
  }
};

/// Runs f(rep, v, args...) on obj's representative at obj.owner(v): at once
/// when that is this location, else by one async_rmi (fire-and-forget; the
/// next rmi_fence() waits for it and for every visit it issues).  f and args
/// travel by value.
template <class G, class F, class... A>
  requires std::is_base_of_v<visitable<G>, G> && std::is_invocable_v<F&, G&, std::uint64_t, std::decay_t<A>&...>
void visit(G& obj, std::uint64_t v, F const& f, A&&... args) {
  location_id const dest = obj.owner(v);
  if (dest == get_location_id()) {
    // Same by-value semantics as the remote path: f sees copies of args.
    F g = f;
    [&](std::decay_t<A>... copies) { g(obj, v, copies...); }(std::forward<A>(args)...);
  } else {
    async_rmi(dest, obj.get_rmi_handle(), detail::visitor_access::serve_visit<G, F, std::decay_t<A>...>, v, f,
              std::forward<A>(args)...);
  }
}

}  // namespace armi
