// mpi_wait_nxn_nb (Iallreduce, Iallgather(v), Ialltoall(v/w),
// Ireduce_scatter(_block)): the Wait*/Test* that completed the instance
// waited for the last member to start it (nb_view.hpp); a member that moves
// no data is not analyzed, as in the blocking forms.
#include "nb_view.hpp"

namespace onlinews::analysis {

std::unique_ptr<Pattern> make_nb_wait_nxn() {
  return std::make_unique<NbPattern<CollKind::NxN, Metric::mpi_wait_nxn_nb, DelayKind::NxN>>();
}

}  // namespace onlinews::analysis
