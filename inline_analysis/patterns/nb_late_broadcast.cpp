// mpi_latebroadcast_nb (Ibcast, Iscatter(v)): on a receiving non-root, the
// Wait*/Test* that completed the instance waited for the root to start it
// (nb_view.hpp), if the root sends data.
#include "nb_view.hpp"

namespace onlinews::analysis {

std::unique_ptr<Pattern> make_nb_late_broadcast() {
  return std::make_unique<NbPattern<CollKind::OneToN, Metric::mpi_latebroadcast_nb, DelayKind::OneToN>>();
}

}  // namespace onlinews::analysis
