// The single-producer, single-consumer ring under each thread's event buffer
// (buffer.hpp).  The owning thread pushes; the epoch (one thread at a time)
// consumes -- on the MPI thread, so for that thread's own ring producer and
// consumer are one thread, which may rewind it (rewind_if_empty).  Two
// things the general-purpose queue it replaces did not do:
//  * the producer keeps its own copy of the consumer's position and reads
//    the shared one only when the ring looks full, so a push touches no
//    cache line the consumer writes;
//  * every push prefetches, for writing, the slot 16 events ahead.  A
//    buffer of a few MiB is cycled through, so each new line of it was a
//    cache miss whose store waited in the store buffer; any load that then
//    could not be forwarded (the hooks build events from narrow fields and
//    copy them wide) waited for those misses to drain.  In the 2-rank 8-byte
//    ring that one load was 5-8 % of the run (benchmarks/README.md).
//  * its pages are made resident ahead of the producer, in batches, by the
//    MPI thread's progress (populate_ahead): a page fault per 128 events in
//    the application's thread slowed an oversubscribed wavefront's loop by
//    a fifth (inline_analysis/resident.hpp).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <new>

#include "event.hpp"
#include "inline_analysis/resident.hpp"

namespace onlinews::rt {

class EventRing {
 public:
  // Room for `capacity` events (allocated here, in a mapping of its own:
  // page-aligned, and in huge pages where they are wanted and it holds at
  // least 8, inline_analysis/resident.hpp; only the pages of the first
  // `ahead` events are made resident now).  Throws std::bad_alloc.
  explicit EventRing(std::size_t capacity, std::size_t ahead = 0)
      : size_(capacity + 1), bytes_(analysis::whole_pages(size_ * sizeof(Event))), slots_(allocate(bytes_)) {
    populate_ahead(ahead);
  }
  ~EventRing() { analysis::unmap_fresh(slots_, bytes_); }
  EventRing(const EventRing&) = delete;
  EventRing& operator=(const EventRing&) = delete;

  // Producer: appends `e`; false if the ring is full.
  [[gnu::always_inline]] bool push(const Event& e) {
    const std::size_t w = write_.load(std::memory_order_relaxed);
    const std::size_t next = w + 1 == size_ ? 0 : w + 1;
    if (next == read_seen_) {
      read_seen_ = read_.load(std::memory_order_acquire);
      if (next == read_seen_) return false;
    }
    // Field by field: the event is usually a temporary the hook just built,
    // whose fields then go from registers straight into the slot (a wide
    // copy of it made the compiler keep it on the stack and read it back).
    Event* s = new (slots_ + w) Event;
    s->time = e.time;
    s->kind = e.kind;
    s->flags = e.flags;
    s->comm = e.comm;
    s->peer = e.peer;
    s->tag = e.tag;
    s->request = e.request;
    s->bytes = e.bytes;
    // (The division only near the array's end, where a tiny ring may wrap more than once.)
    const std::size_t ahead = w + kPrefetch < size_ ? w + kPrefetch : (w + kPrefetch) % size_;
    __builtin_prefetch(slots_ + ahead, 1, 3);
    write_.store(next, std::memory_order_release);
    return true;
  }
  // Producer: free slots; at most `enough` is looked for (the shared
  // position is read only when the cached one shows less).
  [[gnu::always_inline]] std::size_t write_available(std::size_t enough) {
    const std::size_t w = write_.load(std::memory_order_relaxed);
    std::size_t n = free_between(w, read_seen_);
    if (n <= enough) {
      read_seen_ = read_.load(std::memory_order_acquire);
      n = free_between(w, read_seen_);
    }
    return n;
  }
  // Either side (approximate on the producer's): events not consumed yet.
  std::size_t read_available() const {
    const std::size_t w = write_.load(std::memory_order_acquire), r = read_.load(std::memory_order_acquire);
    return w >= r ? w - r : size_ - (r - w);
  }
  // Consumer: hands every event pushed so far to `f`, in order, and frees
  // their slots; returns how many.
  template <class F>
  std::size_t consume_all(F&& f) {
    const std::size_t w = write_.load(std::memory_order_acquire);
    std::size_t r = read_.load(std::memory_order_relaxed);
    std::size_t n = 0;
    while (r != w) {
      const std::size_t end = w > r ? w : size_;  // up to the write position or the array's end
      for (std::size_t i = r; i < end; ++i) f(static_cast<const Event&>(slots_[i]));
      n += end - r;
      r = end == size_ ? 0 : end;
    }
    read_.store(r, std::memory_order_release);
    return n;
  }

  // One thread at a time (the MPI thread; the constructor, before the ring
  // is shared): makes the pages up to `ahead` events beyond the write
  // position resident (inline_analysis/resident.hpp), in steps of at least
  // a quarter of `ahead` so that the calls stay few.  Pages behind the front stay
  // resident; once every page is, this costs two loads.
  void populate_ahead(std::size_t ahead) {
    const std::size_t done = populated_.load(std::memory_order_relaxed);
    if (done == bytes_ || ahead == 0) return;
    const std::size_t w = write_.load(std::memory_order_relaxed) * sizeof(Event);
    const std::size_t want = std::min(bytes_, w + ahead * sizeof(Event));
    if (want <= done || (want < bytes_ && want - done < ahead * sizeof(Event) / 4)) return;
    const std::size_t end = std::min(bytes_, analysis::whole_pages(want));
    analysis::populate(reinterpret_cast<char*>(slots_) + done, end - done);
    populated_.store(end, std::memory_order_relaxed);
  }
  // Bytes from the array's start made resident so far, and the array
  // (tests).
  std::size_t populated_bytes() const { return populated_.load(std::memory_order_relaxed); }
  const void* data() const { return slots_; }

  // Where the next push goes (tests, diagnostics).
  std::size_t write_index() const { return write_.load(std::memory_order_acquire); }
  // The consumer when it is also the producer (the owning thread, between
  // two of its pushes): once every event is consumed, the next push goes to
  // the first slot again.  The ring is drained long before it fills (at a
  // window's cut), so its front stays in use and the pages behind it are
  // never touched: cycling through all of it kept every page resident
  // (16 MiB per thread by default).  read_ is reset before write_: a
  // reader on another thread (read_available) sees the old count or none,
  // never a full ring.
  void rewind_if_empty() {
    const std::size_t w = write_.load(std::memory_order_relaxed);
    if (w == 0 || read_.load(std::memory_order_relaxed) != w) return;
    read_.store(0, std::memory_order_release);
    write_.store(0, std::memory_order_release);
    read_seen_ = 0;
  }

 private:
  static Event* allocate(std::size_t bytes) {
    void* p = analysis::map_fresh(bytes);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<Event*>(p);
  }
  static constexpr std::size_t kPrefetch = 16;  // events (8 cache lines) ahead
  std::size_t free_between(std::size_t w, std::size_t r) const { return r > w ? r - w - 1 : size_ - (w - r) - 1; }

  const std::size_t size_;   // slots: capacity + 1 (one stays empty)
  const std::size_t bytes_;  // the array's size, whole pages
  Event* const slots_;
  alignas(64) std::atomic<std::size_t> write_{0};  // producer writes
  std::size_t read_seen_ = 0;                       // producer's copy of read_
  alignas(64) std::atomic<std::size_t> read_{0};   // consumer writes
  // Bytes from slots_ made resident (whole pages, or bytes_): written by
  // populate_ahead, off the producer's cache lines.
  std::atomic<std::size_t> populated_{0};
};

}  // namespace onlinews::rt
