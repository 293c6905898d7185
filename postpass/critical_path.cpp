// Critical-path indicators (seed 003 §II), computed once at MPI_Finalize from
// the critical-path profile that the epochs accumulated.  With G[c] the
// critical-path time of call path c summed over locations, L[c] a location's
// own share of it, and T[c] a location's processing time in c (time minus
// wait states):
//   critical_path_imbalance  = max(0, (G - avg over locations of T) / G) * L
//   critical_path_activities = min(G, T) where G > 0
//   non_critical_path_activities = max(T - G, 0)
//   critical_imbalance_impact: each location's waiting time (its headroom,
//     sum G - sum T) is spread over the critical-path activities it runs for
//     less than G (in proportion to G - T), summed over locations, and
//     charged to the locations on the path in proportion to L / G;
//   inter_partition_imbalance: the same for activities a location does not
//     run at all (another partition's work); intra = impact - inter.
// Partitions are thus implicit: the ranks that run an activity.
#include <algorithm>

#include "postpass.hpp"

namespace onlinews::postpass {
namespace {

using analysis::Metric;
using analysis::kMetricCount;

}  // namespace

void critical_path_indicators(std::vector<std::vector<double>>& incl, std::int64_t n_callpaths, MPI_Comm comm) {
  const auto ncp = static_cast<std::size_t>(n_callpaths);
  const std::size_t nloc = incl.size();
  auto at = [&](std::size_t l, std::size_t c, Metric m) -> double& { return incl[l][c * kMetricCount + idx(m)]; };

  std::vector<std::vector<double>> T(nloc, std::vector<double>(ncp, 0.0));
  std::vector<double> G(ncp, 0.0), sumT(ncp, 0.0);
  for (std::size_t l = 0; l < nloc; ++l) {
    for (std::size_t c = 0; c < ncp; ++c) {
      double t = at(l, c, Metric::time);
      for (Metric w : kWaitStates) t -= at(l, c, w);
      T[l][c] = std::max(t, 0.0);
      G[c] += at(l, c, Metric::critical_path);
      sumT[c] += T[l][c];
    }
  }
  double locations = static_cast<double>(nloc);
  PMPI_Allreduce(MPI_IN_PLACE, G.data(), static_cast<int>(ncp), MPI_DOUBLE, MPI_SUM, comm);
  PMPI_Allreduce(MPI_IN_PLACE, sumT.data(), static_cast<int>(ncp), MPI_DOUBLE, MPI_SUM, comm);
  PMPI_Allreduce(MPI_IN_PLACE, &locations, 1, MPI_DOUBLE, MPI_SUM, comm);
  double total_G = 0;
  for (double g : G) total_G += g;

  // Headroom spread per location, then summed over all locations.
  std::vector<double> impact(ncp, 0.0), inter(ncp, 0.0);
  for (std::size_t l = 0; l < nloc; ++l) {
    double total_T = 0, excess_sum = 0, absent_sum = 0, covered = 0;
    std::vector<double> excess(ncp, 0.0), absent(ncp, 0.0);
    for (std::size_t c = 0; c < ncp; ++c) {
      total_T += T[l][c];
      if (G[c] <= 0) continue;
      excess[c] = std::max(G[c] - T[l][c], 0.0);
      excess_sum += excess[c];
      if (T[l][c] <= 0) {
        absent[c] = G[c];
        absent_sum += absent[c];
      } else {
        covered += std::max(T[l][c], G[c]);
      }
    }
    const double headroom = std::max(total_G - total_T, 0.0);
    const double absent_target = std::max(total_G - covered, 0.0);
    for (std::size_t c = 0; c < ncp; ++c) {
      if (excess_sum > 0) impact[c] += excess[c] * headroom / excess_sum;
      if (absent_sum > 0) inter[c] += absent[c] * std::min(absent_target, headroom) / absent_sum;
    }
  }
  PMPI_Allreduce(MPI_IN_PLACE, impact.data(), static_cast<int>(ncp), MPI_DOUBLE, MPI_SUM, comm);
  PMPI_Allreduce(MPI_IN_PLACE, inter.data(), static_cast<int>(ncp), MPI_DOUBLE, MPI_SUM, comm);

  for (std::size_t l = 0; l < nloc; ++l) {
    for (std::size_t c = 0; c < ncp; ++c) {
      const double L = at(l, c, Metric::critical_path);
      const double share = G[c] > 0 ? L / G[c] : 0.0;
      const double avg = locations > 0 ? sumT[c] / locations : 0.0;
      at(l, c, Metric::critical_path_imbalance) = G[c] > 0 ? std::max(0.0, (G[c] - avg) / G[c]) * L : 0.0;
      const double activities = G[c] > 0 ? std::min(G[c], T[l][c]) : 0.0;
      const double non_critical = std::max(T[l][c] - G[c], 0.0);
      const double inter_l = inter[c] * share;
      const double intra_l = std::max(impact[c] * share - inter_l, 0.0);
      at(l, c, Metric::critical_path_activities) = activities;
      at(l, c, Metric::inter_partition_imbalance) = inter_l;
      at(l, c, Metric::intra_partition_imbalance) = intra_l;
      at(l, c, Metric::critical_imbalance_impact) = inter_l + intra_l;
      at(l, c, Metric::performance_impact_criticalpath) = activities + inter_l + intra_l;
      at(l, c, Metric::non_critical_path_activities) = non_critical;
      at(l, c, Metric::performance_impact) = activities + inter_l + intra_l + non_critical;
    }
  }
}

}  // namespace onlinews::postpass
