// The ParaView view: per-rank views of the main metrics, appended per epoch
// (/views/epochs, in rank order: the grid is known only at MPI_Finalize),
// reordered into grid cells at the end (/views/grid, /views/grid_totals);
// xdmf.cpp writes the sidecar that maps them onto the process grid.
#include <hdf5.h>

#include <algorithm>

#include "h5_file.hpp"
#include "h5_helpers.hpp"

namespace onlinews::io {
namespace {

bool write_doubles(hid_t group, const char* name, const std::vector<hsize_t>& dims, const double* data) {
  hid_t sp = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  hid_t d = H5Dcreate2(group, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const bool ok = d >= 0 && H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0;
  if (d >= 0) H5Dclose(d);
  H5Sclose(sp);
  return ok;
}

}  // namespace

bool H5File::append_views(const std::vector<double>& values, int n_views, int n_ranks) {
  return append_per_rank(views_, "views", "epochs", values, {}, n_views, n_ranks);
}

bool H5File::append_pvars(const std::vector<double>& values, const std::vector<std::string>& names,
                          int n_ranks) {
  return append_per_rank(pvars_, "epochs", "mpi_t_pvars", values, names, static_cast<int>(names.size()), n_ranks);
}

bool H5File::append_per_rank(std::int64_t& cache, const char* group, const char* name,
                             const std::vector<double>& values, const std::vector<std::string>& names,
                             int n_items, int n_ranks) {
  if (file_ < 0 || n_items <= 0 || n_ranks <= 0) return false;
  QuietH5 quiet;
  const hsize_t nv = static_cast<hsize_t>(n_items), nr = static_cast<hsize_t>(n_ranks);
  if (cache < 0) {
    hid_t g = open_group(file_, group);
    if (H5Lexists(g, name, H5P_DEFAULT) > 0) {
      cache = H5Dopen2(g, name, H5P_DEFAULT);
    } else {
      hsize_t dims[3] = {0, nv, nr}, maxd[3] = {H5S_UNLIMITED, nv, nr}, chunk[3] = {1, nv, nr};
      hid_t sp = H5Screate_simple(3, dims, maxd);
      hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
      H5Pset_chunk(dcpl, 3, chunk);
      cache = H5Dcreate2(g, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
      H5Pclose(dcpl);
      H5Sclose(sp);
      if (cache >= 0 && !names.empty()) string_attr(cache, "names", comma_joined(names));
    }
    H5Gclose(g);
    if (cache < 0) return false;
  }
  const hsize_t e = static_cast<hsize_t>(epochs_written_);
  hsize_t size[3] = {e + 1, nv, nr}, start[3] = {e, 0, 0}, count[3] = {1, nv, nr};
  written(cache);
  return slab(cache, 3, start, count, H5T_NATIVE_DOUBLE, const_cast<double*>(values.data()), size);
}

bool H5File::write_grid_views(const std::vector<std::string>& names, const Grid& grid,
                              std::vector<double>& epoch_ends) {
  if (file_ < 0) return false;
  QuietH5 quiet;
  // The epochs' end times (the XDMF's time steps), from /epochs/table.
  epoch_ends.clear();
  if (const hid_t table = H5Dopen2(file_, "epochs/table", H5P_DEFAULT); table >= 0) {
    hid_t sp = H5Dget_space(table);
    epoch_ends.resize(static_cast<std::size_t>(H5Sget_simple_extent_npoints(sp)));
    H5Sclose(sp);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(double));
    H5Tinsert(t, "t_end", 0, H5T_NATIVE_DOUBLE);
    if (!epoch_ends.empty() && H5Dread(table, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, epoch_ends.data()) < 0) {
      epoch_ends.clear();
    }
    H5Tclose(t);
    H5Dclose(table);
  }
  const hid_t g = open_group(file_, "views");
  if (g < 0) return false;
  const hsize_t nv = names.size(), nc = static_cast<hsize_t>(grid.dims[0] * grid.dims[1] * grid.dims[2]);
  const hsize_t nr = grid.cell_of_rank.size();
  // The epochs' views, read back a block of epochs at a time (bounded
  // memory), each rank's values moved to its cell.
  hsize_t ne = 0;
  const hid_t src = H5Lexists(g, "epochs", H5P_DEFAULT) > 0 ? H5Dopen2(g, "epochs", H5P_DEFAULT) : -1;
  if (src >= 0) {
    hid_t sp = H5Dget_space(src);
    hsize_t d[3] = {0, 0, 0};
    if (H5Sget_simple_extent_ndims(sp) == 3) H5Sget_simple_extent_dims(sp, d, nullptr);
    H5Sclose(sp);
    ne = d[1] == nv && d[2] == nr ? d[0] : 0;
  }
  hsize_t gd[3] = {ne, nv, nc};
  hid_t gsp = H5Screate_simple(3, gd, nullptr);
  hid_t dst = H5Dcreate2(g, "grid", H5T_NATIVE_DOUBLE, gsp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = dst >= 0;
  std::vector<double> totals(nv * nc, 0.0);
  constexpr hsize_t kBlock = 64;
  for (hsize_t e0 = 0; ok && e0 < ne; e0 += kBlock) {
    const hsize_t k = std::min(kBlock, ne - e0);
    std::vector<double> in(k * nv * nr), out(k * nv * nc, 0.0);
    hsize_t start[3] = {e0, 0, 0}, cin[3] = {k, nv, nr}, cout[3] = {k, nv, nc};
    ok = slab(src, 3, start, cin, H5T_NATIVE_DOUBLE, in.data(), nullptr, true);
    for (hsize_t i = 0; i < k * nv; ++i) {
      for (hsize_t r = 0; r < nr; ++r) {
        const std::int64_t c = grid.cell_of_rank[r];
        if (c < 0 || static_cast<hsize_t>(c) >= nc) continue;
        out[i * nc + static_cast<hsize_t>(c)] += in[i * nr + r];
        totals[(i % nv) * nc + static_cast<hsize_t>(c)] += in[i * nr + r];
      }
    }
    ok = ok && slab(dst, 3, start, cout, H5T_NATIVE_DOUBLE, out.data());
  }
  if (dst >= 0) H5Dclose(dst);
  H5Sclose(gsp);
  if (src >= 0) H5Dclose(src);
  ok = write_doubles(g, "grid_totals", {nv, nc}, totals.data()) && ok;
  // (Attributes of /views: the names in order, the grid and its source.)
  string_attr(g, "names", comma_joined(names));
  string_attr(g, "grid_source", grid.source);
  {
    hsize_t n[1] = {3};
    hid_t sp = H5Screate_simple(1, n, nullptr);
    if (H5Aexists(g, "grid_dims") > 0) H5Adelete(g, "grid_dims");
    hid_t a = H5Acreate2(g, "grid_dims", H5T_NATIVE_INT64, sp, H5P_DEFAULT, H5P_DEFAULT);
    ok = a >= 0 && H5Awrite(a, H5T_NATIVE_INT64, grid.dims) >= 0 && ok;
    if (a >= 0) H5Aclose(a);
    H5Sclose(sp);
  }
  std::vector<std::int64_t> cells(grid.cell_of_rank);
  {
    hsize_t n[1] = {cells.size()};
    hid_t sp = H5Screate_simple(1, n, nullptr);
    hid_t d = H5Dcreate2(g, "cell_of_rank", H5T_NATIVE_INT64, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ok = d >= 0 && H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, cells.data()) >= 0 && ok;
    if (d >= 0) H5Dclose(d);
    H5Sclose(sp);
  }
  H5Gclose(g);
  return ok;
}

}  // namespace onlinews::io
