// An open-addressing hash map for per-message lookups: the analysis'
// (requests, (peer, seq) keys, event indices, message envelopes:
// pending_sends.hpp) and the runtime's table of
// open MPI requests (runtime/requests.hpp, on the recording path).  std::unordered_map allocates
// a node per insertion and frees it on erase; with one or two entries per
// message that was a fifth of the epoch analysis (bench_replay, perf).  This
// map keeps its slots across clear(), so a steady run allocates only when an
// epoch holds more entries than any before.  Linear probing with
// backward-shift deletion (no tombstones), load at most 1/2.  The slot is
// the top bits of the hash times 2^64/phi, so a hash that varies only in
// its high bits (keys that pack fields) still spreads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "resident.hpp"

namespace onlinews::analysis {

template <class K>
struct FlatHash {
  std::size_t operator()(const K& k) const {
    return static_cast<std::size_t>(k);
  }
};

template <class K, class V, class Hash = FlatHash<K>>
class FlatMap {
 public:
  struct Slot {
    K key{};
    V value{};
    bool used = false;
  };

  std::size_t size() const { return size_; }
  // Room for `n` entries without growing (an allocation now, none later).
  void reserve(std::size_t n) {
    std::size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    if (cap > slots_.size()) rehash(cap);
  }
  bool empty() const { return size_ == 0; }

  V* find(const K& k) {
    if (size_ == 0) return nullptr;
    for (std::size_t i = home(k);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == k) return &s.value;
    }
  }
  const V* find(const K& k) const { return const_cast<FlatMap*>(this)->find(k); }
  bool contains(const K& k) const { return find(k) != nullptr; }

  // The value for `k`, value-initialized if new.
  V& operator[](const K& k) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    std::size_t i = home(k);
    for (;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) break;
      if (s.key == k) return s.value;
    }
    Slot& s = slots_[i];
    s.used = true;
    s.key = k;
    s.value = V{};
    ++size_;
    return s.value;
  }

  bool erase(const K& k) {
    if (size_ == 0) return false;
    std::size_t i = home(k);
    for (;; i = (i + 1) & mask_) {
      if (!slots_[i].used) return false;
      if (slots_[i].key == k) break;
    }
    // Move later members of the probe run back into the hole, unless their
    // home lies (cyclically) after the hole and up to their own slot.
    for (std::size_t j = i;;) {
      j = (j + 1) & mask_;
      if (!slots_[j].used) break;
      const std::size_t h = home(slots_[j].key);
      const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
      if (stays) continue;
      slots_[i] = std::move(slots_[j]);
      i = j;
    }
    slots_[i].used = false;
    --size_;
    return true;
  }

  // Empties the map and keeps its slots.
  void clear() {
    if (size_ == 0) return;
    for (Slot& s : slots_) s.used = false;
    size_ = 0;
  }

  // Calls f(key, value) for every entry, in no particular order.
  template <class F>
  void for_each(F&& f) {
    for (Slot& s : slots_) {
      if (s.used) f(static_cast<const K&>(s.key), s.value);
    }
  }
  template <class F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_) {
      if (s.used) f(s.key, s.value);
    }
  }

 private:
  std::size_t home(const K& k) const {
    return static_cast<std::size_t>((static_cast<std::uint64_t>(Hash()(k)) * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void grow() { rehash(slots_.empty() ? 16 : slots_.size() * 2); }
  void rehash(std::size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    assign_resident(slots_, capacity, Slot{});
    mask_ = slots_.size() - 1;
    shift_ = 64;
    for (std::size_t n = slots_.size(); n > 1; n >>= 1) --shift_;
    size_ = 0;
    for (Slot& s : old) {
      if (s.used) (*this)[s.key] = std::move(s.value);
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  int shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace onlinews::analysis
