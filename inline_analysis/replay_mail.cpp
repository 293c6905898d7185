// The backward replay's point-to-point records (replay_mail.hpp).
#include "replay_mail.hpp"

#include <bit>

#include "records.hpp"
#include "sync_replay.hpp"

namespace onlinews::analysis {
namespace {

enum : std::uint8_t { kFixed = 1, kValue = 2 };

// The lanes a handler with `n` lanes may use.
Sym::Lanes lane_mask(int n) { return n >= 32 ? ~Sym::Lanes{0} : (Sym::Lanes{1} << n) - 1; }

}  // namespace

ReplayMail::Key ReplayMail::key(int peer, const PointId& id) {
  return {(static_cast<std::uint64_t>(static_cast<std::uint32_t>(peer)) << 8) | static_cast<std::uint64_t>(id.kind),
          (static_cast<std::uint64_t>(id.seq) << 32) | id.epoch, id.gid};
}

ReplayMail::Key ReplayMail::waiting_key(std::size_t k) const {
  return key((*points_)[k].peer, waiting_id(k));
}

ReplayMail::PointId ReplayMail::waiting_id(std::size_t k) const {
  const SyncPoint& sp = (*points_)[k];
  const SyncKind kind = causes_p2p(sp.kind) ? waiting_kind(sp.kind) : sp.kind;
  return {static_cast<std::uint8_t>(kind), sp.seq, sp.epoch, sp.gid};
}

void ReplayMail::begin(std::vector<SyncPoint>& points, SymTable& syms, std::vector<int> lanes, Transport& t) {
  points_ = &points;
  syms_ = &syms;
  t_ = &t;
  lanes_ = std::move(lanes);
  walked_from_ = points.size();
  unknown_ = 0;
  bound_since_retry_ = false;
  waiting_nodes_.clear();
  cause_nodes_.clear();
  arrived_.assign(points.size(), Arrived{});
  parcels_.clear();
  held_.clear();
  out_.clear();
  posted_.clear();
  received_.clear();
  // Inside the replay's exchanges, values keep flowing.
  t.set_idle([this] {
    take_arrived();
    retry(false);
    flush();
  });
  for (std::size_t k = 1; k < points.size(); ++k) {
    if (waits_p2p(points[k])) waiting_nodes_[waiting_key(k)] = k;
    if (causes_p2p(points[k].kind)) cause_nodes_[waiting_key(k)] = k;
  }
}

// A record for point `k`'s peer: type, the point's id, length, payload.
void ReplayMail::queue(std::size_t k, int type, const ByteWriter& payload) {
  ByteWriter& b = out_[(*points_)[k].peer];
  b.put(static_cast<std::uint8_t>(type));
  waiting_id(k).put(b);
  b.put(static_cast<std::uint32_t>(payload.size()));
  b.append(payload.data(), payload.size());
}

bool ReplayMail::flush() {
  bool posted = false;
  for (auto& [peer, b] : out_) {
    if (b.empty()) continue;
    t_->post(peer, b.take());
    ++posted_[peer];
    posted = true;
  }
  return posted;
}

void ReplayMail::take_arrived() {
  Parcel p;
  while (t_->poll(p)) ingest(std::move(p));
}

void ReplayMail::send_fixed(std::size_t k, const ByteWriter& payload) {
  queue(k, kFixed, payload);
}

void ReplayMail::ingest(Parcel p) {
  ++received_[p.peer];
  std::size_t off = 0;
  const auto& d = p.data;
  bool kept = false;
  constexpr std::size_t kHead = 1 + PointId::kBytes + 4;  // (queue)
  while (off + kHead <= d.size()) {
    ByteReader h(&d[off], kHead);
    const auto type = h.get<std::uint8_t>();
    const PointId id = PointId::get(h);
    const auto len = h.get<std::uint32_t>();
    off += kHead;
    if (off + len > d.size()) break;
    const std::byte* payload = d.data() + off;
    off += len;
    const std::size_t* n = cause_nodes_.find(key(p.peer, id));
    if (n == nullptr) continue;  // no such point here (its send's interval was not kept)
    if (type == kValue && *n >= walked_from_ && !syms_->known(*n)) {
      bind(*n, payload, len);
      --unknown_;
      continue;
    }
    if (type != kFixed && type != kValue) continue;
    Span& slot = type == kFixed ? arrived_[*n].fixed : arrived_[*n].value;
    slot = {payload, len};  // (kept for its point, in its parcel)
    kept = true;
  }
  if (kept) parcels_.push_back(std::move(p.data));
}

void ReplayMail::bind(std::size_t node, const std::byte* payload, std::size_t len) {
  ByteReader r(payload, len);
  const int peer = (*points_)[node].peer;
  for (std::size_t s = 0; s < lanes_.size(); ++s) {
    Sym& f = syms_->form(node, s);
    f.clear();
    const Sym::Lanes used = lanes_[s] > 0 ? r.get<Sym::Lanes>() & lane_mask(lanes_[s]) : 0;
    for (Sym::Lanes m = used; m != 0; m &= m - 1) f.set_lane(std::countr_zero(m), r.get<double>());
    const auto n = r.get<std::uint32_t>();
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
      const PointId id = PointId::get(r);
      const auto coef = r.get<double>();
      // A value the sender left open: the one we send it for that wait.
      if (const std::size_t* w = waiting_nodes_.find(key(peer, id))) {
        f.terms.push_back({static_cast<std::uint32_t>(*w), coef});
      }
    }
  }
  syms_->set_known(node);
  bound_since_retry_ = true;
}

std::size_t ReplayMail::try_send(std::size_t k) {
  const int peer = (*points_)[k].peer;
  scratch_.resize(lanes_.size());
  for (std::size_t s = 0; s < lanes_.size(); ++s) {
    scratch_[s] = syms_->reduce_node(k, s);
    for (const Term& t : scratch_[s].terms) {
      // Only what the receiver will send us can be left open for it.
      if ((*points_)[t.node].peer != peer || !causes_p2p((*points_)[t.node].kind)) return t.node;
    }
  }
  ByteWriter& b = value_;
  b.clear();
  for (std::size_t s = 0; s < lanes_.size(); ++s) {
    // (The lanes in use, then their values: a wait passes on one or two
    // kinds of delay, rarely all.)
    const Sym::Lanes used = scratch_[s].used() & lane_mask(lanes_[s]);
    if (lanes_[s] > 0) b.put(used);
    for (Sym::Lanes m = used; m != 0; m &= m - 1) b.put(scratch_[s].lane(std::countr_zero(m)));
    b.put(static_cast<std::uint32_t>(scratch_[s].terms.size()));
    for (const Term& t : scratch_[s].terms) {
      waiting_id(t.node).put(b);  // (t.node is a cause point: its waiting side)
      b.put(t.coef);
    }
  }
  queue(k, kValue, b);
  return kSent;
}

void ReplayMail::send_value(std::size_t k) {
  const std::size_t blocker = try_send(k);
  if (blocker != kSent) held_.push_back({k, blocker});
}

void ReplayMail::retry(bool force) {
  if (held_.empty() || (!force && !bound_since_retry_)) return;
  bound_since_retry_ = false;
  std::size_t w = 0;
  for (std::size_t i = 0; i < held_.size(); ++i) {
    Held& h = held_[i];
    // A value stays held while the node that held it back is unknown: its
    // term stays in the value (coefficients are positive, sym.hpp: known
    // values only add to one, they never cancel it), so trying again would
    // reduce the whole value for nothing.  (In a wavefront, every rank
    // holds the values of its waits until the values from downstream
    // arrive; reduced again at every arrival they were a fifth of the
    // backward replay.)  The node is a cause point of this walk, counted in
    // unknown_ until its value arrives: settle() waits for it.
    if (!syms_->known(h.blocker)) {
      held_[w++] = h;
      continue;
    }
    h.blocker = try_send(h.point);
    if (h.blocker != kSent) held_[w++] = h;
  }
  held_.resize(w);
}

Task<ByteReader> ReplayMail::fixed_for(std::size_t k) {
  // (Point k is a cause point: ingest() files its records under k.)
  while (!arrived_[k].fixed.present()) {
    retry(false);
    flush();
    ingest(co_await t_->take_any());
    take_arrived();
  }
  // (Its parcel is kept until the next walk's begin().)
  Arrived& a = arrived_[k];
  const ByteReader fixed(a.fixed.data, a.fixed.len);
  a.fixed = {};
  if (a.value.present()) {
    bind(k, a.value.data, a.value.len);
    a.value = {};
  } else {
    ++unknown_;
  }
  co_return fixed;
}

Task<> ReplayMail::pump() {
  retry(false);
  const bool sends = flush();
  if (!sends && unknown_ == 0 && held_.empty()) co_return;  // (a trip to the MPI thread for nothing)
  co_await t_->pump();
  take_arrived();
  retry(false);
  flush();
}

Task<> ReplayMail::settle() {
  for (;;) {
    retry(unknown_ == 0);
    flush();
    if (unknown_ == 0) co_return;
    ingest(co_await t_->take_any());
    take_arrived();
  }
}

Task<> ReplayMail::finish() {
  co_await settle();
  std::map<int, std::vector<std::uint64_t>> counts;
  for (const auto& [peer, n] : posted_) counts[peer].push_back(n);
  for (const auto& [peer, n] : co_await exchange_records(*t_, counts)) {
    while (received_[peer] < n.front()) ingest(co_await t_->take_any());
  }
  t_->set_idle(nullptr);
  co_await t_->flush();
}

}  // namespace onlinews::analysis
