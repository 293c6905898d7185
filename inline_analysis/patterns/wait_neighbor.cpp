// mpi_wait_neighbor (Neighbor_allgather(v), Neighbor_alltoall(v/w)) and
// mpi_wait_neighbor_nb (their Ineighbor_* forms, in the Wait*/Test* that
// completed them): only the neighbors this rank receives from take part, so
// it waits for the latest of them to start (nb_view.hpp); ranks that are not
// its neighbors never make it wait.
#include "nb_view.hpp"

namespace onlinews::analysis {

std::unique_ptr<Pattern> make_wait_neighbor() {
  return std::make_unique<NbPattern<CollKind::Neighbor, Metric::mpi_wait_neighbor_nb, DelayKind::Neighbor,
                                    Metric::mpi_wait_neighbor>>();
}

}  // namespace onlinews::analysis
