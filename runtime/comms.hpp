// Communicators the application created, with the tool's own duplicate of
// each (used by the collective analysis and the cut decisions) and the
// definitions the analysis needs.  An RMA window is registered as a
// communicator of its own, over its creator's group: its creation, fences
// and MPI_Win_free are collective instances on it, counted apart from the
// collectives on the creating communicator (MPI orders neither against the
// other), and its RMA operations name targets by rank in it.  A communicator the application frees
// stays alive in the tool until the epoch that replays its events is over.
//
// Threads: the registry is created and changed by the thread that
// initialized MPI; under MPI_THREAD_MULTIPLE, lookup(), mark_freed(),
// rec() and retire_freed() need a SharedGuard (shared_guard.hpp), and so do
// add()'s own table updates (it takes the guard itself, after its MPI calls).
// Records never move (their capacity is reserved): a reference rec() gave
// stays valid after the guard, and a record's cut-pacing fields belong to
// the thread calling collectives on it (MPI orders those per communicator).
// The "mixed" flags are atomics any thread may set.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "inline_analysis/definitions.hpp"

namespace onlinews::rt {

constexpr int kUnknownComm = -1;

struct CommRecord {
  MPI_Comm app = MPI_COMM_NULL;  // MPI_COMM_NULL for a window
  MPI_Comm tool = MPI_COMM_NULL;  // duplicate, or MPI_COMM_NULL (unusable comm): the analysis' collectives
  MPI_Comm decide = MPI_COMM_NULL;  // spans_world only: another duplicate for the cut decisions, which
                                    // run in the application's collective, out of step with the analysis
  bool spans_world = false;       // all ranks of MPI_COMM_WORLD: eligible for cuts
  bool freed = false;             // freed by the application: retire after the epoch of the free
  std::uint64_t freed_ns = 0;     // when (global ns): the window that contains it must be analyzed first
  bool in_use = false;
  std::uint32_t open_requests = 0;
  // Nonblocking (and neighborhood) collective starts recorded on it: each
  // CollStart carries its number, the same on every member for the same
  // instance (MPI orders them alike), whatever events are lost.
  std::uint32_t nb_starts = 0;
  // Cut pacing (epoch.cpp): eligible collectives since the last decision and
  // how many to let pass between decisions.
  std::uint64_t since_decision = 0;
  std::uint64_t decision_every = 1;
  std::uint64_t last_decision_ns = 0;
  std::uint64_t collectives_since_epoch = 0;  // eligible collectives seen by decisions since the last epoch
  std::uint64_t epochs_seen = 0;              // epochs cut (agreed by the decision) when that count started
};

class CommRegistry {
 public:
  explicit CommRegistry(analysis::Definitions& defs);

  // WORLD and SELF, at MPI_Init.  Collective over MPI_COMM_WORLD.
  void init(int world_rank, int world_size);
  // Id of an application communicator, kUnknownComm if not tracked.
  int lookup(MPI_Comm c) const {
    if (c == MPI_COMM_WORLD) return world_id_;
    if (c == cache_comm_) return cache_id_;
    auto it = by_handle_.find(key(c));
    if (it == by_handle_.end()) return kUnknownComm;
    cache_comm_ = c;
    cache_id_ = it->second;
    return it->second;
  }
  // Registers a communicator the application just created; this rank knows
  // `boundaries` epoch boundaries.  Collective over `c`'s members.  Returns
  // the id, or kUnknownComm when it cannot be tracked.
  int add(MPI_Comm c, std::uint32_t boundaries);
  // The neighbors of `c`'s process topology (if it has one) into the
  // definition of id `id` (local calls only).
  void note_neighbors(MPI_Comm c, int id);
  // The application freed `c` at `when` (global ns).
  void mark_freed(MPI_Comm c, std::uint64_t when);
  // A window the application just created over `c` (collective over `c`'s
  // members, like add()).  Never eligible for cuts.
  int add_window(MPI_Win w, MPI_Comm c, std::uint32_t boundaries);
  int lookup_window(MPI_Win w) const {
    auto it = by_window_.find(key(w));
    return it == by_window_.end() ? kUnknownComm : it->second;
  }
  void mark_window_freed(MPI_Win w, std::uint64_t when);
  // Before the epoch whose window ends at `window_end` (global ns): marks
  // in the definitions the communicators the application freed in or
  // before that window and whose requests are all done (the analysis agrees
  // with the other members when all of them may be released).
  void publish_freed(std::uint64_t window_end);
  // After an epoch: releases the communicators all members agreed on.
  void retire(const std::vector<std::uint64_t>& gids);
  // After an epoch: restart the fill-rate estimate of every communicator
  // (each at its next decision: under MPI_THREAD_MULTIPLE another thread may
  // be deciding on another communicator right now).
  void epoch_done() { epochs_.fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t epochs() const { return epochs_.load(std::memory_order_relaxed); }
  // Releases all tool duplicates (MPI_Finalize).
  void release_all();

  // A thread whose RMA calls and collectives are not analyzed
  // (MPI_THREAD_MULTIPLE: not the MPI thread) used window `id` for RMA calls
  // (kMixedRma) or communicator or window `id` for collectives
  // (kMixedCollective): its RMA epochs, or collective instances, can no
  // longer be matched completely, so the analysis leaves them out (agreed
  // with the other members every epoch).
  static constexpr std::uint8_t kMixedRma = 1, kMixedCollective = 2;
  void mark_mixed(int id, std::uint8_t how) {
    if (id >= 0 && id < kMaxIds) mixed_[id].fetch_or(how, std::memory_order_relaxed);
  }
  std::uint8_t mixed(int id) const {
    return id >= 0 && id < kMaxIds ? mixed_[id].load(std::memory_order_relaxed) : 0;
  }
  // Copies the flags into the definitions the analysis reads (before an
  // epoch); returns how many communicators are mixed.
  int publish_mixed() {
    int n = 0;
    for (std::size_t id = 0; id < defs_.comms.size(); ++id) {
      const std::uint8_t m = mixed(static_cast<int>(id));
      defs_.comms[id].mixed_rma = (m & kMixedRma) != 0;
      defs_.comms[id].mixed_collective = (m & kMixedCollective) != 0;
      n += m != 0 ? 1 : 0;
    }
    return n;
  }
  static constexpr int kMaxIds = 65535;  // ids are 16-bit in events

  CommRecord& rec(int id) { return recs_[static_cast<std::size_t>(id)]; }
  std::size_t size() const { return recs_.size(); }
  MPI_Comm tool_comm_of_gid(std::uint64_t gid) const {
    auto it = by_gid_.find(gid);
    return it == by_gid_.end() ? MPI_COMM_NULL : recs_[it->second].tool;
  }
  std::uint64_t untracked() const { return untracked_; }

 private:
  template <typename Handle>
  static std::uint64_t key(Handle h) {
    std::uint64_t k = 0;
    static_assert(sizeof(Handle) <= sizeof(k), "handle fits");
    __builtin_memcpy(&k, &h, sizeof h);
    return k;
  }
  int allocate();
  // Registers the members of `c` under a new id (collective over them);
  // the caller files it under its handle.
  int add_members(MPI_Comm c, std::uint32_t boundaries, bool cut_eligible);
  // Marks the entry filed under handle key `k` in `by` freed at `when`.
  void mark_freed_in(std::unordered_map<std::uint64_t, int>& by, std::uint64_t k, std::uint64_t when);
  analysis::Definitions& defs_;
  std::vector<CommRecord> recs_;  // capacity kMaxIds: records never move (a thread may hold one)
  std::atomic<std::uint64_t> epochs_{0};
  std::vector<int> free_ids_;
  std::unordered_map<std::uint64_t, int> by_handle_;
  std::unordered_map<std::uint64_t, int> by_window_;
  std::unordered_map<std::uint64_t, int> by_gid_;
  mutable MPI_Comm cache_comm_ = MPI_COMM_NULL;
  mutable int cache_id_ = kUnknownComm;
  int world_id_ = kUnknownComm;
  int world_rank_ = 0, world_size_ = 1;
  std::uint32_t created_ = 0;  // communicators this rank led
  std::uint64_t untracked_ = 0;
  std::unique_ptr<std::atomic<std::uint8_t>[]> mixed_;
  MPI_Group world_group_ = MPI_GROUP_NULL;
};

}  // namespace onlinews::rt
