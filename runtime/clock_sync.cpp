#include "clock_sync.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

#include "clock.hpp"

namespace onlinews::rt {
namespace {

constexpr int kClockTag = 30310;
constexpr int kRounds = 5;  // the round with the shortest round trip counts

}  // namespace

bool parse_skew(const std::string& text, SkewSpec& out) {
  double v[3] = {0, 0, 0};
  int n = 0;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (n == 3) return false;
    char* end = nullptr;
    const double d = std::strtod(item.c_str(), &end);
    if (item.empty() || end == item.c_str() || *end != '\0' || !std::isfinite(d)) return false;
    v[n++] = d;
  }
  if (n < 2 || std::fabs(v[0]) > 1e6 || std::fabs(v[1]) > 1e5 || std::fabs(v[2]) > 1e6) return false;
  out = {v[0], v[1], v[2], true};
  return true;
}

double ClockSync::local(std::uint64_t mono) const {
  const double m = static_cast<double>(mono);
  if (!skew_.on) return m;
  return m + rank_ * skew_.offset_s * 1e9 + rank_ * skew_.drift_ppm * 1e-6 * (m - mono_ref_);
}

double ClockSync::local_now() const { return local(monotonic_ns()); }

std::string ClockSync::init(MPI_Comm comm, int rank, const std::vector<int>& host_of_rank, std::uint64_t mono_ref) {
  rank_ = rank;
  mono_ref_ = static_cast<double>(mono_ref);
  // The knob is rank 0's (like every setting); one bad value, one warning.
  std::string warning;
  double spec[4] = {0, 0, 0, 0};
  if (rank == 0) {
    const char* env = std::getenv("ONLINEWS_TEST_CLOCK_SKEW");
    SkewSpec k;
    if (env != nullptr && *env != '\0') {
      if (parse_skew(env, k)) {
        spec[0] = k.offset_s, spec[1] = k.drift_ppm, spec[2] = k.error_us, spec[3] = 1;
      } else {
        warning = std::string("ONLINEWS_TEST_CLOCK_SKEW='") + env +
                  "' is not valid (expected OFFSET_s,DRIFT_ppm[,ERROR_us], e.g. 0.5,100,20); clocks are not skewed";
      }
    }
  }
  PMPI_Bcast(spec, 4, MPI_DOUBLE, 0, comm);
  if (spec[3] != 0) skew_ = {spec[0], spec[1], spec[2], true};

  // Domains: one per host, numbered in order of their first rank; with the
  // test skew every rank is its own.
  const int size = static_cast<int>(host_of_rank.size());
  domain_of_rank_.assign(static_cast<std::size_t>(size), 0);
  leader_of_domain_.clear();
  std::map<int, int> dom;
  for (int r = 0; r < size; ++r) {
    const int key = skew_.on ? r : host_of_rank[static_cast<std::size_t>(r)];
    auto [it, fresh] = dom.emplace(key, static_cast<int>(leader_of_domain_.size()));
    if (fresh) leader_of_domain_.push_back(r);
    domain_of_rank_[static_cast<std::size_t>(r)] = it->second;
  }
  domains_ = std::max(1, static_cast<int>(leader_of_domain_.size()));
  sample(comm);
  prev_ = cur_;
  return warning;
}

void ClockSync::measure(MPI_Comm comm) {
  // offsets[d]: domain d's clock minus rank 0's, at about the same moment.
  std::vector<double> offsets(static_cast<std::size_t>(domains_) + 1, 0.0);
  const int my_domain = domain_of_rank_.empty() ? 0 : domain_of_rank_[static_cast<std::size_t>(rank_)];
  if (rank_ == 0) {
    double worst_rtt = 0;
    for (int d = 1; d < domains_; ++d) {
      const int peer = leader_of_domain_[static_cast<std::size_t>(d)];
      double best = -1, off = 0;
      for (int k = 0; k < kRounds; ++k) {
        double t1 = 0;
        const double t0 = local_now();
        PMPI_Send(&t0, 1, MPI_DOUBLE, peer, kClockTag, comm);
        PMPI_Recv(&t1, 1, MPI_DOUBLE, peer, kClockTag, comm, MPI_STATUS_IGNORE);
        const double t2 = local_now();
        if (best < 0 || t2 - t0 < best) {
          best = t2 - t0;
          off = t1 - 0.5 * (t0 + t2);
        }
      }
      offsets[static_cast<std::size_t>(d)] = off;
      worst_rtt = std::max(worst_rtt, best);
    }
    offsets[static_cast<std::size_t>(domains_)] = worst_rtt;
  } else if (leader_of_domain_[static_cast<std::size_t>(my_domain)] == rank_) {
    for (int k = 0; k < kRounds; ++k) {
      double t0 = 0;
      PMPI_Recv(&t0, 1, MPI_DOUBLE, 0, kClockTag, comm, MPI_STATUS_IGNORE);
      const double t1 = local_now();
      PMPI_Send(&t1, 1, MPI_DOUBLE, 0, kClockTag, comm);
    }
  }
  PMPI_Bcast(offsets.data(), domains_ + 1, MPI_DOUBLE, 0, comm);
  double off = offsets[static_cast<std::size_t>(my_domain)];
  if (skew_.on) off += (rank_ % 2 == 0 ? 1.0 : -1.0) * skew_.error_us * 1e3;
  cur_ = {local_now(), off};
  max_offset_ = 0;
  for (int d = 0; d < domains_; ++d) max_offset_ = std::max(max_offset_, std::fabs(offsets[static_cast<std::size_t>(d)]));
  max_offset_ *= 1e-9;
  max_rtt_ = offsets[static_cast<std::size_t>(domains_)] * 1e-9;
}

void ClockSync::sample(MPI_Comm comm) {
  if (domains_ <= 1) return;
  prev_ = cur_;
  measure(comm);
}

std::uint64_t ClockSync::to_global(std::uint64_t mono_ns) const {
  if (domains_ <= 1) return mono_ns;
  const double l = local(mono_ns);
  double off = cur_.offset;
  if (cur_.local > prev_.local) {
    off = prev_.offset + (cur_.offset - prev_.offset) * (l - prev_.local) / (cur_.local - prev_.local);
  }
  const double g = l - off;
  return g > 0 ? static_cast<std::uint64_t>(std::llround(g)) : 0;
}

}  // namespace onlinews::rt
