// The replay's Transport over MPI: sparse exchanges on the tool's world
// communicator (NBX: synchronous sends + a nonblocking barrier), vector
// reductions of collective instances on each communicator's tool duplicate.
// Only nonblocking calls: every operation starts its requests, then tests
// them once per tick of the pipeline's scheduler and suspends in between
// (task.hpp), so whoever drives the pipeline never waits for another rank.
// Every MPI call is made on the MPI thread: an operation moves the pipeline
// there (Scheduler::to_driver) and back when it is done; post() only queues.
#pragma once
#include <mpi.h>

#include <deque>
#include <map>

#include "comms.hpp"
#include "inline_analysis/transport.hpp"

namespace onlinews::rt {

class MpiTransport final : public analysis::Transport {
 public:
  MpiTransport(MPI_Comm world, const CommRegistry& comms);
  ~MpiTransport() override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  analysis::Scheduler& scheduler() override { return sched_; }
  void begin_epoch(int epoch) override { parity_ = epoch & 1; }
  analysis::Task<> exchange(const std::vector<analysis::Parcel>& out, std::vector<analysis::Parcel>& in) override;
  analysis::Task<> allreduce(const analysis::CommDef& comm, analysis::CollRecord* inout, std::size_t n) override;
  analysis::Task<> scan(const analysis::CommDef& comm, analysis::ScanRecord* inout, std::size_t n) override;
  analysis::Task<> allreduce_max(double* inout, std::size_t n) override;
  analysis::Task<> gather(const std::vector<std::byte>& mine, std::vector<std::vector<std::byte>>& all) override;
  void post(int peer, std::vector<std::byte> data) override;
  analysis::Task<analysis::Parcel> take_any() override;
  bool poll(analysis::Parcel& out) override;
  analysis::Task<> pump() override;
  analysis::Task<> flush() override;
  analysis::Task<> bcast(const analysis::CommDef& comm, int root, std::vector<std::byte>& data) override;
  analysis::Task<> reduce_sum(const analysis::CommDef& comm, int root, double* inout, std::size_t n) override;

  // Operations completed and parcels received so far (MPI_Finalize's
  // safety net tells a stalled analysis from a slow one by it).
  std::uint64_t progress() const { return progress_; }

 private:
  std::uint64_t progress_ = 0;
  // Suspends until `req` (and `more`) completed, testing once per tick.
  analysis::Task<> wait(MPI_Request& req);
  analysis::Task<> wait_all(std::vector<MPI_Request>& reqs);
  // MPI thread: starts the sends post() queued; moves arrived replay
  // messages into the mailbox.
  void send_posted();
  void receive_replay();
  void keep_replay_going();

  MPI_Comm world_;
  const CommRegistry& comms_;
  int rank_ = 0, size_ = 1;
  int parity_ = 0;
  unsigned exchanges_ = 0;
  analysis::Scheduler sched_;
  std::deque<std::vector<std::byte>> posted_;  // buffers of sends in flight
  std::vector<MPI_Request> posted_requests_;
  std::vector<analysis::Parcel> outbox_;                    // posted, not sent yet
  std::map<int, std::deque<std::vector<std::byte>>> mailbox_;  // replay messages by source, not taken yet
  MPI_Datatype coll_type_ = MPI_DATATYPE_NULL, scan_type_ = MPI_DATATYPE_NULL;
  MPI_Op coll_op_ = MPI_OP_NULL, scan_op_ = MPI_OP_NULL;
};

}  // namespace onlinews::rt
