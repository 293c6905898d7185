// In-process transport for unit tests: N virtual ranks run their replay
// pipelines as coroutines in one thread, and a driver resumes them in a
// seeded random order.  With `scramble`, every operation also completes a
// random number of ticks late and local work is cut into random slices, so
// the steps of different ranks (and of a rank one epoch ahead of another)
// finish in every order: a resumable step that only works when steps happen
// to complete in order fails here.  A round in which no rank can move is a
// deadlock and throws.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "transport.hpp"

namespace onlinews::analysis {

class LocalWorld {
 public:
  struct Options {
    std::uint64_t seed = 1;
    bool scramble = false;  // late completions and random slicing
  };
  explicit LocalWorld(int ranks) : LocalWorld(ranks, Options{}) {}
  LocalWorld(int ranks, Options options);
  int size() const { return ranks_; }
  // Runs body(rank, transport) of every rank to completion.  The first
  // exception of a body is rethrown here; so is a deadlock.
  void run(const std::function<Task<>(int, Transport&)>& body);
  // Ticks the last run() took (resumptions of a rank's pipeline).
  std::uint64_t ticks() const { return ticks_; }

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
  Meeting& deposit(const Key& key, int members, int my_index, std::vector<std::byte> contribution,
                   const std::function<void(Meeting&)>& combine);
  std::vector<std::byte> collect(const Key& key, int my_index);
  // Extra ticks an operation waits after it could complete (scramble).
  int delay();

  int ranks_;
  Options options_;
  std::mt19937_64 rng_;
  std::map<Key, Meeting> meetings_;
  std::map<std::tuple<int, int, int>, std::deque<std::vector<std::byte>>> mail_;  // (from, to, parity)
  std::uint64_t changes_ = 0;  // state changes: a round without any is a deadlock
  std::uint64_t ticks_ = 0;
};

}  // namespace onlinews::analysis
