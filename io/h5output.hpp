// Stage header of io/: the HDF5 result file, format version 1 (DESIGN.md §8,
// docs/output.md).  Rank 0 owns the file for everything small (attributes,
// definitions, the per-epoch rows appended and flushed as each epoch ends);
// the /profile matrices, each rank giving its own location columns, are
// gathered to rank 0 up to kGatherBytes in all, else written by all ranks
// together through parallel HDF5 (MPI-IO, collective).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace onlinews::io {

struct EpochRow {
  std::int64_t index = 0;
  double t_begin = 0, t_end = 0;  // seconds since the run's start
  std::int64_t events = 0;
  double analysis_seconds = 0;
  std::int64_t cross_epoch_messages = 0;
  std::int64_t dropped_events = 0;
  std::int64_t truncated_intervals = 0;  // synchronization intervals a requested cut split
  std::int32_t cut = 0;                  // how the window ended: 1 synchronizing, 2 requested, +4 final
};

// A list in a string attribute (names of metrics, views, variables): comma-separated.
inline std::string comma_joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

struct MetricDef {
  std::string name, display, unit, description;
  std::int64_t parent = -1;
};
struct RegionRow {
  std::string name, kind, file;
  std::int64_t line = 0;
};
struct CallpathRow {
  std::int64_t parent = -1, region = 0;
  std::int64_t callsite = -1;  // row of /definitions/callsites (an MPI call's call site), -1: none
};
struct CallsiteRow {
  std::string function, file;  // file empty (and line 0) without debug information
  std::int64_t line = 0;
};
struct LocationRow {
  std::int32_t rank = 0, thread = 0;
};
struct Topology {
  std::vector<std::int32_t> dims, periods;
  std::vector<std::int32_t> coords;  // [ranks][ndims], row-major
  // A graph topology spanning all ranks (MPI_Graph_create, MPI_Dist_graph_*):
  // its directed edges as world-rank pairs (source, destination).
  std::string graph_kind;  // "graph" or "dist_graph"; empty: none
  std::vector<std::int32_t> graph_edges;  // [edges][2]
};

// The process grid of the ParaView view (grid_views.cpp): up to 3 dimensions
// (z, y, x as XDMF orders cells; unused ones 1) and the cell of every rank.
struct Grid {
  std::int64_t dims[3] = {1, 1, 1};
  std::vector<std::int64_t> cell_of_rank;
  std::string source;  // "MPI_Cart_create", "ONLINEWS_GRID", "line of ranks"
};

// The result file, seen from the runtime: the implementation (H5File,
// h5_file.hpp) lives in the module libonlinews_io.so with HDF5, loaded by
// new_h5output() on the ranks that write (module.cpp).
class H5Output {
 public:
  H5Output() = default;
  virtual ~H5Output() = default;
  H5Output(const H5Output&) = delete;
  H5Output& operator=(const H5Output&) = delete;

  // Rank 0.  Creates the file for `path` with the static root attributes and
  // the empty epoch tables, under a temporary name next to it until
  // publish(); `ranks`: the job's size (the tables' chunks are about that
  // wide).
  virtual bool create(const std::string& path, const std::vector<MetricDef>& metrics, int ranks,
                      std::string& error) = 0;
  // Flushes the created file and gives it its name (never overwriting:
  // fails if `path` exists).  A job killed before leaves no file under
  // that name, only the temporary one; after it, a file that opens.
  virtual bool publish(std::string& error) = 0;
  // Rank 0, after the parallel part: opens the finished file to update attributes.
  virtual bool reopen(const std::string& path) = 0;
  virtual bool is_open() const = 0;
  virtual void set_attr(const char* name, const std::string& value) = 0;
  virtual void set_attr(const char* name, std::int64_t value) = 0;
  virtual void set_attr(const char* name, double value) = 0;
  // Appends one epoch: its table row and, per metric, one row of per-location
  // totals (`values[loc * n_metrics + m]`, exclusive); flushes the file.
  virtual bool append_epoch(const EpochRow& row, const std::vector<double>& values, int n_locations) = 0;
  // The same in parts, for a caller that spreads it over short slices of
  // work: begin (takes the row), the metrics [first, first + count) (part),
  // then end: a flush, the table row and the epoch count, a flush.  Until
  // end() the file still says the previous number of epochs, and its table
  // has as many rows.
  virtual bool append_epoch_begin(const EpochRow& row, int n_locations) = 0;
  virtual bool append_epoch_part(const std::vector<double>& values, int n_locations, std::size_t first,
                                 std::size_t count) = 0;
  virtual bool append_epoch_end() = 0;
  // Writes what is set so far to disk (a SIGKILL after it leaves a file
  // that opens, with it).
  virtual bool flush() = 0;
  virtual std::size_t metric_count() const = 0;
  virtual bool write_definitions(const std::vector<RegionRow>& regions, const std::vector<CallpathRow>& callpaths,
                                 const std::vector<LocationRow>& locations, const std::vector<MetricDef>& metrics,
                                 const std::vector<CallsiteRow>& callsites) = 0;
  virtual bool write_topology(const Topology& topo) = 0;
  // Per-rank views of the main metrics for ParaView (grid_views.cpp): one
  // epoch's values[view * n_ranks + rank], appended to /views/epochs
  // [n_epochs, n_views, n_ranks] before append_epoch_end().
  virtual bool append_views(const std::vector<double>& values, int n_views, int n_ranks) = 0;
  // The same for sampled MPI_T performance variables: /epochs/mpi_t_pvars
  // [n_epochs, n_variables, n_ranks], attribute names.
  virtual bool append_pvars(const std::vector<double>& values, const std::vector<std::string>& names, int n_ranks) = 0;
  // At the end (the file reopened): /views/grid [n_epochs, n_views, n_cells]
  // and /views/grid_totals [n_views, n_cells], the views in grid-cell order,
  // and the views' names and the grid as attributes of /views; `epoch_ends`
  // gets the epochs' end times from /epochs/table.
  virtual bool write_grid_views(const std::vector<std::string>& names, const Grid& grid,
                                std::vector<double>& epoch_ends) = 0;
  // A flush of the file failed (a full disk, an exceeded quota): nothing
  // more is written to it, and close() sends what HDF5 still holds to an
  // in-memory file (h5_flush.cpp, divert_writes).
  virtual bool failed() const = 0;
  virtual void close() = 0;
};

// The ParaView sidecar <name>.xdmf of a complete file (xdmf.cpp): a
// temporal collection, one step per epoch at its end time, each view's epoch
// values and run totals on the grid's cells.
bool write_xdmf(const std::string& h5_path, const std::vector<std::string>& views, const Grid& grid,
                const std::vector<double>& epoch_ends, std::string& error);

// /profile/<metric>, all ranks (profile.cpp): each gives its `columns`
// (ascending; every column belongs to one rank) of each metric through
// `fill` (a block [call path][column]).  Where all metrics' matrices
// together are at most kGatherBytes, rank 0 gathers them (one MPI_Gatherv)
// and writes them alone, and no other rank loads HDF5; larger profiles go
// through parallel HDF5 (collective, each rank its columns, the compression
// spread over the ranks), whose ~20 collective operations per metric cost
// seconds where ranks outnumber cores.  Returns false (same on all ranks)
// on failure, with `error` set on rank 0.
constexpr double kGatherBytes = 64.0 * 1024 * 1024;
bool write_profile(const std::string& path, MPI_Comm comm, const std::vector<MetricDef>& metrics,
                   std::int64_t n_callpaths, std::int64_t n_locations, const std::vector<int>& columns,
                   const std::function<void(int, std::vector<double>&)>& fill, std::string& error,
                   bool force_parallel = false);

// A new, unopened result file (module.cpp): loads libonlinews_io.so, and
// with it HDF5, at the first call; nullptr with `error` set if it cannot.
std::unique_ptr<H5Output> new_h5output(std::string& error);
// Loads the module now, if not yet (the same as new_h5output's first call).
bool load_module(std::string& error);
// A function of the libhdf5 this process uses (the module's once loaded,
// else the application's, else nullptr): progress points inside HDF5's own
// MPI calls know it by its text range.
const void* hdf5_function();

}  // namespace onlinews::io
