// Region registry of one process: MPI regions (generated), onlinews' own tool
// regions, the root region and user regions registered by name at first use.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "inline_analysis/definitions.hpp"

namespace onlinews::rt {

constexpr std::uint32_t kFilteredRegion = 0xffffffffu;

// Builds the fixed part of the table (MPI, tool and root regions).
void init_regions(const std::string& root_name, const std::vector<std::string>& filters);

// Id of the user region `name` (kFilteredRegion if ONLINEWS_FILTER skips it).
// Thread-safe; the first call per name and thread takes a lock, later calls
// hit a thread-local cache keyed by the string's address.
std::uint32_t user_region(const char* name);

// The collective kind of region `id` if it is an MPI function's (None
// otherwise).  Read-only after init_regions: any thread may ask (the
// definitions' table may grow under another thread's feet).
analysis::CollKind mpi_coll_kind(std::uint32_t id);

// OpenMP constructs (ompt/constructs.def), registered by init_regions.
enum class OmpConstruct : std::uint8_t {
#define ONLINEWS_OMP_CONSTRUCT(id, name, group) id,
#include "ompt/constructs.def"
#undef ONLINEWS_OMP_CONSTRUCT
  Count
};
// The region of construct `c` (valid once init_regions ran).
std::uint32_t omp_region(OmpConstruct c);

// Moves regions registered since the last call into `regions` (called by the
// epoch before the analysis reads the table).
void publish_regions(std::vector<analysis::RegionDef>& regions);

}  // namespace onlinews::rt
