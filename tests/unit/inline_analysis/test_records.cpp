// Record lists as bytes (records.hpp): the packing every exchange of the
// analysis uses, at offsets the records' alignment divides and at offsets it
// does not (the second list of a pair follows the first one's bytes).
#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "inline_analysis/local_transport.hpp"
#include "inline_analysis/records.hpp"

namespace analysis = onlinews::analysis;

namespace {

struct Three {  // 3 bytes, alignment 1: puts the list after it at odd offsets
  std::uint8_t a = 0, b = 0, c = 0;
  bool operator==(const Three& o) const { return a == o.a && b == o.b && c == o.c; }
};

std::vector<analysis::SendRecord> sends(int from, int to, int n) {
  std::vector<analysis::SendRecord> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto& s = v[static_cast<std::size_t>(i)];
    s.enter = 1000 * from + i;
    s.src = from;
    s.tag = to;
    s.seq = static_cast<std::uint32_t>(i);
  }
  return v;
}

bool same(const std::vector<analysis::SendRecord>& x, const std::vector<analysis::SendRecord>& y) {
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof x[0]) == 0);
}

}  // namespace

TEST_CASE("record lists survive bytes at aligned and unaligned offsets", "[records]") {
  const auto list = sends(3, 1, 5);
  const auto bytes = analysis::to_bytes(list);
  REQUIRE(bytes.size() == 5 * sizeof(analysis::SendRecord));
  CHECK(same(analysis::from_bytes<analysis::SendRecord>(bytes), list));
  // The same bytes one past an aligned address: read through the copy.
  std::vector<std::byte> shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  CHECK(same(analysis::from_bytes<analysis::SendRecord>(shifted.data() + 1, bytes.size()), list));
  // A trailing partial record is not read.
  CHECK(analysis::from_bytes<analysis::SendRecord>(bytes.data(), bytes.size() - 1).size() == 4);
  CHECK(analysis::to_bytes(std::vector<double>{}).empty());
  CHECK(analysis::from_bytes<double>(bytes.data(), 0).empty());
}

TEST_CASE("pairs of record lists reach every peer, the second list at odd offsets", "[records]") {
  // The second list is of SendRecord, which has default member initializers
  // (not trivial): the vector copies it element by element, so a record read
  // in place at an odd offset is a misaligned access that the ASan + UBSan
  // build (scripts/test.sh, step 4) reports.  Wrong offsets, counts or lists
  // change the values in any build.
  constexpr int kRanks = 3;
  analysis::LocalWorld world(kRanks, {7, true});
  // Rank r sends peer p (r + p) three-byte records and (2 r + p) send
  // records; no entry for itself on rank 2, two empty lists to peer 0 from
  // rank 1 (a parcel still: it carries the first list's length).
  auto threes = [](int r, int p) {
    std::vector<Three> v(static_cast<std::size_t>(r + p));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = {static_cast<std::uint8_t>(r), static_cast<std::uint8_t>(p),
                                                        static_cast<std::uint8_t>(i)};
    return v;
  };
  auto records = [](int r, int p) { return sends(r, p, 2 * r + p); };
  std::array<std::map<int, std::pair<std::vector<Three>, std::vector<analysis::SendRecord>>>, kRanks> got;
  world.run([&](int r, analysis::Transport& t) -> analysis::Task<> {
    std::map<int, std::vector<Three>> a;
    std::map<int, std::vector<analysis::SendRecord>> b;
    for (int p = 0; p < kRanks; ++p) {
      if (r == 2 && p == 2) continue;
      if (r == 1 && p == 0) {
        a[p];
        b[p];
        continue;
      }
      a[p] = threes(r, p);
      b[p] = records(r, p);
    }
    got[static_cast<std::size_t>(r)] = co_await analysis::exchange_record_pairs(t, a, b);
  });
  CHECK(got[2].count(2) == 0);
  REQUIRE(got[0].count(1) == 1);
  CHECK(got[0].at(1).first.empty());
  CHECK(got[0].at(1).second.empty());
  for (int p = 0; p < kRanks; ++p) {
    for (int r = 0; r < kRanks; ++r) {
      if ((r == 2 && p == 2) || (r == 1 && p == 0)) continue;
      INFO("from " << r << " to " << p);
      const auto& mine = got[static_cast<std::size_t>(p)];
      REQUIRE(mine.count(r) == 1);
      CHECK(mine.at(r).first == threes(r, p));
      CHECK(same(mine.at(r).second, records(r, p)));
    }
  }
}
