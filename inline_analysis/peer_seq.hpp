// A map from one epoch's messages, named (peer, seq), to event indices.
// A send's seq is dense per sender, destination and epoch (records.hpp,
// send_key), so each peer's entries are a vector indexed by seq: an insert
// or a lookup touches the peer's row where the last one did.  A hash map
// keyed by the packed pair scattered 250 000 messages of a window over a
// table larger than the caches; its inserts were a fifth of a tight ring's
// analysis (perf, collect_messages and exchange_and_match).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "flat_map.hpp"

namespace onlinews::analysis {

class PeerSeqIndex {
 public:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  void set(int peer, std::uint32_t seq, std::size_t value) {
    std::vector<std::size_t>& v = row(peer);
    if (seq == v.size()) {  // (the usual case: seqs come in order)
      v.push_back(value);
      ++size_;
      return;
    }
    if (seq > v.size()) v.resize(static_cast<std::size_t>(seq) + 1, kNone);
    if (v[seq] == kNone) ++size_;
    v[seq] = value;
  }
  // nullptr if (peer, seq) has no value.
  const std::size_t* find(int peer, std::uint32_t seq) const {
    const std::uint32_t* r = slot_.find(peer);
    if (r == nullptr) return nullptr;
    const std::vector<std::size_t>& v = rows_[*r - 1].values;
    return seq < v.size() && v[seq] != kNone ? &v[seq] : nullptr;
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Empties the index.  Rows keep their memory for the next epoch unless it
  // is far more than this epoch used: rows are reused by position, not by
  // peer, so keeping every row's largest size would let memory grow toward
  // peers x the largest count any peer ever had.
  void clear() {
    for (std::size_t r = 0; r < used_; ++r) {
      std::vector<std::size_t>& v = rows_[r].values;
      if (v.capacity() > 4 * v.size() + 1024) {
        std::vector<std::size_t>().swap(v);
      } else {
        v.clear();
      }
    }
    slot_.clear();
    used_ = 0;
    size_ = 0;
    last_peer_ = -1;
  }
  // f(peer, seq, value) for every entry: peers in order of their first
  // entry, seqs ascending.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t r = 0; r < used_; ++r) {
      const std::vector<std::size_t>& v = rows_[r].values;
      for (std::size_t s = 0; s < v.size(); ++s) {
        if (v[s] != kNone) f(rows_[r].peer, static_cast<std::uint32_t>(s), v[s]);
      }
    }
  }

 private:
  struct Row {
    int peer = 0;
    std::vector<std::size_t> values;
  };
  std::vector<std::size_t>& row(int peer) {
    if (peer == last_peer_ && last_row_ < used_) return rows_[last_row_].values;
    std::uint32_t& r = slot_[peer];
    if (r == 0) {  // new this epoch: slots store row + 1
      if (used_ == rows_.size()) rows_.emplace_back();
      rows_[used_].peer = peer;
      r = static_cast<std::uint32_t>(++used_);
    }
    last_peer_ = peer;
    last_row_ = r - 1;
    return rows_[last_row_].values;
  }

  FlatMap<int, std::uint32_t> slot_;  // peer -> row + 1
  std::vector<Row> rows_;
  std::size_t used_ = 0;
  std::size_t size_ = 0;
  int last_peer_ = -1;
  std::size_t last_row_ = 0;
};

}  // namespace onlinews::analysis
