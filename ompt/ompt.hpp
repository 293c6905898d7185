// Stage header of ompt/: the OMPT tool in libonlinews.  An OpenMP runtime
// with OMPT (LLVM's libomp) finds `ompt_start_tool` in the process and
// calls it at its own initialization; the callbacks (callbacks.def) then
// record OpenMP constructs as regions (constructs.def) into the calling
// thread's buffer while onlinews records.
#pragma once

namespace onlinews::ompt {

// Whether an OpenMP runtime started onlinews as its OMPT tool.
bool tool_started();

// Parallel regions this process began inside another team's implicit task
// (nested parallelism): recorded as their threads' regions, but not
// analyzed as teams (idle threads, barrier delay costs and the critical
// path through barriers look at outermost teams only).
unsigned long long nested_teams();

// At MPI_Finalize (rank 0): one line when the process runs OpenMP without
// the tool (GCC's libgomp has no OMPT; OMP_TOOL=disabled), saying what is
// not analyzed and how to get it.
void report_support(int verbose);

}  // namespace onlinews::ompt
