// The event model: fixed 32-byte records, appended by the owning thread to
// its own buffer and replayed by the epoch analysis (DESIGN.md §3).
#pragma once
#include <cstdint>

namespace onlinews {

enum class EventKind : std::uint8_t {
#define ONLINEWS_EVENT(name, payload, completes, fields) name,
#include "event.def"
#undef ONLINEWS_EVENT
  kCount
};
constexpr int kEventKindCount = static_cast<int>(EventKind::kCount);

// Which fields a kind fills, and so which of Event's accessors read them.
enum class EventPayload : std::uint8_t {
  None,        // time only
  Region,      // region()
  Message,     // comm, peer, tag, bytes, request, flags
  Request,     // request
  Collective,  // comm, root(), bytes_out(), bytes_in()
  Rma,         // comm (the window's id), target(), bytes_out(), bytes_in()
  RmaSync,     // comm (the window's id), group() (post, start), target() and flags (locks, flushes)
};

constexpr const char* event_kind_name(EventKind k) {
  switch (k) {
#define ONLINEWS_EVENT(name, payload, completes, fields) \
  case EventKind::name:                                 \
    return #name;
#include "event.def"
#undef ONLINEWS_EVENT
    default:
      return "?";
  }
}

constexpr EventPayload payload_of(EventKind k) {
  switch (k) {
#define ONLINEWS_EVENT(name, payload, completes, fields) \
  case EventKind::name:                                 \
    return EventPayload::payload;
#include "event.def"
#undef ONLINEWS_EVENT
    default:
      return EventPayload::None;
  }
}

// True for events a call records after its MPI function returned (they end
// with the call's Leave and belong to the window of that Leave); the others
// carry the call's enter time.
constexpr bool completes_call(EventKind k) {
  switch (k) {
#define ONLINEWS_EVENT(name, payload, completes, fields) \
  case EventKind::name:                                 \
    return (completes) != 0;
#include "event.def"
#undef ONLINEWS_EVENT
    default:
      return false;
  }
}

namespace evflag {
constexpr std::uint8_t kSynchronous = 1;  // Ssend/Issend/Ssend_init: completes only when matched
constexpr std::uint8_t kBuffered = 2;     // Bsend family: never synchronizing
constexpr std::uint8_t kReady = 4;        // Rsend family
constexpr std::uint8_t kByTest = 8;       // completion observed by MPI_Test*: not a blocking wait
constexpr std::uint8_t kCancelled = 16;   // request was cancelled: no message
constexpr std::uint8_t kPersistent = 32;  // request from *_init + MPI_Start
constexpr std::uint8_t kNoPrecede = 64;   // MPI_Win_fence with MPI_MODE_NOPRECEDE: closes no access epoch
constexpr std::uint8_t kExclusiveLock = 128;  // MPI_Win_lock with MPI_LOCK_EXCLUSIVE
// On a CollStart: this rank receives data in the instance.
constexpr std::uint8_t kCollReceives = 1;
// On the Enter of a parallel construct or implicit task (Enter has no other
// flags): a team forked inside another team's implicit task.
constexpr std::uint8_t kNestedTeam = 1;
// On the Enter of an MPI call: its bytes field holds the call site (the
// application's return address from the call; site()).
constexpr std::uint8_t kCallSite = 2;
}  // namespace evflag

// Wildcards as recorded in RecvRequest events (the runtime normalizes the MPI
// library's own values to these).
constexpr std::int32_t kAnySource = -1;
constexpr std::int32_t kAnyTag = -1;

struct Event {
  std::uint64_t time = 0;  // ns on the location's monotonic clock
  EventKind kind = EventKind::Enter;
  std::uint8_t flags = 0;
  std::uint16_t comm = 0;  // local communicator id (runtime/definitions)
  std::int32_t peer = 0;   // dest / source / root as rank in `comm`; region id for Enter
  std::int32_t tag = 0;
  std::uint32_t request = 0;  // tool request id (0 = none)
  std::uint64_t bytes = 0;

  // Typed accessors of the payloads that reuse the message fields
  // (payload_of() says which one a kind has).
  std::uint32_t region() const { return static_cast<std::uint32_t>(peer); }  // Region
  std::int32_t team_size() const { return tag; }  // Region, of an OpenMP implicit task (0: not known)
  std::uint64_t team() const {  // ... its team's id, unique in the process (0: not known);
    return (flags & evflag::kCallSite) != 0 ? 0 : bytes;  // also of a parallel construct (the team it forks)
  }
  std::uint64_t site() const {  // Region, of an MPI call: its call site (a code address; 0: not known)
    return (flags & evflag::kCallSite) != 0 ? bytes : 0;
  }
  std::int32_t root() const { return peer; }        // Collective: rank in comm, -1 none
  std::int32_t target() const { return peer; }      // Rma, RmaSync: the target's rank in the window (-1: all)
  std::uint64_t bytes_out() const { return bytes; }  // Collective, Rma: bytes sent
  std::uint32_t handle() const { return request; }  // Probe, Match: message handle id
  std::uint32_t group() const { return request; }   // RmaSync: group id (post, start)
  // Collectives and RMA operations store the received byte count in the
  // tag/request slots (a request-based RMA operation's request is tracked by
  // the runtime, not recorded).
  std::uint64_t bytes_in() const {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(tag)) |
           (static_cast<std::uint64_t>(request) << 32);
  }
  void set_bytes_in(std::uint64_t b) {
    tag = static_cast<std::int32_t>(static_cast<std::uint32_t>(b & 0xffffffffu));
    request = static_cast<std::uint32_t>(b >> 32);
  }

  static Event enter(std::uint64_t t, std::uint32_t region, std::int32_t team_size = 0, std::uint64_t team = 0,
                     std::uint8_t flags = 0) {
    Event e;
    e.time = t;
    e.kind = EventKind::Enter;
    e.flags = flags;
    e.peer = static_cast<std::int32_t>(region);
    e.tag = team_size;
    e.bytes = team;
    return e;
  }
  static Event call_enter(std::uint64_t t, std::uint32_t region, const void* site) {
    Event e = enter(t, region, 0, reinterpret_cast<std::uintptr_t>(site), site != nullptr ? evflag::kCallSite : 0);
    return e;
  }
  static Event leave(std::uint64_t t) {
    Event e;
    e.time = t;
    e.kind = EventKind::Leave;
    return e;
  }
  static Event message(EventKind k, std::uint64_t t, std::uint16_t comm, std::int32_t peer,
                       std::int32_t tag, std::uint64_t bytes, std::uint32_t request = 0,
                       std::uint8_t flags = 0) {
    Event e;
    e.time = t;
    e.kind = k;
    e.comm = comm;
    e.peer = peer;
    e.tag = tag;
    e.bytes = bytes;
    e.request = request;
    e.flags = flags;
    return e;
  }
  static Event collective_end(std::uint64_t t, std::uint16_t comm, std::int32_t root,
                              std::uint64_t bytes_out, std::uint64_t bytes_in) {
    Event e;
    e.time = t;
    e.kind = EventKind::CollectiveEnd;
    e.comm = comm;
    e.peer = root;
    e.bytes = bytes_out;
    e.set_bytes_in(bytes_in);
    return e;
  }
  static Event rma_sync(EventKind k, std::uint64_t t, std::uint16_t window, std::uint32_t group = 0,
                        std::int32_t target = -1, std::uint8_t flags = 0) {
    return message(k, t, window, target, 0, 0, group, flags);  // (group() reads the request slot)
  }
  static Event rma(EventKind k, std::uint64_t t, std::uint16_t window, std::int32_t target,
                   std::uint64_t bytes_out, std::uint64_t bytes_in) {
    Event e = collective_end(t, window, target, bytes_out, bytes_in);
    e.kind = k;
    return e;
  }
};
static_assert(sizeof(Event) == 32, "events are 32-byte records");

}  // namespace onlinews
