#include "sample_placer.hpp"

#include <algorithm>

#include "regions.hpp"

namespace onlinews::rt {

void SamplePlacer::track(const Event& e, SampleNames& names) {
  if (e.kind == EventKind::Enter) {
    open_.push_back(names.computes(e.region()) ? 1 : 0);
  } else if (e.kind == EventKind::Leave && !open_.empty()) {
    open_.pop_back();
  }
  bound_ = std::max(bound_, e.time);
}

std::size_t SamplePlacer::place_before(std::vector<Event>& events, std::uint64_t limit, std::size_t h,
                                       SampleNames& names) {
  const bool computing = !open_.empty() && open_.back() != 0;
  struct Visit {
    std::uint32_t region = kFilteredRegion;
    std::uint64_t begin = 0, last = 0;  // span start; its latest sample
  } v;
  bool any = false;
  auto close = [&](std::uint64_t end) {
    if (v.region != kFilteredRegion && end > v.begin) {
      events.push_back(Event::enter(v.begin, v.region));
      events.push_back(Event::leave(end));
    }
    bound_ = std::max(bound_, end);
  };
  for (; h < held_.size(); ++h) {
    const Sample s{names.to_ns(held_[h].time), held_[h].pc};
    if (s.time >= limit) break;
    if (s.time < bound_ || (any && s.time < v.last)) {
      ++late_;
      continue;
    }
    if (!computing || names.in_tool(s.pc)) {
      ++outside_;
      continue;
    }
    ++placed_;
    const std::uint32_t region = names.region_of(s.pc);
    // Where the previous sample's span ends and this one's begins.
    std::uint64_t end = 0, begin = std::max(bound_, s.time >= half_ ? s.time - half_ : 0);
    if (any) {
      const std::uint64_t gap = s.time - v.last;
      end = gap <= 2 * half_ ? v.last + gap / 2 : v.last + half_;
      begin = gap <= 2 * half_ ? end : s.time - half_;
      if (region == v.region && begin == end) {
        v.last = s.time;  // (the same visit goes on)
        continue;
      }
      close(end);
    }
    v = {region, begin, s.time};
    any = true;
  }
  if (any) close(std::min(limit, v.last + half_));
  return h;
}

void SamplePlacer::place(std::vector<Event>& events, std::size_t first, const std::vector<Sample>& fresh,
                         SampleNames& names) {
  hold(fresh);
  if (held_.empty()) {
    for (std::size_t i = first; i < events.size(); ++i) track(events[i], names);
    return;
  }
  // The new events again, with the samples in front of each.
  added_.assign(events.begin() + static_cast<std::ptrdiff_t>(first), events.end());
  events.resize(first);
  std::size_t h = 0;
  for (const Event& e : added_) {
    h = place_before(events, e.time, h, names);
    events.push_back(e);
    track(e, names);
  }
  held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(h));
}

void SamplePlacer::flush(std::vector<Event>& events, std::uint64_t t, std::uint64_t until, SampleNames& names) {
  std::size_t h = place_before(events, std::min(t, until), 0, names);
  while (h < held_.size() && names.to_ns(held_[h].time) < t) {
    ++late_;
    ++h;
  }
  held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(h));
  bound_ = std::max(bound_, t);  // (also the window's end: nothing is placed before it again)
}

}  // namespace onlinews::rt
