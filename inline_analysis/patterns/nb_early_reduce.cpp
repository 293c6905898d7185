// mpi_earlyreduce_nb (Ireduce, Igather(v)): on the root, if it receives
// data, the Wait*/Test* that completed the instance waited for the latest
// sender to start it (nb_view.hpp).
#include "nb_view.hpp"

namespace onlinews::analysis {

std::unique_ptr<Pattern> make_nb_early_reduce() {
  return std::make_unique<NbPattern<CollKind::NToOne, Metric::mpi_earlyreduce_nb, DelayKind::NToOne>>();
}

}  // namespace onlinews::analysis
