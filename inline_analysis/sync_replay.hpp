// The backward replay at synchronization points (seed 000 §5, seed 003 §III):
// after the wait states of an epoch are known, every rank walks its
// synchronization points backwards and exchanges, at each one, what the
// root-cause analyses need -- from the waiting side to the side that caused
// the wait (point to point), or from the causing rank to all members and
// back by reduction (collectives).  Analyses plug in as SyncHandlers; their
// point-to-point contributions travel as two records per wait, batched per
// peer (replay_mail.hpp).
//
// A synchronization point (SP) is an MPI event at which ranks synchronized
// and someone waited: a Late Sender receive and its send, a Late Receiver
// send and its receive posting, a collective instance with waiting members;
// MPI_Init/MPI_Finalize and the start of the window bound intervals too.
// Every wait is replayed as a pair, the waiting rank and the one that caused
// it (at a collective: each waiting member and the reference), so the walk
// never runs a collective operation of its own: one whose members wait at
// every instance (a fence loop) took one exchange per instance, each needing
// every member at a progress point.
// A synchronizing cut is a collective on all ranks, so no interval reaches
// across it; across a requested cut intervals carry (interval_carry.hpp).
#pragma once
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "analysis.hpp"
#include "bytes.hpp"
#include "flat_map.hpp"
#include "interval_carry.hpp"
#include "peer_seq.hpp"
#include "pattern.hpp"
#include "replay_mail.hpp"
#include "small_vec.hpp"
#include "sym.hpp"
#include "time_map_index.hpp"

namespace onlinews::analysis {

enum class SyncKind : std::uint8_t {
  Start,       // start of the window: synchronized with everyone
  LsRecv,      // this rank waited for a late send (peer = sender)
  LsSend,      // this rank's send was late (peer = receiver)
  LrSend,      // this rank's synchronizing send waited (peer = receiver)
  LrRecv,      // this rank posted the receive late (peer = sender)
  LsRecvEarlier,  // as LsRecv, for a send recorded in the window before (a message
                  // across a requested cut)
  LsSendEarlier,  // its send, on the sender (at the front of the points, walked last: the send lies before the window)
  Collective,  // a collective instance (comm)
  // Scan/Exscan: each member waits for its own latest lower rank, so a wait
  // there pairs two ranks like a message (and is replayed like one).
  ScanWait,    // this rank waited (peer = its latest lower rank)
  ScanCause,   // this rank entered last below a rank that waited (peer = that rank)
  // A call that waited for one call of another rank (PairSyncFinding: RMA
  // Late Post, Early Wait, lock competition), replayed like a message.
  PairWait,    // this rank waited (peer = the cause's rank, seq = the cause's event)
  PairCause,   // this rank's call at `event` caused it (peer = the waiting rank)
  // A member's wait at a delayed collective instance, as a pair with the
  // instance's reference (seq = the instance, gid = the communicator); the
  // instance's Collective point bounds the intervals.
  CollWait,    // this member waited (peer = the reference)
  CollCause,   // this rank is the reference (peer = a member that waited)
};

struct SyncPoint {
  SyncKind kind = SyncKind::Start;
  std::size_t event = 0;        // in the analyzed location's window
  std::int64_t enter = 0;       // ns, the call's enter (Start: window start)
  double wait = 0;              // seconds this rank waited here
  std::uint32_t callpath = kNoCallpath;
  int peer = -1;                // point to point: world rank of the partner
  std::uint32_t seq = 0;        // point to point: the message's sequence number
  std::uint32_t epoch = 0;      // ... and the sender's epoch (the *Earlier kinds and the Late Receiver pair; else 0)
  std::uint64_t gid = 0;        // Scan and Coll pairs: the communicator's global id (seq: the instance's number on it)
  std::uint16_t comm = 0;       // collective: local communicator id
  bool all_ranks = false;       // collective on a communicator spanning all ranks (or Start)
  bool delayed = false;         // collective: some member waited (delay costs are due)
  int reference = -1;           // collective: comm rank of the cause (latest / root / latest sender)
  std::int64_t min_leave = 0;   // collective: the earliest Leave of any member (ns)
  DelayKind delay = DelayKind::LateSender;
  double part = 0;                       // pair: share of the wait explained by `part_delay` (PairSyncFinding)
  bool at_leave = false;                 // PairCause: the wait ended at the call's leave (`enter` holds it)
  bool bound_only = false;               // Collective: its wait is replayed (and counted) at its CollWait point
  DelayKind part_delay = DelayKind::LateSender;
  // Filled by the handlers during the backward walk.
  double propagating = 0;         // part of this wait that caused further waiting
  double indirect = 0;            // part of this wait explained by the cause's own waiting
};

// Point to point, a synchronization point is the waiting side of a wait
// (it tells the cause) or its cause (it hears of it).
inline bool waits_p2p(const SyncPoint& sp) {
  return (sp.kind == SyncKind::LsRecv || sp.kind == SyncKind::LrSend || sp.kind == SyncKind::LsRecvEarlier ||
          sp.kind == SyncKind::ScanWait || sp.kind == SyncKind::PairWait || sp.kind == SyncKind::CollWait) &&
         sp.wait > 0;
}
inline bool causes_p2p(SyncKind k) {
  return k == SyncKind::LsSend || k == SyncKind::LrRecv || k == SyncKind::LsSendEarlier || k == SyncKind::ScanCause ||
         k == SyncKind::PairCause || k == SyncKind::CollCause;
}
// A wait of a message (Late Sender, Late Receiver): the wait-state classes
// (direct/indirect, propagating/terminal) are of these.
inline bool is_message_wait(SyncKind k) {
  return k == SyncKind::LsRecv || k == SyncKind::LrSend || k == SyncKind::LsRecvEarlier;
}
// Scan pairs bound no interval and carry no delay metric.
inline bool is_scan(SyncKind k) { return k == SyncKind::ScanWait || k == SyncKind::ScanCause; }
// A collective's pairs bound no interval of their own (its Collective point does).
inline bool is_coll_pair(SyncKind k) { return k == SyncKind::CollWait || k == SyncKind::CollCause; }
// Point `p`'s wait (`wait` seconds, on thread `location`) as its cause names it.
inline CarriedWait wait_name(const SyncPoint& p, int location, double wait) {
  return {p.peer, static_cast<std::uint8_t>(p.kind), p.seq, p.epoch, p.gid, wait, location};
}
// A wait whose cause explains it with its interval (a pair's waiting side):
// the long-term costs it receives are charged there.
inline bool explained_wait(const CarriedWait& w) {
  const auto k = static_cast<SyncKind>(w.kind);
  return w.cause >= 0 && w.wait > 0 &&
         (k == SyncKind::LsRecv || k == SyncKind::LrSend || k == SyncKind::LsRecvEarlier || k == SyncKind::PairWait ||
          k == SyncKind::CollWait);
}
// The waiting side's kind for a cause's kind (the key both sides use).
inline SyncKind waiting_kind(SyncKind cause) {
  return cause == SyncKind::LsSend      ? SyncKind::LsRecv
         : cause == SyncKind::LrRecv    ? SyncKind::LrSend
         : cause == SyncKind::ScanCause ? SyncKind::ScanWait
         : cause == SyncKind::PairCause ? SyncKind::PairWait
         : cause == SyncKind::CollCause ? SyncKind::CollWait
                                        : SyncKind::LsRecvEarlier;
}


// Processing time per call path of an interval (local call-path ids; what
// crosses ranks is keyed by call-path hash).  One or more per
// synchronization point, of a handful of call paths each (the 2-rank loop
// of bench_replay: six): kept in the object up to eight.
struct TimeMap {
  SmallVec<std::uint32_t, 8> callpaths;
  SmallVec<double, 8> seconds;
};

class SyncReplay;

// What handlers may use while the replay stands on a synchronization point.
// The collective spanning all ranks at a synchronizing cut, on this rank:
// its point (in the window it ends) and where its completion begins, the
// last member's enter (the time from there to this rank's Leave belongs to
// the next window: intervals and the critical path pass through it there,
// as in one epoch).
struct CutCollective {
  std::size_t point = 0;  // in the window that ends with it (0: none)
  std::int64_t completion_from = 0;
  std::uint32_t callpath = kNoCallpath;
  int location = 0;  // its thread
};

class SyncContext {
 public:
  SyncContext(SyncReplay& r, ReplayContext& rc) : r_(r), rc_(rc) {}
  std::vector<SyncPoint>& points();
  std::size_t current() const { return current_; }
  int world_rank() const { return rc_.world_rank(); }
  // The location (thread) of the current point's call.
  int location() const;
  // ... of point `sp`'s call.
  int location_of(const SyncPoint& sp) const;
  const Definitions& defs() const { return rc_.defs(); }
  std::uint64_t hash(std::uint32_t callpath);
  // Whether point `i` belongs to the sequence of point `k` (k out of range:
  // the window's end).  One sequence per rank (its calls never overlap in
  // time, below MPI_THREAD_MULTIPLE), or per thread where calls of several
  // threads overlapped: a synchronization interval then runs on one thread,
  // from that thread's previous point, and only its own waits lie in it.
  bool same_thread(std::size_t i, std::size_t k) const;
  // Whether point i's wait lies in the interval that ends at point k: a
  // wait of k's sequence, counted at this point (a collective's at its
  // CollWait point, not at points that only bound intervals).
  bool counts_wait(std::size_t i, std::size_t k) const;
  bool concurrent() const;
  // Index of the latest synchronization point before `k` shared with world
  // rank `peer` (0: the window start).
  std::size_t previous_with(std::size_t k, int peer);
  // Index of the latest point before `k` shared with all members of the
  // collective at `k`.
  std::size_t previous_with_all(std::size_t k);
  // The synchronization interval that ends at point `k`: since the previous
  // point shared with world rank `peer` (interval_with) or with all members
  // of `k`'s collective (interval_with_all), with its part before the window
  // joined where a requested cut split it (interval_carry.hpp).
  struct Interval {
    std::size_t start = 0;  // the previous point (0: the window's start)
    TimeMap map;            // processing time per call path, waits taken out
    double waits = 0;       // own waits at the points inside
    bool truncated = false;  // its part before the window is unknown (cut short at the window's start)
    const CarriedMap* carried = nullptr;  // its part before the window, if joined
  };
  Interval interval_with(std::size_t k, int peer);
  Interval interval_with_all(std::size_t k);
  // At an LsSendEarlier point: the send's interval, kept from its window.
  const CarriedSend* earlier_send(const SyncPoint& sp) const;
  // The own waits of the window before that carried parts name
  // (CarriedMap::first/last index them).
  const std::vector<CarriedWait>& carried_waits() const;
  static TimeMap to_map(const CarriedMap& m);
  // Exclusive time per call path in [t0, t1] (ns) of the location of point
  // `at` (default: the current one).  `near`: an event index of the MPI view
  // close to t0, where the search for it starts (a binary search over a
  // whole window of a few MiB misses the cache at every step; any value
  // gives the same result).
  TimeMap time_map(std::int64_t t0, std::int64_t t1, std::size_t near = static_cast<std::size_t>(-1),
                   std::size_t at = static_cast<std::size_t>(-1));
  // ... of location `location`.
  TimeMap time_map_on(int location, std::int64_t t0, std::int64_t t1, std::size_t near = static_cast<std::size_t>(-1));
  std::int64_t window_begin() const;
  std::int64_t window_end() const;
  // How the window is bounded (analysis.hpp, WindowBounds).
  bool starts_synchronized() const;
  bool ends_synchronized() const;
  bool last_window() const;
  // The collective that ends this window if it ends synchronized (point 0:
  // none), and the one the window before ended with, if this one starts
  // at it (callpath kNoCallpath: none).
  CutCollective ending_collective();
  const CutCollective& starting_collective() const;
  int world_size() const { return rc_.defs().world_size; }
  // A wait whose synchronization interval began before the window, at a
  // requested cut, and whose part before the cut is not known (a window
  // analyzed for time only came between): it is cut short there.
  void note_truncated();
  // Long-term delay costs (seconds, all kinds) that would flow back further
  // than the window before a requested cut: not charged (delay_costs.cpp).
  void note_unattributed(double seconds);
  // The critical path's end in an earlier window had to be guessed (its
  // holder was lost: critical_path.cpp); counted by one rank.
  void note_guessed_path();
  // Critical path over a span the walk could not follow exactly across a
  // requested cut: from a send to the cut, where the receive that waited
  // for it leaves the path to the sender at the cut (critical_path.cpp).
  void note_approximate_path(double seconds);
  void add(Metric m, std::uint32_t callpath, double v) { rc_.add_inclusive_at(m, location(), callpath, v); }
  void add_at(Metric m, int location, std::uint32_t callpath, double v) {
    rc_.add_inclusive_at(m, location, callpath, v);
  }
  // The location of the window's last MPI call (where a path that ends with
  // the window arrives).
  int last_location() const;
  // This window's epoch, and its sends without a receive in it (their
  // receives lie in a later window).
  std::uint32_t epoch() const;
  const std::vector<CrossingSend>& crossing_sends() const;
  Transport& transport();
  // Values that depend on later points (sym.hpp), for the handler in
  // `slot`.  At a cause point: what the waiting side sends (known, or a
  // symbol for it).
  Sym incoming(std::size_t slot);
  // `s` with every value known so far substituted.
  Sym reduce(const Sym& s, std::size_t slot);
  // The value of `s`: every value is known after the walk (the replay
  // waits for them there).
  std::array<double, kMaxLanes> value(const Sym& s, std::size_t slot);

  void set_current(std::size_t k) { current_ = k; }

 private:
  Interval interval(std::size_t j, std::size_t k, int peer, int comm);
  TimeMap time_map_in(const std::vector<Event>& ev, const std::vector<EventAnnotation>& an, std::int64_t t0,
                      std::int64_t t1, std::size_t near);
  SyncReplay& r_;
  ReplayContext& rc_;
  std::size_t current_ = 0;
};

class SyncHandler {
 public:
  virtual ~SyncHandler() = default;
  // The handler's place among the replay's symbolic values (set by the replay).
  std::size_t slot = 0;
  // How many doubles of what a waiting side sends depend on its later
  // points (at most kMaxLanes): they travel as a Sym (waiting_value).
  virtual int lanes() const { return 0; }
  virtual void begin_walk(SyncContext&) {}
  // On the waiting side of a pair (waits_p2p: a message, a scan, an RMA
  // pair, a collective member), before the walk: what the causing side needs
  // that this rank's window alone decides.  Sent at once, so no rank waits
  // for another's walk.
  virtual void waiting_p2p(SyncPoint& sp, SyncContext& ctx, ByteWriter& out) = 0;
  // ... in the walk: the part that depends on what later points brought.
  virtual void waiting_value(SyncPoint&, SyncContext&, Sym&) {}
  // On the causing side, in the walk: `in` holds what waiting_p2p wrote;
  // ctx.incoming(slot) is the value (often still a symbol).
  virtual void cause_p2p(SyncPoint& sp, SyncContext& ctx, ByteReader& in) = 0;
  // ... the same when the send lies in the window before (LsSendEarlier:
  // this rank walked the rest of that window already).
  virtual void cause_earlier(SyncPoint&, SyncContext&, ByteReader&) {}
  // Whether the handler uses intervals across requested cuts (the replay
  // then keeps their parts before each cut).
  virtual bool uses_intervals() const { return false; }
  // After the walk, every value known (collective over all ranks: handlers
  // may exchange).
  virtual Task<> end_walk(SyncContext&) { co_return; }
};

// Builds and walks one epoch's synchronization points (engine side).
class SyncReplay {
 public:
  struct Inputs {
    const std::vector<Event>* events = nullptr;
    const std::vector<EventAnnotation>* annot = nullptr;
    int location = 0;
    // A merged MPI view (several threads made MPI calls, engine.hpp): each
    // event's location and index there, and the locations' windows (the
    // time between points is the time of the later point's thread).
    const std::vector<int>* origin = nullptr;
    const std::vector<std::uint32_t>* origin_index = nullptr;
    std::vector<std::pair<const std::vector<Event>*, const std::vector<EventAnnotation>*>> locations;
    // MPI calls of different threads overlapped in time (a merged view under
    // MPI_THREAD_MULTIPLE): each thread's points form their own sequence
    // (SyncContext::same_thread).
    bool concurrent = false;
    // This epoch's waits of the analyzed location that are traced
    // (AnalysisOptions::min_traced_wait).
    std::vector<LateSenderFinding> late_senders;
    std::vector<LateReceiverFinding> late_receivers;
    // Every analyzed collective instance of the analyzed location (wait or not).
    std::vector<CollectiveSyncFinding> collectives;
    // Waits for a call of another rank (PairSyncFinding) that are traced.
    std::vector<PairSyncFinding> pairs;
    // Sends of this epoch whose receive was a Late Sender: (receiver, seq) -> event.
    std::vector<std::pair<std::pair<int, std::uint32_t>, std::size_t>> late_sends;
    // Sends of the epoch before whose receive waited for them in this one:
    // (receiver, seq, sender's epoch).
    std::vector<std::tuple<int, std::uint32_t, std::uint32_t>> late_earlier_sends;
    // Sends of this epoch without a receive in it.
    std::vector<CrossingSend> crossing_sends;
    std::uint32_t epoch = 0;
    // Receive postings of this epoch's messages: (sender, seq) -> posting event.
    PeerSeqIndex postings;
    // ... of synchronizing messages sent in an earlier epoch: (sender, seq, epoch).
    std::map<EpochSendKey, std::size_t> earlier_postings;
    WindowBounds bounds;
    // When the window begins (ns): its boundary, or, where none bounds it,
    // its first event (a merged view: its threads' earliest).  Set once per
    // window by the replay (replay.cpp).
    std::int64_t begin = 0;
    std::uint32_t open_callpath = kNoCallpath;  // open after the window's last event (for an empty window)
    // Empties everything for the next epoch, keeping the containers' memory.
    void reset(WindowBounds b) {
      events = nullptr;
      annot = nullptr;
      location = 0;
      origin = nullptr;
      origin_index = nullptr;
      locations.clear();
      concurrent = false;
      late_senders.clear();
      late_receivers.clear();
      collectives.clear();
      pairs.clear();
      late_sends.clear();
      late_earlier_sends.clear();
      crossing_sends.clear();
      epoch = 0;
      postings.clear();
      earlier_postings.clear();
      bounds = b;
      begin = 0;
      open_callpath = kNoCallpath;
    }
  };
  std::uint64_t callpath_hash(const Definitions& defs, const CallpathTree& tree, std::uint32_t cp);
  // Waits of the last run whose interval a requested cut truncated.
  std::uint64_t truncated() const { return truncated_; }
  double unattributed() const { return unattributed_; }
  double approximate_path() const { return approximate_path_; }
  // Late Receiver waits of the last run whose receive was posted in a
  // window walked before (the wait is found; its delay costs are not).
  std::uint64_t unexplained() const { return unexplained_; }
  // Waits for a call of another rank (PairSyncFinding) of the last run with
  // one of the two calls in another epoch's window (found, not explained).
  std::uint64_t unexplained_pairs() const { return unexplained_pairs_; }
  double unexplained_pair_seconds() const { return unexplained_pair_seconds_; }  // (their waits)
  // Windows of the last run whose critical path end was guessed.
  std::uint64_t guessed_paths() const { return guessed_paths_; }
  // A window was analyzed for time only: intervals across it are unknown.
  void forget_intervals() {
    carry_.invalidate();
    cut_before_ = {};
  }
  // Collective over all ranks.
  Task<> run(Inputs& in, const std::vector<SyncHandler*>& handlers, ReplayContext& rc, Transport& t);

 private:
  friend class SyncContext;
  Task<> collect(Inputs& in, ReplayContext& rc, Transport& t);
  std::vector<SyncPoint> points_;
  void sort_points();  // (collect's last step)
  Inputs* in_ = nullptr;
  Transport* transport_ = nullptr;
  std::vector<std::uint64_t> hashes_;  // per local call path (persistent)
  std::vector<std::int64_t> scratch_;  // SyncContext::time_map_in: ns per call path
  TimeMapIndex index_;                 // ... its chunk sums of this epoch's windows
  std::vector<std::uint32_t> touched_;
  std::uint64_t truncated_ = 0;
  double unattributed_ = 0;
  double approximate_path_ = 0;
  std::uint64_t unexplained_ = 0;
  std::uint64_t unexplained_pairs_ = 0;
  double unexplained_pair_seconds_ = 0;
  std::uint64_t guessed_paths_ = 0;
  IntervalCarry carry_;
  CutCollective cut_before_;  // the collective the window before ended with
  SymTable syms_;
  ReplayMail mail_;
};

}  // namespace onlinews::analysis
