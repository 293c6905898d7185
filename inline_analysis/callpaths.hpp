// Call-path tree of one rank: a node is (parent node, region).  Ids are local
// to the rank and stable for the whole run; the postpass unifies them.
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
  };
  std::uint32_t child(std::uint32_t parent, std::uint32_t region) {
    const std::uint64_t key = (static_cast<std::uint64_t>(parent) << 32) | region;
    auto it = index_.find(key);
    if (it != index_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back({parent, region});
    index_.emplace(key, id);
    return id;
  }
  std::size_t size() const { return nodes_.size(); }
  const Node& node(std::uint32_t id) const { return nodes_[id]; }
  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  std::vector<Node> nodes_;
  std::unordered_map<std::uint64_t, std::uint32_t> index_;
};

}  // namespace onlinews::analysis
