// Per-epoch sums of a pattern per (location, call path), added to the
// profile once per epoch instead of at every event.  A metric and its
// ancestors (Profile::add_all) at every Enter, Leave and message cost more
// than the rest of the time and count analyses together (benchmarks/README.md,
// callgrind of the 1-rank ring): here an event adds to a slot it finds in
// a few instructions, and flush() hands every touched slot to the profile.
#pragma once
#include <climits>
#include <cstdint>
#include <utility>
#include <vector>

namespace onlinews::analysis {

template <class T, int N>
class CallpathSums {
 public:
  // The N sums of (location, call path); zero until added to.  (A negative
  // location is booked as location 0, as PerLocation does.)
  T* at(int location, std::uint32_t cp) {
    if (location == row_location_ && cp < row_->size()) {
      Slot& s = (*row_)[cp];
      if (s.listed) return s.v;
    }
    return at_slow(location, cp);
  }
  // f(location, call path, const T* sums) for every slot touched since the
  // last flush, in first-touch order; then all are zero again.
  template <class F>
  void flush(F&& f) {
    for (const auto& [loc, cp] : touched_) {
      Slot& s = rows_[static_cast<std::size_t>(loc)][cp];
      f(loc, static_cast<std::uint32_t>(cp), static_cast<const T*>(s.v));
      s = Slot{};
    }
    touched_.clear();
    row_location_ = kNoRow;  // (rows_ may grow before the next add)
  }

 private:
  struct Slot {
    T v[N] = {};
    bool listed = false;  // in touched_
  };
  [[gnu::noinline]] T* at_slow(int location, std::uint32_t cp) {
    const int l = location > 0 ? location : 0;
    if (l != row_location_ || row_ == nullptr) {  // (a walk stays on one location's window for long)
      if (static_cast<std::size_t>(l) >= rows_.size()) rows_.resize(static_cast<std::size_t>(l) + 1);
      row_ = &rows_[static_cast<std::size_t>(l)];
      row_location_ = l;
    }
    if (cp >= row_->size()) row_->resize(static_cast<std::size_t>(cp) + 64);
    Slot& s = (*row_)[cp];
    if (!s.listed) {
      s.listed = true;
      touched_.emplace_back(l, cp);
    }
    return s.v;
  }

  std::vector<std::vector<Slot>> rows_;  // per location, per call path
  static constexpr int kNoRow = INT_MIN;  // (no location is: a negative one is booked as 0)
  std::vector<Slot>* row_ = nullptr;     // rows_[row_location_]
  int row_location_ = kNoRow;
  std::vector<std::pair<int, std::uint32_t>> touched_;
};

}  // namespace onlinews::analysis
