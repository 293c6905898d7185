// Definitions the analysis needs besides the events: what each region is and
// which ranks each communicator spans.  Plain data, filled by the runtime (or
// by unit tests), read by the replay.  Ids are local to one rank; the postpass
// unifies them across ranks for the output.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace onlinews::analysis {

// Sampled: a function found by ONLINEWS_SAMPLING (runtime/sample_placer.hpp),
// visited where consecutive samples fell into it.
enum class RegionKind : std::uint8_t { Root, User, Mpi, Omp, Tool, Sampled };

// Which time metric an MPI call's time belongs to.
enum class MpiGroup : std::uint8_t {
  None,       // not an MPI call
  P2P,        // point-to-point calls, Wait*/Test*, probes
  Collective, // communicating collectives
  Barrier,    // MPI_Barrier
  InitExit,   // MPI_Init, MPI_Init_thread, MPI_Finalize
  CommMgmt,   // communicator, group and topology management
  WinMgmt,    // window creation and release
  RmaActive,  // active-target RMA synchronization: fence, post/start/complete/wait/test
  RmaPassive, // passive-target RMA synchronization: lock/unlock, flush, sync
  RmaComm,    // RMA operations: Put, Get, Accumulate, atomics
  Other,      // everything else the wrappers record (nonblocking collectives, ...)
};

// How a collective synchronizes, which selects its wait-state pattern.
enum class CollKind : std::uint8_t {
  None,
  Barrier,
  NxN,       // Allreduce, Allgather(v), Alltoall(v/w), Reduce_scatter(_block)
  OneToN,    // Bcast, Scatter(v): data flows from the root
  NToOne,    // Reduce, Gather(v): data flows to the root
  Scan,      // Scan
  Exscan,    // Exscan
  Init,      // MPI_Init / MPI_Init_thread pseudo-collective on WORLD
  Finalize,  // MPI_Finalize pseudo-collective on WORLD
  WinCreate, // MPI_Win_create/_allocate/_allocate_shared/_create_dynamic, on the window
  WinFree,   // MPI_Win_free, on the window
  Fence,     // MPI_Win_fence, on the window
  Neighbor,  // neighborhood collectives: only the neighbors in the topology take part
};

// Which time metric an OpenMP construct's exclusive time belongs to
// (ompt/constructs.def).
enum class OmpGroup : std::uint8_t {
  None,
  Management,
  Synchronization,
  ImplicitBarrier,
  ExplicitBarrier,
  Wait,
  Critical,
  LockWait,
  LockApi,
  Idle,
  Team,  // an implicit task: a thread's part of its team (Enter carries the team size)
  Work
};

namespace region_attr {
constexpr std::uint8_t kSendrecv = 1;      // combined send+receive call
constexpr std::uint8_t kBlockingSend = 2;  // MPI_Send / MPI_Ssend: may be a Late Receiver
constexpr std::uint8_t kCompletion = 4;    // MPI_Wait* / MPI_Test*
constexpr std::uint8_t kMultiCompletion = 8;  // Waitall / Waitsome: one wait per call
constexpr std::uint8_t kStartsSend = 16;      // records a send's start after returning (gen_wrappers.py)
}  // namespace region_attr

struct RegionDef {
  std::string name;
  RegionKind kind = RegionKind::User;
  MpiGroup group = MpiGroup::None;
  CollKind coll = CollKind::None;
  std::uint8_t attrs = 0;
  std::string file;
  int line = 0;
  OmpGroup omp = OmpGroup::None;  // RegionKind::Omp
};

struct CommDef {
  std::uint64_t gid = 0;          // identical on all members (runtime/comms)
  int size = 0;
  int my_rank = -1;               // this process's rank in the communicator
  std::vector<int> world_ranks;   // member i's rank in MPI_COMM_WORLD
  bool usable = true;             // false: intercommunicator or unknown (time only)
  bool window = false;            // an RMA window (registered as a communicator: runtime/comms.hpp)
  // Used by a thread whose RMA calls / collectives are not analyzed
  // (runtime/comms.hpp): those are left out.
  bool mixed_rma = false, mixed_collective = false;
  bool freed = false;             // freed by the application, requests done: may be released
  // First boundary whose epoch (the one it ends) takes this communicator
  // into the per-communicator agreements: every member has created it by
  // then, and none of its collective instances lies in an earlier epoch
  // (runtime/comms.cpp).  0 for communicators that exist from the start.
  std::uint32_t active_from = 0;
  // A communicator with a process topology (Cartesian, graph, distributed
  // graph): the world ranks its neighborhood collectives receive from and
  // send to, in MPI's order, -1 for MPI_PROC_NULL (empty: no topology).
  std::vector<int> sources{}, destinations{};
  bool has_topology = false;
  int world_rank_of(int r) const {
    return (r >= 0 && r < static_cast<int>(world_ranks.size())) ? world_ranks[r] : -1;
  }
  // The communicator rank of world rank `w` (-1: not a member).
  int rank_of_world(std::int64_t w) const {
    for (int r = 0; r < size && r < static_cast<int>(world_ranks.size()); ++r) {
      if (world_ranks[static_cast<std::size_t>(r)] == w) return r;
    }
    return -1;
  }
};

struct Definitions {
  int world_rank = 0;
  int world_size = 1;
  std::vector<RegionDef> regions;  // indexed by region id
  std::vector<CommDef> comms;      // indexed by local communicator id
  // Groups of MPI_Win_post/MPI_Win_start (by group id): ranks in the
  // window's communicator, interned by the runtime.
  std::vector<std::vector<int>> groups;
  // Standard-mode sends larger than this are treated as synchronizing (Late
  // Receiver); per destination: same host or another host.
  std::uint64_t eager_limit_local = 4096;
  std::uint64_t eager_limit_remote = 65536;
  std::vector<int> host_of_rank;   // world rank -> host index (empty: all on one host)
  // MPI_THREAD_MULTIPLE: MPI calls of several threads may overlap in time
  // (below it they cannot, and concurrency.cpp has nothing to look for).
  bool threads_share_mpi = false;

  const RegionDef* region(std::uint32_t id) const {
    return id < regions.size() ? &regions[id] : nullptr;
  }
  const CommDef* comm(std::uint16_t id) const {
    return id < comms.size() ? &comms[id] : nullptr;
  }
  std::uint64_t eager_limit_to(int world_dest) const {
    if (host_of_rank.empty()) return eager_limit_local;
    if (world_dest < 0 || world_dest >= static_cast<int>(host_of_rank.size())) return eager_limit_remote;
    return host_of_rank[world_dest] == host_of_rank[world_rank] ? eager_limit_local : eager_limit_remote;
  }
};

}  // namespace onlinews::analysis
