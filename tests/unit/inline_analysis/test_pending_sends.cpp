// The queue of arrived, not yet received sends (inline_analysis/
// pending_sends.hpp) against a std::map of deques under a seeded random mix
// of the operations matching uses: pushes on a few envelopes and on many
// one-message envelopes (a tag per message), reads and removals at the
// oldest and further in (receives that open requests leave messages for),
// updates in place, emptying and refilling the pool, and clear().
#include <catch2/catch.hpp>

#include <deque>
#include <map>
#include <random>
#include <vector>

#include "inline_analysis/pending_sends.hpp"

using onlinews::analysis::MsgKey;
using onlinews::analysis::PendingSends;
using onlinews::analysis::SendRecord;

namespace {

SendRecord record(int src, std::uint64_t gid, int tag, std::uint32_t seq) {
  SendRecord r;
  r.src = src;
  r.comm_gid = gid;
  r.tag = tag;
  r.seq = seq;
  r.enter = 1000 + seq;
  return r;
}

using Reference = std::map<MsgKey, std::deque<SendRecord>>;

void check_same(PendingSends& p, const Reference& ref) {
  std::size_t total = 0;
  for (const auto& [k, q] : ref) {
    REQUIRE(p.size(k) == q.size());
    std::size_t i = 0;
    p.for_each_of(k, [&](SendRecord& r) {
      REQUIRE(i < q.size());
      CHECK(r.seq == q[i].seq);
      CHECK(r.enter == q[i].enter);
      ++i;
    });
    CHECK(i == q.size());
    total += q.size();
  }
  CHECK(p.total() == total);
}

}  // namespace

TEST_CASE("PendingSends keeps each envelope's records in arrival order", "[pending_sends]") {
  PendingSends p;
  Reference ref;
  std::mt19937 rng(20261202);
  std::uint32_t seq = 0;
  int next_tag = 100;  // one-message envelopes
  std::vector<MsgKey> keys;
  for (int step = 0; step < 20000; ++step) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 4 || ref.empty()) {
      // A push on a few shared envelopes, or on a fresh tag.
      const bool fresh = rng() % 3 == 0;
      const SendRecord r = record(static_cast<int>(rng() % 3), 7 + rng() % 2, fresh ? next_tag++ : 1, seq++);
      p.push(r);
      ref[PendingSends::key_of(r)].push_back(r);
    } else if (op < 8) {
      // A receive: the oldest, or one a few in.
      auto it = ref.begin();
      std::advance(it, static_cast<long>(rng() % ref.size()));
      const MsgKey k = it->first;
      const std::size_t i = rng() % 4 == 0 ? rng() % it->second.size() : 0;
      REQUIRE(p.at(k, i).seq == it->second[i].seq);
      const SendRecord got = p.take(k, i);
      CHECK(got.seq == it->second[i].seq);
      it->second.erase(it->second.begin() + static_cast<long>(i));
      if (it->second.empty()) ref.erase(it);
      CHECK(p.size(k) == (ref.count(k) != 0 ? ref[k].size() : 0));
    } else if (op == 8) {
      // A clock correction updates a queued record in place.
      auto it = ref.begin();
      std::advance(it, static_cast<long>(rng() % ref.size()));
      const std::uint32_t which = it->second[rng() % it->second.size()].seq;
      p.for_each_of(it->first, [&](SendRecord& r) {
        if (r.seq == which) r.enter = -static_cast<std::int64_t>(which);
      });
      for (auto& r : it->second) {
        if (r.seq == which) r.enter = -static_cast<std::int64_t>(which);
      }
    } else if (rng() % 50 == 0) {
      p.clear();
      ref.clear();
    }
    if (step % 97 == 0) check_same(p, ref);
  }
  check_same(p, ref);
  // Emptied record by record, then refilled: the pool starts over.
  while (!ref.empty()) {
    auto it = ref.begin();
    p.take(it->first, 0);
    it->second.pop_front();
    if (it->second.empty()) ref.erase(it);
  }
  CHECK(p.total() == 0);
  CHECK(p.size({0, 7, 1}) == 0);
  for (std::uint32_t s = 0; s < 5; ++s) p.push(record(1, 7, 1, s));
  CHECK(p.size({1, 7, 1}) == 5);
  CHECK(p.take({1, 7, 1}, 4).seq == 4);  // the newest: the envelope's tail moves back
  p.push(record(1, 7, 1, 9));
  std::vector<std::uint32_t> order;
  p.for_each_of({1, 7, 1}, [&](SendRecord& r) { order.push_back(r.seq); });
  CHECK(order == std::vector<std::uint32_t>{0, 1, 2, 3, 9});
}
