// mpi_rma_sync_late_post and mpi_rma_comm_late_post (seed 001, Figure 1):
// an origin's access epoch blocks until its targets have posted their
// exposure epochs.  Where it blocks depends on the MPI library, so, as in the
// seed, a call is taken to have blocked if the latest target's post entered
// during it:
//   in MPI_Win_start:     wait = latest post - start enter
//   else in MPI_Win_complete: wait = latest post - complete enter
// and an RMA operation (seed 001's Early Transfer) blocked if its own
// target's post entered during it: wait = post - operation enter.  A call
// wrongly taken to have blocked lasted only as long as the "wait" it is
// charged, so the error is small (seed 001 §4).  Charged in the epoch the
// targets' times came (rma_accesses.cpp).  Each wait is a synchronization
// point whose cause is that target's MPI_Win_post (delay_rma_latepost): the
// wait ends where the post began.
#include "../pattern.hpp"

namespace onlinews::analysis {
namespace {

class RmaLatePost final : public Pattern {
 public:
  void subscribe(Dispatch&) override {}
  void on_rma_epochs(ReplayContext& ctx) override {
    if (ctx.rma_epochs() == nullptr) return;
    for (const AccessEpochResult& a : ctx.rma_epochs()->access) {
      const std::int64_t p = a.latest_post;
      // (A call taken to have blocked if the post entered during it.)
      auto during = [](std::int64_t post, const CallRef& call) { return post > call.enter && post <= call.leave; };
      if (during(p, a.start)) {
        charge(ctx, Metric::mpi_rma_sync_late_post, a.location, a.start, p, a.latest_post_at);
      } else if (during(p, a.complete)) {
        charge(ctx, Metric::mpi_rma_sync_late_post, a.location, a.complete, p, a.latest_post_at);
      }
      for (const AccessEpochResult::Op& op : a.ops) {
        if (during(op.post, op.call)) charge(ctx, Metric::mpi_rma_comm_late_post, a.location, op.call, op.post, op.post_at);
      }
    }
  }

 private:
  // `call` waited until the post entered at `post`.
  static void charge(ReplayContext& ctx, Metric m, int location, const CallRef& call, std::int64_t post,
                     EventRef post_at) {
    const double wait = secs(post - call.enter);
    ctx.add_at(m, location, call.callpath, wait);
    PairSyncFinding f;
    f.location = location;
    f.waiting = call.at;
    f.cause = post_at;
    f.wait = wait;
    f.delay = DelayKind::RmaLatePost;
    ctx.publish(f);
  }
};

}  // namespace

std::unique_ptr<Pattern> make_rma_late_post() { return std::make_unique<RmaLatePost>(); }

}  // namespace onlinews::analysis
