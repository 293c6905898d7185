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

// Bytes (out, in) of this rank in one collective of `size` ranks.
void collective_bytes(const Call& c, int size, int me, std::uint64_t& out, std::uint64_t& in) {
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
      const analysis::CommDef& d = s->defs.comms[c.comm_id];
      std::uint64_t out = 0, in = 0;
      collective_bytes(c, d.size, d.my_rank, out, in);
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

}  // namespace hooks
}  // namespace onlinews::rt
