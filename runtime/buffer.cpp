#include "buffer.hpp"


namespace onlinews::rt {

ThreadBuffer::ThreadBuffer(std::size_t capacity_events, int thread_index)
    : queue_(capacity_events, kPopulateAheadEvents), capacity_(capacity_events), thread_index_(thread_index) {}

std::uint64_t ThreadBuffer::take_dropped() { return dropped_.exchange(0, std::memory_order_relaxed); }

ThreadBuffer* BufferRegistry::get_or_create() {
  thread_local ThreadBuffer* mine = nullptr;
  thread_local bool failed = false;
  if (mine != nullptr) return mine;
  if (failed) return nullptr;
  const int idx = count_.fetch_add(1, std::memory_order_acq_rel);
  if (idx >= kMaxThreads) {
    count_.fetch_sub(1, std::memory_order_acq_rel);
    failed = true;
    return nullptr;
  }
  ThreadBuffer* b = nullptr;
  try {
    b = new ThreadBuffer(capacity_, idx);
  } catch (...) {  // the queue's storage could not be allocated
    b = nullptr;
  }
  if (b == nullptr) {
    failed = true;
    // Keep the slot null: the epoch skips it.
    return nullptr;
  }
  slots_[idx].store(b, std::memory_order_release);
  mine = b;
  return b;
}

}  // namespace onlinews::rt
