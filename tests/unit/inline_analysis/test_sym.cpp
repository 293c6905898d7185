// Symbolic values of the backward replay (inline_analysis/sym.hpp).
// TermList against std::vector<Term> under a seeded random mix of the
// operations Sym and SymTable use (the first two terms live in the object,
// more on the heap, copies and moves between both kinds); and SymTable's
// substitution on a hand-built chain of nodes whose values are known.
#include <catch2/catch.hpp>

#include <algorithm>
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

TEST_CASE("SymTable substitutes known values down a chain of nodes") {
  // Node 1 = 1 + 0.5 * node 2; node 2 = 2 + 0.5 * node 3; node 3 unknown,
  // then known as 4.  One slot; lane 0 carries the constants.
  SymTable t;
  t.reset(4, 1);
  t.form(1, 0).c[0] = 1;
  t.form(1, 0).terms.push_back({2, 0.5});
  t.form(2, 0).c[0] = 2;
  t.form(2, 0).terms.push_back({3, 0.5});
  t.set_known(2);
  t.set_known(1);
  Sym v = t.reduce_node(1, 0);
  REQUIRE(v.c[0] == Approx(1 + 0.5 * 2));
  REQUIRE(v.terms.size() == 1);
  REQUIRE(v.terms[0].node == 3);
  REQUIRE(v.terms[0].coef == Approx(0.25));
  t.form(3, 0).c[0] = 4;
  t.set_known(3);
  v = t.reduce_node(1, 0);
  REQUIRE(v.terms.empty());
  REQUIRE(v.c[0] == Approx(1 + 0.5 * (2 + 0.5 * 4)));
  // A Sym referring ten times to known node 1 and ten times to unknown
  // node 11: the known value added ten times, the ten references merged.
  SymTable u;
  u.reset(12, 1);
  Sym s;
  for (std::uint32_t k = 0; k < 20; ++k) s.terms.push_back({k % 2 == 0 ? 1u : 11u, 1.0});  // (over 8 left: merged)
  u.form(1, 0).c[0] = 3;
  u.set_known(1);
  const Sym r = u.reduce(s, 0);
  REQUIRE(r.c[0] == Approx(30));
  REQUIRE(r.terms.size() == 1);
  REQUIRE(r.terms[0].node == 11);
  REQUIRE(r.terms[0].coef == Approx(10));
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
