// Sends whose records have arrived and whose receives have not been matched
// yet, per envelope (source, communicator, tag), oldest first (internal to
// the Analyzer: matching.cpp, probe_messages.cpp, clock_condition.cpp).
//
// All envelopes' records share one pool, each envelope's a linked FIFO in
// it, found through an open-addressing map.  A code that numbers its
// messages by tag (a sweep: a tag per block and direction) makes an
// envelope per message; a std::map of vectors took a tree node, a vector
// and a search of ~log2(n) cache misses per message there: 5 % of a
// wavefront's instructions, 7-9 % of its time (bench_replay,
// benchmarks/README.md).  Here a steady run allocates nothing, and the pool
// starts from its front again whenever it empties (the next window's
// records lie in sending order again).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "flat_map.hpp"
#include "records.hpp"

namespace onlinews::analysis {

struct MsgKey {
  int src;
  std::uint64_t gid;
  std::int32_t tag;
  bool operator<(const MsgKey& o) const {
    if (src != o.src) return src < o.src;
    if (gid != o.gid) return gid < o.gid;
    return tag < o.tag;
  }
  bool operator==(const MsgKey&) const = default;
};

struct MsgKeyHash {
  std::size_t operator()(const MsgKey& k) const {
    const std::uint64_t st = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.src)) << 32) |
                             static_cast<std::uint32_t>(k.tag);
    return static_cast<std::size_t>((st * 0xff51afd7ed558ccdull) ^ k.gid);
  }
};

class PendingSends {
 public:
  static MsgKey key_of(const SendRecord& r) { return {r.src, r.comm_gid, r.tag}; }

  void push(const SendRecord& r) {
    std::uint32_t n = free_;
    if (n != kNil) {
      free_ = pool_[n].next;
      pool_[n] = {r, kNil};
    } else {
      n = static_cast<std::uint32_t>(pool_.size());
      pool_.push_back({r, kNil});
    }
    Fifo& f = envelopes_[key_of(r)];
    if (f.count == 0) {
      f.head = n;
    } else {
      pool_[f.tail].next = n;
    }
    f.tail = n;
    ++f.count;
    ++total_;
  }
  // Records queued on envelope `k`.
  std::size_t size(const MsgKey& k) const {
    const Fifo* f = envelopes_.find(k);
    return f != nullptr ? f->count : 0;
  }
  // The i-th oldest record of envelope `k` (i < size(k)); i steps from the oldest.
  SendRecord& at(const MsgKey& k, std::size_t i) { return pool_[node(*envelopes_.find(k), i)].r; }
  // Removes the i-th oldest record of envelope `k` (i < size(k)) and returns it.
  SendRecord take(const MsgKey& k, std::size_t i) {
    Fifo& f = *envelopes_.find(k);
    std::uint32_t n = f.head;
    if (i == 0) {
      f.head = pool_[n].next;
    } else {
      const std::uint32_t before = node(f, i - 1);
      n = pool_[before].next;
      pool_[before].next = pool_[n].next;
      if (f.tail == n) f.tail = before;
    }
    const SendRecord r = pool_[n].r;
    if (--f.count == 0) envelopes_.erase(k);
    release(n);
    return r;
  }
  // Calls f(record) for each record of envelope `k`, oldest first.
  template <class F>
  void for_each_of(const MsgKey& k, F&& f) {
    const Fifo* q = envelopes_.find(k);
    if (q == nullptr) return;
    for (std::uint32_t n = q->head, c = 0; c < q->count; n = pool_[n].next, ++c) f(pool_[n].r);
  }
  std::size_t total() const { return total_; }
  void clear() {
    envelopes_.clear();
    pool_.clear();
    free_ = kNil;
    total_ = 0;
  }

 private:
  static constexpr std::uint32_t kNil = 0xffffffffu;
  struct Node {
    SendRecord r;
    std::uint32_t next = kNil;
  };
  struct Fifo {
    std::uint32_t head = kNil, tail = kNil, count = 0;
  };
  std::uint32_t node(const Fifo& f, std::size_t i) const {
    std::uint32_t n = f.head;
    for (; i > 0; --i) n = pool_[n].next;
    return n;
  }
  void release(std::uint32_t n) {
    if (--total_ == 0) {  // (empty: the next records fill the pool from its front)
      pool_.clear();
      free_ = kNil;
      return;
    }
    pool_[n].next = free_;
    free_ = n;
  }

  std::vector<Node> pool_;  // (clear() keeps its capacity)
  std::uint32_t free_ = kNil;
  FlatMap<MsgKey, Fifo, MsgKeyHash> envelopes_;
  std::size_t total_ = 0;
};

}  // namespace onlinews::analysis
