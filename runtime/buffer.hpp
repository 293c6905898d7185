// Per-thread event buffers (DESIGN.md §3).  Each thread appends to its own
// single-producer queue; the epoch, running on the thread that reached the
// cut, is the only consumer.  Recording never allocates after a thread's
// first event and never takes a lock.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "event.hpp"
#include "event_ring.hpp"

namespace onlinews::rt {

// Overflow policy: once fewer than kLeaveReserve slots are free, only Leave
// events of regions whose Enter was recorded are still accepted, so every
// recorded region stays closed and the window stays well formed.  Everything
// else is dropped and counted; an Enter dropped this way also drops its Leave.
constexpr std::size_t kLeaveReserve = 256;

// How far ahead of a thread's write position its ring's pages are made
// resident (EventRing::populate_ahead): what a thread records in ~1 ms at
// 30 ns an event, so usually more than it fills between two progress
// points of the MPI thread; a faster writer faults in its own pages, as
// without it.
constexpr std::size_t kPopulateAheadEvents = (1u << 20) / sizeof(Event);

class ThreadBuffer {
 public:
  ThreadBuffer(std::size_t capacity_events, int thread_index);
  ThreadBuffer(const ThreadBuffer&) = delete;
  ThreadBuffer& operator=(const ThreadBuffer&) = delete;

  // Producer side (owning thread only).
  [[gnu::always_inline]] void push(const Event& e) {
    if (deferred_leave_ != 0) flush_deferred();
    push_now(e);
  }

  // Polling (unsuccessful MPI_Test*/MPI_Iprobe in a loop) would fill the
  // buffer with Enter/Leave pairs.  A poll's Leave is deferred instead; the
  // next unsuccessful poll of the same region only moves it, and any other
  // event first records it.  A polling loop thus becomes one visit spanning
  // it (DESIGN.md: polling is time, not events).
  // (`site`: the polling call's call site; polls of one function from two
  // places are two loops.)
  bool polling(std::uint32_t region, const void* site = nullptr) const {
    return deferred_leave_ != 0 && deferred_region_ == region && deferred_site_ == site;
  }
  void defer_leave(std::uint64_t t, std::uint32_t region, const void* site = nullptr) {
    deferred_leave_ = t;
    deferred_region_ = region;
    deferred_site_ = site;
  }
  void extend_poll(std::uint64_t t) {
    deferred_leave_ = t;
    coalesced_.store(coalesced_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  std::uint64_t coalesced_polls() const { return coalesced_.load(std::memory_order_relaxed); }
  // MPI calls of this thread recorded as time only (a thread whose MPI
  // calls are not analyzed).  Owner writes; anyone reads.
  void count_time_only_call() {
    time_only_calls_.store(time_only_calls_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  std::uint64_t time_only_calls() const { return time_only_calls_.load(std::memory_order_relaxed); }
  // Loop chunks the OpenMP runtime dispatched to this thread (OMPT
  // dispatch: counted, not recorded).  Owner writes; anyone reads.
  void count_dispatched_chunk() {
    chunks_.store(chunks_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  std::uint64_t dispatched_chunks() const { return chunks_.load(std::memory_order_relaxed); }
  // ONLINEWS_SAMPLING: the raw time the poll call in progress began (its
  // Enter is recorded after it returns; 0: none).  Owner writes; the
  // pipeline reads it when it cuts a window (sample_placer.hpp, flush).
  void set_poll_since(std::uint64_t t) { poll_since_.store(t, std::memory_order_relaxed); }
  std::uint64_t poll_since() const { return poll_since_.load(std::memory_order_relaxed); }
  // A successful poll after unsuccessful ones continues their open visit:
  // its events and Leave close it.
  void resume_poll() { deferred_leave_ = 0; }


 private:
  [[gnu::noinline]] void flush_deferred() {
    const std::uint64_t t = deferred_leave_;
    deferred_leave_ = 0;
    push_now(Event::leave(t));
  }
  [[gnu::always_inline]] void push_now(const Event& e) {
    if (e.kind == EventKind::Leave) {
      if (dropped_open_ > 0) {
        --dropped_open_;
        drop();
        return;
      }
      if (!queue_.push(e)) drop();
      return;
    }
    if (queue_.write_available(kLeaveReserve) <= kLeaveReserve || !queue_.push(e)) {
      if (e.kind == EventKind::Enter) ++dropped_open_;
      drop();
    }
  }


 public:
  // Consumer side (the epoch).  Appends everything recorded so far to `out`,
  // each event's time mapped by `time_of` on the way (one pass, and no
  // zero-fill of the space before the copy).
  template <class F>
  std::size_t drain(std::vector<Event>& out, F&& time_of) {
    const std::size_t need = out.size() + queue_.read_available();
    if (need > out.capacity()) {
      // Fresh storage, made resident up to `need` in one call before the
      // events drained so far move in (inline_analysis/resident.hpp): that
      // copy wrote fresh pages too, one fault each (a first window grows
      // by doubling: as many pages again as the window).  Storage reused
      // epoch after epoch is resident as far as earlier windows filled it.
      std::vector<Event> fresh;
      fresh.reserve(std::max(need, 2 * out.capacity()));
      analysis::populate(fresh.data(), need * sizeof(Event));
      fresh.insert(fresh.end(), out.begin(), out.end());
      out.swap(fresh);
    }
    return queue_.consume_all([&](const Event& e) {
      out.push_back(e);
      out.back().time = time_of(e.time);
    });
  }
  std::size_t drain(std::vector<Event>& out) {
    return drain(out, [](std::uint64_t t) { return t; });
  }
  // The owning thread, having drained its own buffer: see
  // EventRing::rewind_if_empty.
  void rewind_if_empty() { queue_.rewind_if_empty(); }
  // One thread at a time (the MPI thread): EventRing::populate_ahead.
  void populate_ahead() { queue_.populate_ahead(kPopulateAheadEvents); }
  // Events dropped since the last call (consumer side).
  std::uint64_t take_dropped();
  // Fill level in [0, 1] (either side; approximate while recording).
  double fill() const {
    return static_cast<double>(queue_.read_available()) / static_cast<double>(capacity_);
  }
  // Events waiting to be drained (consumer side; approximate elsewhere).
  std::size_t size() const { return queue_.read_available(); }
  int thread_index() const { return thread_index_; }
  std::size_t capacity() const { return capacity_; }

 private:
  void drop() { dropped_.fetch_add(1, std::memory_order_relaxed); }

  EventRing queue_;
  std::size_t capacity_;
  int thread_index_;
  std::uint32_t dropped_open_ = 0;      // producer-only
  std::uint64_t deferred_leave_ = 0;    // producer-only: pending Leave of a poll (0: none)
  std::uint32_t deferred_region_ = 0;
  const void* deferred_site_ = nullptr;
  std::atomic<std::uint64_t> coalesced_{0};  // polls folded into an earlier one (owner writes)
  std::atomic<std::uint64_t> time_only_calls_{0};  // owner writes
  std::atomic<std::uint64_t> chunks_{0};           // owner writes
  std::atomic<std::uint64_t> poll_since_{0};       // owner writes
  std::atomic<std::uint64_t> dropped_{0};
};

// Process-wide registry of thread buffers.  A thread registers on its first
// event; the array is fixed so that the epoch can walk it without locks.
constexpr int kMaxThreads = 1024;

class BufferRegistry {
 public:
  void configure(std::size_t capacity_events) { capacity_ = capacity_events; }
  // Returns the calling thread's buffer, creating it on first use (nullptr if
  // the table is full or allocation failed: that thread then records nothing
  // and the loss is counted).
  ThreadBuffer* get_or_create();
  int count() const { return count_.load(std::memory_order_acquire); }
  ThreadBuffer* at(int i) const { return slots_[i].load(std::memory_order_acquire); }
  std::uint64_t unregistered_drops() const { return unregistered_.load(std::memory_order_relaxed); }
  void note_unregistered_drop() { unregistered_.fetch_add(1, std::memory_order_relaxed); }

 private:
  std::size_t capacity_ = 1 << 19;
  std::atomic<int> count_{0};
  std::atomic<ThreadBuffer*> slots_[kMaxThreads] = {};
  std::atomic<std::uint64_t> unregistered_{0};
};

}  // namespace onlinews::rt
