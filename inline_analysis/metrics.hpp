// Metric ids and the catalogue table generated from metrics.def.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace onlinews::analysis {

struct RegionDef;

enum class Metric : std::uint16_t {
#define ONLINEWS_METRIC(id, parent, unit, display, desc) id,
#include "metrics.def"
#undef ONLINEWS_METRIC
  kCount
};
constexpr int kMetricCount = static_cast<int>(Metric::kCount);
constexpr int idx(Metric m) { return static_cast<int>(m); }

struct MetricInfo {
  const char* name;
  int parent;  // index, -1 for a root
  const char* unit;
  const char* display;
  const char* description;
};
const MetricInfo& metric_info(Metric m);
const MetricInfo& metric_info(int index);
// Index of a metric by name, -1 if unknown.
int metric_index(std::string_view name);
// True for metrics measured in seconds (wait states, time).
bool metric_is_time(int index);

// Converts inclusive metric values (one value per metric, `stride` apart:
// values[m * stride + k] for k < stride) to exclusive values in place:
// exclusive(m) = inclusive(m) - sum of inclusive(children of m).
void to_exclusive(double* values, std::size_t stride);
// The reverse, for one value per metric: inclusive(m) = exclusive(m) + sum
// of inclusive(children of m).
void to_inclusive(double* values);

// The time metric a region's exclusive time belongs to: comp, an MPI or
// OpenMP category, or onlinews_overhead (nullptr: comp).
Metric time_category(const RegionDef* r);

}  // namespace onlinews::analysis
