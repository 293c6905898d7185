// The replay's Transport over MPI: sparse exchanges on the tool's world
// communicator (NBX: synchronous sends + a nonblocking barrier), vector
// reductions of collective instances on each communicator's tool duplicate.
// Called only inside epochs (ToolScope active), by the MPI thread.
#pragma once
#include <mpi.h>

#include "comms.hpp"
#include "inline_analysis/transport.hpp"

namespace onlinews::rt {

class MpiTransport final : public analysis::Transport {
 public:
  MpiTransport(MPI_Comm world, const CommRegistry& comms);
  ~MpiTransport() override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void exchange(const std::vector<analysis::Parcel>& out, std::vector<analysis::Parcel>& in) override;
  void allreduce(const analysis::CommDef& comm, analysis::CollRecord* inout, std::size_t n) override;
  void scan(const analysis::CommDef& comm, analysis::ScanRecord* inout, std::size_t n) override;
  void allreduce_max(double* inout, std::size_t n) override;
  void post(int peer, std::vector<std::byte> data) override;
  std::vector<std::byte> take(int peer) override;
  void flush() override;
  void bcast(const analysis::CommDef& comm, int root, std::vector<std::byte>& data) override;
  void reduce_sum(const analysis::CommDef& comm, int root, double* inout, std::size_t n) override;

 private:
  MPI_Comm world_;
  const CommRegistry& comms_;
  int rank_ = 0, size_ = 1;
  unsigned exchanges_ = 0;
  std::vector<std::vector<std::byte>> posted_;  // buffers of sends in flight
  std::vector<MPI_Request> posted_requests_;
  MPI_Datatype coll_type_ = MPI_DATATYPE_NULL, scan_type_ = MPI_DATATYPE_NULL;
  MPI_Op coll_op_ = MPI_OP_NULL, scan_op_ = MPI_OP_NULL;
};

}  // namespace onlinews::rt
