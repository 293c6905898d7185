#include "comms.hpp"

#include <numeric>

namespace onlinews::rt {

constexpr std::uint64_t kWorldGid = 1;
constexpr std::uint64_t kSelfGid = 2;
constexpr std::size_t kMaxComms = 65535;  // ids are 16-bit in events

int CommRegistry::allocate() {
  if (!free_ids_.empty()) {
    const int id = free_ids_.back();
    free_ids_.pop_back();
    return id;
  }
  if (recs_.size() >= kMaxComms) return kUnknownComm;
  recs_.emplace_back();
  defs_.comms.emplace_back();
  return static_cast<int>(recs_.size() - 1);
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

int CommRegistry::add(MPI_Comm c) {
  if (c == MPI_COMM_NULL) return kUnknownComm;
  int inter = 0;
  PMPI_Comm_test_inter(c, &inter);
  const int id = allocate();
  if (id == kUnknownComm || inter != 0) {
    // Intercommunicators (and a full table) are recorded as time only.
    if (id != kUnknownComm) free_ids_.push_back(id);
    ++untracked_;
    return kUnknownComm;
  }
  int size = 0, rank = 0;
  PMPI_Comm_size(c, &size);
  PMPI_Comm_rank(c, &rank);
  CommRecord& r = recs_[id];
  r = CommRecord{};
  r.app = c;
  r.in_use = true;
  r.spans_world = size == world_size_;
  PMPI_Comm_dup(c, &r.tool);
  analysis::CommDef& d = defs_.comms[id];
  d = analysis::CommDef{};
  d.size = size;
  d.my_rank = rank;
  d.world_ranks.resize(static_cast<std::size_t>(size));
  std::vector<int> local(static_cast<std::size_t>(size));
  std::iota(local.begin(), local.end(), 0);
  MPI_Group g;
  PMPI_Comm_group(c, &g);
  PMPI_Group_translate_ranks(g, size, local.data(), world_group_, d.world_ranks.data());
  PMPI_Group_free(&g);
  // A global id every member agrees on: the leader's world rank and its own
  // creation count (unique without any global counter).
  std::uint64_t gid = 0;
  if (rank == 0) gid = (static_cast<std::uint64_t>(world_rank_ + 1) << 32) | ++created_;
  PMPI_Bcast(&gid, 1, MPI_UINT64_T, 0, r.tool);
  d.gid = gid;
  d.usable = true;
  by_handle_[key(c)] = id;
  by_gid_[gid] = id;
  cache_comm_ = MPI_COMM_NULL;
  return id;
}

void CommRegistry::mark_freed(MPI_Comm c) {
  auto it = by_handle_.find(key(c));
  if (it == by_handle_.end()) return;
  recs_[it->second].freed = true;
  by_handle_.erase(it);  // MPI may hand out the same handle for a new communicator
  cache_comm_ = MPI_COMM_NULL;
}

void CommRegistry::retire_freed() {
  for (std::size_t id = 0; id < recs_.size(); ++id) {
    CommRecord& r = recs_[id];
    if (!r.in_use || !r.freed || r.open_requests > 0) continue;
    if (r.tool != MPI_COMM_NULL) PMPI_Comm_free(&r.tool);
    by_gid_.erase(defs_.comms[id].gid);
    defs_.comms[id].usable = false;
    defs_.comms[id].my_rank = -1;
    r = CommRecord{};
    free_ids_.push_back(static_cast<int>(id));
  }
}

void CommRegistry::release_all() {
  for (auto& r : recs_) {
    if (r.tool != MPI_COMM_NULL) PMPI_Comm_free(&r.tool);
    r = CommRecord{};
  }
  if (world_group_ != MPI_GROUP_NULL) PMPI_Group_free(&world_group_);
  by_handle_.clear();
  by_gid_.clear();
}

}  // namespace onlinews::rt
