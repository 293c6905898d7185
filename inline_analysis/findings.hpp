// Typed findings that patterns publish and others subscribe to (Late Sender
// -> Wrong Order, Late Receiver; every wait and collective instance -> the
// backward replay's synchronization points, and through them delay costs and
// the critical path).  A finding carries everything a subscriber needs; there
// is no shared blackboard.
#pragma once
#include <cstdint>

#include "records.hpp"

namespace onlinews::analysis {

enum class FindingKind : std::uint8_t {
  LateSender,
  LateReceiver,
  CollectiveSync,
  PairSync,
  IdlePhase,
  IdleCost,
  BarrierCause,
  BarrierPass,
  kCount
};
constexpr int kFindingKindCount = static_cast<int>(FindingKind::kCount);

// Which delay metric explains a wait (and classifies long-term costs);
// declared in delay_kinds.def.
enum class DelayKind : std::uint8_t {
#define ONLINEWS_DELAY(name, short_term, long_term) name,
#include "delay_kinds.def"
#undef ONLINEWS_DELAY
  kCount
};
constexpr int kDelayKinds = static_cast<int>(DelayKind::kCount);

// A receive (or a Wait* completing receives) waited for a send that started late.
struct LateSenderFinding {
  static constexpr FindingKind kKind = FindingKind::LateSender;
  int location = 0;
  std::uint32_t callpath = 0;    // the receiving call
  std::uint32_t frame = 0;       // call instance (see ReplayContext::frame)
  double wait = 0;               // seconds
  int sender = -1;               // world rank of the late sender
  std::int64_t send_enter = 0;   // ns, the late send's enter
  std::uint64_t bytes = 0;       // message size of the late message
  std::size_t event = 0;         // the receive event that waited longest
  std::uint32_t seq = 0;         // the late message's sequence number (sender, this epoch)
  bool same_epoch = false;       // the send was recorded in this epoch
  std::uint32_t send_epoch = 0;  // the epoch it was recorded in
};

// A synchronizing send waited for its receive to be posted.
struct LateReceiverFinding {
  static constexpr FindingKind kKind = FindingKind::LateReceiver;
  int location = 0;
  std::uint32_t callpath = 0;
  std::uint32_t frame = 0;
  double wait = 0;
  int receiver = -1;
  std::uint64_t bytes = 0;
  std::size_t event = 0;         // the Send / SendComplete event that waited longest (or the
                                 // Leave of a blocking send entered before the window)
  std::uint32_t seq = 0;         // its message's sequence number to `receiver`
  std::uint32_t send_epoch = 0;  // the epoch the send was recorded in (seq counts there)
};

// A collective instance as a synchronization point, published by the pattern
// of its kind at every member that analyzed it, whether it waited there or
// not: every instance bounds synchronization intervals, and each member
// that waited at an instance where someone waited is a pair with the member
// that caused it in the backward replay.  The pattern decides who caused
// the waits; the replay only reads it.
struct CollectiveSyncFinding {
  static constexpr FindingKind kKind = FindingKind::CollectiveSync;
  int location = 0;
  std::uint32_t callpath = 0;
  std::size_t event = 0;       // the CollectiveEnd event
  std::uint16_t comm = 0;      // local communicator id
  int metric = -1;             // wait-state metric index (-1: none charged here)
  double wait = 0;             // this member's wait, seconds (0: none)
  DelayKind delay = DelayKind::NxN;  // the delay metric that explains the waits
  // Every member's wait is attributed to one member (the latest to enter,
  // the root, the latest sender), the same on every member.
  int reference = -1;          // its rank in the communicator
  bool delayed = false;        // some member waited: delay costs are due
  std::int64_t min_leave = 0;  // ns, the earliest leave of any member
  // The share of this member's wait that a sub-pattern explains (Early
  // Fence in Wait at Fence), with the delay kind it is charged to (the same
  // on every member).
  double part = 0;
  DelayKind part_delay = DelayKind::NxN;
  // Prefix kinds (Scan, Exscan): each member waits for its own latest lower
  // rank, a pair like a message; no delay metric, no interval bound.
  bool pairwise = false;
  int pair_cause = -1;         // world rank this member waited for
  std::uint64_t gid = 0;       // the communicator's global id
  std::uint32_t instance = 0;  // the instance's number on it
};

// A call of the analyzed location that waited for one call of another rank,
// published by the pattern that found the wait (RMA: Late Post, Early Wait,
// lock competition).  The backward replay pairs the two calls like a message
// (the waiting call gives, the causing call takes), so a new kind of
// synchronization between two ranks is one finding and one delay kind.
struct PairSyncFinding {
  static constexpr FindingKind kKind = FindingKind::PairSync;
  int location = 0;
  EventRef waiting;       // the call that waited (this rank's)
  EventRef cause;         // the call it waited for; the wait ends at that call's enter,
  bool at_cause_leave = false;  // ... or at its leave (an unlock's release)
  double wait = 0;        // seconds
  DelayKind delay = DelayKind::LateSender;
  // The share of the wait that a sub-pattern with a delay metric of its own
  // explains (Late Complete within Early Wait): its delay costs are that
  // share of the wait's.
  double part = 0;
  DelayKind part_delay = DelayKind::LateSender;
};

// A stretch of a rank's master thread in serial code while worker threads
// sit idle (omp_idle.cpp): the delay costs of its MPI waits there include
// the idleness they prolong.  Published once every window was walked, in
// time order per location.
struct IdlePhaseFinding {
  static constexpr FindingKind kKind = FindingKind::IdlePhase;
  int location = 0;         // the master thread
  std::int64_t begin = 0;   // ns
  std::int64_t end = 0;     // ns
  int idle_threads = 0;
};

// The idleness of worker threads while their master ran serial code at
// `callpath` in this epoch (omp_idle.cpp): that code's direct cost.
// Published once every window was walked.
struct IdleCostFinding {
  static constexpr FindingKind kKind = FindingKind::IdleCost;
  int location = 0;  // the master thread
  std::uint32_t callpath = 0;
  double seconds = 0;  // idle threads x time
};

// The last thread to reach an OpenMP barrier instance made the others wait
// there; MPI waits of that thread in its interval before the barrier
// (from `begin` to `end`) explain a share of that (omp_barrier.cpp): each
// second of them caused `factor` seconds of barrier waiting.  Published
// once every window was walked.
struct BarrierCauseFinding {
  static constexpr FindingKind kKind = FindingKind::BarrierCause;
  int location = 0;
  std::int64_t begin = 0, end = 0;  // ns
  double factor = 0;
};

// A thread waited at an OpenMP barrier for the team's last thread: its
// time from its previous point with the team (`begin`) to the barrier's end
// (`end`) is, on the critical path, the last thread's (omp_barrier.cpp).
struct BarrierPassFinding {
  static constexpr FindingKind kKind = FindingKind::BarrierPass;
  int location = 0;  // the thread that waited
  int last = 0;      // the last thread to arrive
  std::int64_t begin = 0, end = 0;  // ns
};

}  // namespace onlinews::analysis
