// Records that travel between ranks during an epoch, and what the replay
// attaches to events from them.  Wire records are trivially copyable and sent
// as raw bytes (all ranks run the same binary).
#pragma once
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "transport.hpp"

namespace onlinews::analysis {

namespace sendflag {
constexpr std::uint8_t kSynchronous = 1;  // completes only once matched (Ssend or above the eager limit)
constexpr std::uint8_t kBlocking = 2;     // MPI_Send/MPI_Ssend (not Sendrecv/Bsend/Rsend)
// Its order among the sends on its envelope is unknown (another thread's
// send on it overlapped in time, MPI_THREAD_MULTIPLE): matched, not analyzed.
constexpr std::uint8_t kAmbiguous = 4;
// (Replies only.)  The receive was posted after the synchronizing send
// began, so the send may have waited for it (Late Receiver), whatever the
// receiver waited itself: a probe can wait for the message (Late Sender)
// and the receive still come late.
constexpr std::uint8_t kPostedLate = 8;
}  // namespace sendflag

// Sender -> receiver (forward exchange): one per point-to-point send.
struct SendRecord {
  std::uint64_t comm_gid = 0;
  std::int64_t enter = 0;     // ns: enter of the call that started the send
  std::uint64_t bytes = 0;
  std::int32_t tag = 0;
  std::int32_t src = 0;       // sender's world rank
  std::uint32_t seq = 0;      // position in the sender's list to this receiver, this epoch
  std::uint32_t epoch = 0;    // epoch in which the send was recorded
  std::uint32_t callpath = 0; // sender-local call path of the sending call
  std::uint8_t flags = 0;     // sendflag
  std::uint8_t pad[3] = {};
};
static_assert(std::is_trivially_copyable_v<SendRecord>);

// Receiver -> sender (backward exchange): one per send of this epoch whose
// receive completed in this epoch (a run of plain ones shares one: `more`),
// and per earlier send with a traced wait or synchronizing.
struct ReplyRecord {
  std::uint32_t seq = 0;       // the SendRecord's seq
  std::int32_t receiver = -1;  // world rank of the receiver
  std::int64_t post_enter = 0; // ns: enter of the call that posted the receive
  std::int64_t post_leave = 0; // ns: its leave
  double ls_wait = 0;          // Late Sender seconds of this receive (0 if none)
  std::uint64_t bytes = 0;     // echoed from the SendRecord
  std::uint8_t flags = 0;      // echoed from the SendRecord (sendflag)
  std::uint8_t earlier = 0;    // the send was recorded in an earlier epoch (then only Late Senders and
                               // synchronizing sends are replied to)
  // The sends seq + 1 ... seq + more (of this epoch) were received in this
  // epoch too, with nothing to say about them: no traced wait, not
  // synchronizing.  Their sender needs only to know that (a send without a
  // reply crossed the cut); one record stands for a run of them.
  std::uint16_t more = 0;
  std::uint32_t epoch = 0;     // the SendRecord's epoch
};
static_assert(std::is_trivially_copyable_v<ReplyRecord>);

// Sender -> receiver (clock correction): a send's corrected enter time.
struct SendUpdate {
  std::uint64_t comm_gid = 0;
  std::int64_t enter = 0;  // ns, corrected
  std::int32_t tag = 0;
  std::uint32_t seq = 0;   // the SendRecord's seq (this epoch)
};
static_assert(std::is_trivially_copyable_v<SendUpdate>);

// Receiver -> sender (clock correction): how late the send may start without
// breaking the clock condition, i.e. its message's earliest probe or receive.
struct SendLimit {
  std::uint32_t seq = 0;
  std::uint32_t pad = 0;
  std::int64_t limit = 0;  // ns
};
static_assert(std::is_trivially_copyable_v<SendLimit>);

// What a CollectiveEnd event learns about its instance.
struct CollResult {
  CollRecord all;             // reduced over the communicator
  ScanRecord prefix{};        // Scan/Exscan only: reduced over ranks <= me
  std::uint64_t instance = 0; // the instance's number on its communicator, the same on every member
  bool valid = false;         // false: not analyzed (size-1 comm, mismatch, skipped)
  // MPI_Win_fence that closes an access epoch (rma_accesses.cpp): the
  // members that accessed this rank's window in it, and the latest leave of
  // their RMA operations on it (ns; INT64_MIN: none).
  bool closes_epoch = false;
  std::uint32_t origins = 0;
  std::int64_t latest_access = INT64_MIN;
};

// One event of one rank's window: its world rank, the epoch whose window
// holds it and its index there (a synchronization point's event, sync_replay.hpp).
struct EventRef {
  std::int32_t rank = -1;
  std::uint32_t epoch = UINT32_MAX;
  std::uint32_t event = UINT32_MAX;
  bool valid() const { return rank >= 0 && event != UINT32_MAX; }
};

// RMA partners' times (rma_accesses.cpp), one sparse exchange per epoch:
//   kFenceAccess  origin -> target: it accessed the target's window in the
//                 epoch that fence instance `number` closes; t0 = the leave
//                 of its latest operation on the target;
//   kAccess       origin -> target: its access epoch `number` with the
//                 target ended; t0 = its MPI_Win_complete enter, t1 = the
//                 leave of its latest operation on the target (of its
//                 MPI_Win_start without one);
//   kExposure     target -> origin: its exposure epoch `number` with the
//                 origin began; t0 = its MPI_Win_post enter.
// Access and exposure epochs pair by their number, counted per window and
// pair of ranks (the k-th access epoch of o that includes t matches the
// k-th exposure epoch of t that includes o).
//   kLockCall     origin -> target: a call of its lock epoch `number` on the
//                 target that may have waited (rma_locks.cpp): t0 = the
//                 epoch's acquire (lock leave), t1/t4 = its release (the
//                 unlock's leave / enter), t2/t3 = the call's enter and
//                 leave, aux = the call's index, flags = kExclusive;
//   kLockReply    target -> origin: what that call waited, t0 = for another
//                 origin's lock (ns), t1 = for the target to enter MPI (ns);
//                 `at` = the unlock that released that lock.
// `at` names the sender's event the record is about (the post, the complete,
// the unlock), so that a wait found from it becomes a synchronization point
// of the backward replay with its cause (PairSyncFinding).
struct RmaRecord {
  static constexpr std::uint8_t kFenceAccess = 0, kAccess = 1, kExposure = 2, kLockCall = 3, kLockReply = 4;
  static constexpr std::uint8_t kExclusive = 1;       // kLockCall
  static constexpr std::uint8_t kReleasedInCall = 1;  // kLockReply: the release came before the call left
  std::uint64_t window_gid = 0;
  std::uint64_t number = 0;
  std::int64_t t0 = 0, t1 = 0, t2 = 0, t3 = 0, t4 = 0;  // ns
  EventRef at;
  std::uint32_t aux = 0;
  std::uint8_t kind = kFenceAccess;
  std::uint8_t flags = 0;
  std::uint8_t pad[2] = {};
  static RmaRecord make(std::uint8_t kind, std::uint64_t gid, std::uint64_t number, std::int64_t t0,
                        std::int64_t t1 = 0, EventRef at = {}) {
    RmaRecord r;
    r.kind = kind;
    r.window_gid = gid;
    r.number = number;
    r.t0 = t0;
    r.t1 = t1;
    r.at = at;
    return r;
  }
};
static_assert(std::is_trivially_copyable_v<RmaRecord>);

// A call of the analyzed location as the RMA analysis keeps it past its
// window: call path, enter and leave (ns; a call still open at the window's
// end counts as ending where it began) and the event that recorded it.
struct CallRef {
  std::uint32_t callpath = 0;
  std::int64_t enter = 0, leave = 0;
  EventRef at;
};

// A nonblocking collective instance (or a blocking neighborhood one) whose
// completion and the starts it depends on are known (nb_collectives.cpp), for
// the patterns (Pattern::on_nb_collectives).
struct NbCollectiveResult {
  int location = 0;  // the thread that completed it
  CollKind kind = CollKind::None;
  bool blocking = false;  // a blocking neighborhood call: start and completion are that call
  CallRef completion;
  // The start this rank's completion waited for (by kind: the latest
  // member's, the root's, the latest sender's, the latest source
  // neighbor's) and how long, seconds:
  //   max(0, min(that start's enter, completion leave) - completion enter),
  // less what this call was charged already.  A call that completed several
  // instances waited for the latest of their starts: that instance gets
  // the wait, the others 0 (their waits lie within it), also when they
  // became ready in different epochs.
  EventRef cause_at;
  double wait = 0;
};

// A neighborhood collective's start, sent to the neighbors that receive
// from this rank (nb_collectives.cpp).
struct NbStartRecord {
  std::uint64_t gid = 0;
  std::uint64_t number = 0;  // the instance's number on the communicator
  std::int64_t enter = 0;    // ns
  std::uint32_t epoch = 0, event = 0;  // the start call's EventRef (the sender's rank is the parcel's)
};
static_assert(std::is_trivially_copyable_v<NbStartRecord>);

// General active target synchronization epochs whose partners' times are all
// known (rma_accesses.cpp), for the patterns (Pattern::on_rma_epochs).
struct AccessEpochResult {  // origin: MPI_Win_start ... MPI_Win_complete
  int location = 0;
  CallRef start, complete;
  std::int64_t latest_post = INT64_MIN;  // the latest target's MPI_Win_post enter
  EventRef latest_post_at;               // ... that post
  int targets = 0, accessed = 0;         // targets in the group; of those, accessed by an operation
  struct Op {
    CallRef call;
    std::int64_t post = INT64_MIN;  // its target's MPI_Win_post enter
    EventRef post_at;               // ... that post
  };
  std::vector<Op> ops;
};
struct ExposureEpochResult {  // target: MPI_Win_post ... MPI_Win_wait (or a successful MPI_Win_test)
  int location = 0;
  CallRef wait;
  std::int64_t latest_complete = INT64_MIN;  // the latest origin's MPI_Win_complete enter
  std::int64_t latest_access = INT64_MIN;    // the latest leave of an operation on this window
  EventRef latest_complete_at;               // ... that complete
};
// A call of a passive-target (lock) epoch and what it waited (rma_locks.cpp).
struct LockCallResult {
  int location = 0;
  CallRef call;
  bool operation = false;    // an RMA operation (else lock, unlock or flush)
  double competition = 0;    // s: for a lock another origin held
  double progress = 0;       // s: for the target to enter MPI
  EventRef released_by;      // competition: the other origin's MPI_Win_unlock that released the lock
  bool released_in_call = false;  // ... and it returned before this call did
};
struct RmaEpochResults {
  std::vector<AccessEpochResult> access;
  std::vector<ExposureEpochResult> exposure;
  std::vector<LockCallResult> lock_calls;
};

// Names one message of this epoch: the peer's world rank and the send's
// seq (dense per sender, destination and epoch).  Key of the per-epoch maps
// between send events, records and postings.
inline std::uint64_t send_key(int peer, std::uint32_t seq) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(peer)) << 32) | seq;
}

// Names a message of any epoch: (the peer's world rank, the send's seq, the
// epoch the send was recorded in).  For the few messages that cross a cut.
using EpochSendKey = std::tuple<int, std::uint32_t, std::uint32_t>;

// Raw-byte packing of record lists (all ranks run the same binary).
// (Range construction: one copy, no zero fill before it.  The zero fills
// were 1.2 % of the instructions of a bench_replay run of the 2-rank loop:
// benchmarks/README.md, fiftieth session.)
template <class T>
std::vector<std::byte> to_bytes(const std::vector<T>& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto b = std::as_bytes(std::span(v));
  return std::vector<std::byte>(b.begin(), b.end());
}
template <class T>
std::vector<T> from_bytes(const std::byte* p, std::size_t n) {
  static_assert(std::is_trivially_copyable_v<T>);
  const std::size_t count = n / sizeof(T);
  if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) == 0) {
    // (Bytes that a parcel's heap block holds, at an offset T's alignment
    // divides: trivially copyable records there are read as they are.)
    const T* q = reinterpret_cast<const T*>(p);
    return std::vector<T>(q, q + count);
  }
  std::vector<T> v(count);
  if (count != 0) std::memcpy(v.data(), p, count * sizeof(T));
  return v;
}
template <class T>
std::vector<T> from_bytes(const std::vector<std::byte>& b) {
  return from_bytes<T>(b.data(), b.size());
}

// One sparse exchange of record lists keyed by world rank: `out[peer]` goes
// to peer (this rank's own list stays local); returns the lists received,
// keyed by their source.  Collective over all ranks of `t`.
template <class T>
Task<std::map<int, std::vector<T>>> exchange_records(Transport& t, const std::map<int, std::vector<T>>& out) {
  const int me = t.rank();
  std::map<int, std::vector<T>> got;
  std::vector<Parcel> send, recv;
  for (const auto& [peer, list] : out) {
    if (peer == me) {
      got[me] = list;
    } else {
      send.push_back({peer, to_bytes(list)});
    }
  }
  co_await t.exchange(send, recv);
  for (const auto& p : recv) got[p.peer] = from_bytes<T>(p.data);
  co_return got;
}

// The same for two record lists per peer in one exchange (one round instead
// of two): each parcel holds the first list's length, then both lists.
template <class A, class B>
Task<std::map<int, std::pair<std::vector<A>, std::vector<B>>>> exchange_record_pairs(
    Transport& t, const std::map<int, std::vector<A>>& a, const std::map<int, std::vector<B>>& b) {
  std::map<int, std::pair<std::vector<A>, std::vector<B>>> out, got;
  for (const auto& [p, l] : a) out[p].first = l;
  for (const auto& [p, l] : b) out[p].second = l;
  std::vector<Parcel> send, recv;
  for (auto& [p, ab] : out) {
    if (p == t.rank()) {
      got[p] = std::move(ab);
      continue;
    }
    static_assert(std::is_trivially_copyable_v<A> && std::is_trivially_copyable_v<B>);
    const std::uint64_t n = ab.first.size();
    const std::span<const std::byte> parts[] = {std::as_bytes(std::span(&n, 1)), std::as_bytes(std::span(ab.first)),
                                                std::as_bytes(std::span(ab.second))};
    Parcel parcel{p, {}};
    parcel.data.reserve(parts[0].size() + parts[1].size() + parts[2].size());
    for (const auto& part : parts) parcel.data.insert(parcel.data.end(), part.begin(), part.end());
    send.push_back(std::move(parcel));
  }
  co_await t.exchange(send, recv);
  for (const auto& p : recv) {
    std::uint64_t n = 0;
    if (p.data.size() < sizeof n) continue;
    std::memcpy(&n, p.data.data(), sizeof n);
    const std::size_t na = std::min<std::size_t>(n * sizeof(A), p.data.size() - sizeof n);
    auto& g = got[p.peer];
    g.first = from_bytes<A>(p.data.data() + sizeof n, na);
    g.second = from_bytes<B>(p.data.data() + sizeof n + na, p.data.size() - sizeof n - na);
  }
  co_return got;
}

}  // namespace onlinews::analysis
