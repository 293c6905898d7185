// Substitution of known values into symbolic ones (sym.hpp).
#include "sym.hpp"

#include <algorithm>

#include "resident.hpp"

namespace onlinews::analysis {

void Sym::grow(int n, bool keep) {
  const int cap = std::max({n, 2 * capacity(), kInline + 1});
  auto* block = new double[static_cast<std::size_t>(cap)];
  if (keep) std::copy(data(), data() + count(used_), block);
  delete[] heap_;
  heap_ = block;
  cap_ = static_cast<std::uint32_t>(cap);
}

void Sym::insert(Lanes b, double v) {
  const int n = count(used_);
  if (n + 1 > capacity()) grow(n + 1, true);
  double* d = data();
  const int at = index(b);
  std::copy_backward(d + at, d + n, d + n + 1);
  d[at] = v;
  used_ |= b;
}

void Sym::merge_lanes(const Sym& o, double scale) {
  const Lanes all = used_ | o.used_;
  double out[kMaxLanes];
  const double* mine = data();
  const double* theirs = o.data();
  int k = 0;
  for (Lanes m = all; m != 0; m &= m - 1) {
    const Lanes b = m & -m;
    double v = (used_ & b) != 0 ? *mine++ : 0.0;
    if ((o.used_ & b) != 0) v += scale * *theirs++;
    out[k++] = v;
  }
  if (k > capacity()) grow(k, false);
  std::copy(out, out + k, data());
  used_ = all;
}

void SymTable::reset(std::size_t nodes, std::size_t slots) {
  slots_ = slots;
  resize_resident(forms_, nodes * slots);
  resize_resident(clean_, nodes * slots);
  assign_resident(known_, nodes, std::uint8_t{0});
  if (++window_ == 0) {  // (wrapped: no stamp may look current)
    std::fill(stamp_.begin(), stamp_.end(), 0u);
    window_ = 1;
  }
  resize_resident(stamp_, nodes);  // (new nodes: stamp 0, older than any window)
  ++generation_;
}

void SymTable::fresh(std::size_t n) {
  for (std::size_t s = 0; s < slots_; ++s) forms_[n * slots_ + s].clear();
  stamp_[n] = window_;
}

void SymTable::set_known(std::size_t n) {
  if (n >= known_.size()) return;
  for (std::size_t s = 0; s < slots_; ++s) {
    auto& t = form(n, s).terms;
    t.erase(std::remove_if(t.begin(), t.end(), [n](const Term& x) { return x.node <= n; }),
            t.end());
  }
  known_[n] = 1;
  ++generation_;  // normalized forms may refer to `n`: substitute again
}

void SymTable::merge(Sym& s) {
  auto& t = s.terms;
  if (t.size() > 8) {
    std::sort(t.begin(), t.end(), [](const Term& a, const Term& b) { return a.node < b.node; });
    std::size_t w = 0;
    for (std::size_t r = 0; r < t.size(); ++r) {
      if (w > 0 && t[w - 1].node == t[r].node) {
        t[w - 1].coef += t[r].coef;
      } else {
        t[w++] = t[r];
      }
    }
    t.resize(w);
  }
  t.erase(std::remove_if(t.begin(), t.end(), [](const Term& x) { return x.coef == 0.0; }), t.end());
}

void SymTable::normalize(std::size_t n, std::size_t slot) {
  auto clean = [&](std::size_t x) {
    return form(x, slot).terms.empty() || clean_[x * slots_ + slot] == generation_;
  };
  if (clean(n)) return;
  // Post-order over the known nodes the form refers to, without recursion
  // (a farm's chain of references can be as long as the window).  Every
  // reference points to a higher node, so this ends.
  stack_.clear();
  stack_.push_back({n, 0});
  while (!stack_.empty()) {
    const std::size_t x = stack_.back().node;
    Sym& f = form(x, slot);
    if (stack_.back().next < f.terms.size()) {
      const std::size_t m = f.terms[stack_.back().next++].node;
      if (known(m) && !clean(m)) stack_.push_back({m, 0});
      continue;
    }
    // (Most forms, once normalized, refer to no node that became known
    // since: they stay as they are, without building a new one.)
    if (std::any_of(f.terms.begin(), f.terms.end(), [&](const Term& t) { return known(t.node); })) {
      Sym out;
      out.assign_lanes(f);
      for (const Term& t : f.terms) {
        if (known(t.node)) {
          out.add(form(t.node, slot), t.coef);
        } else {
          out.terms.push_back(t);
        }
      }
      merge(out);
      f = std::move(out);
    }
    clean_[x * slots_ + slot] = generation_;
    stack_.pop_back();
  }
}

Sym SymTable::reduce(const Sym& s, std::size_t slot) {
  Sym out;
  out.assign_lanes(s);
  for (const Term& t : s.terms) {
    if (known(t.node)) {
      normalize(t.node, slot);
      out.add(form(t.node, slot), t.coef);
    } else {
      out.terms.push_back(t);
    }
  }
  merge(out);
  return out;
}

Sym SymTable::reduce_node(std::size_t n, std::size_t slot) {
  Sym out;
  if (known(n)) {
    normalize(n, slot);
    out.add(form(n, slot));
    merge(out);
  } else {
    out.terms.push_back({static_cast<std::uint32_t>(n), 1.0});
  }
  return out;
}

}  // namespace onlinews::analysis
