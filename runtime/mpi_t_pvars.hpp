// MPI_T performance variables sampled once per epoch (ONLINEWS_MPI_T_PVARS;
// off by default: MPI_T's start-up costs ~0.2 s in Open MPI).  Internal to
// runtime/.  Every call comes from the MPI thread.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

namespace onlinews::rt {

// onlinews' use of MPI_T: initialized on first use and finalized once, at
// MPI_Finalize.  Never finalized and initialized again in between: MPICH
// 4.0.2 crashes in the first MPI_T call after such a pair (MPI_T_pvar_get_num
// dereferences a freed table).  `thread_level` is MPI_Init_thread's provided
// level (see read_eager_limits).  MPI thread only.
bool mpi_t_open(int thread_level);
void mpi_t_close();

class PvarSampler {
 public:
  // Collective over MPI_COMM_WORLD: starts MPI_T and finds the wanted
  // variables ("queues": the message queue lengths, under the names the
  // library exports them; else names).  Keeps those every rank found; a
  // wanted name some rank lacks gets a line in `warnings` (rank 0).
  void start(const std::vector<std::string>& wanted, int thread_level, int rank, std::vector<std::string>& warnings);
  // This rank's current values, one per found variable (a variable bound to
  // a communicator is read on MPI_COMM_WORLD, its per-peer values summed).
  std::vector<double> sample() const;
  const std::vector<std::string>& names() const { return names_; }
  void stop();
  ~PvarSampler() { stop(); }

 private:
  bool started_ = false;
  MPI_T_pvar_session session_{};
  struct Var {
    MPI_T_pvar_handle handle{};
    MPI_Datatype type = MPI_DATATYPE_NULL;
    int count = 0;
  };
  std::vector<Var> vars_;
  std::vector<std::string> names_;
};

}  // namespace onlinews::rt
