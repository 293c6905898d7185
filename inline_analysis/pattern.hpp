// Pattern interface, the flat dispatch table and the replay context that
// handlers receive (DESIGN.md §5).  One pattern per file in patterns/, one
// registration line each in patterns/pattern_table.cpp.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "callpaths.hpp"
#include "definitions.hpp"
#include "findings.hpp"
#include "metrics.hpp"
#include "profile.hpp"
#include "records.hpp"
#include "runtime/event.hpp"

namespace onlinews::analysis {

class ReplayContext;
class SyncHandler;
class Pattern;

// A pattern's handler of one event kind: the pattern and its member
// function, called without std::function's indirections (two indirect calls
// and a copy of the capture per event made the dispatch a tenth of a tight
// loop's analysis).  Patterns derive from Pattern without virtual
// inheritance (CriticalPath and DelayCosts are SyncHandlers too), so the
// member pointer converts to one of Pattern's.
class EventHandler {
 public:
  template <class P>
  EventHandler(P* self, void (P::*fn)(const Event&, ReplayContext&))
      : self_(self), fn_(static_cast<Fn>(fn)) {}
  void operator()(const Event& e, ReplayContext& c) const;

 private:
  using Fn = void (Pattern::*)(const Event&, ReplayContext&);
  Pattern* self_;
  Fn fn_;
};

// State a pattern keeps per location (thread of this rank), grown at a
// location's first use.  Under MPI_THREAD_MULTIPLE and with OpenMP the
// events of several threads interleave in a walk.
template <class T>
class PerLocation {
 public:
  T& operator[](int location) {
    const auto l = static_cast<std::size_t>(location > 0 ? location : 0);
    if (l >= v_.size()) v_.resize(l + 1);
    return v_[l];
  }
  typename std::vector<T>::iterator begin() { return v_.begin(); }
  typename std::vector<T>::iterator end() { return v_.end(); }
  typename std::vector<T>::const_iterator begin() const { return v_.begin(); }
  typename std::vector<T>::const_iterator end() const { return v_.end(); }

 private:
  std::vector<T> v_;
};

enum class Phase : std::uint8_t { Forward = 0, Backward = 1 };

// Handlers are stored per (phase, event kind) and per finding kind; the replay
// walks the window once per phase and calls exactly the subscribed handlers.
class Dispatch {
 public:
  using FindingHandler = std::function<void(const void*, ReplayContext&)>;

  void on_event(Phase ph, EventKind k, EventHandler h) {
    events_[static_cast<int>(ph)][static_cast<int>(k)].push_back(std::move(h));
  }
  template <class P>
  void on_event(Phase ph, EventKind k, P* self, void (P::*fn)(const Event&, ReplayContext&)) {
    on_event(ph, k, EventHandler(self, fn));
  }
  // Only for events that carry remote data (a link: the matched send, the
  // receiver's reply or the collective's result).  A handler that needs it
  // costs nothing at the many events without (e.g. every Leave, of which a
  // few end a blocking send open across a cut).
  template <class P>
  void on_linked_event(Phase ph, EventKind k, P* self, void (P::*fn)(const Event&, ReplayContext&)) {
    linked_[static_cast<int>(ph)][static_cast<int>(k)].push_back(EventHandler(self, fn));
  }
  template <class F, class P>
  void on_finding(P* self, void (P::*fn)(const F&, ReplayContext&)) {
    findings_[static_cast<int>(F::kKind)].push_back(
        [self, fn](const void* f, ReplayContext& c) { (self->*fn)(*static_cast<const F*>(f), c); });
  }

  template <class F>
  void on_finding_fn(std::function<void(const F&, ReplayContext&)> fn) {
    findings_[static_cast<int>(F::kKind)].push_back(
        [fn](const void* f, ReplayContext& c) { fn(*static_cast<const F*>(f), c); });
  }
  // Handlers of the backward replay at synchronization points (sync_replay.hpp).
  void on_sync(SyncHandler* h) { sync_.push_back(h); }
  const std::vector<SyncHandler*>& sync_handlers() const { return sync_; }

  const std::vector<EventHandler>& handlers(Phase ph, EventKind k) const {
    return events_[static_cast<int>(ph)][static_cast<int>(k)];
  }
  const std::vector<EventHandler>& linked_handlers(Phase ph, EventKind k) const {
    return linked_[static_cast<int>(ph)][static_cast<int>(k)];
  }
  const std::vector<FindingHandler>& finding_handlers(FindingKind k) const {
    return findings_[static_cast<int>(k)];
  }
  // Findings are published through one table: the handlers of `o` join it.
  void take_findings(const Dispatch& o) {
    for (int k = 0; k < kFindingKindCount; ++k) {
      for (const auto& h : o.findings_[k]) findings_[k].push_back(h);
    }
  }
  bool any(Phase ph) const {
    for (const auto* table : {&events_, &linked_}) {
      for (const auto& v : (*table)[static_cast<int>(ph)]) {
        if (!v.empty()) return true;
      }
    }
    return false;
  }

 private:
  std::array<std::array<std::vector<EventHandler>, kEventKindCount>, 2> events_, linked_;
  std::array<std::vector<FindingHandler>, kFindingKindCount> findings_;
  std::vector<SyncHandler*> sync_;
};

class Pattern {
 public:
  virtual ~Pattern() = default;
  virtual void subscribe(Dispatch& d) = 0;
  // Called once per epoch after both walks, before the RMA epochs and the
  // backward replay at synchronization points: what it publishes (every
  // location's window walked) reaches the replay's handlers.
  virtual void on_walks_done(ReplayContext&) {}
  // Called once per epoch after both walks, before the backward replay at
  // synchronization points, with the RMA epochs completed in this epoch
  // (ReplayContext::rma_epochs): what it publishes becomes synchronization points.
  virtual void on_rma_epochs(ReplayContext&) {}
  // Called right after on_rma_epochs with the nonblocking (and blocking
  // neighborhood) collective instances whose completion and causes became
  // known in this epoch (ReplayContext::nb_collectives).
  virtual void on_nb_collectives(ReplayContext&) {}
  // Called once per epoch at its end, after the backward replay (e.g. to
  // flush per-epoch state).
  virtual void on_epoch_end(ReplayContext&) {}
  // Called when the backward walk of a location has passed its window's
  // first event (the context stands on that location): a call entered
  // before the window has no Enter in it to close its instance at.
  virtual void on_backward_done(ReplayContext&) {}
};

inline void EventHandler::operator()(const Event& e, ReplayContext& c) const { (self_->*fn_)(e, c); }

struct PatternEntry {
  const char* name;   // selects it in ONLINEWS_ANALYSES
  const char* group;  // "time", "omp" (both always on, walk every thread), "p2p", "collective", "rma" or "rootcause"
  std::unique_ptr<Pattern> (*make)();
};
// The registration table (patterns/pattern_table.cpp).
const std::vector<PatternEntry>& pattern_table();

// Per-event annotations computed before the walks.
// Per-event marks set while matching (bit flags).
namespace mark {
constexpr std::uint8_t kProbed = 1;  // a receive whose message was probed first
}  // namespace mark

struct EventAnnotation {
  std::int64_t enter = 0;   // ns: enter of the enclosing region (for Enter: of itself)
  std::int64_t leave = 0;   // ns: its leave, kOpen if not left in this window
  std::uint32_t callpath = kNoCallpath;  // enclosing region's call path
  std::uint32_t frame = 0;  // per-location sequence number of the enclosing region instance
};
constexpr std::int64_t kOpen = INT64_MAX;

// Everything a handler may look at while the replay stands on one event.
class ReplayContext {
 public:
  struct Sources {
    const Definitions* defs = nullptr;
    const CallpathTree* callpaths = nullptr;
    Profile* profile = nullptr;
    const Dispatch* dispatch = nullptr;
    int epoch = 0;
    int world_rank = 0;
    const RmaEpochResults* rma = nullptr;  // Pattern::on_rma_epochs: the RMA epochs completed in this epoch
    const std::vector<NbCollectiveResult>* nbc = nullptr;  // Pattern::on_nb_collectives
  };
  explicit ReplayContext(const Sources& s) : s_(s) {}

  // Position.
  void set_location(int loc, const std::vector<Event>* events, const std::vector<EventAnnotation>* annot,
                    const std::vector<std::int32_t>* links, const std::vector<std::uint8_t>* marks) {
    location_ = loc;
    events_ = events;
    annot_ = annot;
    links_ = links;
    marks_ = marks;
  }
  void set_index(std::size_t i) {
    index_ = i;
    if (origin_ != nullptr) location_ = (*origin_)[i];
  }
  // A merged MPI view (engine.hpp): each event's own location.
  void set_origin(const std::vector<int>* origin) { origin_ = origin; }
  void set_remote(const std::vector<SendRecord>* matched, const std::vector<ReplyRecord>* replies,
                  const std::vector<CollResult>* colls) {
    matched_ = matched;
    replies_ = replies;
    colls_ = colls;
  }

  // The location (thread) of the current event.
  int location() const { return location_; }
  int world_rank() const { return s_.world_rank; }
  int epoch() const { return s_.epoch; }
  std::size_t index() const { return index_; }
  const Event& event() const { return (*events_)[index_]; }
  const Event& event_at(std::size_t i) const { return (*events_)[i]; }
  std::size_t window_size() const { return events_->size(); }
  std::uint32_t callpath() const { return (*annot_)[index_].callpath; }
  std::uint32_t frame() const { return (*annot_)[index_].frame; }
  std::int64_t region_enter() const { return (*annot_)[index_].enter; }
  // ... of event `i` of the same window (kNoCallpath / 0 if out of range).
  std::uint32_t callpath_at(std::size_t i) const {
    return annot_ != nullptr && i < annot_->size() ? (*annot_)[i].callpath : kNoCallpath;
  }
  std::int64_t region_enter_at(std::size_t i) const {
    return annot_ != nullptr && i < annot_->size() ? (*annot_)[i].enter : 0;
  }
  std::int64_t region_leave() const { return (*annot_)[index_].leave; }
  const RegionDef* region() const;  // the enclosing region
  const Definitions& defs() const { return *s_.defs; }
  const CallpathTree& callpaths() const { return *s_.callpaths; }
  Profile& profile() { return *s_.profile; }

  // Remote data for the current event, nullptr when there is none.
  // Recv / RecvComplete / Probe: the matched send (for a probe: the send its
  // receive matched; repeated probes have none).
  const SendRecord* matched_send() const {
    const EventKind k = event().kind;
    return (k == EventKind::Recv || k == EventKind::RecvComplete || k == EventKind::Probe) ? link_into(matched_)
                                                                                          : nullptr;
  }
  // Receives: the message was probed first (the probe, not the receive,
  // synchronized with the send).
  bool probed() const {
    return marks_ != nullptr && index_ < marks_->size() && ((*marks_)[index_] & mark::kProbed) != 0;
  }
  // Send / SendComplete: the receiver's reply (only after the reply exchange);
  // also the Leave of a blocking send entered in an earlier window, whose
  // Send event lies there.
  const ReplyRecord* reply() const {
    const EventKind k = event().kind;
    return (k == EventKind::Send || k == EventKind::SendComplete || k == EventKind::Leave) ? link_into(replies_)
                                                                                           : nullptr;
  }
  // In Pattern::on_rma_epochs: the RMA epochs and calls whose partners'
  // times came in this epoch (else nullptr).
  const RmaEpochResults* rma_epochs() const { return s_.rma; }
  // In Pattern::on_nb_collectives: the instances analyzed in this epoch (else nullptr).
  const std::vector<NbCollectiveResult>* nb_collectives() const { return s_.nbc; }
  // CollectiveEnd: the reduced instance.
  const CollResult* collective() const {
    return event().kind == EventKind::CollectiveEnd ? link_into(colls_) : nullptr;
  }

  // Results.  add() charges one metric; add_inclusive() also charges every
  // ancestor in the metric tree (for measured categories and counts, whose
  // parents are their sums).
  void add(Metric m, double v) { s_.profile->add(location_, callpath(), m, v); }
  void add_at(Metric m, int location, std::uint32_t cp, double v) { s_.profile->add(location, cp, m, v); }
  void add_inclusive(Metric m, double v) { add_inclusive_at(m, location_, callpath(), v); }
  void add_inclusive_at(Metric m, int location, std::uint32_t cp, double v) {
    const MetricChain& c = metric_chain(m);
    s_.profile->add_all(location, cp, c.m, c.n, v);
  }
  template <class F>
  void publish(const F& finding) {
    for (const auto& h : s_.dispatch->finding_handlers(F::kKind)) h(&finding, *this);
  }

 private:
  template <class T>
  const T* link_into(const std::vector<T>* v) const {
    if (v == nullptr || links_ == nullptr || index_ >= links_->size()) return nullptr;
    const std::int32_t l = (*links_)[index_];
    return (l >= 0 && static_cast<std::size_t>(l) < v->size()) ? &(*v)[l] : nullptr;
  }

  Sources s_;
  int location_ = 0;
  const std::vector<int>* origin_ = nullptr;
  std::size_t index_ = 0;
  const std::vector<Event>* events_ = nullptr;
  const std::vector<EventAnnotation>* annot_ = nullptr;
  const std::vector<std::int32_t>* links_ = nullptr;
  const std::vector<std::uint8_t>* marks_ = nullptr;
  const std::vector<SendRecord>* matched_ = nullptr;
  const std::vector<ReplyRecord>* replies_ = nullptr;
  const std::vector<CollResult>* colls_ = nullptr;
};

// Seconds from nanoseconds.
inline double secs(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

}  // namespace onlinews::analysis
