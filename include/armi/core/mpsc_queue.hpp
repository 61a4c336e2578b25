// An intrusive multi-producer single-consumer FIFO (D. Vyukov's algorithm):
// producers do one atomic exchange, the consumer never blocks them.  Used for
// each location's inbox of arrived buffers and for recycled buffers.
//
// Thread safety: push() from any thread; pop()/maybe_nonempty() only from the
// one consumer.
#pragma once

#include <atomic>

namespace armi::detail {

struct mpsc_node {
  std::atomic<mpsc_node*> next{nullptr};
};

class mpsc_queue {
 public:
  mpsc_queue() : m_head(&m_stub), m_tail(&m_stub) {}
  mpsc_queue(mpsc_queue const&) = delete;
  mpsc_queue& operator=(mpsc_queue const&) = delete;

  void push(mpsc_node* n) noexcept { push_chain(n, n); }

  // Pushes first..last, already linked through next, with one exchange.
  void push_chain(mpsc_node* first, mpsc_node* last) noexcept {
    last->next.store(nullptr, std::memory_order_relaxed);
    mpsc_node* prev = m_head.exchange(last, std::memory_order_seq_cst);
    prev->next.store(first, std::memory_order_release);
  }

  // nullptr when empty, or when a producer is half-way through a push (it will
  // be visible on a later pop).
  mpsc_node* pop() noexcept {
    mpsc_node* tail = m_tail;
    mpsc_node* next = tail->next.load(std::memory_order_acquire);
    if (tail == &m_stub) {
      if (next == nullptr) return nullptr;
      m_tail = next;
      tail = next;
      next = next->next.load(std::memory_order_acquire);
    }
    if (next != nullptr) {
      m_tail = next;
      return tail;
    }
    if (tail != m_head.load(std::memory_order_acquire)) return nullptr;
    push(&m_stub);
    next = tail->next.load(std::memory_order_acquire);
    if (next != nullptr) {
      m_tail = next;
      return tail;
    }
    return nullptr;
  }

  // Consumer side: false only when the queue is empty and no push is in
  // progress.  Sequentially consistent, for the sleep/wake handshake.
  bool maybe_nonempty() const noexcept {
    return m_tail != &m_stub || m_head.load(std::memory_order_seq_cst) != &m_stub;
  }

 private:
  alignas(64) std::atomic<mpsc_node*> m_head;
  alignas(64) mpsc_node* m_tail;
  mpsc_node m_stub;
};

}  // namespace armi::detail
