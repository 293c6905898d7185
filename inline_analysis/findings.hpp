// Typed findings that patterns publish and other patterns subscribe to
// (Late Sender -> Wrong Order, Late Receiver; later: delay costs, critical
// path).  A finding carries everything a subscriber needs; there is no shared
// blackboard.
#pragma once
#include <cstdint>

namespace onlinews::analysis {

enum class FindingKind : std::uint8_t { LateSender, LateReceiver, CollectiveWait, kCount };
constexpr int kFindingKindCount = static_cast<int>(FindingKind::kCount);

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

// A rank waited in a collective (barrier, N x N, broadcast, reduce, scan,
// init/finalize).  `metric` is the wait-state metric index.
struct CollectiveWaitFinding {
  static constexpr FindingKind kKind = FindingKind::CollectiveWait;
  int location = 0;
  std::uint32_t callpath = 0;
  int metric = 0;
  double wait = 0;
  int cause = -1;  // world rank the wait is attributed to (latest / root)
  std::size_t event = 0;  // the CollectiveEnd event
};

}  // namespace onlinews::analysis
