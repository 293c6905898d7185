// mpi_barrier_wait_nb (MPI_Ibarrier): the Wait*/Test* that completed the
// instance waited for the last member to start it (nb_view.hpp).
#include "nb_view.hpp"

namespace onlinews::analysis {

std::unique_ptr<Pattern> make_nb_barrier() {
  return std::make_unique<NbPattern<CollKind::Barrier, Metric::mpi_barrier_wait_nb, DelayKind::Barrier>>();
}

}  // namespace onlinews::analysis
