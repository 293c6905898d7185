// The point-to-point messages of the backward replay (sync_replay.cpp).
//
// Each wait a rank suffered gives two records for the rank that caused it:
// its *fixed part* (what the rank's own window decides: the wait, the
// interval profile), sent for every waiting point before the walk starts,
// and its *value* (what depends on the rank's later points: long-term
// costs, critical-path candidates; sym.hpp), sent during the walk as soon
// as it can be expressed for the receiver -- known, or in terms of values
// the receiver itself will send.  Neither walk ever waits for the other
// rank's walk to reach a point: a rank waits only for fixed parts (sent
// up front) and, at the end, for the values its walk
// left open.  Between a master and its workers, whose values refer to each
// other's, the whole exchange then takes a constant number of rounds
// instead of one round trip per task.
//
// Records travel batched per peer (one parcel per peer and flush); every
// rank counts the parcels it posted and the peers take all of them before
// the replay ends.
#pragma once
#include <cstdint>
#include <map>
#include <functional>
#include <vector>

#include "bytes.hpp"
#include "flat_map.hpp"
#include "sym.hpp"
#include "transport.hpp"

namespace onlinews::analysis {

struct SyncPoint;

class ReplayMail {
 public:
  // A new walk over `points` (kinds, peers and keys as collected); `lanes`
  // per handler slot.
  void begin(std::vector<SyncPoint>& points, SymTable& syms, std::vector<int> lanes, Transport& t);
  // Waiting point `k`: its fixed part, sent with the next flush.
  void send_fixed(std::size_t k, const ByteWriter& payload);
  // The walk has reached point `k` (everything from `k` up is walked).
  void walked(std::size_t k) { walked_from_ = k; }
  // Waiting point `k` is walked (its value forms are set): send the value
  // as soon as it can be expressed for the receiver.
  void send_value(std::size_t k);
  // Cause point `k` (walked): the waiting side's fixed part, waiting for it
  // if needed; its value is bound if it arrived.  The reader's bytes stay
  // valid until the next begin().
  Task<ByteReader> fixed_for(std::size_t k);
  // Sends what is queued and takes what has arrived (never waits).
  Task<> pump();
  // Waits until every walked cause point's value is known, and sends every
  // value still held back.
  Task<> settle();
  // The end of the walk: every parcel posted to this rank is taken.
  Task<> finish();

 private:
  // Names a point alike on both ranks of its pair: the waiting side's
  // SyncKind, the message's seq (or the scan's instance), the epoch and the
  // communicator's gid.  Records carry it in their header and in every term
  // of a value.
  struct PointId {
    std::uint8_t kind = 0;
    std::uint32_t seq = 0, epoch = 0;
    std::uint64_t gid = 0;
    static constexpr std::size_t kBytes = 1 + 4 + 4 + 8;
    void put(ByteWriter& b) const {
      b.put(kind);
      b.put(seq);
      b.put(epoch);
      b.put(gid);
    }
    static PointId get(ByteReader& r) {
      PointId id;
      id.kind = r.get<std::uint8_t>();
      id.seq = r.get<std::uint32_t>();
      id.epoch = r.get<std::uint32_t>();
      id.gid = r.get<std::uint64_t>();
      return id;
    }
  };
  struct Key {
    std::uint64_t a = 0, b = 0, c = 0;  // (peer, kind), (seq, epoch), gid
    bool operator==(const Key& o) const { return a == o.a && b == o.b && c == o.c; }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::uint64_t>()((k.a * 0x9E3779B97F4A7C15ull ^ k.b) * 0xff51afd7ed558ccdull ^ k.c);
    }
  };
  static Key key(int peer, const PointId& id);
  // Of a waiting point / of a cause point's waiting side.
  PointId waiting_id(std::size_t k) const;
  Key waiting_key(std::size_t k) const;
  void queue(std::size_t k, int type, const ByteWriter& payload);
  bool flush();         // false: nothing was queued
  void take_arrived();  // ingests every parcel that has arrived (never waits)
  void ingest(Parcel p);
  void bind(std::size_t node, const std::byte* payload, std::size_t len);
  // Sends waiting point `k`'s value if it can be expressed for the
  // receiver (kSent); else names a node that keeps it from that.
  static constexpr std::size_t kSent = static_cast<std::size_t>(-1);
  std::size_t try_send(std::size_t k);
  void retry(bool force);

  std::vector<SyncPoint>* points_ = nullptr;
  SymTable* syms_ = nullptr;
  Transport* t_ = nullptr;
  std::vector<int> lanes_;
  std::size_t walked_from_ = 0;
  std::uint64_t unknown_ = 0;  // walked cause points whose value did not arrive yet
  bool bound_since_retry_ = false;
  // Where a record arrived before its point was walked: its bytes in the
  // parcel it came in, kept in parcels_ until the next walk.
  struct Span {
    const std::byte* data = nullptr;
    std::uint32_t len = 0;
    bool present() const { return data != nullptr; }
  };
  // (Flat maps, and records read where they arrived: a node or a vector per
  // record was a tenth of the epoch analysis, bench_replay; a copy into an
  // arena that grows by doubling was a third of the page faults of a
  // short run's final epoch, benchmarks/README.md, fifty-third session.)
  FlatMap<Key, std::size_t, KeyHash> waiting_nodes_, cause_nodes_;
  // Per cause point, filed at arrival under the point its key names (one
  // lookup per record instead of a hashed insert, find and erase per record
  // and point: those were ~10 % of bench_replay's large window, a cache
  // miss each).
  struct Arrived {
    Span fixed, value;
  };
  std::vector<Arrived> arrived_;
  std::vector<std::vector<std::byte>> parcels_;  // those that held a Span when they arrived (a moved vector keeps its bytes)
  ByteWriter value_;              // scratch of try_send
  struct Held {
    std::size_t point, blocker;  // a waiting point whose value waits, and a node it waits for
  };
  std::vector<Held> held_;
  std::map<int, ByteWriter> out_;                                    // records per peer, not posted yet
  std::map<int, std::uint64_t> posted_, received_;                  // parcels per peer
  std::vector<Sym> scratch_;
};

}  // namespace onlinews::analysis
