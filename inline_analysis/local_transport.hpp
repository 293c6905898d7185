// In-process transport: N virtual ranks, each running on its own thread of
// one process, meet in shared memory.  Used by unit tests to drive the real
// replay with hand-built event streams, without MPI.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "transport.hpp"

namespace onlinews::analysis {

class LocalWorld {
 public:
  explicit LocalWorld(int ranks);
  int size() const { return ranks_; }
  // Runs body(rank, transport) on `size()` threads and waits for all.
  // Exceptions from a body are rethrown here (the first one).
  void run(const std::function<void(int, Transport&)>& body);

 private:
  friend class LocalTransport;
  // One rendezvous: every member deposits, the last arrival combines, every
  // member collects; the last collector removes it.
  struct Meeting {
    int expected = 0, arrived = 0, collected = 0;
    bool ready = false;
    std::vector<std::vector<std::byte>> in;   // per member index
    std::vector<std::vector<std::byte>> out;  // per member index
  };
  using Key = std::tuple<int, std::uint64_t, std::uint64_t>;  // op, group id, sequence
  std::vector<std::byte> meet(const Key& key, int members, int my_index, std::vector<std::byte> contribution,
                              const std::function<void(Meeting&)>& combine);

  int ranks_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, Meeting> meetings_;
  std::map<std::pair<int, int>, std::deque<std::vector<std::byte>>> mail_;  // (from, to) -> messages
};

}  // namespace onlinews::analysis
