// /profile/<metric> (h5output.hpp, write_profile): part of libonlinews.  The
// decision and the gather run on every rank without HDF5; only rank 0 (a
// gathered profile) or all ranks (a parallel one) load the module.
#include <algorithm>

#include "module.hpp"

namespace onlinews::io {
namespace {

// Rank 0 writes what every rank sent it, serially (write_profile sends only
// profiles of at most kGatherBytes: one MPI_Gatherv).
bool write_gathered(const std::string& path, MPI_Comm comm, const std::vector<MetricDef>& metrics,
                    std::int64_t n_callpaths, std::int64_t n_locations, const std::vector<int>& columns,
                    const std::function<void(int, std::vector<double>&)>& fill, std::string& error) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  const auto ncp = static_cast<std::size_t>(n_callpaths), nloc = static_cast<std::size_t>(n_locations);
  const std::size_t nm = metrics.size(), k = columns.size();
  // Every rank's columns, at rank 0.
  const int kk = static_cast<int>(k);
  std::vector<int> ks(rank == 0 ? static_cast<std::size_t>(size) : 0), displs, all_columns;
  PMPI_Gather(&kk, 1, MPI_INT, ks.data(), 1, MPI_INT, 0, comm);
  std::vector<int> counts, offsets;  // (in doubles: all metrics of a rank's columns)
  int total = 0, at = 0;
  for (int r = 0; r < static_cast<int>(ks.size()); ++r) {
    const int kr = ks[static_cast<std::size_t>(r)];
    displs.push_back(total);
    total += kr;
    counts.push_back(static_cast<int>(nm * ncp) * kr);
    offsets.push_back(at);
    at += counts.back();
  }
  all_columns.resize(static_cast<std::size_t>(total));
  PMPI_Gatherv(columns.data(), kk, MPI_INT, all_columns.data(), ks.data(), displs.data(), MPI_INT, 0, comm);
  // This rank's part: each metric [call path][its columns].
  std::vector<double> mine(nm * ncp * k), block(ncp * k), all(static_cast<std::size_t>(at));
  for (std::size_t m = 0; m < nm && k > 0; ++m) {
    std::fill(block.begin(), block.end(), 0.0);
    fill(static_cast<int>(m), block);
    std::copy(block.begin(), block.end(), mine.begin() + static_cast<std::ptrdiff_t>(m * block.size()));
  }
  PMPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), counts.data(), offsets.data(),
               MPI_DOUBLE, 0, comm);
  bool ok = true;
  if (rank == 0) {
    const ModuleApi* api = module(error);
    ok = api != nullptr &&
         api->write_matrices(path, metrics, n_callpaths, n_locations, [&](int m, std::vector<double>& matrix) {
           for (int r = 0; r < size; ++r) {
             const auto kr = static_cast<std::size_t>(ks[static_cast<std::size_t>(r)]);
             const double* part =
                 all.data() + offsets[static_cast<std::size_t>(r)] + static_cast<std::size_t>(m) * ncp * kr;
             const int* cols = all_columns.data() + displs[static_cast<std::size_t>(r)];
             for (std::size_t c = 0; c < kr; ++c) {
               const auto col = static_cast<std::size_t>(cols[c]);
               if (col >= nloc) continue;
               for (std::size_t cp = 0; cp < ncp; ++cp) matrix[cp * nloc + col] = part[cp * kr + c];
             }
           }
         }, error);
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
  // The whole profile fits the gather budget (the same decision on every
  // rank: the shape is everyone's): gathered, as DESIGN.md §8 allows.
  if (!force_parallel && static_cast<double>(metrics.size()) * static_cast<double>(n_callpaths) *
                                 static_cast<double>(n_locations) * 8.0 <=
                             kGatherBytes) {
    return write_gathered(path, comm, metrics, n_callpaths, n_locations, columns, fill, error);
  }
  // Parallel HDF5 is collective: every rank needs the module, or none writes.
  std::string load_error;
  const ModuleApi* api = module(load_error);
  int loaded = api != nullptr ? 1 : 0, everywhere = 0;
  PMPI_Allreduce(&loaded, &everywhere, 1, MPI_INT, MPI_MIN, comm);
  if (everywhere == 0) {
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    error = !load_error.empty() ? load_error + ": /profile not written"
            : rank == 0         ? std::string("a rank could not load libonlinews_io.so: /profile not written")
                                : std::string();
    return false;
  }
  return api->write_parallel(path, comm, metrics, n_callpaths, n_locations, columns, fill, error);
}

}  // namespace onlinews::io
