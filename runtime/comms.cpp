#include "comms.hpp"

#include <numeric>

#include "shared_guard.hpp"

namespace onlinews::rt {

constexpr std::uint64_t kWorldGid = 1;
constexpr std::uint64_t kSelfGid = 2;

CommRegistry::CommRegistry(analysis::Definitions& defs)
    : defs_(defs), mixed_(new std::atomic<std::uint8_t>[kMaxIds]) {
  // Under MPI_THREAD_MULTIPLE a thread deciding a cut holds its
  // communicator's record while another registers a communicator.
  recs_.reserve(kMaxIds);
  for (int i = 0; i < kMaxIds; ++i) mixed_[i].store(0, std::memory_order_relaxed);
}

int CommRegistry::allocate() {
  int id = kUnknownComm;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else if (recs_.size() < static_cast<std::size_t>(kMaxIds)) {
    recs_.emplace_back();
    defs_.comms.emplace_back();
    id = static_cast<int>(recs_.size() - 1);
  }
  if (id != kUnknownComm) mixed_[id].store(0, std::memory_order_relaxed);
  return id;
}

void CommRegistry::init(int world_rank, int world_size) {
  world_rank_ = world_rank;
  world_size_ = world_size;
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group_);
  // WORLD
  world_id_ = allocate();
  CommRecord& w = recs_[world_id_];
  w.app = MPI_COMM_WORLD;
  w.in_use = true;
  w.spans_world = true;
  PMPI_Comm_dup(MPI_COMM_WORLD, &w.tool);
  PMPI_Comm_dup(MPI_COMM_WORLD, &w.decide);
  analysis::CommDef& wd = defs_.comms[world_id_];
  wd = {kWorldGid, world_size, world_rank, {}, true};
  wd.world_ranks.resize(static_cast<std::size_t>(world_size));
  std::iota(wd.world_ranks.begin(), wd.world_ranks.end(), 0);
  by_gid_[kWorldGid] = world_id_;
  // SELF: messages to oneself; never analyzed as a collective.
  const int self = allocate();
  CommRecord& s = recs_[self];
  s.app = MPI_COMM_SELF;
  s.in_use = true;
  defs_.comms[self] = {kSelfGid, 1, 0, {world_rank}, true};
  by_handle_[key(MPI_COMM_SELF)] = self;
}

int CommRegistry::add(MPI_Comm c, std::uint32_t boundaries) {
  const int id = add_members(c, boundaries, true);
  if (id != kUnknownComm) {
    SharedGuard guard;
    recs_[static_cast<std::size_t>(id)].app = c;
    by_handle_[key(c)] = id;
  }
  return id;
}

int CommRegistry::add_window(MPI_Win w, MPI_Comm c, std::uint32_t boundaries) {
  const int id = add_members(c, boundaries, false);
  if (id != kUnknownComm) {
    SharedGuard guard;
    by_window_[key(w)] = id;
    defs_.comms[static_cast<std::size_t>(id)].window = true;
  }
  return id;
}

void CommRegistry::mark_window_freed(MPI_Win w, std::uint64_t when) { mark_freed_in(by_window_, key(w), when); }

int CommRegistry::add_members(MPI_Comm c, std::uint32_t boundaries, bool cut_eligible) {
  if (c == MPI_COMM_NULL) return kUnknownComm;
  int inter = 0;
  PMPI_Comm_test_inter(c, &inter);
  if (inter != 0) {  // intercommunicators are recorded as time only
    SharedGuard guard;
    ++untracked_;
    return kUnknownComm;
  }
  // The MPI calls first (collective over c's members), the tables after,
  // under the guard.
  int size = 0, rank = 0;
  PMPI_Comm_size(c, &size);
  PMPI_Comm_rank(c, &rank);
  MPI_Comm tool = MPI_COMM_NULL;
  PMPI_Comm_dup(c, &tool);
  std::vector<int> world_ranks(static_cast<std::size_t>(size)), local(static_cast<std::size_t>(size));
  std::iota(local.begin(), local.end(), 0);
  MPI_Group g;
  PMPI_Comm_group(c, &g);
  PMPI_Group_translate_ranks(g, size, local.data(), world_group_, world_ranks.data());
  PMPI_Group_free(&g);
  // A global id every member agrees on: the leader's world rank and its own
  // creation count (unique without any global counter).  And the boundary
  // from which the analysis takes the communicator into its per-epoch
  // agreements: one past the most boundaries any member knows now.  A member
  // analyzes that epoch only after it learned that boundary, i.e. after it
  // created the communicator; and every collective on it completes after
  // all members created it, so after every boundary a member knew then.
  std::uint64_t v[2] = {rank == 0 ? (static_cast<std::uint64_t>(world_rank_ + 1) << 32) | ++created_ : 0,
                        boundaries};
  PMPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_MAX, tool);
  const std::uint64_t gid = v[0];
  MPI_Comm decide = MPI_COMM_NULL;
  const bool spans_world = cut_eligible && size == world_size_;
  if (spans_world) PMPI_Comm_dup(tool, &decide);

  SharedGuard guard;
  const int id = allocate();
  if (id == kUnknownComm) {  // table full (65535 live communicators): time only
    ++untracked_;
    return kUnknownComm;  // the duplicate is kept: freeing it is collective
  }
  CommRecord& r = recs_[id];
  r = CommRecord{};
  r.in_use = true;
  r.spans_world = spans_world;
  r.tool = tool;
  r.decide = decide;
  analysis::CommDef& d = defs_.comms[id];
  d = analysis::CommDef{};
  d.size = size;
  d.my_rank = rank;
  d.world_ranks = std::move(world_ranks);
  d.gid = gid;
  d.usable = true;
  d.active_from = static_cast<std::uint32_t>(v[1] + 1);
  by_gid_[gid] = id;
  cache_comm_ = MPI_COMM_NULL;
  return id;
}

void CommRegistry::note_neighbors(MPI_Comm c, int id) {
  int kind = MPI_UNDEFINED;
  if (PMPI_Topo_test(c, &kind) != MPI_SUCCESS || kind == MPI_UNDEFINED) return;
  // In MPI's neighbor order (MPI-3.1 §7.6): a Cartesian dimension's source
  // (-1 shift) before its destination (+1), for both lists; a graph's
  // neighbors both ways; a distributed graph's own lists.
  std::vector<int> in, out;
  int rank = 0;
  PMPI_Comm_rank(c, &rank);
  if (kind == MPI_CART) {
    int nd = 0;
    PMPI_Cartdim_get(c, &nd);
    for (int d = 0; d < nd; ++d) {
      int lo = MPI_PROC_NULL, hi = MPI_PROC_NULL;
      PMPI_Cart_shift(c, d, 1, &lo, &hi);
      in.push_back(lo);
      in.push_back(hi);
    }
    out = in;
  } else if (kind == MPI_GRAPH) {
    int n = 0;
    PMPI_Graph_neighbors_count(c, rank, &n);
    in.resize(static_cast<std::size_t>(n));
    if (n > 0) PMPI_Graph_neighbors(c, rank, n, in.data());
    out = in;
  } else if (kind == MPI_DIST_GRAPH) {
    int indeg = 0, outdeg = 0, weighted = 0;
    PMPI_Dist_graph_neighbors_count(c, &indeg, &outdeg, &weighted);
    in.resize(static_cast<std::size_t>(indeg));
    out.resize(static_cast<std::size_t>(outdeg));
    std::vector<int> inw(in.size()), outw(out.size());
    PMPI_Dist_graph_neighbors(c, indeg, in.data(), weighted ? inw.data() : MPI_UNWEIGHTED, outdeg, out.data(),
                              weighted ? outw.data() : MPI_UNWEIGHTED);
  } else {
    return;
  }
  SharedGuard guard;
  analysis::CommDef& d = defs_.comms[static_cast<std::size_t>(id)];
  auto world = [&d](std::vector<int>& v) {
    for (int& r : v) r = r == MPI_PROC_NULL ? -1 : d.world_rank_of(r);
  };
  world(in);
  world(out);
  d.sources = std::move(in);
  d.destinations = std::move(out);
  d.has_topology = true;
}

void CommRegistry::mark_freed(MPI_Comm c, std::uint64_t when) {
  mark_freed_in(by_handle_, key(c), when);
  cache_comm_ = MPI_COMM_NULL;
}

void CommRegistry::mark_freed_in(std::unordered_map<std::uint64_t, int>& by, std::uint64_t k, std::uint64_t when) {
  auto it = by.find(k);
  if (it == by.end()) return;
  recs_[it->second].freed = true;
  recs_[it->second].freed_ns = when;
  by.erase(it);  // MPI may hand out the same handle for a new communicator or window
}

void CommRegistry::publish_freed(std::uint64_t window_end) {
  SharedGuard guard;
  for (std::size_t id = 0; id < recs_.size(); ++id) {
    const CommRecord& r = recs_[id];
    defs_.comms[id].freed = r.in_use && r.freed && r.freed_ns < window_end && r.open_requests == 0;
  }
}

void CommRegistry::retire(const std::vector<std::uint64_t>& gids) {
  std::vector<MPI_Comm> release;
  {
    SharedGuard guard;
    for (const std::uint64_t gid : gids) {
      auto it = by_gid_.find(gid);
      if (it == by_gid_.end()) continue;
      const int id = it->second;
      CommRecord& r = recs_[static_cast<std::size_t>(id)];
      if (!r.in_use || !r.freed) continue;
      for (MPI_Comm c : {r.tool, r.decide}) {
        if (c != MPI_COMM_NULL) release.push_back(c);
      }
      by_gid_.erase(it);
      defs_.comms[static_cast<std::size_t>(id)].usable = false;
      defs_.comms[static_cast<std::size_t>(id)].my_rank = -1;
      r = CommRecord{};
      free_ids_.push_back(id);
    }
  }
  for (MPI_Comm& c : release) PMPI_Comm_free(&c);
}

void CommRegistry::release_all() {
  for (auto& r : recs_) {
    if (r.tool != MPI_COMM_NULL) PMPI_Comm_free(&r.tool);
    if (r.decide != MPI_COMM_NULL) PMPI_Comm_free(&r.decide);
    r = CommRecord{};
  }
  if (world_group_ != MPI_GROUP_NULL) PMPI_Group_free(&world_group_);
  by_handle_.clear();
  by_window_.clear();
  by_gid_.clear();
}

}  // namespace onlinews::rt
