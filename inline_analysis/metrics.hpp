// Metric ids and the catalogue table generated from metrics.def.
#pragma once
#include <array>
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

// Each metric's parent index (-1 for a root), at compile time: the hot
// paths charge a metric and its ancestors without a call per level.
namespace metric_detail {
enum ParentName : int {
#define ONLINEWS_METRIC(id, parent, unit, display, desc) pn_##id,
#include "metrics.def"
#undef ONLINEWS_METRIC
};
constexpr int pn_none = -1;
}  // namespace metric_detail
inline constexpr int kMetricParent[] = {
#define ONLINEWS_METRIC(id, parent, unit, display, desc) metric_detail::pn_##parent,
#include "metrics.def"
#undef ONLINEWS_METRIC
};

// A metric and its ancestors in the metric tree, innermost first.
struct MetricChain {
  static constexpr int kMax = 8;
  std::int16_t m[kMax] = {};
  std::int8_t n = 0;
};
inline constexpr std::array<MetricChain, kMetricCount> kMetricChains = [] {
  std::array<MetricChain, kMetricCount> a{};
  for (int i = 0; i < kMetricCount; ++i) {
    for (int j = i; j >= 0; j = kMetricParent[j]) {
      if (a[i].n == MetricChain::kMax) throw "metrics.def: a metric deeper than MetricChain::kMax";
      a[i].m[a[i].n++] = static_cast<std::int16_t>(j);
    }
  }
  return a;
}();
inline const MetricChain& metric_chain(Metric m) { return kMetricChains[static_cast<std::size_t>(idx(m))]; }

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
