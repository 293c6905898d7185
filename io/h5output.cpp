#include "h5_file.hpp"

#include <hdf5.h>
#include <unistd.h>

#include "h5_helpers.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace onlinews::io {
namespace {

hid_t epoch_row_type() {
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(EpochRow));
  H5Tinsert(t, "index", HOFFSET(EpochRow, index), H5T_NATIVE_INT64);
  H5Tinsert(t, "t_begin", HOFFSET(EpochRow, t_begin), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "t_end", HOFFSET(EpochRow, t_end), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "events", HOFFSET(EpochRow, events), H5T_NATIVE_INT64);
  H5Tinsert(t, "analysis_seconds", HOFFSET(EpochRow, analysis_seconds), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "cross_epoch_messages", HOFFSET(EpochRow, cross_epoch_messages), H5T_NATIVE_INT64);
  H5Tinsert(t, "dropped_events", HOFFSET(EpochRow, dropped_events), H5T_NATIVE_INT64);
  H5Tinsert(t, "truncated_intervals", HOFFSET(EpochRow, truncated_intervals), H5T_NATIVE_INT64);
  H5Tinsert(t, "cut", HOFFSET(EpochRow, cut), H5T_NATIVE_INT32);
  return t;
}

// Writes a 1-D compound table from rows of a plain struct with char* fields.
// The tables hold strings (variable-length in the file, pointers in
// memory), so HDF5 converts them through buffers it allocates at each write:
// 1 MiB each by default, the background buffer zero-filled, whatever the
// table's size, and glibc returns blocks that large at free, so each table
// paid the page faults again.  Sized to the table instead (at most the
// default; HDF5 converts a larger one in parts): 560 fewer page faults on
// rank 0 of the 2-rank ring, 11 % of its run's (benchmarks/README.md).
bool write_table(hid_t group, const char* name, hid_t type, const void* rows, hsize_t n) {
  hsize_t dims[1] = {n};
  hid_t sp = H5Screate_simple(1, dims, nullptr);
  hid_t d = H5Dcreate2(group, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  // (Room for the larger of the two forms of a row: a string's file form,
  // 16 bytes, is twice its pointer.)
  const hsize_t bytes = std::clamp<hsize_t>(std::max<hsize_t>(n, 1) * 2 * H5Tget_size(type), 4096, hsize_t{1} << 20);
  if (dxpl >= 0) H5Pset_buffer(dxpl, static_cast<std::size_t>(bytes), nullptr, nullptr);
  bool ok = d >= 0 && (n == 0 || H5Dwrite(d, type, H5S_ALL, H5S_ALL, dxpl >= 0 ? dxpl : H5P_DEFAULT, rows) >= 0);
  if (dxpl >= 0) H5Pclose(dxpl);
  if (d >= 0) H5Dclose(d);
  H5Sclose(sp);
  return ok;
}

}  // namespace

H5File::~H5File() { close(); }

namespace {

// Chunks of the epoch tables: 16 epochs by up to 64 locations, no wider
// than the job's power of two (64 columns for a 2-rank job made every
// epoch add 174 metrics x 64 x 8 bytes / 16 to the file: 86 KiB).
constexpr hsize_t kEpochChunkRows = 16;
hsize_t epoch_chunk_columns(int ranks) {
  hsize_t c = 1;
  while (c < 64 && c < static_cast<hsize_t>(std::max(ranks, 1))) c *= 2;
  return c;
}

// Access properties of the epoch tables: a chunk cache of `bytes`, two
// blocks of 16 epochs as wide as the job's locations.  Appends write the last block
// only, and HDF5's default cache (1 MiB per dataset) kept every chunk
// written so far, for 174 open datasets: rank 0's memory grew by ~90 KiB
// per epoch (to ~174 MiB after 2000 epochs).
// At most 256 KiB per dataset (44 MiB for all): beyond 1024 locations an
// append no longer finds its whole block cached and HDF5 reads the
// partial chunks back (docs/scaling.md: the epoch tables at 10^4-10^5 ranks).
// Hash slots of such a cache.  HDF5 1.10 hashes a chunk by (its row of
// chunks << b) ^ its column, b the bits of a row's chunk count rounded up
// to a power of two (a linear index would do as well), modulo the slots:
// the two rows a cache holds are 2^(b+1) consecutive values, and a prime
// above that never puts two of them in one slot (a collision evicts a
// chunk that the next append writes again, and reads back).  HDF5's
// default, 521, is a 4 KiB table per dataset; 67, enough for 32 chunks a
// row, saved ~150 of rank 0's page faults in MPI_Init and ~620 KiB for the
// ~175 tables (a 2-rank job; threads widen the rows: 1 rank of 128
// threads has 128 one-column chunks a row, 257 slots).
std::size_t chunk_cache_slots(hsize_t chunks_per_row) {
  hsize_t span = 2;
  while (span < 2 * chunks_per_row) span *= 2;
  for (const std::size_t prime : {67, 131, 257, 521, 1031, 2053}) {
    if (prime > span) return prime;
  }
  return 4099;  // (256 KiB hold at most 2048 chunks of 16 x 1 doubles)
}
hid_t epoch_dapl(hsize_t bytes, hsize_t chunks_per_row) {
  hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
  H5Pset_chunk_cache(dapl, chunk_cache_slots(chunks_per_row),
                     static_cast<std::size_t>(std::min<hsize_t>(bytes, hsize_t{256} << 10)), 1.0);
  return dapl;
}
// The chunk caches above are as wide as the job's locations, at least
// this many.  Each holds every chunk written until its bytes are used up,
// and a 2-rank job's chunks are 256 bytes: a floor of 64 locations let
// each of the ~175 tables keep 64 chunks, and rank 0's heap grew by
// ~5 MiB over the first 1000 epochs (benchmarks/README.md).
constexpr int kMinCachedColumns = 8;

// HDF5's metadata cache (object headers and chunk index nodes of the epoch
// tables) at a fixed size.  Its default grows with its hit rate up to
// 32 MiB of file images, more in memory: rank 0's heap grew by ~3 MiB over
// the first 1000 epochs of the 2-rank ring and was still growing.  An
// append touches every table's header and the index entries of its newest
// row of chunks: 512 KiB per chunk of a row (`chunk_blocks`), at most 16.
// `id`: the file access properties of a file to create, or an open file
// whose tables grew wider (threads: more locations than ranks).  If HDF5
// refuses, its default stays.
void fixed_metadata_cache(hid_t id, hsize_t chunk_blocks) {
  const bool file = H5Iget_type(id) == H5I_FILE;
  H5AC_cache_config_t c;
  c.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  if ((file ? H5Fget_mdc_config(id, &c) : H5Pget_mdc_config(id, &c)) < 0) return;
  const std::size_t bytes = (std::size_t{512} << 10) * static_cast<std::size_t>(std::clamp<hsize_t>(chunk_blocks, 1, 16));
  c.set_initial_size = true;
  c.initial_size = c.min_size = c.max_size = bytes;
  c.incr_mode = H5C_incr__off;
  c.flash_incr_mode = H5C_flash_incr__off;
  c.decr_mode = H5C_decr__off;
  if (file) {
    H5Fset_mdc_config(id, &c);
  } else {
    H5Pset_mdc_config(id, &c);
  }
}

}  // namespace

bool H5File::create(const std::string& path, const std::vector<MetricDef>& metrics, int ranks,
                    std::string& error) {
  QuietH5 quiet;
  const hsize_t columns = epoch_chunk_columns(ranks);
  const hsize_t width = (static_cast<hsize_t>(std::max(ranks, 1)) + columns - 1) / columns * columns;
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  fixed_metadata_cache(fapl, width / columns);
  chunk_columns_ = static_cast<int>(columns);
  // Chunk B-tree nodes of 2 x 8 entries instead of 2 x 32: the epoch tables
  // (one dataset per metric, ~170) have few chunks each, and every node is
  // allocated whole, in the file and in memory (H5B_create: 3 MB on rank 0
  // of the 2-rank ring; the file grew 1.2 -> 0.5 MB at 20 epochs).
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  H5Pset_istore_k(fcpl, 8);
  compact_storage(fcpl);
  std::string tmp;
  hid_t f = create_unnamed(path, fcpl, fapl, tmp);
  H5Pclose(fcpl);
  H5Pclose(fapl);
  if (f < 0) {
    error = "cannot create '" + path + "'";
    return false;
  }
  file_ = f;
  creating_ = std::move(tmp);
  path_ = path;
  string_attr(f, "format", "onlinews");
  number_attr<std::int64_t>(f, "format_version", H5T_NATIVE_INT64, 1);
  // (Its ~175 links stay in a fractal heap: its blocks get their space at
  // the first flush, long before any close, and kept in the group's header
  // they made each epoch's append write 1.8x as often: 360 against 205
  // writes an epoch, tests/mpi/kill_states.py's run.)
  hid_t g = H5Gcreate2(f, "epochs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  {
    hsize_t dims[1] = {0}, maxd[1] = {H5S_UNLIMITED}, chunk[1] = {64};
    hid_t sp = H5Screate_simple(1, dims, maxd);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, chunk);
    hid_t t = epoch_row_type();
    const hid_t dapl = epoch_dapl(2 * 64 * H5Tget_size(t), 1);
    // The datasets stay open for the appends (opening ~100 of them at the
    // first append took ~4 ms at one application call).
    table_ = H5Dcreate2(g, "table", t, sp, H5P_DEFAULT, dcpl, dapl);
    H5Pclose(dapl);
    H5Tclose(t);
    H5Pclose(dcpl);
    H5Sclose(sp);
  }
  // (At least kMinCachedColumns wide: threads add locations beyond the
  // ranks, and append_epoch_begin reopens the tables with a wider cache.)
  cached_columns_ = static_cast<int>(std::max<hsize_t>(width, kMinCachedColumns));
  const hid_t dapl = epoch_dapl(2 * kEpochChunkRows * static_cast<hsize_t>(cached_columns_) * sizeof(double),
                                (static_cast<hsize_t>(cached_columns_) + columns - 1) / columns);
  metric_names_.clear();
  epoch_sets_.clear();
  for (const auto& m : metrics) {
    hsize_t dims[2] = {0, 0}, maxd[2] = {H5S_UNLIMITED, H5S_UNLIMITED}, chunk[2] = {kEpochChunkRows, columns};
    hid_t sp = H5Screate_simple(2, dims, maxd);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    hid_t d = H5Dcreate2(g, m.name.c_str(), H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, dcpl, dapl);
    string_attr(d, "unit", m.unit);
    string_attr(d, "description", m.description);
    epoch_sets_.push_back(d);
    H5Pclose(dcpl);
    H5Sclose(sp);
    metric_names_.push_back(m.name);
  }
  H5Pclose(dapl);
  H5Gclose(g);
  return true;
}

bool H5File::reopen(const std::string& path) {
  QuietH5 quiet;
  close();
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return false;
  file_ = f;
  return true;
}

void H5File::set_attr(const char* name, const std::string& value) {
  if (file_ >= 0) string_attr(file_, name, value);
}
void H5File::set_attr(const char* name, std::int64_t value) {
  if (file_ >= 0) number_attr(file_, name, H5T_NATIVE_INT64, value);
}
void H5File::set_attr(const char* name, double value) {
  if (file_ >= 0) number_attr(file_, name, H5T_NATIVE_DOUBLE, value);
}

bool H5File::append_epoch(const EpochRow& row, const std::vector<double>& values, int n_locations) {
  bool ok = append_epoch_begin(row, n_locations);
  ok = append_epoch_part(values, n_locations, 0, metric_names_.size()) && ok;
  return append_epoch_end() && ok;
}

bool H5File::append_epoch_begin(const EpochRow& row, int n_locations) {
  if (file_ < 0) return false;
  QuietH5 quiet;
  if (table_ < 0) {  // (a reopened file; or create() could not make the table: close what it made)
    close_epoch_datasets();
    const hid_t dapl = epoch_dapl(2 * 64 * sizeof(EpochRow), 1);  // (its chunks: 64 rows)
    table_ = H5Dopen2(file_, "epochs/table", dapl);
    H5Pclose(dapl);
    open_metric_tables(64);
  }
  row_ = row;  // (written last: append_epoch_end)
  locations_ = std::max(locations_, n_locations);
  if (locations_ > cached_columns_) {  // (an append touching more chunks than its cache holds reads them back)
    int c = std::max(cached_columns_, kMinCachedColumns);
    while (c < locations_) c *= 2;
    open_metric_tables(c);
  }
  return table_ >= 0;
}

void H5File::open_metric_tables(int columns) {
  for (const auto d : epoch_sets_) {
    if (d >= 0) H5Dclose(d);
  }
  epoch_sets_.clear();
  chunk_bytes_.clear();  // (identifiers are reused)
  // The chunks of a row of `columns` (a reopened file's chunk width is not
  // known: for the chunk cache, as if one column each).
  const hsize_t per_chunk = static_cast<hsize_t>(std::max(chunk_columns_, 1));
  const hsize_t chunks = (static_cast<hsize_t>(columns) + per_chunk - 1) / per_chunk;
  const hid_t dapl = epoch_dapl(2 * kEpochChunkRows * static_cast<hsize_t>(columns) * sizeof(double), chunks);
  for (const auto& name : metric_names_) epoch_sets_.push_back(H5Dopen2(file_, ("epochs/" + name).c_str(), dapl));
  H5Pclose(dapl);
  cached_columns_ = columns;
  if (chunk_columns_ > 0) fixed_metadata_cache(file_, chunks);
}

bool H5File::append_epoch_part(const std::vector<double>& values, int n_locations, std::size_t first,
                               std::size_t count) {
  if (file_ < 0 || table_ < 0) return false;
  QuietH5 quiet;
  bool ok = true;
  const hsize_t e = static_cast<hsize_t>(epochs_written_);
  const std::size_t nm = metric_names_.size();
  std::vector<double> line(static_cast<std::size_t>(locations_), 0.0);
  for (std::size_t m = first; m < std::min(nm, first + count); ++m) {
    hsize_t size[2] = {e + 1, static_cast<hsize_t>(locations_)};
    for (int l = 0; l < locations_; ++l) {
      line[static_cast<std::size_t>(l)] =
          l < n_locations ? values[static_cast<std::size_t>(l) * nm + m] : 0.0;
    }
    hsize_t start[2] = {e, 0}, cnt[2] = {1, static_cast<hsize_t>(locations_)};
    ok = slab(epoch_sets_[m], 2, start, cnt, H5T_NATIVE_DOUBLE, line.data(), size) && ok;
    written(epoch_sets_[m]);
  }
  return ok;
}

bool H5File::flush() {
  if (file_ < 0) return false;
  QuietH5 quiet;
  return flush_file();
}

// The epoch's row in /epochs/table, and the `epochs` attribute, go last,
// after the metric rows are on disk: a job killed during the append (or
// during a flush, which HDF5 does not make atomic) leaves the table at the
// finished epochs, its metric datasets with at most one row more, never
// fewer (docs/output.md, "A killed job's file").
bool H5File::append_epoch_end() {
  if (file_ < 0 || table_ < 0) return false;
  QuietH5 quiet;
  bool ok = flush_file();
  const hsize_t e = static_cast<hsize_t>(epochs_written_);
  hsize_t size[1] = {e + 1}, start[1] = {e}, count[1] = {1};
  hid_t t = epoch_row_type();
  ok = slab(table_, 1, start, count, t, &row_, size) && ok;
  written(table_);
  H5Tclose(t);
  ++epochs_written_;
  set_attr("epochs", static_cast<std::int64_t>(epochs_written_));
  return flush_file() && ok;
}

bool H5File::write_definitions(const std::vector<RegionRow>& regions, const std::vector<CallpathRow>& callpaths,
                               const std::vector<LocationRow>& locations, const std::vector<MetricDef>& metrics,
                               const std::vector<CallsiteRow>& callsites) {
  if (file_ < 0) return false;
  QuietH5 quiet;
  hid_t g = create_group(file_, "definitions");
  hid_t s = vlen_string();
  bool ok = g >= 0;
  {
    struct Row {
      const char *name, *kind, *file;
      std::int64_t line;
    };
    std::vector<Row> rows;
    for (const auto& r : regions) rows.push_back({r.name.c_str(), r.kind.c_str(), r.file.c_str(), r.line});
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(Row));
    H5Tinsert(t, "name", HOFFSET(Row, name), s);
    H5Tinsert(t, "kind", HOFFSET(Row, kind), s);
    H5Tinsert(t, "file", HOFFSET(Row, file), s);
    H5Tinsert(t, "line", HOFFSET(Row, line), H5T_NATIVE_INT64);
    ok = write_table(g, "regions", t, rows.data(), rows.size()) && ok;
    H5Tclose(t);
  }
  {
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(CallpathRow));
    H5Tinsert(t, "parent", HOFFSET(CallpathRow, parent), H5T_NATIVE_INT64);
    H5Tinsert(t, "region", HOFFSET(CallpathRow, region), H5T_NATIVE_INT64);
    H5Tinsert(t, "callsite", HOFFSET(CallpathRow, callsite), H5T_NATIVE_INT64);
    ok = write_table(g, "callpaths", t, callpaths.data(), callpaths.size()) && ok;
    H5Tclose(t);
  }
  {
    struct Row {
      const char *function, *file;
      std::int64_t line;
    };
    std::vector<Row> rows;
    for (const auto& c : callsites) rows.push_back({c.function.c_str(), c.file.c_str(), c.line});
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(Row));
    H5Tinsert(t, "function", HOFFSET(Row, function), s);
    H5Tinsert(t, "file", HOFFSET(Row, file), s);
    H5Tinsert(t, "line", HOFFSET(Row, line), H5T_NATIVE_INT64);
    ok = write_table(g, "callsites", t, rows.data(), rows.size()) && ok;
    H5Tclose(t);
  }
  {
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(LocationRow));
    H5Tinsert(t, "rank", HOFFSET(LocationRow, rank), H5T_NATIVE_INT32);
    H5Tinsert(t, "thread", HOFFSET(LocationRow, thread), H5T_NATIVE_INT32);
    ok = write_table(g, "locations", t, locations.data(), locations.size()) && ok;
    H5Tclose(t);
  }
  {
    struct Row {
      const char *name, *display, *unit;
      std::int64_t parent;
      const char* description;
    };
    std::vector<Row> rows;
    for (const auto& m : metrics) {
      rows.push_back({m.name.c_str(), m.display.c_str(), m.unit.c_str(), m.parent, m.description.c_str()});
    }
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(Row));
    H5Tinsert(t, "name", HOFFSET(Row, name), s);
    H5Tinsert(t, "display", HOFFSET(Row, display), s);
    H5Tinsert(t, "unit", HOFFSET(Row, unit), s);
    H5Tinsert(t, "parent", HOFFSET(Row, parent), H5T_NATIVE_INT64);
    H5Tinsert(t, "description", HOFFSET(Row, description), s);
    ok = write_table(g, "metrics", t, rows.data(), rows.size()) && ok;
    H5Tclose(t);
  }
  H5Tclose(s);
  if (g >= 0) H5Gclose(g);
  flush_file();
  return ok;
}

bool H5File::write_topology(const Topology& topo) {
  if (file_ < 0 || (topo.dims.empty() && topo.graph_kind.empty())) return false;
  QuietH5 quiet;
  hid_t g = create_group(file_, "topology");
  bool ok = g >= 0;
  auto ints = [&](const char* name, std::vector<hsize_t> dims, const std::int32_t* data) {
    hid_t sp = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    hid_t d = H5Dcreate2(g, name, H5T_NATIVE_INT32, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ok = d >= 0 && H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0 && ok;
    if (d >= 0) H5Dclose(d);
    H5Sclose(sp);
  };
  if (!topo.dims.empty()) {
    const hsize_t nd = topo.dims.size();
    ints("dims", {nd}, topo.dims.data());
    ints("periods", {nd}, topo.periods.data());
    ints("coords", {topo.coords.size() / nd, nd}, topo.coords.data());
  }
  if (!topo.graph_kind.empty()) {
    ints("graph_edges", {topo.graph_edges.size() / 2, 2}, topo.graph_edges.data());
    string_attr(g, "graph_kind", topo.graph_kind);
  }
  if (g >= 0) H5Gclose(g);
  return ok;
}

void H5File::close_epoch_datasets() {
  if (views_ >= 0) H5Dclose(views_);
  if (pvars_ >= 0) H5Dclose(pvars_);
  views_ = pvars_ = -1;
  if (table_ >= 0) H5Dclose(table_);
  for (const auto d : epoch_sets_) {
    if (d >= 0) H5Dclose(d);
  }
  table_ = -1;
  epoch_sets_.clear();
  chunk_bytes_.clear();
}

// A file whose flush failed is closed with its writes diverted
// (close_kill_safe, divert_writes): the datasets' and the file's closes
// write what they hold, and must not fail.
void H5File::close() {
  if (failed_ && file_ >= 0) divert_writes(file_);
  close_epoch_datasets();
  if (file_ >= 0) {
    failed_ = !close_kill_safe(file_, dirty_bytes_) || failed_;
    dirty_bytes_ = 0;
    file_ = -1;
  }
  if (!creating_.empty()) unlink(creating_.c_str());  // (never published)
  creating_.clear();
}

}  // namespace onlinews::io
