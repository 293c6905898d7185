// Tracks the application's point-to-point requests so that completions can be
// recorded with the envelope of the operation they complete.  Touched only by
// the thread that makes the analyzed MPI calls; open addressing, no
// allocation unless more than half the table is in use.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace onlinews::rt {

struct RequestInfo {
  std::uint32_t id = 0;        // tool request id (events carry it)
  std::uint16_t comm = 0;      // local communicator id
  std::uint8_t kind = 0;       // kSend / kRecv
  std::uint8_t flags = 0;      // evflag send mode | kPersistent
  bool active = false;         // persistent: started and not yet completed
  bool cancel_requested = false;
  std::int32_t peer = 0;       // dest, or requested source (normalized wildcard)
  std::int32_t tag = 0;        // tag, or requested tag (normalized wildcard)
  std::uint64_t bytes = 0;     // send size
  static constexpr std::uint8_t kSend = 1, kRecv = 2;
};

class RequestTable {
 public:
  RequestTable() { slots_.resize(1024); }
  static std::uint64_t key(MPI_Request r) {
    std::uint64_t k = 0;
    std::memcpy(&k, &r, sizeof(r) < sizeof(k) ? sizeof(r) : sizeof(k));
    return k;
  }
  RequestInfo* find(MPI_Request r) {
    if (r == MPI_REQUEST_NULL || used_ == 0) return nullptr;
    const std::uint64_t k = key(r);
    for (std::size_t i = hash(k);; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (s.state == kEmpty) return nullptr;
      if (s.state == kFull && s.key == k) return &s.info;
    }
  }
  RequestInfo& insert(MPI_Request r, const RequestInfo& info) {
    if ((used_ + tombs_ + 1) * 2 > slots_.size()) rehash(used_ * 2 + 1 > slots_.size() / 2 ? slots_.size() * 2 : slots_.size());
    const std::uint64_t k = key(r);
    std::size_t i = hash(k);
    for (;; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (s.state == kFull && s.key == k) {  // handle reused without our noticing
        s.info = info;
        return s.info;
      }
      if (s.state != kFull) break;
    }
    Slot& s = slots_[i];
    if (s.state == kTomb) --tombs_;
    s.state = kFull;
    s.key = k;
    s.info = info;
    ++used_;
    return s.info;
  }
  void erase(MPI_Request r) {
    RequestInfo* p = find(r);
    if (p == nullptr) return;
    Slot* s = reinterpret_cast<Slot*>(reinterpret_cast<char*>(p) - offsetof(Slot, info));
    s->state = kTomb;
    --used_;
    ++tombs_;
  }
  std::uint32_t next_id() { return ++last_id_ == 0 ? ++last_id_ : last_id_; }
  std::size_t size() const { return used_; }

 private:
  enum : std::uint8_t { kEmpty = 0, kFull = 1, kTomb = 2 };
  struct Slot {
    std::uint64_t key = 0;
    RequestInfo info;
    std::uint8_t state = kEmpty;
  };
  std::size_t mask() const { return slots_.size() - 1; }
  std::size_t hash(std::uint64_t k) const { return (k * 0x9E3779B97F4A7C15ull >> 20) & mask(); }
  void rehash(std::size_t n) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(n, Slot{});
    used_ = tombs_ = 0;
    for (const Slot& s : old) {
      if (s.state == kFull) {
        std::size_t i = hash(s.key);
        while (slots_[i].state == kFull) i = (i + 1) & mask();
        slots_[i] = s;
        ++used_;
      }
    }
  }
  std::vector<Slot> slots_;
  std::size_t used_ = 0, tombs_ = 0;
  std::uint32_t last_id_ = 0;
};

}  // namespace onlinews::rt
