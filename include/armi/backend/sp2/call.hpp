// What an SP-AM handler is given: the message's source and, for a request,
// the way to answer it (defined with the node, am.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace armi::detail::sp2 {

class node;

// What a handler gets: who sent the message, and (for a request) the way to
// answer it.
class call {
 public:
  std::uint32_t source() const { return m_source; }
  bool is_request() const { return m_request; }
  // Request handlers only, at most once: a message to the requester's
  // handler `handler`, short if it fits in 16 bytes, bulk otherwise.
  inline void reply(std::uint8_t handler, void const* data, std::size_t n);

 private:
  friend class node;
  call(node& n, std::uint32_t source, bool request) : m_node(n), m_source(source), m_request(request) {}
  node& m_node;
  std::uint32_t m_source;
  bool m_request;
  bool m_replied = false;
};

using handler = std::function<void(call&, std::byte const* data, std::size_t n)>;

}  // namespace armi::detail::sp2
