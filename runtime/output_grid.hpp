// The process grid and the per-rank views of the main metrics (for ParaView
// and the report's heat map); internal to runtime/.
#pragma once
#include <string>
#include <vector>

#include "state.hpp"

namespace onlinews::rt {

// The views' names, in the order of epoch_views() (the arrays of the XDMF).
const std::vector<std::string>& view_names();
int view_count();
// After a new communicator: the first Cartesian and the first graph
// topology spanning all ranks are remembered (any thread of the MPI rank
// that created it; the caller holds a ToolScope).
void note_topology(State& s, MPI_Comm comm, int id);
// Rank 0, per epoch: values[view * ranks + rank] from the epoch's exclusive
// per-location matrix (columns in the order of s.locations).
std::vector<double> epoch_views(const State& s, const std::vector<double>& matrix);
// Collective at MPI_Finalize: every rank's Cartesian coordinates and graph
// out-edges to rank 0 (s.topology).
void gather_topology(State& s);
// Rank 0: the grid of the views (ONLINEWS_GRID, else the Cartesian
// topology, else a line of ranks).
io::Grid decide_grid(const State& s);

}  // namespace onlinews::rt
