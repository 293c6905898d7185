// The process grid and the per-rank views for ParaView (io/grid_views.cpp)
// and the report's heat map: which topology the application created, the
// views of the main metrics per epoch, and at MPI_Finalize the grid.
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>

#include "inline_analysis/metrics.hpp"
#include "output_grid.hpp"
#include "postpass/postpass.hpp"

namespace onlinews::rt {
namespace {

using analysis::Metric;

// The views, declared once: name (the ParaView array; "total_<name>" for
// the run's total) and the metrics it sums, inclusive.  "waiting" sums the
// wait states (postpass' lists) and "delay_longterm" the long-term delay
// costs (resolved by name in view_metrics()).
struct View {
  const char* name;
  std::initializer_list<Metric> metrics;
};
const View kViews[] = {
    {"comp", {Metric::comp}},
    {"mpi", {Metric::mpi}},
    {"waiting", {}},
    {"mpi_latesender", {Metric::mpi_latesender}},
    {"mpi_latereceiver", {Metric::mpi_latereceiver}},
    {"mpi_barrier_wait", {Metric::mpi_barrier_wait}},
    {"mpi_wait_nxn", {Metric::mpi_wait_nxn}},
    {"omp_ibarrier_wait", {Metric::omp_ibarrier_wait}},
    {"omp_idle_threads", {Metric::omp_idle_threads}},
    {"delay", {Metric::delay}},
    {"delay_longterm", {}},
    {"critical_path", {Metric::critical_path}},
    {"onlinews_overhead", {Metric::onlinews_overhead}},
};
constexpr int kViewCount = static_cast<int>(std::size(kViews));

// Per view, the metric indices it sums.
const std::vector<std::vector<int>>& view_metrics() {
  static const std::vector<std::vector<int>> table = [] {
    std::vector<std::vector<int>> t;
    for (const View& v : kViews) {
      std::vector<int> ms;
      for (Metric m : v.metrics) ms.push_back(analysis::idx(m));
      if (std::string(v.name) == "waiting") {
        for (Metric m : postpass::kWaitStates) ms.push_back(analysis::idx(m));
        for (Metric m : postpass::kOmpWaits) ms.push_back(analysis::idx(m));
      } else if (std::string(v.name) == "delay_longterm") {
        for (int m = 0; m < analysis::kMetricCount; ++m) {
          const std::string name = analysis::metric_info(m).name;
          if (name.rfind("delay", 0) == 0 && name.size() > 9 && name.compare(name.size() - 9, 9, "_longterm") == 0) {
            ms.push_back(m);
          }
        }
      }
      t.push_back(std::move(ms));
    }
    return t;
  }();
  return table;
}

}  // namespace

const std::vector<std::string>& view_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const View& v : kViews) n.emplace_back(v.name);
    return n;
  }();
  return names;
}

void note_topology(State& s, MPI_Comm comm, int id) {
  const analysis::CommDef* def = s.defs.comm(static_cast<std::uint32_t>(id));
  if (def == nullptr || def->size != s.size) return;  // (spanning all ranks only)
  int kind = MPI_UNDEFINED;
  if (PMPI_Topo_test(comm, &kind) != MPI_SUCCESS) return;
  if (kind == MPI_CART && !s.have_topology) {
    int nd = 0;
    PMPI_Cartdim_get(comm, &nd);
    if (nd <= 0) return;
    std::vector<int> dims(static_cast<std::size_t>(nd)), periods(static_cast<std::size_t>(nd)),
        coords(static_cast<std::size_t>(nd));
    PMPI_Cart_get(comm, nd, dims.data(), periods.data(), coords.data());
    s.have_topology = true;
    s.topology.dims.assign(dims.begin(), dims.end());
    s.topology.periods.assign(periods.begin(), periods.end());
    s.my_coords.assign(coords.begin(), coords.end());
  } else if ((kind == MPI_GRAPH || kind == MPI_DIST_GRAPH) && s.topology.graph_kind.empty()) {
    s.topology.graph_kind = kind == MPI_GRAPH ? "graph" : "dist_graph";
    s.graph_out = def->destinations;  // (world ranks: CommRegistry::note_neighbors read them)
  }
}

std::vector<double> epoch_views(const State& s, const std::vector<double>& matrix) {
  using analysis::kMetricCount;
  std::vector<double> out(static_cast<std::size_t>(kViewCount) * static_cast<std::size_t>(s.size), 0.0);
  std::vector<double> incl(kMetricCount);
  const auto& vm = view_metrics();
  for (std::size_t col = 0; col < s.locations.size() && (col + 1) * kMetricCount <= matrix.size(); ++col) {
    const int rank = s.locations[col].rank;
    if (rank < 0 || rank >= s.size) continue;
    std::copy(matrix.begin() + static_cast<std::ptrdiff_t>(col * kMetricCount),
              matrix.begin() + static_cast<std::ptrdiff_t>((col + 1) * kMetricCount), incl.begin());
    analysis::to_inclusive(incl.data());
    for (int v = 0; v < kViewCount; ++v) {
      double sum = 0;
      for (int m : vm[static_cast<std::size_t>(v)]) sum += incl[static_cast<std::size_t>(m)];
      out[static_cast<std::size_t>(v) * static_cast<std::size_t>(s.size) + static_cast<std::size_t>(rank)] += sum;
    }
  }
  return out;
}

int view_count() { return kViewCount; }

void gather_topology(State& s) {
  // Cartesian: every rank's coordinates.
  int have = s.have_topology ? 1 : 0, all = 0;
  PMPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, s.tool_world);
  s.have_topology = all != 0;
  if (s.have_topology) {
    const int nd = static_cast<int>(s.topology.dims.size());
    s.my_coords.resize(static_cast<std::size_t>(nd), 0);
    s.topology.coords.resize(s.rank == 0 ? static_cast<std::size_t>(nd) * s.size : 0);
    PMPI_Gather(s.my_coords.data(), nd, MPI_INT32_T, s.topology.coords.data(), nd, MPI_INT32_T, 0, s.tool_world);
  }
  // Graph: every rank's out-edges.
  have = s.topology.graph_kind.empty() ? 0 : 1;
  PMPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, s.tool_world);
  if (all == 0) {
    s.topology.graph_kind.clear();
    return;
  }
  const int n = static_cast<int>(s.graph_out.size());
  std::vector<int> counts(s.rank == 0 ? static_cast<std::size_t>(s.size) : 0), displs(counts.size());
  PMPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, s.tool_world);
  std::vector<int> dest;
  if (s.rank == 0) {
    int total = 0;
    for (int r = 0; r < s.size; ++r) {
      displs[static_cast<std::size_t>(r)] = total;
      total += counts[static_cast<std::size_t>(r)];
    }
    dest.resize(static_cast<std::size_t>(total));
  }
  PMPI_Gatherv(s.graph_out.data(), n, MPI_INT, dest.data(), counts.data(), displs.data(), MPI_INT, 0, s.tool_world);
  if (s.rank != 0) return;
  s.topology.graph_edges.clear();
  for (int r = 0; r < s.size; ++r) {
    for (int k = 0; k < counts[static_cast<std::size_t>(r)]; ++k) {
      s.topology.graph_edges.push_back(r);
      s.topology.graph_edges.push_back(dest[static_cast<std::size_t>(displs[static_cast<std::size_t>(r)] + k)]);
    }
  }
}

io::Grid decide_grid(const State& s) {
  io::Grid g;
  g.cell_of_rank.resize(static_cast<std::size_t>(s.size));
  std::iota(g.cell_of_rank.begin(), g.cell_of_rank.end(), 0);
  // ONLINEWS_GRID=AxB[xC]: the user's grid, ranks in row-major order.
  if (!s.cfg.grid.empty()) {
    std::vector<long> d;
    const char* p = s.cfg.grid.c_str();
    while (*p != '\0') {
      char* end = nullptr;
      const long v = std::strtol(p, &end, 10);
      if (end == p || v <= 0) break;
      d.push_back(v);
      p = end;
      if (*p == 'x' || *p == 'X') ++p;
    }
    long prod = 1;
    for (long v : d) prod *= v;
    if (*p == '\0' && !d.empty() && d.size() <= 3 && prod == s.size) {
      for (std::size_t i = 0; i < d.size(); ++i) g.dims[3 - d.size() + i] = d[i];
      g.source = "ONLINEWS_GRID";
      return g;
    }
    log_warning("ONLINEWS_GRID=" + s.cfg.grid + " is not AxB or AxBxC with " + std::to_string(s.size) +
                " cells in all (the number of ranks): using the default grid");
  }
  // The first Cartesian communicator spanning all ranks: a rank's cell from
  // its coordinates (reordered communicators too); beyond 3 dimensions the
  // last ones are folded into the third.
  const std::size_t nd = s.topology.dims.size();
  if (s.have_topology && nd > 0 && s.topology.coords.size() == nd * static_cast<std::size_t>(s.size)) {
    std::int64_t d3[3] = {1, 1, 1};
    for (std::size_t i = 0; i < nd; ++i) d3[std::min<std::size_t>(i + (nd < 3 ? 3 - nd : 0), 2)] *= s.topology.dims[i];
    if (d3[0] * d3[1] * d3[2] == s.size) {
      for (int r = 0; r < s.size; ++r) {
        std::int64_t cell = 0;
        for (std::size_t i = 0; i < nd; ++i) cell = cell * s.topology.dims[i] + s.topology.coords[r * nd + i];
        g.cell_of_rank[static_cast<std::size_t>(r)] = cell;
      }
      std::copy(d3, d3 + 3, g.dims);
      g.source = "MPI_Cart_create";
      return g;
    }
  }
  g.dims[2] = s.size;
  g.source = "line of ranks";
  return g;
}

}  // namespace onlinews::rt
