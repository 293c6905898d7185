// Metric values of one rank: run totals per (location, call path, metric) and
// the current epoch's totals per (location, metric).  Values are inclusive in
// the metric tree while the analysis runs (metrics.def).
#pragma once
#include <cstdint>
#include <vector>

#include "metrics.hpp"

namespace onlinews::analysis {

class Profile {
 public:
  void add(int location, std::uint32_t callpath, Metric m, double v) {
    if (v == 0.0) return;
    Loc& l = loc(location);
    const std::size_t need = (static_cast<std::size_t>(callpath) + 1) * kMetricCount;
    if (l.run.size() < need) l.run.resize(need + 16 * kMetricCount, 0.0);
    l.run[static_cast<std::size_t>(callpath) * kMetricCount + idx(m)] += v;
    l.epoch[idx(m)] += v;
  }
  // Adds `v` to the metrics `m[0..n)` of one call path (a metric and its
  // ancestors): one row lookup for all of them.
  void add_all(int location, std::uint32_t callpath, const std::int16_t* m, int n, double v) {
    if (v == 0.0) return;
    Loc& l = loc(location);
    const std::size_t need = (static_cast<std::size_t>(callpath) + 1) * kMetricCount;
    if (l.run.size() < need) l.run.resize(need + 16 * kMetricCount, 0.0);
    double* row = &l.run[static_cast<std::size_t>(callpath) * kMetricCount];
    for (int i = 0; i < n; ++i) {
      row[m[i]] += v;
      l.epoch[static_cast<std::size_t>(m[i])] += v;
    }
  }
  int locations() const { return static_cast<int>(locs_.size()); }
  // Run total (inclusive) for one call path; 0 if never touched.
  double run_value(int location, std::uint32_t callpath, Metric m) const {
    if (location >= locations()) return 0.0;
    const auto& r = locs_[location].run;
    const std::size_t i = static_cast<std::size_t>(callpath) * kMetricCount + idx(m);
    return i < r.size() ? r[i] : 0.0;
  }
  // All run totals of one location, call-path major (cp * kMetricCount + m).
  const std::vector<double>& run_values(int location) const { return locs_[location].run; }
  // Inclusive totals of the current epoch for one location (kMetricCount values).
  const std::vector<double>& epoch_values(int location) const { return locs_[location].epoch; }
  double epoch_value(int location, Metric m) const {
    return location < locations() ? locs_[location].epoch[idx(m)] : 0.0;
  }
  void reset_epoch() {
    for (auto& l : locs_) l.epoch.assign(kMetricCount, 0.0);
  }
  void ensure_location(int location) { loc(location); }

 private:
  struct Loc {
    std::vector<double> run;
    std::vector<double> epoch = std::vector<double>(kMetricCount, 0.0);
  };
  Loc& loc(int location) {
    if (location >= locations()) locs_.resize(static_cast<std::size_t>(location) + 1);
    return locs_[location];
  }
  std::vector<Loc> locs_;
};

}  // namespace onlinews::analysis
