// critical_path (seed 003 §III-B): each epoch's backward replay follows the
// path from the rank that entered the window's closing collective last (the
// cut, or MPI_Finalize) back to the window's start.  The path stays on a rank
// until that rank reaches a synchronization point at which it waited; there
// it moves to the rank that caused the wait (the sender of a Late Sender, the
// receiver of a Late Receiver, the latest rank of a barrier or N x N, the root
// of a broadcast, the latest sender of a reduction, the latest lower rank of
// a scan), at the moment the wait
// ended.  A rank holding the path books the exclusive time of its call paths
// over the segment it holds; the wait itself is never on the path, so the
// segments tile the window and their sum is its span.  The token travels
// with the delay payloads (one byte point to point, one double in the
// collective reduction).  The indicators are computed at MPI_Finalize
// (postpass/critical_path.cpp).
#include "../sync_replay.hpp"

namespace onlinews::analysis {
namespace {

class CriticalPath final : public Pattern, public SyncHandler {
 public:
  void subscribe(Dispatch& d) override { d.on_sync(this); }

  void begin_walk(SyncContext& ctx) override {
    // The path ends on the rank that entered the last collective spanning all
    // ranks last (every window ends with one).
    owner_ = false;
    const auto& pts = ctx.points();
    for (std::size_t k = pts.size(); k-- > 1;) {
      const SyncPoint& sp = pts[k];
      if (sp.kind != SyncKind::Collective || !sp.all_ranks) continue;
      const CommDef* c = ctx.defs().comm(sp.comm);
      owner_ = c != nullptr && c->world_rank_of(sp.reference) == ctx.world_rank();
      break;
    }
    segment_end_ = ctx.window_end();
  }

  void waiting_p2p(SyncPoint& sp, SyncContext& ctx, ByteWriter& out) override {
    out.put(static_cast<std::uint8_t>(owner_ ? 1 : 0));
    if (owner_) hand_over(sp, ctx);
  }

  void cause_p2p(SyncPoint& sp, SyncContext&, ByteReader& in) override {
    if (in.get<std::uint8_t>() != 0) take_over(sp.enter);
  }

  void reference_out(SyncPoint&, SyncContext&, ByteWriter&) override {}

  void member_contribute(SyncPoint& sp, SyncContext& ctx, ByteReader&, std::vector<double>& out) override {
    const CommDef* c = ctx.defs().comm(sp.comm);
    const bool gives = owner_ && sp.wait > 0 && c != nullptr && c->my_rank != sp.reference;
    out.push_back(gives ? 1.0 : 0.0);
    if (gives) hand_over(sp, ctx);
  }

  void reference_in(SyncPoint& sp, SyncContext&, const double*& sum) override {
    if (*sum > 0) take_over(sp.enter);
    ++sum;
  }

  // At a Scan the path moves from a waiting holder to its latest predecessor.
  void scan_vote(SyncPoint& sp, SyncContext& ctx, std::vector<double>& votes) override {
    const bool gives = owner_ && sp.wait > 0 && sp.peer >= 0 && sp.peer != ctx.world_rank();
    votes.push_back(gives ? sp.peer + 1.0 : 0.0);
    if (gives) hand_over(sp, ctx);
  }
  void scan_result(SyncPoint& sp, SyncContext& ctx, const double*& votes) override {
    if (*votes > 0 && static_cast<int>(*votes) - 1 == ctx.world_rank()) take_over(sp.enter);
    ++votes;
  }

  Task<> end_walk(SyncContext& ctx) override {
    if (owner_) book(ctx, ctx.window_begin(), segment_end_);
    owner_ = false;
    co_return;
  }

 private:
  // The path leaves this rank where its wait at `sp` ended.
  void hand_over(const SyncPoint& sp, SyncContext& ctx) {
    book(ctx, sp.enter + static_cast<std::int64_t>(sp.wait * 1e9), segment_end_);
    owner_ = false;
  }
  void take_over(std::int64_t at) {
    owner_ = true;
    segment_end_ = at;
  }
  static void book(SyncContext& ctx, std::int64_t t0, std::int64_t t1) {
    const TimeMap m = ctx.time_map(t0, t1);
    for (std::size_t i = 0; i < m.callpaths.size(); ++i) ctx.add(Metric::critical_path, m.callpaths[i], m.seconds[i]);
  }

  bool owner_ = false;
  std::int64_t segment_end_ = 0;
};

}  // namespace

std::unique_ptr<Pattern> make_critical_path() { return std::make_unique<CriticalPath>(); }

}  // namespace onlinews::analysis
