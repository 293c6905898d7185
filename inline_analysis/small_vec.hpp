// A vector of trivially copyable values whose first N live in the object
// (internal to inline_analysis/).  The backward replay makes short lists by
// the million, one or more per synchronization point: a symbolic value's
// terms (sym.hpp: most have one or two) and an interval's time per call
// path (sync_replay.hpp: an iteration's handful of calls and regions).  A
// heap vector each made the allocator a sixth of a wavefront's analysis
// (bench_replay), the time maps' two another 2-3 % of its instructions.
// More than N move to the heap, whose block is kept when the list shrinks
// or is assigned again.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace onlinews::analysis {

template <class T, std::uint32_t N>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  static constexpr std::uint32_t kInline = N;
  SmallVec() = default;
  SmallVec(const SmallVec& o) { assign(o.begin(), o.size_); }
  SmallVec(SmallVec&& o) noexcept { take(o); }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) assign(o.begin(), o.size_);
    return *this;
  }
  SmallVec& operator=(SmallVec&& o) noexcept {
    if (this != &o) {
      if (o.heap_ == nullptr && heap_ != nullptr) {
        assign(o.begin(), o.size_);  // (keeps this heap block)
        o.size_ = 0;
      } else {
        release();
        take(o);
      }
    }
    return *this;
  }
  ~SmallVec() { release(); }

  T* begin() { return heap_ != nullptr ? heap_ : inline_; }
  T* end() { return begin() + size_; }
  const T* begin() const { return heap_ != nullptr ? heap_ : inline_; }
  const T* end() const { return begin() + size_; }
  T* data() { return begin(); }
  const T* data() const { return begin(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return begin()[i]; }
  const T& operator[](std::size_t i) const { return begin()[i]; }
  void clear() { size_ = 0; }
  void reserve(std::size_t n) {
    if (n > capacity()) grow(n);
  }
  void push_back(T t) {  // (by value: `t` may be one of this list's values)
    if (size_ == capacity()) grow(size_ + 1);
    begin()[size_++] = t;
  }
  // Removes [first, last) (iterators of this list).
  void erase(T* first, T* last) {
    if (first == last) return;
    std::copy(last, end(), first);
    size_ -= static_cast<std::uint32_t>(last - first);
  }
  void resize(std::size_t n) {  // (shrinking only)
    if (n < size_) size_ = static_cast<std::uint32_t>(n);
  }

 private:
  std::uint32_t capacity() const { return heap_ != nullptr ? cap_ : N; }
  void grow(std::size_t need) {
    const std::size_t cap = std::max<std::size_t>(need, 2 * static_cast<std::size_t>(capacity()));
    T* block = new T[cap];
    std::copy(begin(), end(), block);
    delete[] heap_;
    heap_ = block;
    cap_ = static_cast<std::uint32_t>(cap);
  }
  void assign(const T* from, std::uint32_t n) {
    if (n > capacity()) grow(n);
    std::copy(from, from + n, begin());
    size_ = n;
  }
  void take(SmallVec& o) noexcept {
    size_ = o.size_;
    if (o.heap_ != nullptr) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.heap_ = nullptr;
    } else {
      std::copy(o.inline_, o.inline_ + o.size_, inline_);
    }
    o.size_ = 0;
  }
  void release() noexcept {
    delete[] heap_;
    heap_ = nullptr;
    cap_ = 0;
  }
  T inline_[N];  // NOLINT: only the first size_ are read
  T* heap_ = nullptr;
  std::uint32_t size_ = 0, cap_ = 0;
};

}  // namespace onlinews::analysis
