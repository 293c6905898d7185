// What the replay needs from the outside world to talk to the other ranks.
// The MPI implementation (runtime/mpi_transport) uses the tool's duplicated
// communicators with nonblocking calls only; LocalTransport runs several
// virtual ranks in one thread for unit tests.  Every operation is a
// coroutine: it suspends on the pipeline's Scheduler (task.hpp) until the
// other ranks have done their part, so no thread ever blocks in it.
// Operations are collective over the ranks named, and every rank issues them
// in the same order.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "definitions.hpp"
#include "task.hpp"

namespace onlinews::analysis {

// One point-to-point payload of the sparse exchange.
struct Parcel {
  int peer = -1;  // world rank: destination when sending, source when received
  std::vector<std::byte> data;
};

// Per collective instance, reduced over the communicator's members
// (collectives.cpp fills and interprets it).  Times in ns; "none" = INT64_MIN
// for maxima, INT64_MAX for minima.
struct CollRecord {
  std::int64_t max_enter;         // latest enter
  std::int64_t max_enter_rank;    // world rank of the latest to enter (lowest on ties)
  std::int64_t min_leave;         // earliest leave
  std::int64_t root_enter;        // the root's enter (max over: root contributes, others none)
  std::int64_t max_sender_enter;  // latest enter among ranks that send data
  std::int64_t max_sender_rank;   // its world rank
  std::int64_t root_bytes;        // root's bytes out (1-to-N) or in (N-to-1)
  std::int64_t min_enter;         // earliest enter
  // Nonblocking instances (nb_collectives.cpp): the start call of the rank
  // behind max_enter / root_enter / max_sender_enter, as epoch << 32 | event
  // (its EventRef without the rank, which the fields above give).
  std::int64_t max_enter_at;
  std::int64_t root_at;
  std::int64_t max_sender_at;
};
void combine(CollRecord& into, const CollRecord& other);

// Element of the prefix maximum used by Scan/Exscan.
struct ScanRecord {
  std::int64_t max_enter;  // latest enter among ranks <= me that send data
  std::int64_t rank;       // its world rank
};
void combine(ScanRecord& into, const ScanRecord& other);

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;  // in MPI_COMM_WORLD
  virtual int size() const = 0;
  // Where the pipeline suspends (operations wait on next_tick(); local
  // loops call slice()).
  virtual Scheduler& scheduler() = 0;
  // An epoch's operations begin: channels that a rank one epoch ahead may
  // already use are told apart by the epoch's parity.
  virtual void begin_epoch(int epoch) = 0;

  // Sparse personalized exchange over all ranks: every parcel in `out` goes to
  // its peer; `in` receives the parcels addressed to this rank, each with
  // its source in `peer`, ordered by source rank.
  virtual Task<> exchange(const std::vector<Parcel>& out, std::vector<Parcel>& in) = 0;

  // Element-wise reduction of `n` records over the members of `comm`.
  virtual Task<> allreduce(const CommDef& comm, CollRecord* inout, std::size_t n) = 0;
  // Inclusive prefix reduction (by rank in `comm`) of `n` records.
  virtual Task<> scan(const CommDef& comm, ScanRecord* inout, std::size_t n) = 0;
  // Element-wise maximum of `n` values over all ranks.
  virtual Task<> allreduce_max(double* inout, std::size_t n) = 0;
  // Every rank's bytes at world rank 0, by rank (empty elsewhere).
  virtual Task<> gather(const std::vector<std::byte>& mine, std::vector<std::vector<std::byte>>& all) = 0;

  // --- the backward replay at synchronization points (sync_replay.cpp) ---
  // Sends `data` to world rank `peer` on the replay channel (returns at once).
  virtual void post(int peer, std::vector<std::byte> data) = 0;
  // The next replay-channel message from any peer (messages from one peer
  // arrive in the order they were posted).
  virtual Task<Parcel> take_any() = 0;
  // A replay-channel message that has arrived already, if any (no
  // communication, never suspends).
  virtual bool poll(Parcel& out) = 0;
  // Starts the sends post() queued and receives what has arrived (never
  // waits for another rank).
  virtual Task<> pump() = 0;
  // Completes every posted send (end of the replay).
  virtual Task<> flush() = 0;
  // The member with rank `root` in `comm` sends `data` to all members.
  virtual Task<> bcast(const CommDef& comm, int root, std::vector<std::byte>& data) = 0;
  // Element-wise sum of `n` doubles over the members of `comm`, at `root`.
  virtual Task<> reduce_sum(const CommDef& comm, int root, double* inout, std::size_t n) = 0;

  // Called at every tick while a collective operation or exchange waits for
  // other ranks (empty: nothing): the backward replay keeps answering its
  // point-to-point messages there (replay_mail.cpp), so a rank inside an
  // exchange never holds back what another rank needs to join it.
  void set_idle(std::function<void()> f) { idle_ = std::move(f); }

 protected:
  void idle() {
    if (idle_) idle_();
  }

 private:
  std::function<void()> idle_;
};

}  // namespace onlinews::analysis
