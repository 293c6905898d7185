// /profile/<metric> in the module: rank 0 writing the gathered matrices, or
// all ranks through parallel HDF5 (profile.cpp decides and gathers).
#include <hdf5.h>

#include <algorithm>

#include "h5_file.hpp"
#include "h5_helpers.hpp"

namespace onlinews::io {
namespace {

// A matrix of at most this many bytes is written by rank 0 into the
// dataset's header (compact layout): 174 of them (a short run's few call
// paths and ranks) took 3 ms less in MPI_Finalize than deflated chunks,
// whose index and filter buy nothing at this size, and the file came out
// smaller (heat2d on 4 ranks: 588 -> 578 KB).  Parallel HDF5 writes a
// compact dataset's data from every rank alike, so the parallel writer
// keeps chunks.
constexpr hsize_t kCompactBytes = 8192;

// /profile/<metric>: [call paths, locations], deflated chunks of up to
// 256 x 256 (`serial`: compact if small), with its unit and description.
hid_t create_metric(hid_t g, hid_t fs, const MetricDef& metric, hsize_t ncp, hsize_t nloc, bool serial, bool& ok) {
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (serial && ncp > 0 && nloc > 0 && ncp * nloc * sizeof(double) <= kCompactBytes) {
    H5Pset_layout(dcpl, H5D_COMPACT);
  } else if (ncp > 0 && nloc > 0) {
    hsize_t chunk[2] = {ncp < 256 ? ncp : 256, nloc < 256 ? nloc : 256};
    H5Pset_chunk(dcpl, 2, chunk);
    H5Pset_deflate(dcpl, 4);
    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
  }
  hid_t d = H5Dcreate2(g, metric.name.c_str(), H5T_NATIVE_DOUBLE, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  for (const auto& [an, av] : {std::pair<const char*, const std::string*>{"unit", &metric.unit},
                               {"description", &metric.description}}) {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(d, an, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    const char* p = av->c_str();
    ok = H5Awrite(a, t, &p) >= 0 && ok;
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
  }
  return d;
}

}  // namespace

bool write_matrices(const std::string& path, const std::vector<MetricDef>& metrics, std::int64_t n_callpaths,
                    std::int64_t n_locations, const std::function<void(int, std::vector<double>&)>& matrix,
                    std::string& error) {
  QuietH5 quiet;
  const auto ncp = static_cast<hsize_t>(n_callpaths), nloc = static_cast<hsize_t>(n_locations);
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t g = f >= 0 ? create_group(f, "profile") : -1;
  bool ok = g >= 0;
  std::vector<double> values;
  for (std::size_t m = 0; m < metrics.size() && ok; ++m) {
    values.assign(ncp * nloc, 0.0);
    matrix(static_cast<int>(m), values);
    hsize_t dims[2] = {ncp, nloc};
    hid_t fs = H5Screate_simple(2, dims, nullptr);
    hid_t d = create_metric(g, fs, metrics[m], ncp, nloc, true, ok);
    if (d < 0) ok = false;
    if (d >= 0 && ncp > 0 && nloc > 0) {
      ok = H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0 && ok;
    }
    if (d >= 0) H5Dclose(d);
    H5Sclose(fs);
  }
  if (g >= 0) H5Gclose(g);
  if (f >= 0) ok = close_kill_safe(f) && ok;
  if (!ok) error = "writing /profile to '" + path + "' failed";
  return ok;
}

namespace {

// Parallel HDF5 writes the superblock, with its end of file, before the
// file reaches that end: at the close, whose metadata goes out before the
// driver extends the file, and with MPICH's ROMIO already during the
// datasets' writes.  A kill in between left a file up to 5 KiB short of
// it (tests/mpi/kill_states.py, every state of the file seen).  So the
// file is extended first, as flush_kill_safe does for the serial file:
// after the open, by the profile's size and its metadata, and again
// before the close (collectively: MPI_File_set_size needs one size on
// every rank).  The file stays longer than its recorded end, which every
// reader accepts; the serial reopen that marks it complete trims it.
void extend_collectively(hid_t f, MPI_Comm comm, hsize_t more) {
  hsize_t allocated = 0;
  void* handle = nullptr;
  MPI_Offset size = 0;
  long long mine = -1;
  if (H5Fget_filesize(f, &allocated) >= 0 && H5Fget_vfd_handle(f, H5P_DEFAULT, &handle) >= 0 && handle != nullptr &&
      PMPI_File_get_size(*static_cast<MPI_File*>(handle), &size) == MPI_SUCCESS) {
    mine = std::max(static_cast<long long>(allocated + more), static_cast<long long>(size));  // (never shorter)
  }
  long long range[2] = {mine, -mine}, all[2] = {0, 0};  // (max and -min: any rank without a size skips it)
  PMPI_Allreduce(range, all, 2, MPI_LONG_LONG, MPI_MAX, comm);
  if (-all[1] >= 0) PMPI_File_set_size(*static_cast<MPI_File*>(handle), static_cast<MPI_Offset>(all[0]));
}

constexpr hsize_t kMetadataSlack = 16384;    // (what a close's metadata may still take)
constexpr hsize_t kDatasetMetadata = 8192;   // (a metric's header and attributes, generously)

}  // namespace

bool write_parallel(const std::string& path, MPI_Comm comm, const std::vector<MetricDef>& metrics,
                    std::int64_t n_callpaths, std::int64_t n_locations, const std::vector<int>& columns,
                    const std::function<void(int, std::vector<double>&)>& fill, std::string& error) {
  QuietH5 quiet;
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
  H5Pset_all_coll_metadata_ops(fapl, true);
  H5Pset_coll_metadata_write(fapl, true);
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl);
  H5Pclose(fapl);
  if (f < 0) {
    error = "cannot reopen '" + path + "' for the parallel profile write";
    return false;
  }
  bool ok = true;
  const hsize_t nm = metrics.size();
  extend_collectively(f, comm,
                      nm * static_cast<hsize_t>(n_callpaths) * static_cast<hsize_t>(n_locations) * sizeof(double) +
                          nm * kDatasetMetadata + kMetadataSlack);
  hid_t g = create_group(f, "profile");
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
  const hsize_t ncp = static_cast<hsize_t>(n_callpaths), nloc = static_cast<hsize_t>(n_locations);
  const hsize_t k = columns.size();
  std::vector<double> block;
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    hsize_t dims[2] = {ncp, nloc};
    hid_t fs = H5Screate_simple(2, dims, nullptr);
    // (Attributes are metadata: written collectively with identical values.)
    hid_t d = create_metric(g, fs, metrics[m], ncp, nloc, false, ok);
    block.assign(ncp * k, 0.0);
    if (k > 0) fill(static_cast<int>(m), block);
    hid_t ms;
    if (k == 0 || ncp == 0) {
      H5Sselect_none(fs);
      hsize_t one[1] = {1};
      ms = H5Screate_simple(1, one, nullptr);
      H5Sselect_none(ms);
    } else {
      H5Sselect_none(fs);
      for (hsize_t c = 0; c < k; ++c) {
        hsize_t start[2] = {0, static_cast<hsize_t>(columns[c])}, count[2] = {ncp, 1};
        H5Sselect_hyperslab(fs, H5S_SELECT_OR, start, nullptr, count, nullptr);
      }
      // The file selection is traversed in row-major order: callpath, then
      // column ascending; `columns` is ascending, so the block matches.
      hsize_t mdims[2] = {ncp, k};
      ms = H5Screate_simple(2, mdims, nullptr);
    }
    // An empty matrix (a run without one analyzed epoch has no location
    // columns) has nothing to write, and HDF5 fails the write of nothing
    // (the same decision on every rank: the shape is everyone's).
    if (ncp > 0 && nloc > 0) {
      ok = H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, block.empty() ? nullptr : block.data()) >= 0 && ok;
    }
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
  }
  H5Pclose(dxpl);
  H5Gclose(g);
  extend_collectively(f, comm, kMetadataSlack);
  ok = H5Fclose(f) >= 0 && ok;
  int mine = ok ? 1 : 0, all = 0;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  if (all == 0 && rank == 0) error = "writing /profile to '" + path + "' failed";
  return all != 0;
}

}  // namespace onlinews::io
