// Synchronization intervals across requested cuts (docs/design.md, "What is
// exact and what is approximate").
//
// A delay cost compares two ranks' processing time since their previous
// common synchronization point.  A requested cut ends a window without
// synchronizing anyone, so that point may lie in an earlier window, whose
// events are gone by the time the interval's end is analyzed.  After each
// walk of a window that ends at a requested cut, every rank therefore keeps,
// per partner (and per communicator, for collectives), the interval's part
// that lies before the cut: processing time per call path with the waits at
// synchronization points taken out, and the sum of those waits.  The next
// window joins it to the part inside the window.  A send whose receive falls
// into the next window keeps its own interval (up to the send) and the rest
// up to the cut, so that the sender can explain a wait for it in the next
// window.  Parts are shared between partners whose intervals start at the
// same point; memory is bounded by partners x call paths.
//
// The own waits inside a part that lie in the window just walked are kept
// by name (recent()): a later window that explains a wait with the part
// passes long-term costs on to them, and their causes charge them
// (delay_costs.cpp).  Waits of older windows inside a part are a sum only.
#pragma once
#include <cstdint>
#include <map>
#include <vector>

namespace onlinews::analysis {

class SyncContext;

struct CarriedMap {
  std::vector<std::pair<std::uint32_t, double>> seconds;  // local call path -> processing time
  double waits = 0;  // own waits at synchronization points inside (taken out of `seconds`)
  double explained = 0;  // of those, the waits a cause explains (explained_wait)
  // Those of the window walked last: IntervalCarry::recent()[first, last).
  std::uint32_t first = 0, last = 0;
};

// An own wait of the window walked last, named as its cause names it
// (the cause's point: peer = this rank, waiting_kind(kind) = `kind`).
struct CarriedWait {
  int cause = -1;  // world rank (-1: none, e.g. a collective's own point)
  std::uint8_t kind = 0;  // SyncKind of the waiting point
  std::uint32_t seq = 0, epoch = 0;
  std::uint64_t gid = 0;
  double wait = 0;
  int location = 0;  // the thread of the waiting call
};

// A send of the window before whose receive lies in a later window.
struct CarriedSend {
  CarriedMap interval;  // from the previous point shared with the receiver to the send's enter
  CarriedMap tail;      // from the send's enter to the cut
  std::int64_t enter = 0;
  std::uint32_t callpath = 0;
};

// Sends of this window without a receive in it (sender side).
struct CrossingSend {
  int dest = -1;
  std::uint32_t seq = 0;
  std::size_t event = 0;
  std::int64_t enter = 0;  // ns, the send call's enter
  std::uint32_t callpath = 0;
};

class IntervalCarry {
 public:
  // After a synchronizing cut (and at the start): every interval begins
  // there, where the cut's collective completed (its last member's enter):
  // `completion` is this rank's part from there to its Leave.
  void reset(CarriedMap completion = {});
  // After a window analyzed for time only: its synchronization points are
  // unknown, so the intervals that reach across it are truncated (counted).
  void invalidate();
  bool valid() const { return valid_; }
  // The part before the window of the interval with world rank `peer`, and
  // of the interval between collectives on the communicator with global id
  // `gid` (local ids are reused after MPI_Comm_free).
  const CarriedMap* peer(int world_rank) const;
  const CarriedMap* comm(std::uint64_t gid) const;
  // A send of the previous window (`epoch`) to `dest` with sequence `seq`.
  const CarriedSend* send(int dest, std::uint32_t seq, std::uint32_t epoch) const;
  // The own waits of the window walked last that carried parts hold (latest first).
  const std::vector<CarriedWait>& recent() const { return recent_; }
  // After the walk of a window (epoch `epoch`) that ends at a requested cut.
  void update(SyncContext& ctx, const std::vector<CrossingSend>& crossing, std::uint32_t epoch);

 private:
  bool valid_ = true;
  std::vector<CarriedMap> entries_ = std::vector<CarriedMap>(1);  // shared parts; index 0: since the last synchronized start
  std::vector<std::uint32_t> peer_entry_;          // world rank -> entry (missing: 0)
  std::map<std::uint64_t, std::uint32_t> comm_entry_;  // comm gid -> entry (missing: 0)
  std::map<std::pair<int, std::uint32_t>, CarriedSend> sends_;  // (dest, seq) of epoch sends_epoch_
  std::uint32_t sends_epoch_ = 0;
  std::vector<CarriedWait> recent_;
};

}  // namespace onlinews::analysis
