// Hooks of blocking collectives: a CollectiveEnd event with the bytes this
// rank sends and receives (Score-P's conventions, so that values compare with
// Scalasca's; docs/analyses.md), then the cut check.
#include "hooks_common.hpp"
#include "regions.hpp"

namespace onlinews::rt {
namespace {

std::uint64_t sum_bytes(const int* counts, int n, MPI_Datatype t) {
  if (counts == nullptr) return 0;
  std::uint64_t total = 0;
  for (int i = 0; i < n; ++i) total += type_bytes(counts[i], t);
  return total;
}

// Bytes to (or from) the neighbors in `peers` that are not MPI_PROC_NULL
// (-1): `each` per neighbor, or counts[i] of type types[i] / `t`.
std::uint64_t neighbor_bytes(const std::vector<int>& peers, std::uint64_t each, const int* counts,
                             MPI_Datatype t, const MPI_Datatype* types) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < peers.size(); ++i) {
    if (peers[i] < 0) continue;
    const int k = static_cast<int>(i);
    total += counts == nullptr ? each : type_bytes(counts[k], types != nullptr ? types[k] : t);
  }
  return total;
}

// Bytes (out, in) of this rank in one collective on `d`.
void collective_bytes(const Call& c, const analysis::CommDef& d, std::uint64_t& out, std::uint64_t& in) {
  const int size = d.size, me = d.my_rank;
  const auto n = static_cast<std::uint64_t>(size);
  const bool root = c.root == me;
  const std::uint64_t b = type_bytes(c.count, c.type);   // send side / single buffer
  const std::uint64_t rb = type_bytes(c.rcount, c.rtype);
  out = in = 0;
  switch (c.bytes_rule) {
    case CollBytes::None: break;
    case CollBytes::Bcast: out = root ? n * b : 0; in = b; break;
    case CollBytes::Scatter: out = root ? n * b : 0; in = rb; break;
    case CollBytes::Scatterv: out = root ? sum_bytes(c.scounts, size, c.type) : 0; in = rb; break;
    case CollBytes::Gather: out = b; in = root ? n * rb : 0; break;
    case CollBytes::Gatherv: out = b; in = root ? sum_bytes(c.rcounts, size, c.rtype) : 0; break;
    case CollBytes::Reduce: out = b; in = root ? n * b : 0; break;
    case CollBytes::Allreduce: out = in = n * b; break;
    case CollBytes::Allgather: out = n * b; in = n * rb; break;
    case CollBytes::Allgatherv: out = n * b; in = sum_bytes(c.rcounts, size, c.rtype); break;
    case CollBytes::Alltoall: out = n * b; in = n * rb; break;
    case CollBytes::Alltoallv:
      out = sum_bytes(c.scounts, size, c.type);
      in = sum_bytes(c.rcounts, size, c.rtype);
      break;
    case CollBytes::Alltoallw:
      for (int i = 0; i < size && c.scounts != nullptr && c.stypes != nullptr; ++i) out += type_bytes(c.scounts[i], c.stypes[i]);
      for (int i = 0; i < size && c.rcounts != nullptr && c.rtypes != nullptr; ++i) in += type_bytes(c.rcounts[i], c.rtypes[i]);
      break;
    case CollBytes::Reduce_scatter:
      out = sum_bytes(c.rcounts, size, c.type);
      in = c.rcounts != nullptr ? n * type_bytes(c.rcounts[me], c.type) : 0;
      break;
    case CollBytes::Reduce_scatter_block: out = in = n * type_bytes(c.rcount, c.type); break;
    case CollBytes::Scan:
      out = (n - static_cast<std::uint64_t>(me)) * b;
      in = (static_cast<std::uint64_t>(me) + 1) * b;
      break;
    case CollBytes::Exscan:
      out = (n - static_cast<std::uint64_t>(me) - 1) * b;
      in = static_cast<std::uint64_t>(me) * b;
      break;
    case CollBytes::Neighbor_allgather: case CollBytes::Neighbor_alltoall:
      out = neighbor_bytes(d.destinations, b, nullptr, MPI_DATATYPE_NULL, nullptr);
      in = neighbor_bytes(d.sources, rb, nullptr, MPI_DATATYPE_NULL, nullptr);
      break;
    case CollBytes::Neighbor_allgatherv:
      out = neighbor_bytes(d.destinations, b, nullptr, MPI_DATATYPE_NULL, nullptr);
      in = neighbor_bytes(d.sources, 0, c.rcounts, c.rtype, nullptr);
      break;
    case CollBytes::Neighbor_alltoallv:
      out = neighbor_bytes(d.destinations, 0, c.scounts, c.type, nullptr);
      in = neighbor_bytes(d.sources, 0, c.rcounts, c.rtype, nullptr);
      break;
    case CollBytes::Neighbor_alltoallw:
      out = neighbor_bytes(d.destinations, 0, c.scounts, MPI_DATATYPE_NULL, c.stypes);
      in = neighbor_bytes(d.sources, 0, c.rcounts, MPI_DATATYPE_NULL, c.rtypes);
      break;
  }
}

bool rooted(CollBytes r) {
  switch (r) {
    case CollBytes::Bcast: case CollBytes::Scatter: case CollBytes::Scatterv:
    case CollBytes::Gather: case CollBytes::Gatherv: case CollBytes::Reduce:
      return true;
    default:
      return false;
  }
}

}  // namespace

namespace hooks {

void pre_coll(Call& c) {
  call_enter(c);
  resolve_comm(c, true);
}

void post_coll(Call& c, int rc) {
  State* s = state();
  bool eligible = false;
  const std::uint64_t t = raw_now();
  if (rc == MPI_SUCCESS && (c.comm_ok || c.decide_only) && s != nullptr) {
    if (c.comm_ok) {
      std::uint64_t out = 0, in = 0;
      collective_bytes(c, s->defs.comms[c.comm_id], out, in);
      record(Event::collective_end(t, c.comm_id, rooted(c.bytes_rule) ? c.root : -1, out, in));
    }
    const analysis::CollKind k = mpi_coll_kind(c.region);
    eligible = k == analysis::CollKind::Barrier || k == analysis::CollKind::NxN;
  }
  call_leave(t);
  // The cut happens after the application's collective completed and was
  // recorded, before control returns to the application.
  if (eligible) on_eligible_collective(c.comm_id, c.t_enter, t);
}

// Nonblocking collectives: a CollStart now, a CollComplete when Wait*/Test*
// complete the request (hooks_completion.cpp).  A blocking neighborhood
// collective records both.  Neither is ever a cut: only a blocking
// collective spanning all ranks synchronizes them.
void pre_icoll(Call& c) {
  call_enter(c);
  resolve_comm(c, true);
}

void post_icoll(Call& c, int rc) {
  State* s = state();
  const analysis::CommDef* d = s != nullptr && c.comm_ok ? &s->defs.comms[c.comm_id] : nullptr;
  // (A neighborhood collective on a communicator without a topology is
  // erroneous: time only.)
  const bool neighbor = mpi_coll_kind(c.region) == analysis::CollKind::Neighbor;
  if (rc == MPI_SUCCESS && d != nullptr && (!neighbor || d->has_topology)) {
    std::uint64_t out = 0, in = 0;
    collective_bytes(c, *d, out, in);
    const std::int32_t root = rooted(c.bytes_rule) ? c.root : -1;
    const std::uint8_t flags = in > 0 ? evflag::kCollReceives : 0;
    const auto number = static_cast<std::int32_t>(s->comms.rec(c.comm_id).nb_starts++);
    if (c.request == nullptr) {
      const std::uint64_t t = raw_now();
      record(Event::message(EventKind::CollStart, t, c.comm_id, root, number, out, 0, flags));
      record(Event::message(EventKind::CollComplete, t, c.comm_id, root, 0, in, 0));
    } else {
      SharedGuard guard;
      RequestInfo& r = s->requests.add(*c.request, c.comm_id, RequestInfo::kColl, 0, root, 0, in);
      activate(*s, r);
      record(Event::message(EventKind::CollStart, raw_now(), c.comm_id, root, number, out, r.id, flags));
    }
  }
  call_leave();
}

}  // namespace hooks
}  // namespace onlinews::rt
