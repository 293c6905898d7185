// The MPI view of an epoch: which events the engine matches, reduces and
// replays at synchronization points.  Every location (thread) of a rank may
// make MPI calls; MPI matches messages per process, not per thread, so the
// engine sees the rank's MPI calls as one stream.  When one location made all
// of this window's MPI calls (every single-threaded rank, every FUNNELED
// program) that stream is the location's own window, with no copy.  When
// several did (a SERIALIZED program, whose calls never overlap in time), it
// is their MPI calls merged in time order: MPI and tool regions with the
// events inside them, annotated as on their own locations.  Time patterns
// still walk every location's own window (replay.cpp, walk).
#include <algorithm>
#include <cstdint>
#include <tuple>

#include "engine.hpp"

namespace onlinews::analysis {
namespace {

// The windows indexed by their location.
std::vector<LocationWindow*> by_location(std::vector<LocationWindow>& windows) {
  std::vector<LocationWindow*> out;
  for (auto& w : windows) {
    const auto l = static_cast<std::size_t>(w.location);
    if (l >= out.size()) out.resize(l + 1, nullptr);
    out[l] = &w;
  }
  return out;
}

}  // namespace

Task<> Analyzer::Impl::make_view(std::vector<LocationWindow>& windows, Scheduler& sched) {
  view_loc.clear();
  view_idx.clear();
  merged.events.clear();
  merged.location = 0;  // (an empty stand-in until it is a merge)
  std::vector<LocationWindow*> with_mpi;
  for (auto& w : windows) {
    if (loc(w.location).window_mpi) with_mpi.push_back(&w);  // (annotate saw its MPI events)
  }
  // Lost events of any location may have been MPI calls: they break the
  // matching (cuts come before a buffer is half full: rare).
  view_dropped = 0;
  for (const auto& w : windows) view_dropped += w.dropped;
  concurrent = false;
  if (with_mpi.size() <= 1) {
    // Without MPI calls: the first location's window (windows are sorted:
    // the MPI thread's), which bounds the window for the replay.
    view = !with_mpi.empty() ? with_mpi.front() : !windows.empty() ? &windows.front() : &merged;
    co_return;
  }
  // Several locations: merge their MPI calls by time (a location's own
  // events keep their order: ties go by location, then index).
  struct Ref {
    std::uint64_t time;
    int location;
    std::uint32_t index;
  };
  std::vector<Ref> refs;
  for (LocationWindow* w : with_mpi) {
    const LocationState& st = loc(w->location);
    for (std::size_t i = 0; i < w->events.size(); ++i) {
      const std::uint32_t cp = st.annot[i].callpath;
      if (cp == kNoCallpath) continue;
      const RegionDef* rd = defs.region(callpaths.node(cp).region);
      if (rd == nullptr || (rd->kind != RegionKind::Mpi && rd->kind != RegionKind::Tool)) continue;
      refs.push_back({w->events[i].time, w->location, static_cast<std::uint32_t>(i)});
    }
    co_await sched.slice();
  }
  std::sort(refs.begin(), refs.end(), [](const Ref& a, const Ref& b) {
    return std::tie(a.time, a.location, a.index) < std::tie(b.time, b.location, b.index);
  });
  const std::vector<LocationWindow*> by_loc = by_location(windows);
  const std::size_t n = refs.size();
  merged.location = kViewLocation;
  merged.events.reserve(n);
  view_loc.reserve(n);
  view_idx.reserve(n);
  merged_state.annot.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    const Ref& r = refs[j];
    merged.events.push_back(by_loc[static_cast<std::size_t>(r.location)]->events[r.index]);
    merged_state.annot[j] = loc(r.location).annot[r.index];
    view_loc.push_back(r.location);
    view_idx.push_back(r.index);
  }
  merged_state.links.assign(n, -1);
  merged_state.marks.assign(n, 0);
  view = &merged;
  ++facts.threaded_mpi_windows;
  concurrent = detect_concurrency();
  if (concurrent) ++facts.concurrent_mpi_windows;
}

void Analyzer::Impl::write_back_view(std::vector<LocationWindow>& windows) {
  if (!view_merged()) return;
  const std::vector<LocationWindow*> by_loc = by_location(windows);
  // Per thread, its view events: (index, recorded time, corrected time).
  struct Moved {
    std::uint32_t index;
    std::int64_t from, to;
  };
  std::vector<std::vector<Moved>> moved(by_loc.size());
  std::vector<char> changed(by_loc.size(), 0);
  for (std::size_t j = 0; j < merged.events.size(); ++j) {
    const auto l = static_cast<std::size_t>(view_loc[j]);
    const auto from = static_cast<std::int64_t>(by_loc[l]->events[view_idx[j]].time);
    const auto to = static_cast<std::int64_t>(merged.events[j].time);
    moved[l].push_back({view_idx[j], from, to});
    if (from != to) changed[l] = 1;
  }
  // The thread's other events move with them: the shift interpolated
  // between its view events (the corrected times keep their order, so this
  // does), kept after the last one, none before the first; never backwards.
  std::vector<std::size_t> owner;
  for (std::size_t l = 0; l < changed.size(); ++l) {
    if (changed[l] == 0) continue;
    auto& ev = by_loc[l]->events;
    const auto& mv = moved[l];
    std::size_t k = 0;  // the first view event at or after i
    std::int64_t last = INT64_MIN;
    for (std::size_t i = 0; i < ev.size(); ++i) {
      const auto t = static_cast<std::int64_t>(ev[i].time);
      std::int64_t to = t;
      while (k < mv.size() && mv[k].index < i) ++k;
      if (k < mv.size() && mv[k].index == i) {
        to = mv[k].to;
      } else if (k > 0) {
        const Moved& a = mv[k - 1];
        std::int64_t shift = a.to - a.from;
        if (k < mv.size() && mv[k].from > a.from) {
          const Moved& b = mv[k];
          const double f = static_cast<double>(t - a.from) / static_cast<double>(b.from - a.from);
          shift += static_cast<std::int64_t>(f * static_cast<double>((b.to - b.from) - shift));
        }
        to = t + shift;
      }
      last = std::max(last, to);
      ev[i].time = static_cast<std::uint64_t>(last);
    }
    refresh_times(*by_loc[l], owner);
  }
  for (std::size_t j = 0; j < merged.events.size(); ++j) merged_state.annot[j] = loc(view_loc[j]).annot[view_idx[j]];
}

}  // namespace onlinews::analysis
