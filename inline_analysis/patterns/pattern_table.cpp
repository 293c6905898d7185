// The pattern registry: one line per pattern.  Order matters only where a
// pattern subscribes to another's findings within the same event (Wrong Order
// checks a receive before Late Sender publishes at the call's Leave).
#include "../pattern.hpp"

namespace onlinews::analysis {

std::unique_ptr<Pattern> make_time_visits();
std::unique_ptr<Pattern> make_omp_idle();
std::unique_ptr<Pattern> make_omp_barrier();
std::unique_ptr<Pattern> make_late_sender();
std::unique_ptr<Pattern> make_wrong_order();
std::unique_ptr<Pattern> make_late_receiver();
std::unique_ptr<Pattern> make_message_counts();
std::unique_ptr<Pattern> make_barrier();
std::unique_ptr<Pattern> make_wait_nxn();
std::unique_ptr<Pattern> make_late_broadcast();
std::unique_ptr<Pattern> make_early_reduce();
std::unique_ptr<Pattern> make_early_scan();
std::unique_ptr<Pattern> make_init_finalize();
std::unique_ptr<Pattern> make_collective_counts();
std::unique_ptr<Pattern> make_nb_barrier();
std::unique_ptr<Pattern> make_nb_wait_nxn();
std::unique_ptr<Pattern> make_nb_late_broadcast();
std::unique_ptr<Pattern> make_nb_early_reduce();
std::unique_ptr<Pattern> make_wait_neighbor();
std::unique_ptr<Pattern> make_rma_wait_at_create();
std::unique_ptr<Pattern> make_rma_wait_at_free();
std::unique_ptr<Pattern> make_rma_wait_at_fence();
std::unique_ptr<Pattern> make_rma_counts();
std::unique_ptr<Pattern> make_rma_early_fence();
std::unique_ptr<Pattern> make_rma_pairsync();
std::unique_ptr<Pattern> make_rma_late_post();
std::unique_ptr<Pattern> make_rma_early_wait();
std::unique_ptr<Pattern> make_rma_lock_competition();
std::unique_ptr<Pattern> make_rma_wait_for_progress();
std::unique_ptr<Pattern> make_delay_costs();
std::unique_ptr<Pattern> make_critical_path();

const std::vector<PatternEntry>& pattern_table() {
  static const std::vector<PatternEntry> table = {
      {"time", "time", make_time_visits},
      {"omp_idle_threads", "omp", make_omp_idle},
      {"delay_ompbarrier", "omp", make_omp_barrier},
      {"mpi_latesender", "p2p", make_late_sender},
      {"mpi_latesender_wo", "p2p", make_wrong_order},
      {"mpi_latereceiver", "p2p", make_late_receiver},
      {"p2p_counts", "p2p", make_message_counts},
      {"mpi_barrier_wait", "collective", make_barrier},
      {"mpi_wait_nxn", "collective", make_wait_nxn},
      {"mpi_latebroadcast", "collective", make_late_broadcast},
      {"mpi_earlyreduce", "collective", make_early_reduce},
      {"mpi_earlyscan", "collective", make_early_scan},
      {"mpi_init_finalize", "collective", make_init_finalize},
      {"collective_counts", "collective", make_collective_counts},
      {"mpi_barrier_wait_nb", "collective", make_nb_barrier},
      {"mpi_wait_nxn_nb", "collective", make_nb_wait_nxn},
      {"mpi_latebroadcast_nb", "collective", make_nb_late_broadcast},
      {"mpi_earlyreduce_nb", "collective", make_nb_early_reduce},
      {"mpi_wait_neighbor", "collective", make_wait_neighbor},
      {"mpi_rma_wait_at_create", "rma", make_rma_wait_at_create},
      {"mpi_rma_wait_at_free", "rma", make_rma_wait_at_free},
      {"mpi_rma_wait_at_fence", "rma", make_rma_wait_at_fence},
      {"mpi_rma_early_fence", "rma", make_rma_early_fence},
      {"mpi_rma_pairsync_count", "rma", make_rma_pairsync},
      {"mpi_rma_late_post", "rma", make_rma_late_post},
      {"mpi_rma_early_wait", "rma", make_rma_early_wait},
      {"mpi_rma_lock_competition", "rma", make_rma_lock_competition},
      {"mpi_rma_wait_for_progress", "rma", make_rma_wait_for_progress},
      {"rma_counts", "rma", make_rma_counts},
      {"delay_costs", "rootcause", make_delay_costs},
      {"critical_path", "rootcause", make_critical_path},
  };
  return table;
}

}  // namespace onlinews::analysis
