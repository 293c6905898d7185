// Synchronization points of an epoch and the backward walk over them.
#include "sync_replay.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace onlinews::analysis {
namespace {

using EventRefKey = std::pair<int, std::uint32_t>;  // (world rank, event index)

std::uint64_t fnv1a(const std::string& s, std::uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

// ---- SyncReplay ---------------------------------------------------------------

std::uint64_t SyncReplay::callpath_hash(const Definitions& defs, const CallpathTree& tree, std::uint32_t cp) {
  if (cp == kNoCallpath || cp >= tree.size()) return 0;
  while (hashes_.size() < tree.size()) {
    const auto id = static_cast<std::uint32_t>(hashes_.size());
    const auto& n = tree.node(id);
    const std::uint64_t parent = n.parent == kNoCallpath ? 14695981039346656037ull : hashes_[n.parent];
    const RegionDef* r = defs.region(n.region);
    std::uint64_t h = fnv1a(r != nullptr ? r->name : "?", parent ^ 0x9E3779B97F4A7C15ull);
    h ^= static_cast<std::uint64_t>(r != nullptr ? static_cast<int>(r->kind) : 0) * 0xff51afd7ed558ccdull;
    hashes_.push_back(h);
  }
  return hashes_[cp];
}

Task<> SyncReplay::collect(Inputs& in, ReplayContext& rc, Transport& t) {
  const auto& ev = *in.events;
  const auto& an = *in.annot;
  const Definitions& defs = rc.defs();
  auto make = [&](SyncKind kind, std::size_t event) {
    SyncPoint s;
    s.kind = kind;
    s.event = event;
    s.enter = an[event].enter;
    s.callpath = an[event].callpath;
    return s;
  };
  points_.clear();
  // Room for every point this rank's findings can make, and for the late
  // sends of the window before (inserted last); the notes of other ranks
  // add theirs below.  A first window's points then take at most two
  // blocks instead of a series of doubling copies, each into fresh pages
  // (a page fault per page: benchmarks/README.md, the forty-ninth
  // session).  (Growing at least twofold, like push_back: points_ lives
  // across epochs, and a count that rises epoch by epoch must not
  // reallocate each time.)
  auto room = [this](std::size_t n) {
    if (n > points_.capacity()) points_.reserve(std::max(n, 2 * points_.capacity()));
  };
  room(1 + in.late_senders.size() + in.late_sends.size() + in.pairs.size() + in.late_receivers.size() +
       2 * in.collectives.size() + in.late_earlier_sends.size());
  SyncPoint start;
  start.kind = SyncKind::Start;
  start.all_ranks = true;
  start.enter = in.begin;
  points_.push_back(start);

  for (const auto& f : in.late_senders) {
    if (f.event >= ev.size()) continue;
    SyncPoint s = make(f.same_epoch ? SyncKind::LsRecv : SyncKind::LsRecvEarlier, f.event);
    s.wait = f.wait;
    s.peer = f.sender;
    s.seq = f.seq;
    s.epoch = f.same_epoch ? 0 : f.send_epoch;
    s.delay = DelayKind::LateSender;
    points_.push_back(s);
  }
  for (const auto& [k, event] : in.late_sends) {
    SyncPoint s = make(SyncKind::LsSend, event);
    s.peer = k.first;
    s.seq = k.second;
    s.delay = DelayKind::LateSender;
    points_.push_back(s);
  }
  // Notes to the ranks that caused a wait here and learn of it only so:
  // a Late Receiver's receiving side (which of its postings was late), a
  // scan's latest lower rank and a collective's reference (who waited for
  // it), an RMA call's causing rank (which of its calls).
  struct Note {
    std::uint64_t gid;  // a scan's or collective's communicator (else 0)
    std::uint32_t kind, seq;  // the cause's SyncKind; the message's seq, the scan's instance or the pair's event
    std::uint32_t epoch;  // Late Receivers: the send's epoch
    std::uint8_t delay, part_delay, at_leave, pad;  // pairs: their DelayKinds, PairSyncFinding::at_cause_leave
    double part;  // pairs: SyncPoint::part
  };
  std::map<int, std::vector<Note>> notes;
  auto note = [&notes](int peer, SyncKind kind, std::uint32_t seq, std::uint64_t gid, std::uint32_t epoch,
                       const SyncPoint* pair = nullptr) {
    Note n{gid, static_cast<std::uint32_t>(kind), seq, epoch, 0, 0, 0, 0, 0.0};
    if (pair != nullptr) {
      n.delay = static_cast<std::uint8_t>(pair->delay);
      n.part_delay = static_cast<std::uint8_t>(pair->part_delay);
      n.at_leave = pair->at_leave ? 1 : 0;
      n.part = pair->part;
    }
    notes[peer].push_back(n);
  };
  // Waits for a call of another rank: replayed if that call lies in the
  // other rank's window of this epoch (else it was walked already, and the
  // wait is found but not explained, like a Late Receiver across a cut).
  // One point per cause (the longest wait for it): the pair's name on both
  // sides is the cause's event.
  std::map<EventRefKey, std::size_t> pair_at;  // cause -> point
  for (const auto& f : in.pairs) {
    if (f.waiting.event >= ev.size() || f.waiting.epoch != in.epoch || !f.cause.valid() ||
        f.cause.rank >= defs.world_size || f.cause.rank == defs.world_rank || f.cause.epoch != in.epoch) {
      ++unexplained_pairs_;
      unexplained_pair_seconds_ += f.wait;
      continue;
    }
    SyncPoint s = make(SyncKind::PairWait, f.waiting.event);
    s.wait = f.wait;
    s.peer = f.cause.rank;
    s.seq = f.cause.event;
    s.delay = f.delay;
    s.part = f.part;
    s.part_delay = f.part_delay;
    s.at_leave = f.at_cause_leave;  // (for the note: the cause's point needs it)
    const auto [at, fresh] = pair_at.try_emplace(EventRefKey{f.cause.rank, f.cause.event}, points_.size());
    if (fresh) {
      points_.push_back(s);
    } else {
      ++unexplained_pairs_;  // (one of two waits for the same call: the longer is traced)
      unexplained_pair_seconds_ += std::min(s.wait, points_[at->second].wait);
      if (s.wait > points_[at->second].wait) points_[at->second] = s;
    }
  }
  for (const auto& [key, k] : pair_at) note(points_[k].peer, SyncKind::PairCause, points_[k].seq, 0, 0, &points_[k]);
  for (const auto& f : in.late_receivers) {
    if (f.event >= ev.size()) continue;
    SyncPoint s = make(SyncKind::LrSend, f.event);
    s.wait = f.wait;
    s.peer = f.receiver;
    s.seq = f.seq;
    // Named with the send's epoch on both sides: a send of the window
    // before (its call waited across the cut) has a seq of that epoch.
    s.epoch = f.send_epoch;
    s.delay = DelayKind::LateReceiver;
    points_.push_back(s);
    note(f.receiver, SyncKind::LrRecv, f.seq, 0, f.send_epoch);
  }
  // Collectives, as their patterns published them: every analyzed instance
  // bounds intervals; instances in which someone waited are replayed.
  // (gid, instance) -> its event and local communicator (the instance's
  // number on its communicator is unique in a window).
  std::map<std::pair<std::uint64_t, std::uint32_t>, std::pair<std::size_t, std::uint16_t>> instances;
  for (const auto& f : in.collectives) {
    const CommDef* c = defs.comm(f.comm);
    if (f.event >= ev.size() || c == nullptr) continue;
    SyncPoint s = make(SyncKind::Collective, f.event);
    s.comm = f.comm;
    s.all_ranks = c->size == defs.world_size;
    s.delay = f.delay;
    s.wait = f.wait;
    s.min_leave = f.min_leave;
    s.part = f.part;
    s.part_delay = f.part_delay;
    instances[{f.gid, f.instance}] = {f.event, f.comm};
    if (f.pairwise) {
      const int cause = f.pair_cause;
      if (s.wait <= 0 || cause < 0 || cause >= defs.world_size || cause == defs.world_rank) continue;
      s.kind = SyncKind::ScanWait;
      s.peer = cause;
      s.seq = f.instance;
      s.gid = f.gid;
      points_.push_back(s);
      note(s.peer, SyncKind::ScanCause, f.instance, f.gid, 0);
      continue;
    }
    s.reference = f.reference;
    s.delayed = f.delayed;
    // A member that waited at a delayed instance: its wait is a pair with
    // the reference (which learns of it by a note), replayed like a message.
    const int ref = c->world_rank_of(f.reference);
    const bool pair = f.delayed && f.wait > 0 && c->my_rank != f.reference && ref >= 0 && ref != defs.world_rank;
    s.bound_only = pair;
    points_.push_back(s);
    if (!pair) continue;
    s.kind = SyncKind::CollWait;
    s.bound_only = false;
    s.peer = ref;
    s.seq = f.instance;
    s.gid = f.gid;
    points_.push_back(s);
    note(ref, SyncKind::CollCause, f.instance, f.gid, 0, &s);
  }
  // The cause's point of a pair the waiting rank noted: its kinds as the
  // waiting side's finding said (a collective member's share of a
  // sub-pattern is its own).
  auto cause_point = [&make](SyncKind kind, std::size_t event, int peer, const Note& n) {
    SyncPoint s = make(kind, event);
    s.peer = peer;
    s.seq = n.seq;
    s.delay = static_cast<DelayKind>(n.delay);
    s.part_delay = static_cast<DelayKind>(n.part_delay);
    s.part = n.part;
    return s;
  };
  const auto noted = co_await exchange_records(t, notes);
  std::size_t more = 0;
  for (const auto& [peer, got] : noted) more += got.size();
  room(points_.size() + more + in.late_earlier_sends.size());
  for (const auto& [peer, got] : noted) {
    for (const Note& n : got) {
      const auto kind = static_cast<SyncKind>(n.kind);
      const std::uint32_t seq = n.seq;
      const std::uint64_t gid = n.gid;
      if (kind == SyncKind::LrRecv) {
        const std::size_t* posting = nullptr;
        if (n.epoch == in.epoch) {
          posting = in.postings.find(peer, seq);
        } else {
          const auto e = in.earlier_postings.find({peer, seq, n.epoch});
          if (e != in.earlier_postings.end()) posting = &e->second;
        }
        // A posting in a window walked already explains nothing here.
        if (posting == nullptr) {
          ++unexplained_;
          continue;
        }
        SyncPoint s = make(SyncKind::LrRecv, *posting);
        s.peer = peer;
        s.seq = seq;
        s.epoch = n.epoch;
        s.delay = DelayKind::LateReceiver;
        points_.push_back(s);
      } else if (kind == SyncKind::PairCause) {
        if (seq >= ev.size()) continue;
        SyncPoint s = cause_point(kind, seq, peer, n);
        // The moment the wait ended: the call's enter, or its leave (a
        // release), from which on the waiting rank went on.
        s.at_leave = n.at_leave != 0 && an[seq].leave != kOpen;
        if (s.at_leave) s.enter = an[seq].leave;
        points_.push_back(s);
      } else if (kind == SyncKind::ScanCause || kind == SyncKind::CollCause) {
        const auto found = instances.find({gid, seq});
        if (found == instances.end()) continue;
        SyncPoint s = cause_point(kind, found->second.first, peer, n);
        s.comm = found->second.second;
        s.gid = gid;
        points_.push_back(s);
      }
    }
  }
  sort_points();
  // Late sends of the window before (kept with their intervals): they come
  // before everything in this window, so the walk reaches them last.
  std::vector<SyncPoint> earlier;
  for (const auto& [receiver, seq, epoch] : in.late_earlier_sends) {
    SyncPoint s;
    s.kind = SyncKind::LsSendEarlier;
    s.peer = receiver;
    s.seq = seq;
    s.epoch = epoch;
    const CarriedSend* c = carry_.send(receiver, seq, epoch);
    if (c == nullptr) continue;  // older: its receiver's message is drained unused
    s.enter = c->enter;
    s.callpath = c->callpath;
    earlier.push_back(s);
  }
  std::stable_sort(earlier.begin(), earlier.end(),
                   [](const SyncPoint& a, const SyncPoint& b) { return a.enter < b.enter; });
  points_.insert(points_.begin() + 1, earlier.begin(), earlier.end());
}

// The points after Start, into the order of the window's events (stably).
// A call that both waited and caused another rank's wait (an
// MPI_Win_complete that waited for a post and ended a target's Early Wait)
// is two points, ordered by the moment each stands for: the wait's end, the
// cause's moment.  A collective instance's pairs come before its Collective
// point, which bounds the intervals after it.  (Only these share an event
// with another point.)  Sorted as 24-byte keys and each point moved once,
// along the permutation's cycles: a SyncPoint is ~120 bytes, and
// std::stable_sort moved every one log n times (its merges' copies were 4 %
// of a wavefront's analysis in callgrind).
void SyncReplay::sort_points() {
  auto moment = [](const SyncPoint& s) -> std::int64_t {
    if (s.kind == SyncKind::PairWait) return s.enter + static_cast<std::int64_t>(s.wait * 1e9);
    if (s.kind == SyncKind::Collective) return INT64_MAX;
    return s.kind == SyncKind::PairCause ? s.enter : 0;
  };
  struct Key {
    std::size_t event;
    std::int64_t moment;
    std::size_t at;  // (the tie-break that keeps it stable)
    bool operator<(const Key& o) const {
      return event != o.event ? event < o.event : moment != o.moment ? moment < o.moment : at < o.at;
    }
  };
  std::vector<Key> keys;
  keys.reserve(points_.size());
  for (std::size_t i = 1; i < points_.size(); ++i) keys.push_back({points_[i].event, moment(points_[i]), i});
  if (std::is_sorted(keys.begin(), keys.end())) return;
  std::sort(keys.begin(), keys.end());
  // keys[j - 1].at: the point that goes to j (0 stays); set to j once there.
  for (std::size_t i = 1; i < points_.size(); ++i) {
    if (keys[i - 1].at == i) continue;
    SyncPoint held = std::move(points_[i]);
    std::size_t j = i;
    for (;;) {
      const std::size_t k = std::exchange(keys[j - 1].at, j);
      if (k == i) {
        points_[j] = std::move(held);
        break;
      }
      points_[j] = std::move(points_[k]);
      j = k;
    }
  }
}

Task<> SyncReplay::run(Inputs& in, const std::vector<SyncHandler*>& handlers, ReplayContext& rc, Transport& t) {
  in_ = &in;
  transport_ = &t;
  index_.clear();
  truncated_ = 0;
  unattributed_ = 0;
  approximate_path_ = 0;
  unexplained_ = 0;
  unexplained_pairs_ = 0;
  unexplained_pair_seconds_ = 0;
  guessed_paths_ = 0;
  co_await collect(in, rc, t);
  for (std::uint32_t cp = 0; cp < rc.callpaths().size(); ++cp) callpath_hash(rc.defs(), rc.callpaths(), cp);
  SyncContext ctx(*this, rc);
  std::vector<int> lanes;
  for (std::size_t i = 0; i < handlers.size(); ++i) {
    handlers[i]->slot = i;
    lanes.push_back(std::min(handlers[i]->lanes(), kMaxLanes));
  }
  syms_.reset(points_.size(), handlers.size());
  mail_.begin(points_, syms_, lanes, t);
  Scheduler& sched = t.scheduler();
  // What each wait's cause needs from this window alone goes out before
  // the walk (latest first, as the walks need them).
  ByteWriter w;
  for (std::size_t k = points_.size(); k-- > 1;) {
    if ((k & 255) == 0) {
      co_await mail_.pump();
      co_await sched.slice();
    }
    if (!waits_p2p(points_[k])) continue;
    ctx.set_current(k);
    w.clear();
    for (auto* h : handlers) h->waiting_p2p(points_[k], ctx, w);
    mail_.send_fixed(k, w);
  }
  co_await mail_.pump();
  for (auto* h : handlers) h->begin_walk(ctx);
  for (std::size_t k = points_.size(); k-- > 1;) {
    if ((k & 255) == 0) {
      co_await mail_.pump();
      co_await sched.slice();
    }
    SyncPoint& sp = points_[k];
    ctx.set_current(k);
    if (waits_p2p(sp)) {
      for (auto* h : handlers) h->waiting_value(sp, ctx, syms_.form(k, h->slot));
      syms_.set_known(k);
      mail_.send_value(k);
    } else if (causes_p2p(sp.kind)) {
      ByteReader r = co_await mail_.fixed_for(k);  // each handler reads its own fields, in order
      for (auto* h : handlers) {
        if (sp.kind == SyncKind::LsSendEarlier) {
          h->cause_earlier(sp, ctx, r);
        } else {
          h->cause_p2p(sp, ctx, r);
        }
      }
    }
    mail_.walked(k);
  }
  // Every value known, every parcel taken.
  co_await mail_.finish();
  ctx.set_current(0);
  for (auto* h : handlers) co_await h->end_walk(ctx);
  cut_before_ = ctx.ending_collective();
  // What the intervals that reach across this window's end carry into the next.
  const bool intervals = std::any_of(handlers.begin(), handlers.end(), [](auto* h) { return h->uses_intervals(); });
  if (!intervals || in.bounds.ends_synchronized) {
    CarriedMap completion;
    if (cut_before_.point != 0 && cut_before_.completion_from < ctx.window_end()) {
      completion.seconds.push_back({cut_before_.callpath, secs(ctx.window_end() - cut_before_.completion_from)});
    }
    carry_.reset(std::move(completion));
  } else {
    co_await sched.slice();
    carry_.update(ctx, in.crossing_sends, in.epoch);
  }
}

}  // namespace onlinews::analysis
