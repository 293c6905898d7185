// Internal state of the Analyzer (not part of the stage interface).
#pragma once
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "analysis.hpp"
#include "pattern.hpp"
#include "pending_sends.hpp"
#include "records.hpp"
#include "sync_replay.hpp"

namespace onlinews::analysis {

// Times live in the events of the window being analyzed (clock correction
// moves only those); records of this window refer to events by index and
// read the times through the annotation.  A record that outlives its window
// keeps the final times of its events, taken when the window retires.
constexpr std::size_t kNoEvent = static_cast<std::size_t>(-1);

// A receive that completed in this window, in the form matching needs.
struct CompletedRecv {
  std::size_t event = 0;      // index of the Recv / RecvComplete event
  std::uint64_t post_seq = 0; // posting order: MPI matches in this order
  std::uint64_t comm_gid = 0;
  int src = -1;               // actual source, world rank
  std::int32_t tag = 0;
  std::size_t post_event = kNoEvent;  // the posting event, if in this window; else:
  std::int64_t earlier_post_enter = 0, earlier_post_leave = 0;  // its times, kept from its window
  int post_location = 0;      // the thread that posted it
};

struct OpenRecv {  // a receive request posted but not completed yet
  std::uint64_t post_seq = 0;
  std::size_t post_event = 0;  // in the window of post_epoch
  int post_epoch = -1;
  std::int64_t post_enter = 0, post_leave = 0;  // taken when that window retires
  std::size_t probe_event = kNoEvent;  // matched probe (MPI_Imrecv), in this window
  std::uint64_t comm_gid = 0;
  int src = -1;            // requested source (world rank), -1 = any
  std::int32_t tag = -1;   // requested tag, kAnyTag = any
  int post_location = 0;   // the thread that posted it
};
struct OpenSend {  // a send request started but not completed yet (or a blocking send open at the cut)
  int dest = -1;
  std::uint32_t seq = 0;
  int epoch = -1;
};

struct Frame {
  std::uint32_t callpath;
  std::int64_t enter;
  std::uint32_t frame;
};

struct LocationState {
  std::vector<Frame> stack;
  std::uint32_t window_first_frame = 1;  // frames numbered from here were entered in this window
  bool window_mpi = false;  // this window has MPI events (or ends a call open before it): annotate
  std::vector<EventAnnotation> annot;  // per event of the current window
  std::vector<std::int32_t> links;     // per event: index into matched/replies/colls
  std::vector<std::uint8_t> marks;     // per event: mark::
};

// A probe waiting for the receive of its message (seed 004 §3.2).
struct ProbeKey {
  std::uint64_t gid;
  int src;
  std::int32_t tag;
  std::uint32_t message;  // handle id, 0 for a regular probe
  bool operator<(const ProbeKey& o) const {
    return std::tie(gid, src, tag, message) < std::tie(o.gid, o.src, o.tag, o.message);
  }
};
struct PendingProbe {
  std::size_t event;
  std::uint64_t post_seq;  // matched probes: the message is matched here
};

// The last group of overlapping postings on one envelope (concurrency.cpp).
struct PostingTail {
  static constexpr int kSeveral = -1;
  std::int64_t end = 0;  // it ends here (kOpen: a call still open)
  int location = 0;      // its thread (kSeveral: more than one)
  std::uint32_t open_frame = 0;  // end kOpen: the open call (its Leave comes in a later window)
  bool has_open_frame = false;
};

struct Analyzer::Impl {
  const Definitions& defs;
  AnalysisOptions options;
  CallpathTree callpaths;
  Profile profile;
  Dispatch dispatch;
  std::vector<std::unique_ptr<Pattern>> patterns;
  std::vector<std::string> pattern_names;
  // Of `patterns`: which walk they take (analysis of messages and
  // collectives is needed only if some pattern is not a time pattern).
  std::vector<Pattern*> time_patterns, comm_patterns;
  int epoch = 0;

  std::vector<LocationState> locs;
  // Frames are numbered per rank, not per location: records of the MPI view
  // key calls by frame whichever thread made them.
  std::uint32_t next_frame = 1;
  // The MPI view of the epoch (mpi_view.cpp): the window whose MPI events
  // the engine matches, reduces and replays.  When one location made every
  // MPI call of the epoch (a single-threaded rank, a FUNNELED program) it is
  // that location's window itself; when several did (SERIALIZED), it is a
  // merge of their MPI calls in time order, location kViewLocation, and
  // `view_loc` / `view_idx` give each event's location and index there.
  static constexpr int kViewLocation = -1;
  LocationWindow merged;
  LocationState merged_state;
  std::vector<int> view_loc;
  std::vector<std::uint32_t> view_idx;
  LocationWindow* view = nullptr;
  std::uint64_t view_dropped = 0;  // lost events of the window's locations (any may make MPI calls)
  bool view_merged() const { return view == &merged && merged.location == kViewLocation; }
  // The location of event `i` of the MPI view.
  int origin(std::size_t i) const {
    return view_merged() ? (i < view_loc.size() ? view_loc[i] : 0) : (view != nullptr ? view->location : 0);
  }
  // concurrency.cpp (MPI_THREAD_MULTIPLE): whether MPI calls of different
  // threads overlap in time in this window's view (make_view), then whether
  // they did on any rank (run_epoch agrees: the backward replay of every
  // rank then keeps one sequence of synchronization points per thread);
  // and which messages MPI may have matched in another order than
  // observed: postings on one envelope from several threads whose calls
  // overlap.
  bool concurrent = false;
  std::map<MsgKey, PostingTail> send_tails, recv_tails;  // per envelope ({dest or source, gid, tag}): for the next window
  bool detect_concurrency() const;
  // Flags this window's sends of ambiguous order (sendflag::kAmbiguous).
  void flag_ambiguous_sends(const LocationWindow& w);
  // Per entry of `completed` (sorted by posting order): 1 if ambiguous.
  std::vector<char> ambiguous_receives(const LocationWindow& w);
  // Chooses or builds the view from the annotated windows (in slices).
  Task<> make_view(std::vector<LocationWindow>& windows, Scheduler& sched);
  // After a clock correction of a merged view: its times back into the
  // locations' windows, their annotations refreshed and copied again.
  void write_back_view(std::vector<LocationWindow>& windows);
  // Patterns of the "time" group walk every location's window; the others
  // walk the MPI view (time_dispatch / dispatch).  Patterns of the "omp"
  // group walk every window too, once the rank has shown a team (an Enter
  // that names one: omp_seen, sticky), so that programs without OpenMP do
  // not pay for them.
  Dispatch time_dispatch, omp_dispatch, time_omp_dispatch;
  Dispatch both_dispatch, both_omp_dispatch;  // the event handlers of the view's walk, time first
  bool omp_seen = false;
  std::uint64_t next_post_seq = 0;
  FlatMap<std::uint32_t, OpenRecv> open_recvs;
  FlatMap<std::uint32_t, OpenSend> open_sends;
  // Synchronizing blocking sends whose call was still open at the window's
  // end, by frame: their Leave in a later window completes them.
  FlatMap<std::uint32_t, OpenSend> open_blocking;
  PendingSends pending;  // arrived, not yet received (pending_sends.hpp)
  // Windows left to match carefully after one that lost events (see
  // exchange_and_match): sends of the lost window are gone from `pending`.
  int realign = 0;
  // Windows / communicators some member used from a thread whose RMA calls /
  // collectives are not analyzed (MPI_THREAD_MULTIPLE; agreed by all
  // members, never forgotten): their RMA epochs / instances are left out.
  std::set<std::uint64_t> mixed_rma, mixed_collective;
  // This window's probes awaiting their receive, and matched probes of
  // earlier windows whose MPI_Mrecv/Imrecv is still to come (event kNoEvent).
  std::map<ProbeKey, PendingProbe> pending_probes;
  std::uint32_t current_match = 0;                    // message id of the Match just seen
  std::vector<std::pair<std::size_t, std::size_t>> probed;  // (receive event, probe event)
  std::vector<std::size_t> unreceived_linked;  // probes linked to a message not received in their window
  // Clock correction: the shift left at the end of the last corrected window
  // (recorded and corrected time of its last event) decays on in the next.
  bool clock_carry = false;
  std::int64_t carry_orig = 0, carry_fwd = 0;

  // Per-epoch scratch.
  std::vector<CompletedRecv> completed;
  std::map<int, std::vector<SendRecord>> outgoing;  // dest world rank -> sends (the wire copy, until sent)
  std::vector<std::pair<std::size_t, std::pair<int, std::uint32_t>>> send_refs;  // event -> (dest, seq)
  // Completions in this window of sends recorded in an earlier one (a
  // SendComplete, or the Leave of a blocking send open at the cut), for
  // the receivers' replies of synchronizing messages (Late Receiver).
  std::map<EpochSendKey, std::size_t> earlier_refs;
  // Replies of synchronizing sends whose completion was not in the reply's
  // window (a blocking send or Wait open at the cut, or a Wait after it):
  // held until it comes, at most kHoldWindows windows, then counted.
  struct HeldReply {
    ReplyRecord reply;
    int since = 0;  // epoch it arrived in
  };
  static constexpr int kHoldWindows = 2;
  std::map<EpochSendKey, HeldReply> held_replies;
  std::map<std::uint16_t, std::vector<std::size_t>> coll_events;  // comm id -> CollectiveEnd events
  // comm id -> this window's instances that every member has in its window.
  struct AgreedInstances {
    std::size_t first = 0, count = 0;  // in the window's CollectiveEnd events (count 0: skip)
    std::uint64_t number = 0;          // instance number of the first (since the count started)
  };
  std::map<std::uint16_t, AgreedInstances> coll_agreed;
  // Instances per communicator (by gid: local ids are reused) before this
  // window.  Unknown after a window that lost events: no instance is
  // analyzed until a window starts at a synchronizing cut, where every
  // member counts from 0 again.
  std::map<std::uint64_t, std::uint64_t> coll_seen;
  bool coll_resync = false;
  // Nonblocking collective instances (and blocking neighborhood ones), from
  // their start to the epoch in which the starts they depend on and their
  // completion are known (nb_collectives.cpp).  Each member numbers the
  // starts on a communicator (the runtime numbers them: MPI orders them
  // alike on every member).
  using NbKey = std::pair<std::uint64_t, std::uint64_t>;  // (gid, number)
  struct NbState {
    std::uint16_t comm = 0;
    CollKind kind = CollKind::None;
    bool root = false, sends = false, receives = false, blocking = false;
    int root_rank = -1;  // in the communicator (-1: none)
    int location = 0;
    CallRef start, completion;  // completion.at.valid(): completed
    // Their events while in this window (times taken after clock correction).
    std::size_t start_event = kNoEvent, completion_event = kNoEvent;
    bool reduced = false, sent = false;
    bool by_test = false;  // completed by a Test*: no blocking wait
    CollRecord all{};
  };
  std::map<NbKey, NbState> nb_open;
  std::map<std::uint64_t, std::uint64_t> nb_numbered, nb_reduced;  // per gid: next start number seen / reduced
  std::map<std::uint32_t, NbKey> nb_requests;  // open request -> its instance
  std::optional<NbKey> nb_blocking;            // a blocking neighborhood call's, until its CollComplete
  std::map<std::uint16_t, std::uint64_t> nb_agreed;  // comm id -> starts every member numbered (this epoch)
  struct NbArrived {  // source neighbors' starts of one instance
    int count = 0;
    std::int64_t latest = INT64_MIN;
    EventRef at;
  };
  std::map<NbKey, NbArrived> nb_arrived;
  bool nb_new_neighbor_starts = false;  // this window numbered a neighborhood start
  // Seconds charged so far per completion call (location, enter, call path)
  // that completes instances becoming ready in different epochs.
  std::map<std::tuple<int, std::int64_t, std::uint32_t>, double> nb_charged;
  std::vector<std::uint64_t> nb_retired;  // gids every member freed (this epoch): forget after reduce_nb
  std::vector<NbCollectiveResult> nb_results;  // this epoch's
  void collect_nb(const Event& e, const LocationState& st, std::size_t i, const CommDef* c);
  Task<> reduce_nb(Transport& t, bool neighbor_exchange);
  void forget_nb();
  // RMA operations since the last fence, per window id and target (comm
  // rank): the latest leave.  Carried across cuts to the closing fence.
  std::map<std::uint16_t, std::map<int, std::int64_t>> rma_accesses;
  // General active target synchronization (rma_accesses.cpp), carried
  // across cuts until the partners' times came.  Peers are world ranks.
  using PeerSeqs = std::vector<std::pair<int, std::uint64_t>>;  // (peer, epoch number with it)
  struct OpenAccess {
    std::uint64_t gid = 0;
    PeerSeqs targets;
    AccessEpochResult r;
    std::vector<int> op_target;            // per operation in r.ops
    std::map<int, std::int64_t> last_leave;  // per target: its latest operation's leave
    std::map<int, std::pair<std::int64_t, EventRef>> post;  // per target, once known: its post's enter and event
  };
  struct OpenExposure {
    std::uint64_t gid = 0;
    PeerSeqs origins;
    ExposureEpochResult r;
    std::size_t known = 0;  // origins whose access record came
  };
  std::map<std::uint16_t, OpenAccess> open_access;      // window id -> Start seen, Complete not yet
  std::map<std::uint16_t, OpenExposure> open_exposure;  // window id -> Post seen, Wait not yet
  std::vector<OpenAccess> ended_access;                 // waiting for their targets' posts
  std::vector<OpenExposure> ended_exposure;             // waiting for their origins' records
  std::map<std::pair<std::uint64_t, int>, std::uint64_t> access_number, exposure_number;  // (gid, peer)
  using PairKey = std::tuple<std::uint64_t, int, std::uint64_t>;  // (gid, peer, number)
  std::map<PairKey, std::pair<std::int64_t, EventRef>> arrived_posts;  // post enter, the post
  struct ArrivedAccess {
    std::int64_t complete = 0, latest = 0;  // complete enter, latest operation's leave
    EventRef at;                            // the complete
  };
  std::map<PairKey, ArrivedAccess> arrived_accesses;
  // An event of the analyzed location's window in this epoch.
  EventRef here(std::size_t i) const {
    return {defs.world_rank, static_cast<std::uint32_t>(epoch), static_cast<std::uint32_t>(i)};
  }
  // The call that event `i` of the analyzed location's window belongs to.
  CallRef call_at(const LocationState& st, std::size_t i) const {
    const EventAnnotation& a = st.annot[i];
    return {a.callpath, a.enter, a.leave == kOpen ? a.enter : a.leave, here(i)};
  }
  // Passive target (rma_locks.cpp): lock epochs of this rank as origin,
  // per (window id, target world rank), until their unlock; their calls
  // that may have waited, sent to the target and awaiting its answer; and,
  // as target, the lock epochs on this rank of this round and the one before.
  struct LockCall {
    CallRef call;
    bool operation = false;
    std::uint32_t index = 0;  // in its epoch (0: the lock)
    int location = 0;         // the thread that made the call
  };
  struct OpenLock {
    std::uint64_t gid = 0;
    bool exclusive = false;
    std::int64_t acquire = 0;
    std::uint64_t number = 0;
    std::vector<LockCall> calls;  // not sent yet (the lock, sent with the unlock, stays first)
    std::uint32_t next_index = 1;
    std::int64_t release_begin = 0;  // the unlock's enter
  };
  std::map<std::pair<std::uint16_t, int>, OpenLock> open_locks;
  std::uint64_t lock_numbers = 0;
  std::map<std::pair<std::uint64_t, std::uint32_t>, LockCall> asked;  // (epoch number, call index)
  struct Hold {
    int origin = -1;
    bool exclusive = false;
    std::int64_t acquire = 0;
    std::int64_t release_begin = 0, release = 0;  // the unlock's enter and leave
    EventRef unlock;
  };
  std::map<std::uint64_t, std::vector<Hold>> holds, holds_before;  // window gid -> lock epochs on this rank
  std::vector<std::pair<std::int64_t, std::int64_t>> in_mpi_before;  // this rank's MPI calls of the window before
  void lock_event(const LocationWindow& w, const LocationState& st, std::size_t i, const CommDef& c,
                  std::map<int, std::vector<RmaRecord>>& out);
  std::map<int, std::vector<RmaRecord>> answer_lock_calls(const LocationWindow& w,
                                                          const std::map<int, std::vector<RmaRecord>>& got);
  void file_lock_answers(const std::map<int, std::vector<RmaRecord>>& got);
  void send_lock_calls(OpenLock& l, int target, std::int64_t release, std::map<int, std::vector<RmaRecord>>& out,
                       EventRef unlock = {});
  RmaEpochResults rma_results;  // this epoch's
  bool rma_resync = false;      // after lost events: until a window starts at a synchronizing cut
  // After lost events, epochs open across them may close without an open
  // one: out-of-order calls are no longer told from the loss (for the rest
  // of the run, which reports the lost events anyway).
  bool lost_rma_epochs = false;
  // Out-of-order RMA synchronization of the program (not one that lost
  // events left without its opening call).
  void count_rma_error() {
    if (!lost_rma_epochs) ++facts.rma_sync_errors;
  }
  void forget_window(std::uint16_t id);  // MPI_Win_free: its per-pair numbering and pending accesses
  std::vector<std::uint64_t> retired;                 // comms every member freed (this epoch)
  std::vector<SendRecord> matched;
  std::vector<ReplyRecord> replies;
  std::vector<CollResult> colls;
  EpochFacts facts;
  // For the backward replay at synchronization points.
  SyncReplay sync;
  SyncReplay::Inputs sync_in;
  PeerSeqIndex send_events;  // (dest, seq) -> Send/SendRequest event
  FlatMap<std::size_t, double> late_sender_waits;   // receive event -> Late Sender instance wait
  FlatMap<std::size_t, std::size_t> probe_of;        // receive event -> its probe (exchange_replies)

  Impl(const Definitions& d, AnalysisOptions o);
  LocationState& loc(int l) {
    if (l == kViewLocation) return merged_state;
    if (l >= static_cast<int>(locs.size())) locs.resize(static_cast<std::size_t>(l) + 1);
    return locs[l];
  }
  // Events per slice of the passes over a whole window (annotate,
  // collect_messages): ~0.1 ms.
  static constexpr std::size_t kSliceEvents = 4096;
  // Events per slice of the walks (their handlers do more per event).
  static constexpr std::size_t kWalkSlice = 256;
  // replay.cpp
  // Call paths, enter and leave times of every event (in slices).
  Task<> annotate(LocationWindow& w, Scheduler& sched);
  // Its forward part for events [lo, hi).  (The per-event loops of the
  // passes are plain functions called once per slice: inside a coroutine
  // every variable that lives across a suspension sits in its frame, so the
  // loop loaded and stored its index and bounds at every event.)
  void annotate_range(const LocationWindow& w, LocationState& st, std::size_t lo, std::size_t hi);
  // ... the leave times only (again after a clock correction), of the
  // events [lo, hi), walking back from hi with the Leave times of the
  // regions still open there (`leaves`, innermost last).
  void fill_leaves(const LocationWindow& w, LocationState& st, std::vector<std::int64_t>& leaves, std::size_t lo,
                   std::size_t hi);
  void fill_leaves(const LocationWindow& w, LocationState& st) {
    std::vector<std::int64_t> leaves;
    fill_leaves(w, st, leaves, 0, w.events.size());
  }
  Task<> walk(Phase ph, std::vector<LocationWindow>& windows, Scheduler& sched);
  // One pass of a walk over the window's events with positions [lo, hi) in
  // the phase's order (backward: from the end).
  void walk_range(Phase ph, const LocationWindow& w, const LocationState& st, const Dispatch& handlers,
                  bool with_comm, ReplayContext& ctx, std::size_t lo, std::size_t hi) const;
  // matching.cpp
  // Events [begin, end) of the window (in slices: a window holds up to
  // two buffers' worth).
  void collect_messages(const LocationWindow& w, std::size_t begin, std::size_t end);
  // Removes and returns the probe waiting for this message, if any.
  // probe_messages.cpp
  std::optional<PendingProbe> take_probe(const ProbeKey& key);
  void link_unreceived_probes(LocationState& st);
  const SendRecord* probed_message(const ProbeKey& key, const PendingProbe& p, const LocationState& st);
  Task<> exchange_and_match(const LocationWindow& w, Transport& t);
  Task<> exchange_replies(const LocationWindow& w, Transport& t);
  // collectives.cpp
  // Per communicator, with its members: the instance count of this window
  // (and how many nonblocking starts every member numbered)
  // and whether it is mixed.
  Task<> agree_comms(Transport& t);
  // Whether a point-to-point wait of this rank gets a synchronization
  // point (counts the others).  The sender of a Late Sender decides alike
  // from the same value in the reply (is_traced).
  bool traced(double wait) {
    if (is_traced(wait)) return true;
    if (!dispatch.sync_handlers().empty()) {  // (else nothing is traced at all)
      ++facts.untraced_waits;
      facts.untraced_wait_seconds += wait;
    }
    return false;
  }
  bool is_traced(double wait) const { return wait > 0 && wait >= options.min_traced_wait; }
  // clock_condition.cpp
  Task<> correct_clocks(LocationWindow& w, Transport& t);
  // A posting's enter and leave (from this window's events, or kept).
  std::pair<std::int64_t, std::int64_t> posting_times(const CompletedRecv& cr, const LocationState& st) const {
    if (cr.post_event == kNoEvent) return {cr.earlier_post_enter, cr.earlier_post_leave};
    return {st.annot[cr.post_event].enter, st.annot[cr.post_event].leave};
  }
  // The analyzed window retires: open postings keep their final times.
  void retire_times(const LocationWindow& w);
  void refresh_times(LocationWindow& w, std::vector<std::size_t>& owner);
  Task<> reduce_collectives(const LocationWindow& w, Transport& t);
  // rma_accesses.cpp: which members accessed this rank's windows before each
  // closing fence, and when their latest operation left; the partners'
  // times of general active target synchronization epochs.
  Task<> exchange_rma(const LocationWindow& w, Transport& t);
  bool has_rma() const;  // a window of this rank exists, or RMA state is carried
  void forget_rma();
  void rma_event(const LocationWindow& w, const LocationState& st, std::size_t i,
                 std::map<int, std::vector<RmaRecord>>& out);
  void pair_rma_epochs(const std::map<int, std::vector<RmaRecord>>& got);
  Task<> run_sync_replay(LocationWindow& w, std::vector<LocationWindow>& windows, Transport& t);
};

}  // namespace onlinews::analysis
