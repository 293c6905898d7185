#include "clock_sync.hpp"

#include <algorithm>
#include <cmath>

#include "clock.hpp"

namespace onlinews::rt {
namespace {

constexpr int kClockTag = 30310;
constexpr int kRounds = 5;  // the round with the shortest round trip counts

}  // namespace

double ClockSync::local(std::uint64_t mono) const {
  const double m = static_cast<double>(mono);
  if (!skew_.on) return m;
  return m + rank_ * skew_.offset_s * 1e9 + rank_ * skew_.drift_ppm * 1e-6 * (m - mono_ref_);
}

namespace {
constexpr double kBaselineNs = 30e9;  // see ClockSync::ref_
}  // namespace

void ClockSync::init(MPI_Comm comm, int rank, const std::vector<int>& host_of_rank, std::uint64_t mono_ref,
                     const ClockSkew& skew) {
  rank_ = rank;
  mono_ref_ = static_cast<double>(mono_ref);
  skew_ = skew;
  // Domains: one per host (with the test skew, one per rank), numbered like
  // the hosts; each one's leader is its first rank.
  leader_of_domain_.clear();
  for (int r = 0; r < static_cast<int>(host_of_rank.size()); ++r) {
    const int d = skew_.on ? r : host_of_rank[static_cast<std::size_t>(r)];
    if (d == static_cast<int>(leader_of_domain_.size())) leader_of_domain_.push_back(r);
  }
  if (leader_of_domain_.empty()) leader_of_domain_.push_back(0);
  my_domain_ = skew_.on ? rank : host_of_rank[static_cast<std::size_t>(rank)];
  if (domains() <= 1) return;
  measure(comm);
  ref_ = next_ref_ = cur_;  // before the first epoch: one point, a constant offset
  update_map();
}

// One ping-pong series with `peer` (this side sends first): the offset of
// the peer's clock from this one's, at the round with the shortest round
// trip, and that round trip (ns).
std::pair<double, double> ClockSync::ping(MPI_Comm comm, int peer) const {
  double best = -1, off = 0;
  for (int k = 0; k < kRounds; ++k) {
    double t1 = 0;
    const double t0 = local(monotonic_ns());
    PMPI_Send(&t0, 1, MPI_DOUBLE, peer, kClockTag, comm);
    PMPI_Recv(&t1, 1, MPI_DOUBLE, peer, kClockTag, comm, MPI_STATUS_IGNORE);
    const double t2 = local(monotonic_ns());
    if (best < 0 || t2 - t0 < best) {
      best = t2 - t0;
      off = t1 - 0.5 * (t0 + t2);
    }
  }
  return {off, best};
}

void ClockSync::pong(MPI_Comm comm, int peer) const {
  for (int k = 0; k < kRounds; ++k) {
    double t0 = 0;
    PMPI_Recv(&t0, 1, MPI_DOUBLE, peer, kClockTag, comm, MPI_STATUS_IGNORE);
    const double t1 = local(monotonic_ns());
    PMPI_Send(&t1, 1, MPI_DOUBLE, peer, kClockTag, comm);
  }
}

void ClockSync::measure(MPI_Comm comm) {
  // The domains' leaders form a binary tree (domain d's parent is
  // (d - 1) / 2, rank 0's domain the root): each leader measures its
  // parent's offset from its own clock, after it has answered its children
  // (leaves first, so nobody waits in a cycle), and the offsets from rank 0
  // add up along the path.  The measurements of a level run at the same
  // time: log2(domains) sequential rounds instead of one per domain (a star
  // at rank 0 took domains x 5 round trips).  The error of a hop adds up
  // along the path, at most log2(domains) of them.
  const int domains = this->domains();
  // Per domain: its offset from its parent (its clock minus the parent's),
  // then per domain the round trip of that measurement.
  std::vector<double> rel(2 * static_cast<std::size_t>(domains), 0.0);
  std::vector<double> all(rel.size(), 0.0);
  if (leader_of_domain_[static_cast<std::size_t>(my_domain_)] == rank_) {
    const int d = my_domain_;
    for (int c = 2 * d + 1; c <= 2 * d + 2 && c < domains; ++c) pong(comm, leader_of_domain_[static_cast<std::size_t>(c)]);
    if (d > 0) {
      const auto [off, rtt] = ping(comm, leader_of_domain_[static_cast<std::size_t>((d - 1) / 2)]);
      rel[static_cast<std::size_t>(d)] = -off;  // (off: the parent's clock minus this one's)
      rel[static_cast<std::size_t>(domains + d)] = rtt;
    }
  }
  PMPI_Allreduce(rel.data(), all.data(), static_cast<int>(rel.size()), MPI_DOUBLE, MPI_SUM, comm);
  // offsets[d]: domain d's clock minus rank 0's (parents come before their children).
  std::vector<double> offsets(static_cast<std::size_t>(domains), 0.0);
  std::vector<double> errors(static_cast<std::size_t>(domains), 0.0);  // bound, see max_offset_error_seconds
  double worst_rtt = 0;
  for (int d = 1; d < domains; ++d) {
    const auto parent = static_cast<std::size_t>((d - 1) / 2), self = static_cast<std::size_t>(d);
    const double rtt = all[static_cast<std::size_t>(domains + d)];
    offsets[self] = offsets[parent] + all[self];
    errors[self] = errors[parent] + 0.5 * rtt;
    worst_rtt = std::max(worst_rtt, rtt);
  }
  double off = offsets[static_cast<std::size_t>(my_domain_)];
  if (skew_.on) off += (rank_ % 2 == 0 ? 1.0 : -1.0) * skew_.error_us * 1e3;
  cur_ = {local(monotonic_ns()), off};
  max_offset_ = 0;
  for (int d = 0; d < domains; ++d) max_offset_ = std::max(max_offset_, std::fabs(offsets[static_cast<std::size_t>(d)]));
  max_offset_ *= 1e-9;
  max_rtt_ = worst_rtt * 1e-9;
  max_error_ = *std::max_element(errors.begin(), errors.end()) * 1e-9;
}

void ClockSync::sample(MPI_Comm comm) {
  if (domains() <= 1) return;
  measure(comm);
  if (cur_.local - next_ref_.local >= kBaselineNs) {
    ref_ = next_ref_;
    next_ref_ = cur_;
  }
  update_map();
}

void ClockSync::update_map() {
  // local = (1 + k) mono + c, the offset is linear in local between the two
  // points (offset = s local + t), and global = local - offset: affine in mono.
  const double k = skew_.on ? rank_ * skew_.drift_ppm * 1e-6 : 0.0;
  const double c = skew_.on ? rank_ * skew_.offset_s * 1e9 - k * mono_ref_ : 0.0;
  double slope = 0, t = cur_.offset;
  if (cur_.local > ref_.local) {
    slope = (cur_.offset - ref_.offset) / (cur_.local - ref_.local);
    t = cur_.offset - slope * cur_.local;  // through the latest measurement
  }
  gain_ = (1.0 - slope) * (1.0 + k);
  bias_ = (1.0 - slope) * c - t;
}

}  // namespace onlinews::rt
