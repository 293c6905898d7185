// Tracks the application's point-to-point and collective requests so that completions can be
// recorded with the envelope of the operation they complete.  Touched only by
// the thread that makes the analyzed MPI calls; open addressing (the
// analysis' FlatMap), no allocation unless more than 512 requests are open.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "inline_analysis/flat_map.hpp"

namespace onlinews::rt {

struct RequestInfo {  // (RequestTable::add writes every field: a new field goes there too)
  std::uint32_t id = 0;        // tool request id (events carry it)
  std::uint16_t comm = 0;      // local communicator id
  std::uint8_t kind = 0;       // kSend / kRecv / kColl
  std::uint8_t flags = 0;      // evflag send mode | kPersistent
  bool active = false;         // persistent: started and not yet completed
  bool cancel_requested = false;
  std::int32_t peer = 0;       // dest, or requested source (normalized wildcard)
  std::int32_t tag = 0;        // tag, or requested tag (normalized wildcard)
  std::uint64_t bytes = 0;     // send size (a collective: bytes received)
  static constexpr std::uint8_t kSend = 1, kRecv = 2, kColl = 3;
};

class RequestTable {
 public:
  RequestTable() { slots_.reserve(512); }
  static std::uint64_t key(MPI_Request r) {
    std::uint64_t k = 0;
    std::memcpy(&k, &r, sizeof(r) < sizeof(k) ? sizeof(r) : sizeof(k));
    return k;
  }
  RequestInfo* find(MPI_Request r) { return r == MPI_REQUEST_NULL ? nullptr : slots_.find(key(r)); }
  // A new request with a fresh id, every field written once, in place.  (A
  // RequestInfo built on the stack and copied in was read back with wide
  // loads of just-written narrow fields, which the store buffer cannot
  // forward: event_ring.hpp says what such a load cost.)
  // (A handle already present was reused without our noticing: overwritten.)
  RequestInfo& add(MPI_Request r, std::uint16_t comm, std::uint8_t kind, std::uint8_t flags, std::int32_t peer,
                   std::int32_t tag, std::uint64_t bytes = 0) {
    RequestInfo& v = slots_[key(r)];
    v.id = next_id();
    v.comm = comm;
    v.kind = kind;
    v.flags = flags;
    v.active = false;
    v.cancel_requested = false;
    v.peer = peer;
    v.tag = tag;
    v.bytes = bytes;
    return v;
  }
  void erase(MPI_Request r) { slots_.erase(key(r)); }
  std::uint32_t next_id() { return ++last_id_ == 0 ? ++last_id_ : last_id_; }
  std::size_t size() const { return slots_.size(); }

 private:
  analysis::FlatMap<std::uint64_t, RequestInfo> slots_;
  std::uint32_t last_id_ = 0;
};

}  // namespace onlinews::rt
