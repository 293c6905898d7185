#include "metrics.hpp"

#include <cstring>
#include <string>

#include "definitions.hpp"

namespace onlinews::analysis {

Metric time_category(const RegionDef* r) {
  if (r == nullptr) return Metric::comp;
  switch (r->kind) {
    case RegionKind::Tool:
      return Metric::onlinews_overhead;
    case RegionKind::Mpi:
      switch (r->group) {
        case MpiGroup::P2P: return Metric::mpi_point2point;
        case MpiGroup::Collective: return Metric::mpi_collective;
        case MpiGroup::Barrier: return Metric::mpi_sync_collective;
        case MpiGroup::InitExit: return Metric::mpi_init_exit;
        case MpiGroup::CommMgmt: return Metric::mpi_mgmt_comm;
        case MpiGroup::WinMgmt: return Metric::mpi_mgmt_win;
        case MpiGroup::RmaActive: return Metric::mpi_rma_sync_active;
        case MpiGroup::RmaPassive: return Metric::mpi_rma_sync_passive;
        case MpiGroup::RmaComm: return Metric::mpi_rma_communication;
        default: return Metric::mpi;
      }
    case RegionKind::Omp:
      switch (r->omp) {
        case OmpGroup::Management: return Metric::omp_management;
        case OmpGroup::Synchronization: return Metric::omp_synchronization;
        case OmpGroup::ImplicitBarrier: return Metric::omp_ibarrier;
        case OmpGroup::ExplicitBarrier: return Metric::omp_ebarrier;
        case OmpGroup::Wait: return Metric::omp_synchronization;  // (in a barrier: category_of)
        case OmpGroup::LockWait: return Metric::omp_lock_contention_api;
        case OmpGroup::LockApi: return Metric::omp_lock_api;
        default: return Metric::comp;
      }
    default:
      return Metric::comp;
  }
}

namespace {

const MetricInfo kInfos[] = {
#define ONLINEWS_METRIC(id, parent, unit, display, desc) {#id, metric_detail::pn_##parent, unit, display, desc},
#include "metrics.def"
#undef ONLINEWS_METRIC
};
static_assert(sizeof(kInfos) / sizeof(kInfos[0]) == kMetricCount, "catalogue size");

}  // namespace

const MetricInfo& metric_info(Metric m) { return kInfos[idx(m)]; }
const MetricInfo& metric_info(int index) { return kInfos[index]; }

int metric_index(std::string_view name) {
  for (int i = 0; i < kMetricCount; ++i) {
    if (name == kInfos[i].name) return i;
  }
  return -1;
}

bool metric_is_time(int index) { return std::strcmp(kInfos[index].unit, "sec") == 0; }

void to_exclusive(double* values, std::size_t stride) {
  // Subtract every child's inclusive value from its parent; read the
  // children from a copy because parents are children of their own parents.
  std::vector<double> incl(values, values + static_cast<std::size_t>(kMetricCount) * stride);
  for (int m = 0; m < kMetricCount; ++m) {
    const int p = kInfos[m].parent;
    if (p < 0) continue;
    for (std::size_t k = 0; k < stride; ++k) {
      values[static_cast<std::size_t>(p) * stride + k] -= incl[static_cast<std::size_t>(m) * stride + k];
    }
  }
}

void to_inclusive(double* values) {
  for (int m = kMetricCount - 1; m >= 0; --m) {  // (children follow their parents)
    if (kInfos[m].parent >= 0) values[kInfos[m].parent] += values[m];
  }
}

}  // namespace onlinews::analysis
