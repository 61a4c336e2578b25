// A hand_transport that delivers nothing by itself: what a location sends
// waits in `sent` (with its destination) until the test moves it to a
// location's `inbox`, from which that location's receive() takes it; executed
// buffers go back to their owner's `freed`, from which its reclaim() takes
// them.  For unit tests that look at, damage or replay the bytes on the wire.
#pragma once

#include "support/hand_transport.hpp"

#include <deque>
#include <vector>

namespace armi_test {

class holding_transport : public hand_transport {
 public:
  struct sent_buffer {
    location_id dest;
    buffer* b;
  };

  holding_transport(char const* test, location_id n, bool separate)
      : hand_transport(test, n, separate), inbox(n), freed(n) {}
  ~holding_transport() override {
    for (auto& s : sent) delete s.b;
    for (auto& q : inbox)
      for (buffer* b : q) delete b;
    for (auto& q : freed)
      for (buffer* b : q) delete b;
  }

  send_path send(location_id dest, buffer* b) override {
    sent.push_back({dest, b});
    return send_path::message;
  }
  buffer* receive(location_id self) override { return pop(inbox[self]); }
  void release(location_id, buffer* first, buffer* last) override {
    for (buffer* b = first;; b = static_cast<buffer*>(b->next.load())) {
      freed[b->owner].push_back(b);
      if (b == last) break;
    }
  }
  buffer* reclaim(location_id self) override { return pop(freed[self]); }

  std::vector<sent_buffer> sent;
  std::vector<std::deque<buffer*>> inbox;
  std::vector<std::deque<buffer*>> freed;

 private:
  static buffer* pop(std::deque<buffer*>& q) {
    if (q.empty()) return nullptr;
    buffer* b = q.front();
    q.pop_front();
    return b;
  }
};

}  // namespace armi_test
