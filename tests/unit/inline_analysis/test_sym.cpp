// Symbolic values of the backward replay (inline_analysis/sym.hpp).
// TermList against std::vector<Term> under a seeded random mix of the
// operations Sym and SymTable use (the first two terms live in the object,
// more on the heap, copies and moves between both kinds); and SymTable's
// substitution on a hand-built chain of nodes whose values are known.  A
// Sym's lanes (packed, the first four in the object) against a dense array
// under the same kind of random mix; and a table reused for a second
// window starts from 0.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <random>
#include <vector>

#include "inline_analysis/sym.hpp"

using onlinews::analysis::Sym;
using onlinews::analysis::SymTable;
using onlinews::analysis::Term;
using onlinews::analysis::TermList;

namespace {

bool same(const TermList& a, const std::vector<Term>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (a[i].node != b[i].node || a[i].coef != b[i].coef) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("TermList keeps the terms a vector keeps, inline and on the heap") {
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    std::vector<TermList> lists(4);
    std::vector<std::vector<Term>> ref(4);
    for (int step = 0; step < 20000; ++step) {
      const std::size_t i = rng() % 4, j = rng() % 4;
      switch (rng() % 8) {
        case 0:
        case 1: {  // (often: lists grow past the inline terms)
          const Term t{static_cast<std::uint32_t>(rng() % 100), static_cast<double>(rng() % 9)};
          lists[i].push_back(t);
          ref[i].push_back(t);
          break;
        }
        case 2:
          lists[i] = lists[j];
          ref[i] = ref[j];
          break;
        case 3: {  // j's terms move to i, j is left empty
          TermList moved(std::move(lists[j]));
          lists[j] = TermList{};
          lists[i] = std::move(moved);
          std::vector<Term> terms = ref[j];
          ref[j].clear();
          ref[i] = terms;
          break;
        }
        case 4: {  // the remove_if idiom of SymTable
          const std::uint32_t below = static_cast<std::uint32_t>(rng() % 100);
          auto keep = [below](const Term& t) { return t.node < below; };
          lists[i].erase(std::remove_if(lists[i].begin(), lists[i].end(), keep), lists[i].end());
          ref[i].erase(std::remove_if(ref[i].begin(), ref[i].end(), keep), ref[i].end());
          break;
        }
        case 5:
          if (!ref[i].empty()) {
            const std::size_t n = rng() % ref[i].size();
            lists[i].resize(n);
            ref[i].resize(n);
          }
          break;
        case 6:
          if (rng() % 8 == 0) {
            lists[i].clear();
            ref[i].clear();
          }
          break;
        case 7:  // one of its own terms (which growing moves)
          if (!ref[i].empty()) {
            const std::size_t k = rng() % ref[i].size();
            lists[i].push_back(lists[i][k]);
            ref[i].push_back(Term(ref[i][k]));
          }
          break;
      }
      REQUIRE(same(lists[i], ref[i]));
      REQUIRE(same(lists[j], ref[j]));
    }
  }
}

TEST_CASE("a Sym's copy owns its terms") {
  Sym a;
  for (std::uint32_t n = 1; n <= 5; ++n) a.terms.push_back({n, 0.5 * n});  // on the heap
  Sym b = a;
  b.terms[0].coef = 7;
  b.terms.push_back({9, 1});
  REQUIRE(a.terms.size() == 5);
  REQUIRE(a.terms[0].coef == 0.5);
  REQUIRE(b.terms.size() == 6);
  Sym c;
  c.terms.push_back({3, 1});  // inline
  b = c;                      // (b keeps its heap block)
  REQUIRE(b.terms.size() == 1);
  REQUIRE(b.terms[0].node == 3);
}

namespace {

using Dense = std::array<double, onlinews::analysis::kMaxLanes>;

bool same_lanes(const Sym& s, const Dense& d) {
  const Dense got = s.lanes();
  for (int i = 0; i < onlinews::analysis::kMaxLanes; ++i) {
    if (got[static_cast<std::size_t>(i)] != d[static_cast<std::size_t>(i)]) return false;
    if (s.lane(i) != d[static_cast<std::size_t>(i)]) return false;
  }
  return s.zero() == std::all_of(d.begin(), d.end(), [](double x) { return x == 0.0; });
}

}  // namespace

TEST_CASE("Sym lanes behave as a dense array of lanes") {
  // Values are small integers times powers of two: every sum is exact, so
  // the packed and the dense results must agree to the bit.
  constexpr int kLanes = onlinews::analysis::kMaxLanes;
  std::mt19937 rng(20261201);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::vector<Sym> syms(6);
  std::vector<Dense> ref(6, Dense{});
  for (int step = 0; step < 20000; ++step) {
    const auto i = static_cast<std::size_t>(pick(6)), j = static_cast<std::size_t>(pick(6));
    const int lane = pick(kLanes);
    const double v = static_cast<double>(pick(9) - 4);  // (0 too: adding 0 adds no lane)
    switch (pick(8)) {
      case 0:
        syms[i].set_lane(lane, v);
        ref[i][static_cast<std::size_t>(lane)] = v;
        break;
      case 1:
        syms[i].add_lane(lane, v);
        ref[i][static_cast<std::size_t>(lane)] += v;
        break;
      case 2: {  // (i == j: adds a value to itself)
        const double scale = pick(2) == 0 ? 0.5 : 2.0;
        const Dense o = ref[j];
        syms[i].add(syms[j], scale);
        for (int k = 0; k < kLanes; ++k) ref[i][static_cast<std::size_t>(k)] += scale * o[static_cast<std::size_t>(k)];
        syms[i].terms.clear();
        break;
      }
      case 3:
        syms[i] = syms[j];
        ref[i] = ref[j];
        break;
      case 4:
        if (i != j) {
          syms[i] = std::move(syms[j]);
          ref[i] = ref[j];
          syms[j].clear();  // (a moved-from Sym is cleared before reuse)
          ref[j] = Dense{};
        }
        break;
      case 5: {
        Sym copy(syms[j]);
        Sym moved(std::move(copy));
        syms[i] = moved;
        ref[i] = ref[j];
        break;
      }
      case 6:
        syms[i].clear();
        ref[i] = Dense{};
        break;
      default: {
        Sym other;
        other.assign_lanes(syms[j]);
        syms[i].assign_lanes(other);
        ref[i] = ref[j];
        break;
      }
    }
    REQUIRE(same_lanes(syms[i], ref[i]));
    REQUIRE(same_lanes(syms[j], ref[j]));
  }
  // All sixteen lanes at once (on the heap), and back to one.
  Sym all;
  Dense d{};
  for (int k = kLanes - 1; k >= 0; --k) {
    all.add_lane(k, k + 1.0);
    d[static_cast<std::size_t>(k)] = k + 1.0;
  }
  REQUIRE(same_lanes(all, d));
  Sym one;
  one.set_lane(3, 1.0);
  all = one;
  REQUIRE(same_lanes(all, Dense{0, 0, 0, 1.0}));
}

TEST_CASE("SymTable substitutes known values down a chain of nodes") {
  // Node 1 = 1 + 0.5 * node 2; node 2 = 2 + 0.5 * node 3; node 3 unknown,
  // then known as 4.  One slot; lane 0 carries the constants.
  SymTable t;
  t.reset(4, 1);
  t.form(1, 0).set_lane(0, 1);
  t.form(1, 0).terms.push_back({2, 0.5});
  t.form(2, 0).set_lane(0, 2);
  t.form(2, 0).terms.push_back({3, 0.5});
  t.set_known(2);
  t.set_known(1);
  Sym v = t.reduce_node(1, 0);
  REQUIRE(v.lane(0) == Approx(1 + 0.5 * 2));
  REQUIRE(v.terms.size() == 1);
  REQUIRE(v.terms[0].node == 3);
  REQUIRE(v.terms[0].coef == Approx(0.25));
  t.form(3, 0).set_lane(0, 4);
  t.set_known(3);
  v = t.reduce_node(1, 0);
  REQUIRE(v.terms.empty());
  REQUIRE(v.lane(0) == Approx(1 + 0.5 * (2 + 0.5 * 4)));
  // A Sym referring ten times to known node 1 and ten times to unknown
  // node 11: the known value added ten times, the ten references merged.
  SymTable u;
  u.reset(12, 1);
  Sym s;
  for (std::uint32_t k = 0; k < 20; ++k) s.terms.push_back({k % 2 == 0 ? 1u : 11u, 1.0});  // (over 8 left: merged)
  u.form(1, 0).set_lane(0, 3);
  u.set_known(1);
  const Sym r = u.reduce(s, 0);
  REQUIRE(r.lane(0) == Approx(30));
  REQUIRE(r.terms.size() == 1);
  REQUIRE(r.terms[0].node == 11);
  REQUIRE(r.terms[0].coef == Approx(10));
}

TEST_CASE("SymTable starts every window from 0") {
  // A table reused for a second window (as the replay does, window after
  // window): forms it does not set again read as 0, known ones as set.
  SymTable t;
  t.reset(4, 2);
  t.form(1, 0).set_lane(0, 5);
  t.form(1, 1).set_lane(1, 6);
  t.form(2, 0).terms.push_back({3, 1.0});
  t.set_known(1);
  t.reset(6, 2);  // (more nodes: the table grows)
  REQUIRE_FALSE(t.known(1));
  REQUIRE(t.form(1, 0).zero());
  REQUIRE(t.form(1, 1).zero());
  REQUIRE(t.form(2, 0).zero());
  t.form(5, 1).set_lane(1, 2);
  t.set_known(5);
  REQUIRE(t.reduce_node(5, 1).lane(1) == 2);
  REQUIRE(t.reduce_node(5, 0).zero());
  t.reset(3, 3);  // (fewer nodes, more slots)
  for (std::size_t n = 0; n < 3; ++n) {
    for (std::size_t s = 0; s < 3; ++s) REQUIRE(t.form(n, s).zero());
  }
}

TEST_CASE("SymTable drops references to nodes that are not later") {
  // Only inconsistent clocks make them; kept, they would make a cycle.
  SymTable t;
  t.reset(3, 1);
  t.form(2, 0).terms.push_back({1, 1.0});
  t.form(2, 0).terms.push_back({2, 1.0});
  t.set_known(2);
  REQUIRE(t.form(2, 0).terms.empty());
}

// The interval time maps' kind of list (sync_replay.hpp): eight inline,
// reserved ahead, shrunk in place, moved out of and copied.
TEST_CASE("SmallVec reserves, shrinks, moves and copies like a vector", "[sym]") {
  using onlinews::analysis::SmallVec;
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    SmallVec<double, 8> v;
    std::vector<double> ref;
    const std::size_t n = rng() % 20;
    v.reserve(rng() % 2 == 0 ? n : 0);
    for (std::size_t i = 0; i < n; ++i) {
      const double x = static_cast<double>(rng() % 1000);
      v.push_back(x);
      ref.push_back(x);
    }
    const std::size_t keep = n > 0 ? rng() % (n + 1) : 0;
    v.resize(keep);
    ref.resize(keep);
    SmallVec<double, 8> copy = v;
    SmallVec<double, 8> moved = std::move(v);
    REQUIRE(moved.size() == ref.size());
    REQUIRE(copy.size() == ref.size());
    CHECK(std::equal(moved.begin(), moved.end(), ref.begin()));
    CHECK(std::equal(copy.begin(), copy.end(), ref.begin()));
    CHECK(v.empty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty
    // Copied and moved onto lists of other sizes, inline and on the heap
    // (a heap block receiving an inline list keeps its block).
    SmallVec<double, 8> other;
    const std::size_t m = rng() % 20;
    for (std::size_t i = 0; i < m; ++i) other.push_back(-1.0);
    other = moved;
    REQUIRE(other.size() == ref.size());
    CHECK(std::equal(other.begin(), other.end(), ref.begin()));
    SmallVec<double, 8> target;
    for (std::size_t i = 0; i < m; ++i) target.push_back(-2.0);
    target = std::move(copy);
    REQUIRE(target.size() == ref.size());
    CHECK(std::equal(target.begin(), target.end(), ref.begin()));
  }
}
