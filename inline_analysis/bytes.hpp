// Raw byte (de)serialization of the backward replay's payloads.
#pragma once
#include <cstddef>
#include <cstring>
#include <vector>

namespace onlinews::analysis {

class ByteWriter {
 public:
  ByteWriter() { bytes.reserve(256); }
  template <class T>
  void put(const T& v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof(T));
  }
  std::vector<std::byte> bytes;
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
