// Values of the backward replay that depend on messages not yet arrived.
//
// What a waiting rank tells the rank that caused its wait partly depends on
// what it learned at its own later points (the long-term delay costs it
// passes on, the critical-path candidates it holds).  Waiting for those
// messages point by point makes the replay a chain of round trips as long
// as the window's chain of waits (a master-worker farm: every task), each
// as slow as the other rank's next MPI call.  Instead every rank walks its
// window without waiting and keeps such values symbolic: a Sym is a
// constant plus a linear combination of the values still to come at its
// *cause nodes* (the points where it caused someone else's wait, whose
// value the waiting side sends).  Both analyses that need them are linear:
// delay costs add scaled costs, and critical-path candidate masks are
// disjoint bit sets, whose sum is their union.
//
// Nodes are the synchronization points of the window (by index).  A
// waiting node's value is the Sym its handlers computed; a cause node's is
// unknown until its message arrives, and that message may itself refer to
// the values of *our* waiting nodes (the sender expresses what it does not
// know yet in terms of what we will send it: sync_replay.cpp).  Every
// reference points to a later node (a higher index: a value depends only
// on what happened after it), so substitution always terminates.
#pragma once
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "findings.hpp"
#include "small_vec.hpp"

namespace onlinews::analysis {

// Values per node: the widest handler, delay costs, keeps one per delay kind
// (the long-term costs a wait passes on, by the kind they finally cause).
constexpr int kMaxLanes = kDelayKinds;

// Coefficients are positive (delay costs scale by a wait's share of its
// interval, critical-path masks add with 1): a symbol, once in a value,
// stays there until its node is known (ReplayMail::retry relies on it).
struct Term {
  std::uint32_t node;
  double coef;
};

// A Sym's terms: most values have none or one or two (a wait's cause, the
// value of one later wait).
using TermList = SmallVec<Term, 2>;

// A value: a constant per lane plus terms.  Only the lanes in `used()` are
// stored, packed in lane order, the first kInline in the object: delay
// costs have 16 lanes, one per delay kind, but a program's waits pass on
// one or two kinds, and copying, adding and sending all 16 (a Sym of 184
// bytes, in tables of one per synchronization point) cost a fifth of a
// wavefront's analysis (bench_replay, benchmarks/README.md).
class Sym {
 public:
  using Lanes = std::uint32_t;  // a bit per lane
  static_assert(kMaxLanes <= 16);  // (count())
  static constexpr int kInline = 4;

  TermList terms;

  Sym() = default;
  Sym(const Sym& o) : terms(o.terms) { assign_lanes(o); }
  Sym(Sym&& o) noexcept : terms(std::move(o.terms)) { take_lanes(o); }
  Sym& operator=(const Sym& o) {
    if (this != &o) {
      assign_lanes(o);
      terms = o.terms;
    }
    return *this;
  }
  Sym& operator=(Sym&& o) noexcept {
    if (this != &o) {
      if (o.heap_ != nullptr && capacity() < count(o.used_)) {
        delete[] heap_;
        heap_ = nullptr;
        take_lanes(o);
      } else {
        assign_lanes(o);  // (fits: no allocation)
      }
      terms = std::move(o.terms);
    }
    return *this;
  }
  ~Sym() { delete[] heap_; }

  // Back to 0 (keeps the heap blocks).
  void clear() {
    used_ = 0;
    terms.clear();
  }
  // The lanes of `o`, without its terms.
  void assign_lanes(const Sym& o) {
    const int n = count(o.used_);
    if (n > capacity()) grow(n, false);
    std::copy(o.data(), o.data() + n, data());
    used_ = o.used_;
  }

  Lanes used() const { return used_; }
  double lane(int i) const {
    const Lanes b = Lanes{1} << i;
    return (used_ & b) != 0 ? data()[index(b)] : 0.0;
  }
  void set_lane(int i, double v) {
    const Lanes b = Lanes{1} << i;
    if ((used_ & b) != 0) {
      data()[index(b)] = v;
    } else {
      insert(b, v);
    }
  }
  void add_lane(int i, double v) {
    const Lanes b = Lanes{1} << i;
    if ((used_ & b) != 0) {
      data()[index(b)] += v;
    } else if (v != 0.0) {
      insert(b, v);
    }
  }
  // Every lane, the unused ones 0.
  std::array<double, kMaxLanes> lanes() const {
    std::array<double, kMaxLanes> out{};
    const double* v = data();
    for (Lanes m = used_; m != 0; m &= m - 1) out[static_cast<std::size_t>(std::countr_zero(m))] = *v++;
    return out;
  }

  bool constant() const { return terms.empty(); }
  bool zero() const {
    if (!terms.empty()) return false;
    const double* v = data();
    return std::all_of(v, v + count(used_), [](double x) { return x == 0.0; });
  }
  void add(const Sym& o, double scale = 1.0) {
    if ((o.used_ & ~used_) == 0) {  // (the usual case: no new lane)
      const double* from = o.data();
      double* to = data();
      for (Lanes m = o.used_; m != 0; m &= m - 1) to[index(m & -m)] += scale * *from++;
    } else {
      merge_lanes(o, scale);
    }
    for (const Term& t : o.terms) terms.push_back({t.node, scale * t.coef});
  }

 private:
  // (std::popcount is a libgcc call on baseline x86-64, without the
  // instruction: 2 % of a wavefront's analysis.)
  static int count(Lanes m) {
#if defined(__POPCNT__)
    return std::popcount(m);
#else
    return kBits[m & 0xffu] + kBits[m >> 8];
#endif
  }
  static constexpr std::array<std::uint8_t, 256> kBits = [] {
    std::array<std::uint8_t, 256> t{};
    for (unsigned i = 0; i < 256; ++i) t[i] = static_cast<std::uint8_t>(std::popcount(i));
    return t;
  }();
  // Where lane bit `b` is (or would be) stored: the used lanes below it.
  int index(Lanes b) const { return count(used_ & (b - 1)); }
  int capacity() const { return heap_ != nullptr ? static_cast<int>(cap_) : kInline; }
  double* data() { return heap_ != nullptr ? heap_ : inline_; }
  const double* data() const { return heap_ != nullptr ? heap_ : inline_; }
  // Room for `n` lanes on the heap, the stored ones kept if `keep`.
  void grow(int n, bool keep);
  // A new lane (bit `b`) with value `v`.
  void insert(Lanes b, double v);
  // this += scale * o, where `o` has lanes this one lacks.
  void merge_lanes(const Sym& o, double scale);
  void take_lanes(Sym& o) noexcept {
    used_ = o.used_;
    if (o.heap_ != nullptr) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.heap_ = nullptr;
      o.cap_ = 0;
    } else {
      std::copy(o.inline_, o.inline_ + count(o.used_), inline_);
    }
    o.used_ = 0;
  }
  Lanes used_ = 0;
  std::uint32_t cap_ = 0;   // of heap_
  double inline_[kInline];  // NOLINT: only the first count(used_) are read
  double* heap_ = nullptr;
};

// The values of one window's nodes, per handler (slot).
class SymTable {
 public:
  void reset(std::size_t nodes, std::size_t slots);
  // A node's value is known: a walked waiting node, or a cause node whose
  // message arrived.  `form(n, s)` is then its value for handler slot `s`.
  bool known(std::size_t n) const { return n < known_.size() && known_[n]; }
  Sym& form(std::size_t n, std::size_t s) {
    if (stamp_[n] != window_) fresh(n);
    return forms_[n * slots_ + s];
  }
  // Marks `n` known (its forms set); references to nodes that are not
  // later than `n` are dropped (they can only come from inconsistent
  // clocks, and would make a cycle).
  void set_known(std::size_t n);
  // `s` with every known node substituted, recursively: a constant plus
  // terms over nodes still unknown.
  Sym reduce(const Sym& s, std::size_t slot);
  // The same for the value of node `n` (without building a one-term Sym).
  Sym reduce_node(std::size_t n, std::size_t slot);

 private:
  // Substitutes known nodes in node `n`'s own form (memoized until the
  // next node becomes known).
  void normalize(std::size_t n, std::size_t slot);
  static void merge(Sym& s);
  // Node `n`'s forms, left from an earlier window, back to 0.  (Clearing
  // every form at reset() was a separate pass over the table each window,
  // 2-4 % of a wavefront's analysis.)
  void fresh(std::size_t n);
  struct Frame {
    std::size_t node, next;
  };
  std::vector<Frame> stack_;

  std::size_t slots_ = 0;
  std::vector<Sym> forms_;
  std::vector<std::uint8_t> known_;
  std::vector<std::uint32_t> stamp_;  // per node: the window its forms belong to
  std::uint32_t window_ = 0;
  // Per (node, slot): the generation its form was normalized at (never
  // reset: generations only grow, across windows too).
  std::vector<std::uint64_t> clean_;
  std::uint64_t generation_ = 1;
};

}  // namespace onlinews::analysis
