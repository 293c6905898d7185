// Records that travel between ranks during an epoch, and what the replay
// attaches to events from them.  Wire records are trivially copyable and sent
// as raw bytes (all ranks run the same binary).
#pragma once
#include <cstdint>
#include <type_traits>

#include "transport.hpp"

namespace onlinews::analysis {

namespace sendflag {
constexpr std::uint8_t kSynchronous = 1;  // completes only once matched (Ssend or above the eager limit)
constexpr std::uint8_t kBlocking = 2;     // MPI_Send/MPI_Ssend (not Sendrecv/Bsend/Rsend)
}  // namespace sendflag

// Sender -> receiver (forward exchange): one per point-to-point send.
struct SendRecord {
  std::uint64_t comm_gid = 0;
  std::int64_t enter = 0;     // ns: enter of the call that started the send
  std::uint64_t bytes = 0;
  std::int32_t tag = 0;
  std::int32_t src = 0;       // sender's world rank
  std::uint32_t seq = 0;      // position in the sender's list to this receiver, this epoch
  std::uint32_t epoch = 0;    // epoch in which the send was recorded
  std::uint32_t callpath = 0; // sender-local call path of the sending call
  std::uint8_t flags = 0;     // sendflag
  std::uint8_t pad[3] = {};
};
static_assert(std::is_trivially_copyable_v<SendRecord>);

// Receiver -> sender (backward exchange): one per send of this epoch whose
// receive completed in this epoch.
struct ReplyRecord {
  std::uint32_t seq = 0;       // the SendRecord's seq
  std::int32_t receiver = -1;  // world rank of the receiver
  std::int64_t post_enter = 0; // ns: enter of the call that posted the receive
  std::int64_t post_leave = 0; // ns: its leave
  double ls_wait = 0;          // Late Sender seconds of this receive (0 if none)
  std::uint64_t bytes = 0;     // echoed from the SendRecord
  std::uint8_t flags = 0;      // echoed from the SendRecord (sendflag)
  std::uint8_t pad[7] = {};
};
static_assert(std::is_trivially_copyable_v<ReplyRecord>);

// What a CollectiveEnd event learns about its instance.
struct CollResult {
  CollRecord all;             // reduced over the communicator
  ScanRecord prefix{};        // Scan/Exscan only: reduced over ranks <= me
  bool valid = false;         // false: not analyzed (size-1 comm, mismatch, skipped)
};

}  // namespace onlinews::analysis
