// /profile/<metric>, gathered to rank 0 or through parallel HDF5.
#include <hdf5.h>

#include <algorithm>
#include <fstream>

#include "h5output.hpp"

namespace onlinews::io {
namespace {

// /profile/<metric>: [call paths, locations], deflated chunks of up to
// 256 x 256, with its unit and description.
hid_t create_metric(hid_t g, hid_t fs, const MetricDef& metric, hsize_t ncp, hsize_t nloc, bool& ok) {
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (ncp > 0 && nloc > 0) {
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

// Rank 0 writes what every rank sent it, serially (in batches of metrics of
// at most kGatherBytes at rank 0; write_profile sends only profiles that
// fit one batch).
bool write_gathered(const std::string& path, MPI_Comm comm, const std::vector<MetricDef>& metrics,
                    std::int64_t n_callpaths, std::int64_t n_locations, const std::vector<int>& columns,
                    const std::function<void(int, std::vector<double>&)>& fill, std::string& error) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  const auto ncp = static_cast<std::size_t>(n_callpaths), nloc = static_cast<std::size_t>(n_locations);
  const int k = static_cast<int>(columns.size());
  // Every rank's columns, at rank 0.
  std::vector<int> ks(rank == 0 ? static_cast<std::size_t>(size) : 0), displs, all_columns;
  PMPI_Gather(&k, 1, MPI_INT, ks.data(), 1, MPI_INT, 0, comm);
  int total = 0;
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      displs.push_back(total);
      total += ks[static_cast<std::size_t>(r)];
    }
    all_columns.resize(static_cast<std::size_t>(total));
  }
  PMPI_Gatherv(columns.data(), k, MPI_INT, all_columns.data(), ks.data(), displs.data(), MPI_INT, 0, comm);
  const std::size_t per_metric = std::max<std::size_t>(ncp * nloc, 1);
  const std::size_t batch =
      std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(kGatherBytes) / (8 * per_metric), metrics.size()));

  bool ok = true;
  hid_t f = -1, g = -1;
  if (rank == 0) {
    f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    g = f >= 0 ? H5Gcreate2(f, "profile", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
    ok = g >= 0;
    if (!ok) error = "cannot reopen '" + path + "' to write /profile";
  }
  std::vector<double> mine, block, all, matrix;
  std::vector<int> counts, offsets;
  for (std::size_t m0 = 0; m0 < metrics.size(); m0 += batch) {
    const std::size_t nb = std::min(batch, metrics.size() - m0);
    mine.assign(nb * ncp * static_cast<std::size_t>(k), 0.0);
    for (std::size_t b = 0; b < nb && k > 0; ++b) {
      block.assign(ncp * static_cast<std::size_t>(k), 0.0);
      fill(static_cast<int>(m0 + b), block);
      std::copy(block.begin(), block.end(), mine.begin() + static_cast<std::ptrdiff_t>(b * block.size()));
    }
    if (rank == 0) {
      counts.resize(static_cast<std::size_t>(size));
      offsets.resize(static_cast<std::size_t>(size));
      int at = 0;
      for (int r = 0; r < size; ++r) {
        counts[static_cast<std::size_t>(r)] = static_cast<int>(nb * ncp) * ks[static_cast<std::size_t>(r)];
        offsets[static_cast<std::size_t>(r)] = at;
        at += counts[static_cast<std::size_t>(r)];
      }
      all.assign(static_cast<std::size_t>(at), 0.0);
    }
    PMPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), counts.data(), offsets.data(),
                 MPI_DOUBLE, 0, comm);
    if (rank != 0) continue;
    // Rank r's part: its nb metrics, each [call path][its columns].
    for (std::size_t b = 0; b < nb; ++b) {
      matrix.assign(ncp * nloc, 0.0);
      for (int r = 0; r < size; ++r) {
        const std::size_t kr = static_cast<std::size_t>(ks[static_cast<std::size_t>(r)]);
        const double* part = all.data() + offsets[static_cast<std::size_t>(r)] + b * ncp * kr;
        for (std::size_t c = 0; c < kr; ++c) {
          const auto col = static_cast<std::size_t>(all_columns[static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]) + c]);
          if (col >= nloc) continue;
          for (std::size_t cp = 0; cp < ncp; ++cp) matrix[cp * nloc + col] = part[cp * kr + c];
        }
      }
      if (!ok) continue;
      hsize_t dims[2] = {ncp, nloc};
      hid_t fs = H5Screate_simple(2, dims, nullptr);
      hid_t d = create_metric(g, fs, metrics[m0 + b], ncp, nloc, ok);
      if (d < 0) ok = false;
      if (d >= 0 && ncp > 0 && nloc > 0) {
        ok = H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, matrix.data()) >= 0 && ok;
      }
      if (d >= 0) H5Dclose(d);
      H5Sclose(fs);
    }
  }
  if (rank == 0) {
    if (g >= 0) H5Gclose(g);
    if (f >= 0) ok = H5Fclose(f) >= 0 && ok;
    if (!ok && error.empty()) error = "writing /profile to '" + path + "' failed";
  }
  int all_ok = ok ? 1 : 0;
  PMPI_Bcast(&all_ok, 1, MPI_INT, 0, comm);
  return all_ok != 0;
}

}  // namespace

bool write_profile(const std::string& path, MPI_Comm comm, const std::vector<MetricDef>& metrics,
                   std::int64_t n_callpaths, std::int64_t n_locations, const std::vector<int>& columns,
                   const std::function<void(int, std::vector<double>&)>& fill, std::string& error,
                   bool force_parallel) {
  H5E_auto2_t old_fn = nullptr;
  void* old_data = nullptr;
  H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  // The whole profile fits the gather budget (the same decision on every
  // rank: the shape is everyone's): gathered, as DESIGN.md §8 allows.
  if (!force_parallel && static_cast<double>(metrics.size()) * static_cast<double>(n_callpaths) *
                                 static_cast<double>(n_locations) * 8.0 <=
                             kGatherBytes) {
    const bool ok = write_gathered(path, comm, metrics, n_callpaths, n_locations, columns, fill, error);
    H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
    return ok;
  }
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
    H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
    return false;
  }
  bool ok = true;
  hid_t g = H5Gcreate2(f, "profile", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
  const hsize_t ncp = static_cast<hsize_t>(n_callpaths), nloc = static_cast<hsize_t>(n_locations);
  const hsize_t k = columns.size();
  std::vector<double> block;
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    hsize_t dims[2] = {ncp, nloc};
    hid_t fs = H5Screate_simple(2, dims, nullptr);
    // (Attributes are metadata: written collectively with identical values.)
    hid_t d = create_metric(g, fs, metrics[m], ncp, nloc, ok);
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
  ok = H5Fclose(f) >= 0 && ok;
  int mine = ok ? 1 : 0, all = 0;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
  if (all == 0 && rank == 0) error = "writing /profile to '" + path + "' failed";
  return all != 0;
}

}  // namespace onlinews::io
