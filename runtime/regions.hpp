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

// The function at code address `pc`, demangled, or "[object]" where no
// symbol covers it: the names of instrumented and sampled functions, while
// the job runs (one postpass::Symbolizer per process, opened at the first
// call: about a millisecond).  Thread-safe; takes a lock.
std::string function_name(std::uint64_t pc);

// Id of the sampled function `name` (ONLINEWS_SAMPLING; kind Sampled,
// apart from a user region of the same name; kFilteredRegion if
// ONLINEWS_FILTER skips it).  Thread-safe; takes a lock.
std::uint32_t sampled_region(const std::string& name);
// Whether time in region `id` (innermost) is computation: the root, user
// and sampled regions, and the OpenMP constructs whose exclusive time is
// the application's code.  Thread-safe; takes a lock.
bool region_computes(std::uint32_t id);

// The collective kind of region `id` if it is an MPI function's (None
// otherwise).  Read-only after init_regions: any thread may ask (the
// definitions' table may grow under another thread's feet).
analysis::CollKind mpi_coll_kind(std::uint32_t id);
// Its region attributes (analysis::region_attr; 0 if not an MPI function's).
// Read-only after init_regions, like mpi_coll_kind.
std::uint8_t mpi_region_attrs(std::uint32_t id);

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
