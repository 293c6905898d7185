// Requested cuts (DESIGN.md §4): when no synchronizing cut comes in time (a
// buffer passes kCutFill, ONLINEWS_EPOCH_SECONDS is overdue, or always in
// test mode), the ranks agree on a cut by themselves, without ever waiting
// for each other.  Rank 0 coordinates: a rank that needs a cut sends it a
// small request (MPI_Isend); rank 0 picks the time T (now, on the global
// clock) and announces (number, T) with an MPI_Ibcast that every other rank
// keeps posted.  Each rank, when the broadcast has reached it at one of its
// progress points, pushes a Boundary marker carrying T into the MPI thread's
// stream; the pipeline then ends that window at T.
//
// Boundaries are numbered 1, 2, ... on every rank alike: rank 0 numbers the
// requested ones, and a synchronizing cut (decided inside a world-spanning
// collective, epoch.cpp) first brings every rank up to date with the
// requested ones rank 0 announced (all ranks are inside that collective, so
// waiting for the broadcast there is allowed) and then takes the next
// number.  Everything outside such a collective is nonblocking: a rank that
// computes or waits in MPI_Recv for seconds only delays when the others can
// analyze, never what they execute.  Called on the MPI thread only.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

namespace onlinews::rt {

struct State;

// The share of a buffer at which a cut is due: a synchronizing one at the
// next decision (epoch.cpp), else a requested one (CutProtocol::wants_cut).
// While one window is analyzed the next one fills (an analysis-bound
// program: the ring), so two drained windows live next to the buffer: at a
// quarter (DESIGN.md §4: a half), 2-rank ring with 16 MiB buffers, peak RSS
// added 58-65 -> 41-44 MiB on rank 1 and 72 -> 58-64 on rank 0, twice the
// epochs, the ring 3.3x -> 3.1x (smaller windows stay in the caches); an
// eighth saved 7 MiB more but made rank 0 grow 12 % in a run 10x longer
// (HDF5's index of the epoch tables).
constexpr double kCutFill = 0.25;

class CutProtocol {
 public:
  explicit CutProtocol(State& s) : s_(s) {}
  // Collective over MPI_COMM_WORLD (MPI_Init): its communicator and the
  // standing operations.
  void init();
  // At a progress point: applies announced boundaries, and requests a cut
  // (or, on rank 0, announces one) when this rank needs it.
  void poll();
  // Rank 0 (test knob ONLINEWS_TEST_LATE_CUT): announces a cut now.
  void announce_now();
  // Inside a world-spanning synchronizing collective (or MPI_Finalize),
  // after the decision's allreduce told every rank `requested_max`, the
  // largest number of requested boundaries announced: applies those this
  // rank has not seen yet (waiting for them is allowed there), no later
  // than `enter_raw`, this rank's enter of that collective: rank 0 may have
  // announced one while it was still inside the collective that others had
  // left already, and the collective belongs to the window that the
  // synchronizing boundary ends, on every rank ...
  void catch_up(std::uint32_t requested_max, std::uint64_t enter_raw);
  // ... so that every rank takes the same number for the synchronizing
  // boundary, which ends the window at `raw`: right after the Leave of the
  // cut collective (raw clock).
  void sync_cut(std::uint8_t kind, std::uint64_t raw) { apply(known_ + 1, kind, raw); }
  // This rank's contribution to that allreduce.
  std::uint32_t requested_known() const { return requested_; }
  // Seconds since the last boundary was applied here.
  double since_boundary() const;
  std::uint32_t known() const { return known_; }
  // MPI_Finalize, after the last boundary: completes the standing
  // operations (collective over MPI_COMM_WORLD).
  void shutdown();
  std::uint64_t requested_cuts() const { return requested_; }
  std::uint64_t sync_cuts() const { return syncs_; }

 private:
  // `t`: global ns of a requested cut, raw clock of a synchronizing one.
  // `limit_raw` (requested cuts, 0: none): the cut lies no later than that.
  void apply(std::uint32_t number, std::uint8_t kind, std::uint64_t t, std::uint64_t limit_raw = 0);
  void post_standing_bcast();
  void announce(std::uint64_t t);  // rank 0
  bool wants_cut() const;
  void test_requests_in();         // rank 0
  void complete_announcements(bool all);  // rank 0: its broadcasts in flight

  State& s_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::uint32_t known_ = 0;      // boundaries known here (all kinds)
  std::uint32_t requested_ = 0;  // requested boundaries known here (rank 0: announced)
  std::uint64_t syncs_ = 0;
  bool last_requested_ = false;  // the latest boundary was a requested cut (test mode)
  std::uint64_t last_boundary_ns_ = 0;  // monotonic, for the time trigger
  bool stopped_ = false;
  // Standing broadcast (ranks != 0): number, T, flags.
  std::uint64_t bcast_[3] = {};
  MPI_Request bcast_req_ = MPI_REQUEST_NULL;
  // Rank 0: broadcasts in flight (buffers must live until they complete).
  struct Announcement {
    std::uint64_t data[3];
    MPI_Request req;
  };
  std::vector<Announcement*> announced_;
  // This rank's request to rank 0: the number of boundaries it knew.
  std::uint64_t req_out_ = 0;
  MPI_Request req_out_req_ = MPI_REQUEST_NULL;
  std::uint32_t requested_after_ = 0xffffffffu;  // `known_` when it last asked
  std::uint64_t requests_sent_ = 0;
  // Rank 0: the standing receive for requests.
  std::uint64_t req_in_ = 0;
  MPI_Request req_in_req_ = MPI_REQUEST_NULL;
  std::uint64_t requests_received_ = 0;
};

}  // namespace onlinews::rt
