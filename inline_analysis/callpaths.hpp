// Call-path tree of one rank: a node is (parent node, region, call site).
// The call site is an MPI call's return address into the application (0:
// none; Event::site()), resolved to a name only at MPI_Finalize
// (postpass/callsites.cpp).  Ids are local to the rank and stable for the
// whole run; the postpass unifies them.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace onlinews::analysis {

constexpr std::uint32_t kNoCallpath = 0xffffffffu;

class CallpathTree {
 public:
  struct Node {
    std::uint32_t parent;  // kNoCallpath for a root
    std::uint32_t region;
    std::uint64_t site = 0;
  };
  std::uint32_t child(std::uint32_t parent, std::uint32_t region, std::uint64_t site = 0) {
    const Key key{(static_cast<std::uint64_t>(parent) << 32) | region, site};
    // Loops enter the same few call paths again and again: a direct-mapped
    // cache in front of the hash map.
    Slot& slot = cache_[(KeyHash{}(key)) >> (64 - kCacheBits)];
    if (slot.key == key) return slot.id;
    auto it = index_.find(key);
    std::uint32_t id;
    if (it != index_.end()) {
      id = it->second;
    } else {
      id = static_cast<std::uint32_t>(nodes_.size());
      nodes_.push_back({parent, region, site});
      index_.emplace(key, id);
    }
    slot = {key, id};
    return id;
  }
  std::size_t size() const { return nodes_.size(); }
  const Node& node(std::uint32_t id) const { return nodes_[id]; }
  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  static constexpr int kCacheBits = 10;
  struct Key {
    std::uint64_t path = ~0ull, site = ~0ull;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const { return (k.path ^ (k.site * 0xff51afd7ed558ccdull)) * 0x9E3779B97F4A7C15ull; }
  };
  struct Slot {
    Key key;
    std::uint32_t id = 0;
  };
  std::vector<Slot> cache_ = std::vector<Slot>(std::size_t{1} << kCacheBits);
  std::vector<Node> nodes_;
  std::unordered_map<Key, std::uint32_t, KeyHash> index_;
};

}  // namespace onlinews::analysis
