#include "mpi_transport.hpp"

#include <algorithm>
#include <climits>

#include "tsan_order.hpp"

namespace onlinews::rt {
using analysis::Where;
namespace {

constexpr int kExchangeTag = 30217;  // + parity of the exchange (see exchange())
constexpr int kReplayTag = 30300;    // + epoch parity: the backward replay's point-to-point channel

// Our reduction operators run on whichever thread progresses the
// collective (tsan_order.hpp): their accesses are ordered through this tag.
constexpr char kOperatorOrder = 0;

void coll_combine(void* in, void* inout, int* len, MPI_Datatype*) {
  tsan_acquire(&kOperatorOrder);
  auto* a = static_cast<const analysis::CollRecord*>(in);
  auto* b = static_cast<analysis::CollRecord*>(inout);
  for (int i = 0; i < *len; ++i) analysis::combine(b[i], a[i]);
  tsan_release(&kOperatorOrder);
}
// MPI_Scan applies op(in, inout) with `in` from lower ranks: combine is
// commutative here, so the order does not matter.
void scan_combine(void* in, void* inout, int* len, MPI_Datatype*) {
  tsan_acquire(&kOperatorOrder);
  auto* a = static_cast<const analysis::ScanRecord*>(in);
  auto* b = static_cast<analysis::ScanRecord*>(inout);
  for (int i = 0; i < *len; ++i) analysis::combine(b[i], a[i]);
  tsan_release(&kOperatorOrder);
}

}  // namespace

MpiTransport::MpiTransport(MPI_Comm world, const CommRegistry& comms) : world_(world), comms_(comms) {
  PMPI_Comm_rank(world_, &rank_);
  PMPI_Comm_size(world_, &size_);
  PMPI_Type_contiguous(static_cast<int>(sizeof(analysis::CollRecord)), MPI_BYTE, &coll_type_);
  PMPI_Type_commit(&coll_type_);
  PMPI_Type_contiguous(static_cast<int>(sizeof(analysis::ScanRecord)), MPI_BYTE, &scan_type_);
  PMPI_Type_commit(&scan_type_);
  PMPI_Op_create(&coll_combine, 1, &coll_op_);
  PMPI_Op_create(&scan_combine, 1, &scan_op_);
}

MpiTransport::~MpiTransport() {
  int finalized = 0;
  PMPI_Finalized(&finalized);
  if (finalized) return;
  PMPI_Type_free(&coll_type_);
  PMPI_Type_free(&scan_type_);
  PMPI_Op_free(&coll_op_);
  PMPI_Op_free(&scan_op_);
}

// While an operation waits: the replay's queued sends go out (a peer may
// wait for them before it can join the operation this rank waits in), and
// its arrived messages are handed to it (Transport::set_idle).
void MpiTransport::keep_replay_going() {
  send_posted();
  receive_replay();
  idle();
  send_posted();
}

analysis::Task<> MpiTransport::wait(MPI_Request& req) {
  for (;;) {
    keep_replay_going();
    int done = 0;
    PMPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) {
      ++progress_;
      co_return;
    }
    co_await sched_.next_tick();
  }
}

analysis::Task<> MpiTransport::wait_all(std::vector<MPI_Request>& reqs) {
  for (;;) {
    keep_replay_going();
    int done = 0;
    PMPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
    if (done) {
      ++progress_;
      co_return;
    }
    co_await sched_.next_tick();
  }
}

// NBX (Hoefler et al.): synchronous sends complete only when received, so
// once all of a rank's sends are done it joins a nonblocking barrier; when
// the barrier completes, every parcel of this exchange has been received.
// Consecutive exchanges alternate tags: a fast rank may already send parcels
// of the next exchange while a slow one is still probing in this one (it
// cannot be two ahead: each exchange ends with the barrier).
analysis::Task<> MpiTransport::exchange(const std::vector<analysis::Parcel>& out,
                                        std::vector<analysis::Parcel>& in) {
  const Where home = co_await sched_.to_driver();
  send_posted();
  const int tag = kExchangeTag + static_cast<int>(exchanges_++ & 1u);
  std::vector<MPI_Request> reqs;
  reqs.reserve(out.size());
  for (const auto& p : out) {
    if (p.data.empty()) continue;
    reqs.emplace_back();
    const auto n = static_cast<int>(std::min<std::size_t>(p.data.size(), INT_MAX));
    PMPI_Issend(p.data.data(), n, MPI_BYTE, p.peer, tag, world_, &reqs.back());
  }
  in.clear();
  MPI_Request barrier = MPI_REQUEST_NULL;
  bool in_barrier = false;
  for (;;) {
    int flag = 0;
    MPI_Message msg;
    MPI_Status st;
    PMPI_Improbe(MPI_ANY_SOURCE, tag, world_, &flag, &msg, &st);
    if (flag) {
      int count = 0;
      PMPI_Get_count(&st, MPI_BYTE, &count);
      analysis::Parcel p;
      p.peer = st.MPI_SOURCE;
      p.data.resize(static_cast<std::size_t>(count));
      PMPI_Mrecv(p.data.data(), count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
      in.push_back(std::move(p));
      ++progress_;
      continue;
    }
    int done = 0;
    if (!in_barrier) {
      PMPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
      if (done) {
        PMPI_Ibarrier(world_, &barrier);
        in_barrier = true;
        continue;
      }
    } else {
      PMPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
      if (done) {
        ++progress_;
        break;
      }
    }
    keep_replay_going();
    co_await sched_.next_tick();
  }
  std::stable_sort(in.begin(), in.end(),
                   [](const analysis::Parcel& a, const analysis::Parcel& b) { return a.peer < b.peer; });
  co_await sched_.back_to(home);
}

analysis::Task<> MpiTransport::allreduce(const analysis::CommDef& comm, analysis::CollRecord* inout, std::size_t n) {
  if (n == 0) co_return;
  const Where home = co_await sched_.to_driver();  // (the registry is the MPI thread's)
  MPI_Comm c = comms_.tool_comm_of_gid(comm.gid);
  if (c != MPI_COMM_NULL) {  // (a communicator the tool does not track: nothing to do)
    MPI_Request r;
    tsan_release(&kOperatorOrder);
    PMPI_Iallreduce(MPI_IN_PLACE, inout, static_cast<int>(n), coll_type_, coll_op_, c, &r);
    co_await wait(r);
    tsan_acquire(&kOperatorOrder);
  }
  co_await sched_.back_to(home);
}

analysis::Task<> MpiTransport::scan(const analysis::CommDef& comm, analysis::ScanRecord* inout, std::size_t n) {
  if (n == 0) co_return;
  const Where home = co_await sched_.to_driver();
  MPI_Comm c = comms_.tool_comm_of_gid(comm.gid);
  if (c != MPI_COMM_NULL) {  // (a communicator the tool does not track: nothing to do)
    std::vector<analysis::ScanRecord> result(n);
    MPI_Request r;
    tsan_release(&kOperatorOrder);
    PMPI_Iscan(inout, result.data(), static_cast<int>(n), scan_type_, scan_op_, c, &r);
    co_await wait(r);
    tsan_acquire(&kOperatorOrder);
    std::copy(result.begin(), result.end(), inout);
  }
  co_await sched_.back_to(home);
}

analysis::Task<> MpiTransport::allreduce_max(double* inout, std::size_t n) {
  const Where home = co_await sched_.to_driver();
  MPI_Request r;
  PMPI_Iallreduce(MPI_IN_PLACE, inout, static_cast<int>(n), MPI_DOUBLE, MPI_MAX, world_, &r);
  co_await wait(r);
  co_await sched_.back_to(home);
}

analysis::Task<> MpiTransport::gather(const std::vector<std::byte>& mine, std::vector<std::vector<std::byte>>& all) {
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(rank_ == 0 ? static_cast<std::size_t>(size_) : 0), displs(counts.size());
  const Where home = co_await sched_.to_driver();
  MPI_Request r;
  PMPI_Igather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, world_, &r);
  co_await wait(r);
  std::vector<std::byte> flat;
  if (rank_ == 0) {
    int total = 0;
    for (int k = 0; k < size_; ++k) {
      displs[static_cast<std::size_t>(k)] = total;
      total += counts[static_cast<std::size_t>(k)];
    }
    flat.resize(static_cast<std::size_t>(total));
  }
  PMPI_Igatherv(mine.data(), count, MPI_BYTE, flat.data(), counts.data(), displs.data(), MPI_BYTE, 0, world_, &r);
  co_await wait(r);
  all.clear();
  for (int k = 0; k < static_cast<int>(counts.size()); ++k) {
    const auto b = flat.begin() + displs[static_cast<std::size_t>(k)];
    all.emplace_back(b, b + counts[static_cast<std::size_t>(k)]);
  }
  co_await sched_.back_to(home);
}

void MpiTransport::post(int peer, std::vector<std::byte> data) {
  // (Possibly on the helper thread: the send starts in the next section on
  // the MPI thread.)
  outbox_.push_back({peer, std::move(data)});
}

void MpiTransport::send_posted() {
  for (auto& p : outbox_) {
    posted_.push_back(std::move(p.data));
    posted_requests_.emplace_back();
    const auto& b = posted_.back();
    PMPI_Isend(b.data(), static_cast<int>(b.size()), MPI_BYTE, p.peer, kReplayTag + parity_, world_,
               &posted_requests_.back());
  }
  outbox_.clear();
}

void MpiTransport::receive_replay() {
  for (;;) {
    int flag = 0;
    MPI_Message msg;
    MPI_Status st;
    PMPI_Improbe(MPI_ANY_SOURCE, kReplayTag + parity_, world_, &flag, &msg, &st);
    if (!flag) return;
    int count = 0;
    PMPI_Get_count(&st, MPI_BYTE, &count);
    std::vector<std::byte> d(static_cast<std::size_t>(count));
    PMPI_Mrecv(d.data(), count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    mailbox_[st.MPI_SOURCE].push_back(std::move(d));
    ++progress_;
  }
}

bool MpiTransport::poll(analysis::Parcel& out) {
  // (Only the mailbox: what the last driver section received.)
  for (auto& [peer, box] : mailbox_) {
    if (box.empty()) continue;
    out.peer = peer;
    out.data = std::move(box.front());
    box.pop_front();
    return true;
  }
  return false;
}

analysis::Task<analysis::Parcel> MpiTransport::take_any() {
  analysis::Parcel p;
  // (Queued posts go out first: the caller may have nothing else that
  // would send them before it waits again.)
  if (!outbox_.empty() || !poll(p)) {
    const Where home = co_await sched_.to_driver();
    for (;;) {
      send_posted();
      receive_replay();
      if (poll(p)) break;
      co_await sched_.next_tick();
    }
    co_await sched_.back_to(home);
  }
  co_return p;
}

analysis::Task<> MpiTransport::pump() {
  const Where home = co_await sched_.to_driver();
  send_posted();
  receive_replay();
  co_await sched_.back_to(home);
}

analysis::Task<> MpiTransport::flush() {
  const Where home = co_await sched_.to_driver();
  send_posted();
  if (!posted_requests_.empty()) co_await wait_all(posted_requests_);
  posted_requests_.clear();
  posted_.clear();
  co_await sched_.back_to(home);
}

analysis::Task<> MpiTransport::bcast(const analysis::CommDef& comm, int root, std::vector<std::byte>& data) {
  const Where home = co_await sched_.to_driver();
  MPI_Comm c = comms_.tool_comm_of_gid(comm.gid);
  if (c != MPI_COMM_NULL) {  // (a communicator the tool does not track: nothing to do)
    std::uint64_t n = data.size();
    MPI_Request r;
    PMPI_Ibcast(&n, 1, MPI_UINT64_T, root, c, &r);
    co_await wait(r);
    data.resize(n);
    PMPI_Ibcast(data.data(), static_cast<int>(n), MPI_BYTE, root, c, &r);
    co_await wait(r);
  }
  co_await sched_.back_to(home);
}

analysis::Task<> MpiTransport::reduce_sum(const analysis::CommDef& comm, int root, double* inout, std::size_t n) {
  if (n == 0) co_return;
  const Where home = co_await sched_.to_driver();  // (the registry is the MPI thread's)
  MPI_Comm c = comms_.tool_comm_of_gid(comm.gid);
  if (c != MPI_COMM_NULL) {  // (a communicator the tool does not track: nothing to do)
    MPI_Request r;
    if (comm.my_rank == root) {
      PMPI_Ireduce(MPI_IN_PLACE, inout, static_cast<int>(n), MPI_DOUBLE, MPI_SUM, root, c, &r);
    } else {
      PMPI_Ireduce(inout, nullptr, static_cast<int>(n), MPI_DOUBLE, MPI_SUM, root, c, &r);
    }
    co_await wait(r);
  }
  co_await sched_.back_to(home);
}

}  // namespace onlinews::rt
