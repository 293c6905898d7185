// Sums, per chunk of a location's window, of the time each call path owns
// between consecutive events (SyncContext::time_map_in).  The backward
// replay asks for the time map of long spans of a window more than once
// (the critical path's pieces, the intervals carried across a requested
// cut, a synchronization interval from the window's start): each such
// query read the events and annotations of the whole span, a window of
// several MiB, from memory.  With the chunks summed once, a query scans
// only its partial first and last chunks.  Sums are integer nanoseconds,
// so the result is the same to the nanosecond as a scan of every event.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "callpaths.hpp"
#include "pattern.hpp"

namespace onlinews::analysis {

class TimeMapIndex {
 public:
  static constexpr std::size_t kChunk = 1024;  // events
  // Spans shorter than this many events are scanned without the index
  // (tests set it to SIZE_MAX: no index).
  static inline std::size_t min_span = 4 * kChunk;
  // Chunks taken from an index so far, in this process (tests read it).
  static inline std::atomic<std::uint64_t> chunks_taken{0};

  struct Entry {
    std::uint32_t callpath;
    std::int64_t ns;
  };
  struct Window {
    const std::vector<Event>* events = nullptr;
    std::vector<std::uint32_t> first;  // per chunk: its first entry; one more at the end
    std::vector<Entry> entries;
    // The entries of chunk c (events [c * kChunk, (c + 1) * kChunk)).
    const Entry* begin(std::size_t c) const { return entries.data() + first[c]; }
    const Entry* end(std::size_t c) const { return entries.data() + first[c + 1]; }
  };

  // Forgets every window (their events change from one epoch to the next).
  void clear() { used_ = 0; }
  // The chunks of the window `ev` (built at the first call for it in this
  // epoch).  `owner(i)`: the call path owning the time after event i.
  template <class Owner>
  const Window& of(const std::vector<Event>& ev, Owner owner) {
    for (std::size_t w = 0; w < used_; ++w) {
      if (windows_[w].events == &ev) return windows_[w];
    }
    if (used_ == windows_.size()) windows_.emplace_back();
    Window& w = windows_[used_++];
    w.events = &ev;
    w.first.clear();
    w.entries.clear();
    std::vector<std::int64_t>& sum = scratch_;
    std::vector<std::uint32_t>& touched = touched_;
    const std::size_t n = ev.size();
    for (std::size_t c = 0; c * kChunk < n; ++c) {
      w.first.push_back(static_cast<std::uint32_t>(w.entries.size()));
      const std::size_t end = std::min(n - 1, (c + 1) * kChunk);  // intervals [i, i + 1) with i < end
      for (std::size_t i = c * kChunk; i < end; ++i) {
        const std::int64_t d = static_cast<std::int64_t>(ev[i + 1].time) - static_cast<std::int64_t>(ev[i].time);
        const std::uint32_t cp = owner(i);
        if (d <= 0 || cp == kNoCallpath) continue;
        if (cp >= sum.size()) sum.resize(static_cast<std::size_t>(cp) + 64, 0);
        if (sum[cp] == 0) touched.push_back(cp);
        sum[cp] += d;
      }
      for (std::uint32_t cp : touched) {
        w.entries.push_back({cp, sum[cp]});
        sum[cp] = 0;
      }
      touched.clear();
    }
    w.first.push_back(static_cast<std::uint32_t>(w.entries.size()));
    return w;
  }

 private:
  std::vector<Window> windows_;  // [0, used_) this epoch's; the rest keep their memory
  std::size_t used_ = 0;
  std::vector<std::int64_t> scratch_;
  std::vector<std::uint32_t> touched_;
};

}  // namespace onlinews::analysis
