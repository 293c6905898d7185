// The HDF5 implementation of H5Output (internal to io/, in the module
// libonlinews_io.so: only the ranks that write load HDF5).
#pragma once
#include "h5output.hpp"

namespace onlinews::io {

class H5File final : public H5Output {
 public:
  H5File() = default;
  ~H5File() override;
  bool create(const std::string& path, const std::vector<MetricDef>& metrics, int ranks, std::string& error) override;
  bool publish(std::string& error) override;
  bool reopen(const std::string& path) override;
  bool is_open() const override { return file_ >= 0; }
  void set_attr(const char* name, const std::string& value) override;
  void set_attr(const char* name, std::int64_t value) override;
  void set_attr(const char* name, double value) override;
  bool append_epoch(const EpochRow& row, const std::vector<double>& values, int n_locations) override;
  bool append_epoch_begin(const EpochRow& row, int n_locations) override;
  bool append_epoch_part(const std::vector<double>& values, int n_locations, std::size_t first,
                         std::size_t count) override;
  bool append_epoch_end() override;
  bool flush() override;
  std::size_t metric_count() const override { return metric_names_.size(); }
  bool write_definitions(const std::vector<RegionRow>& regions, const std::vector<CallpathRow>& callpaths,
                         const std::vector<LocationRow>& locations, const std::vector<MetricDef>& metrics,
                         const std::vector<CallsiteRow>& callsites) override;
  bool write_topology(const Topology& topo) override;
  bool append_views(const std::vector<double>& values, int n_views, int n_ranks) override;
  bool append_pvars(const std::vector<double>& values, const std::vector<std::string>& names, int n_ranks) override;
  bool write_grid_views(const std::vector<std::string>& names, const Grid& grid,
                        std::vector<double>& epoch_ends) override;
  bool failed() const override { return failed_; }
  void close() override;

 private:
  void close_epoch_datasets();
  // (Re)opens /epochs/<metric> with a chunk cache two blocks of 16 epochs
  // `columns` locations wide.
  void open_metric_tables(int columns);
  std::int64_t file_ = -1;  // hid_t
  std::string creating_, path_;  // until publish(): the temporary name, and the one it gets
  std::vector<std::string> metric_names_;
  // /epochs/table and /epochs/<metric>, open while epochs are appended (an
  // open dataset keeps its chunk cache: an append then touches one chunk).
  std::int64_t table_ = -1;
  std::vector<std::int64_t> epoch_sets_;
  std::int64_t epochs_written_ = 0;
  EpochRow row_{};                // the epoch being appended (its table row goes last)
  int locations_ = 0;
  int cached_columns_ = 0;  // the locations the metric tables' chunk caches hold
  int chunk_columns_ = 0;   // the locations a chunk of them holds (0: a reopened file, not known)
  // Appends values[item * n_ranks + rank] as the current epoch's row of the
  // dataset `group`/`name` [n_epochs, n_items, n_ranks] (created, with the
  // names attribute, at the first row; kept open in `cache`).
  bool append_per_rank(std::int64_t& cache, const char* group, const char* name, const std::vector<double>& values,
                       const std::vector<std::string>& names, int n_items, int n_ranks);
  std::int64_t views_ = -1;  // /views/epochs, open while epochs are appended
  std::int64_t pvars_ = -1;  // /epochs/mpi_t_pvars, likewise
  // The chunk sizes of the datasets written since the last flush (a
  // dataset written twice counts twice: only slack): those chunks may take
  // their space during the flush, after HDF5 has written the end of the
  // file into the superblock, so the flush makes the file that much longer
  // first (h5_flush.cpp, flush_kill_safe).
  std::uint64_t dirty_bytes_ = 0;
  bool failed_ = false;  // a flush failed (failed())
  std::vector<std::pair<std::int64_t, std::uint64_t>> chunk_bytes_;  // per open dataset (asked once)
  void written(std::int64_t d);
  bool flush_file();
};

// /profile (profile_writer.cpp): ModuleApi's write_matrices and write_parallel.
bool write_matrices(const std::string& path, const std::vector<MetricDef>& metrics, std::int64_t n_callpaths,
                    std::int64_t n_locations, const std::function<void(int, std::vector<double>&)>& matrix,
                    std::string& error);
bool write_parallel(const std::string& path, MPI_Comm comm, const std::vector<MetricDef>& metrics,
                    std::int64_t n_callpaths, std::int64_t n_locations, const std::vector<int>& columns,
                    const std::function<void(int, std::vector<double>&)>& fill, std::string& error);

}  // namespace onlinews::io
