// The sp2 backend's wire: moves whole packets between nodes, with no
// guarantee beyond "a packet that arrives is the packet that was put"
// (reliability is the AM layer's job, am.hpp; losses, duplicates and delays
// are injected above the wire).  memory_wire links the nodes of one process
// (threads mode); the process mode links processes through sockets
// (process.hpp).
//
// The end of a run: a node whose own traffic is all acknowledged declares
// itself at rest; a node may leave once every node has (am.hpp, drain()).
//
// A node that has nothing to do sleeps in wait() until a packet is put for it
// or a timeout passes (the AM layer's retransmission timer).
//
// Thread safety: put() from any node's thread; take(), wait_token() and
// wait() only by the node `self` itself.
#pragma once

#include <armi/core/mpsc_queue.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

namespace armi::detail::sp2 {

class wire {
 public:
  virtual ~wire() = default;
  virtual std::uint32_t nodes() const = 0;
  // Puts n bytes (one packet) on the way to dst.
  virtual void put(std::uint32_t dst, std::byte const* bytes, std::size_t n) = 0;
  // The next packet that arrived at self, into out; false if none.
  virtual bool take(std::uint32_t self, std::vector<std::byte>& out) = 0;
  // A cheap look: may a packet be waiting for self?
  virtual bool maybe_waiting(std::uint32_t self) const = 0;
  // Read before the last look for work; wait() returns at once if a packet
  // was put for self since.
  virtual std::uint32_t wait_token(std::uint32_t self) const = 0;
  // Sleeps until a packet is put for self, the token is stale, or timeout.
  virtual void wait(std::uint32_t self, std::uint32_t token, std::chrono::microseconds timeout) = 0;
  // Tells every node that self is at rest (once, at the end of the run).
  virtual void declare_at_rest(std::uint32_t self) = 0;
  // Has every node, self included, declared itself at rest?  (On a wire
  // that learns it from arrivals, take() is what brings the news in.)
  virtual bool all_at_rest(std::uint32_t self) const = 0;
};

// Nodes in one address space: a lock-free inbox per node, a condition
// variable to sleep on, one counter of the nodes at rest.
class memory_wire final : public wire {
 public:
  explicit memory_wire(std::uint32_t n) : m_inboxes(n) {
    for (auto& p : m_inboxes) p = std::make_unique<inbox>();
  }
  memory_wire(memory_wire const&) = delete;
  memory_wire& operator=(memory_wire const&) = delete;
  ~memory_wire() override {
    for (auto& in : m_inboxes)
      while (auto* p = in->queue.pop()) delete static_cast<wire_packet*>(p);
  }

  std::uint32_t nodes() const override { return static_cast<std::uint32_t>(m_inboxes.size()); }

  void put(std::uint32_t dst, std::byte const* bytes, std::size_t n) override {
    auto* p = new wire_packet;
    p->bytes.assign(bytes, bytes + n);
    inbox& in = *m_inboxes[dst];
    in.queue.push(p);
    if (in.sleeping.load(std::memory_order_seq_cst)) {
      {
        std::lock_guard<std::mutex> lock(in.mutex);
        in.signal.fetch_add(1, std::memory_order_seq_cst);
      }
      in.wake.notify_one();
    }
  }

  bool take(std::uint32_t self, std::vector<std::byte>& out) override {
    auto* p = static_cast<wire_packet*>(m_inboxes[self]->queue.pop());
    if (p == nullptr) return false;
    out.swap(p->bytes);
    delete p;
    return true;
  }

  bool maybe_waiting(std::uint32_t self) const override { return m_inboxes[self]->queue.maybe_nonempty(); }

  std::uint32_t wait_token(std::uint32_t self) const override {
    return m_inboxes[self]->signal.load(std::memory_order_seq_cst);
  }

  void wait(std::uint32_t self, std::uint32_t token, std::chrono::microseconds timeout) override {
    inbox& in = *m_inboxes[self];
    in.sleeping.store(true, std::memory_order_seq_cst);
    if (!in.queue.maybe_nonempty()) {
      std::unique_lock<std::mutex> lock(in.mutex);
      in.wake.wait_for(lock, timeout, [&] { return in.signal.load(std::memory_order_seq_cst) != token; });
    }
    in.sleeping.store(false, std::memory_order_relaxed);
  }

  void declare_at_rest(std::uint32_t) override { m_at_rest.fetch_add(1, std::memory_order_acq_rel); }
  bool all_at_rest(std::uint32_t) const override { return m_at_rest.load(std::memory_order_acquire) == nodes(); }

 private:
  struct wire_packet : mpsc_node {
    std::vector<std::byte> bytes;
  };
  struct alignas(64) inbox {
    mpsc_queue queue;
    std::atomic<bool> sleeping{false};
    std::atomic<std::uint32_t> signal{0};
    std::mutex mutex;
    std::condition_variable wake;
  };
  std::vector<std::unique_ptr<inbox>> m_inboxes;
  std::atomic<std::uint32_t> m_at_rest{0};
};

}  // namespace armi::detail::sp2
