#include "cut_protocol.hpp"

#include <cmath>

#include "pipeline.hpp"
#include "progress.hpp"
#include "state.hpp"

namespace onlinews::rt {
namespace {

constexpr int kRequestTag = 30400;
constexpr std::uint64_t kTerminate = 0xffffffffull;  // broadcast number: no more boundaries
constexpr double kCollectiveFreeSeconds = 1.0;        // test mode (see wants_cut)

std::uint64_t global_now(const State& s) { return s.clock_sync.to_global(monotonic_ns()); }

}  // namespace

void CutProtocol::init() {
  PMPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  last_boundary_ns_ = monotonic_ns();
  if (s_.rank == 0) {
    PMPI_Irecv(&req_in_, 1, MPI_UINT64_T, MPI_ANY_SOURCE, kRequestTag, comm_, &req_in_req_);
  } else {
    post_standing_bcast();
  }
}

void CutProtocol::post_standing_bcast() {
  PMPI_Ibcast(bcast_, 3, MPI_UINT64_T, 0, comm_, &bcast_req_);
}

void CutProtocol::apply(std::uint32_t number, std::uint8_t kind, std::uint64_t t, std::uint64_t limit_raw) {
  Boundary b;
  b.number = number;
  b.kind = kind;
  if ((kind & cutkind::kRequested) != 0) {
    b.time = t;
    b.raw = limit_raw;  // (mapped like the events: the pipeline takes the earlier of the two)
    b.mapped = limit_raw == 0;
    ++requested_;
    last_requested_ = true;
  } else {
    b.raw = t;  // mapped like the events when the pipeline drains them
    ++syncs_;
    last_requested_ = false;
  }
  known_ = number;
  last_boundary_ns_ = monotonic_ns();
  // (Inside an entry slice: the slice's region, recorded when it ends and
  // dated at its start, must not follow the boundary in the stream.)
  slice_enter_before_boundary();
  s_.pipeline->add_boundary(b);
}

void CutProtocol::announce(std::uint64_t t) {
  auto* a = new Announcement{{known_ + 1ull, t, cutkind::kRequested}, MPI_REQUEST_NULL};
  PMPI_Ibcast(a->data, 3, MPI_UINT64_T, 0, comm_, &a->req);
  announced_.push_back(a);
  apply(known_ + 1, cutkind::kRequested, t);
}

void CutProtocol::complete_announcements(bool all) {
  for (auto it = announced_.begin(); it != announced_.end();) {
    int done = 0;
    if (all) {
      PMPI_Wait(&(*it)->req, MPI_STATUS_IGNORE);
      done = 1;
    } else {
      PMPI_Test(&(*it)->req, &done, MPI_STATUS_IGNORE);
    }
    if (done) {
      delete *it;
      it = announced_.erase(it);
    } else {
      ++it;
    }
  }
}

bool CutProtocol::wants_cut() const {
  const Pipeline& p = *s_.pipeline;
  // A boundary not cut out yet frees the buffer once it is: another one
  // now would only add an empty window.
  if (p.backlog() > 0) return false;
  const std::size_t open = p.open_events();
  ThreadBuffer* b = s_.buffers.at(0);
  if (b != nullptr && static_cast<double>(open) >= kCutFill * static_cast<double>(b->capacity())) return true;
  const double seconds = s_.cfg.epoch_seconds;
  // Test mode: a cut at every opportunity -- at every eligible collective
  // where the program has them (synchronizing cuts), and in code that turns
  // out to be collective-free (none for kCollectiveFreeSeconds, also after
  // collectives before it: a solver's loop after its set-up) as often as the
  // analysis keeps up, until a synchronizing cut comes again.
  if (seconds == 0.0) return last_requested_ || since_boundary() >= kCollectiveFreeSeconds;
  // A synchronizing cut comes about every `seconds` where the program has
  // world-spanning collectives; ask only when that is clearly overdue, and
  // only with events of this rank to analyze (a rank that polled or waited
  // in one call since the last boundary has recorded nothing yet: asking
  // then gave an empty window, e.g. while the partner of a synchronous send
  // polled for 0.5 s before posting its receive).
  return std::isfinite(seconds) && open > 0 &&
         1e-9 * static_cast<double>(monotonic_ns() - last_boundary_ns_) >= 1.2 * seconds;
}

void CutProtocol::test_requests_in() {
  for (;;) {
    int done = 0;
    PMPI_Test(&req_in_req_, &done, MPI_STATUS_IGNORE);
    if (!done) return;
    ++requests_received_;
    // A request names the boundaries its sender knew: announce only if none
    // has been announced since (a stale request is answered already).
    if (req_in_ == known_ && !stopped_) announce(global_now(s_));
    PMPI_Irecv(&req_in_, 1, MPI_UINT64_T, MPI_ANY_SOURCE, kRequestTag, comm_, &req_in_req_);
  }
}

void CutProtocol::poll() {
  if (comm_ == MPI_COMM_NULL) return;
  if (s_.rank == 0) {
    test_requests_in();
    complete_announcements(false);
    if (!stopped_ && wants_cut()) announce(global_now(s_));
    return;
  }
  while (!stopped_ && bcast_req_ != MPI_REQUEST_NULL) {
    int done = 0;
    PMPI_Test(&bcast_req_, &done, MPI_STATUS_IGNORE);
    if (!done) break;
    if (bcast_[0] == kTerminate) {
      stopped_ = true;
      break;
    }
    apply(static_cast<std::uint32_t>(bcast_[0]), static_cast<std::uint8_t>(bcast_[2]), bcast_[1]);
    post_standing_bcast();
  }
  if (req_out_req_ != MPI_REQUEST_NULL) {
    int done = 0;
    PMPI_Test(&req_out_req_, &done, MPI_STATUS_IGNORE);
    if (!done) return;
  }
  if (!stopped_ && requested_after_ != known_ && wants_cut()) {
    requested_after_ = known_;
    req_out_ = known_;
    ++requests_sent_;
    PMPI_Isend(&req_out_, 1, MPI_UINT64_T, 0, kRequestTag, comm_, &req_out_req_);
  }
}

void CutProtocol::announce_now() {
  if (comm_ != MPI_COMM_NULL && s_.rank == 0 && !stopped_) announce(global_now(s_));
}

void CutProtocol::catch_up(std::uint32_t requested_max, std::uint64_t enter_raw) {
  // Every rank is inside the same world-spanning collective: waiting for a
  // broadcast rank 0 has started is allowed here.
  while (s_.rank != 0 && requested_ < requested_max && bcast_req_ != MPI_REQUEST_NULL) {
    PMPI_Wait(&bcast_req_, MPI_STATUS_IGNORE);
    apply(static_cast<std::uint32_t>(bcast_[0]), static_cast<std::uint8_t>(bcast_[2]), bcast_[1], enter_raw);
    post_standing_bcast();
  }
}

double CutProtocol::since_boundary() const { return 1e-9 * static_cast<double>(monotonic_ns() - last_boundary_ns_); }

void CutProtocol::shutdown() {
  if (comm_ == MPI_COMM_NULL) return;
  // After the final boundary nobody announces any more.  Collectives on
  // this communicator come in the same order everywhere: rank 0's last
  // broadcast (nonblocking, to match the standing ones) tells the others so,
  // then a reduction tells rank 0 how many requests are still to receive.
  if (s_.rank == 0) {
    stopped_ = true;
    Announcement end{{kTerminate, 0, 0}, MPI_REQUEST_NULL};
    PMPI_Ibcast(end.data, 3, MPI_UINT64_T, 0, comm_, &end.req);
    complete_announcements(true);
    PMPI_Wait(&end.req, MPI_STATUS_IGNORE);
  } else {
    // The standing broadcast matches the terminating one: sync_cut applied
    // every announcement before it.
    if (bcast_req_ != MPI_REQUEST_NULL) PMPI_Wait(&bcast_req_, MPI_STATUS_IGNORE);
    stopped_ = true;
  }
  unsigned long long sent = requests_sent_, all_sent = 0;
  PMPI_Reduce(&sent, &all_sent, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, comm_);
  if (s_.rank == 0) {
    if (requests_received_ < all_sent) {
      PMPI_Wait(&req_in_req_, MPI_STATUS_IGNORE);
      ++requests_received_;
    }
    for (; requests_received_ < all_sent; ++requests_received_) {
      PMPI_Recv(&req_in_, 1, MPI_UINT64_T, MPI_ANY_SOURCE, kRequestTag, comm_, MPI_STATUS_IGNORE);
    }
    if (req_in_req_ != MPI_REQUEST_NULL) {  // nothing more will come
      PMPI_Cancel(&req_in_req_);
      PMPI_Wait(&req_in_req_, MPI_STATUS_IGNORE);
    }
  } else if (req_out_req_ != MPI_REQUEST_NULL) {
    PMPI_Wait(&req_out_req_, MPI_STATUS_IGNORE);
  }
  PMPI_Comm_free(&comm_);
}

}  // namespace onlinews::rt
