// Raw byte (de)serialization of the backward replay's payloads.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

namespace onlinews::analysis {

// Appends values' bytes.  Its storage is kept sized to its capacity and the
// fill level apart: a put is a fixed-size copy (an insert of the value's
// bytes called memmove and a range check each: ~10 % of bench_replay).
class ByteWriter {
 public:
  ByteWriter() { bytes_.resize(kInitial); }
  template <class T>
  void put(const T& v) {
    if (bytes_.size() - used_ < sizeof(T)) grow(sizeof(T));
    std::memcpy(bytes_.data() + used_, &v, sizeof(T));
    used_ += sizeof(T);
  }
  void append(const std::byte* p, std::size_t n) {
    if (n == 0) return;
    if (bytes_.size() - used_ < n) grow(n);
    std::memcpy(bytes_.data() + used_, p, n);
    used_ += n;
  }
  const std::byte* data() const { return bytes_.data(); }
  std::size_t size() const { return used_; }
  bool empty() const { return used_ == 0; }
  void clear() { used_ = 0; }
  // The bytes written, as a vector; the writer starts over with storage as
  // large as what it hands out (the next batch is likely as large).
  std::vector<std::byte> take() {
    const std::size_t n = used_;
    bytes_.resize(n);
    std::vector<std::byte> out = std::move(bytes_);
    bytes_ = std::vector<std::byte>(std::max(n, kInitial));
    used_ = 0;
    return out;
  }

 private:
  static constexpr std::size_t kInitial = 256;
  void grow(std::size_t n) { bytes_.resize(std::max(2 * bytes_.size(), used_ + n)); }
  std::vector<std::byte> bytes_;
  std::size_t used_ = 0;
};

class ByteReader {
 public:
  ByteReader(const std::byte* p, std::size_t n) : p_(p), end_(p + n) {}
  template <class T>
  T get() {
    T v{};
    if (p_ + sizeof(T) <= end_) std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  bool ok() const { return p_ <= end_; }

 private:
  const std::byte* p_;
  const std::byte* end_;
};

}  // namespace onlinews::analysis
