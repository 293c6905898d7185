#include "local_transport.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

namespace onlinews::analysis {
namespace {

enum Op : int { kExchange = 1, kAllreduce = 2, kScan = 3, kMax = 4, kBcast = 5, kReduce = 6, kGather = 7 };

template <class T>
std::vector<std::byte> bytes_of(const T* p, std::size_t n) {
  std::vector<std::byte> b(n * sizeof(T));
  if (n > 0) std::memcpy(b.data(), p, b.size());
  return b;
}
template <class T>
void copy_out(const std::vector<std::byte>& b, T* p, std::size_t n) {
  if (n > 0) std::memcpy(p, b.data(), std::min(b.size(), n * sizeof(T)));
}
template <class T>
void put(std::vector<std::byte>& c, const T& v) {
  const auto* b = reinterpret_cast<const std::byte*>(&v);
  c.insert(c.end(), b, b + sizeof(T));
}
template <class T>
T get(const std::vector<std::byte>& c, std::size_t& off) {
  T v;
  std::memcpy(&v, c.data() + off, sizeof(T));
  off += sizeof(T);
  return v;
}

}  // namespace

class LocalTransport final : public Transport {
 public:
  LocalTransport(LocalWorld& w, int rank) : w_(w), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return w_.size(); }
  Scheduler& scheduler() override { return sched_; }
  void begin_epoch(int epoch) override { parity_ = epoch & 1; }

  Task<> exchange(const std::vector<Parcel>& out, std::vector<Parcel>& in) override {
    // Serialize: [count][dest][len][bytes]...
    std::vector<std::byte> c;
    put<std::uint64_t>(c, out.size());
    for (const auto& p : out) {
      put<std::int64_t>(c, p.peer);
      put<std::uint64_t>(c, p.data.size());
      c.insert(c.end(), p.data.begin(), p.data.end());
    }
    const int n = w_.size();
    auto result = co_await meet(kExchange, 0, n, rank_, std::move(c), [n](LocalWorld::Meeting& m) {
      // Route every parcel to its destination, ordered by source.
      for (int src = 0; src < n; ++src) {
        const auto& c2 = m.in[static_cast<std::size_t>(src)];
        std::size_t off = 0;
        const auto cnt = get<std::uint64_t>(c2, off);
        for (std::uint64_t k = 0; k < cnt; ++k) {
          const auto dest = get<std::int64_t>(c2, off);
          const auto len = get<std::uint64_t>(c2, off);
          auto& o = m.out[static_cast<std::size_t>(dest)];
          put<std::int64_t>(o, src);
          put<std::uint64_t>(o, len);
          o.insert(o.end(), c2.begin() + static_cast<std::ptrdiff_t>(off),
                   c2.begin() + static_cast<std::ptrdiff_t>(off + len));
          off += len;
        }
      }
    });
    in.clear();
    std::size_t off = 0;
    while (off < result.size()) {
      Parcel p;
      p.peer = static_cast<int>(get<std::int64_t>(result, off));
      const auto len = get<std::uint64_t>(result, off);
      p.data.assign(result.begin() + static_cast<std::ptrdiff_t>(off),
                    result.begin() + static_cast<std::ptrdiff_t>(off + len));
      off += len;
      in.push_back(std::move(p));
    }
  }

  Task<> allreduce(const CommDef& comm, CollRecord* inout, std::size_t n) override {
    const int members = comm.size;
    auto result = co_await meet(kAllreduce, comm.gid, members, comm.my_rank, bytes_of(inout, n),
                                [members, n](LocalWorld::Meeting& m) {
                                  std::vector<CollRecord> acc(n), x(n);
                                  copy_out(m.in[0], acc.data(), n);
                                  for (int r = 1; r < members; ++r) {
                                    copy_out(m.in[static_cast<std::size_t>(r)], x.data(), n);
                                    for (std::size_t k = 0; k < n; ++k) combine(acc[k], x[k]);
                                  }
                                  for (auto& o : m.out) o = bytes_of(acc.data(), n);
                                });
    copy_out(result, inout, n);
  }

  Task<> scan(const CommDef& comm, ScanRecord* inout, std::size_t n) override {
    const int members = comm.size;
    auto result = co_await meet(kScan, comm.gid, members, comm.my_rank, bytes_of(inout, n),
                                [members, n](LocalWorld::Meeting& m) {
                                  std::vector<ScanRecord> acc(n), x(n);
                                  copy_out(m.in[0], acc.data(), n);
                                  m.out[0] = bytes_of(acc.data(), n);
                                  for (int r = 1; r < members; ++r) {
                                    copy_out(m.in[static_cast<std::size_t>(r)], x.data(), n);
                                    for (std::size_t k = 0; k < n; ++k) combine(acc[k], x[k]);
                                    m.out[static_cast<std::size_t>(r)] = bytes_of(acc.data(), n);
                                  }
                                });
    copy_out(result, inout, n);
  }

  Task<> allreduce_max(double* inout, std::size_t n) override {
    const int members = w_.size();
    auto result = co_await meet(kMax, 0, members, rank_, bytes_of(inout, n), [members, n](LocalWorld::Meeting& m) {
      std::vector<double> acc(n), x(n);
      copy_out(m.in[0], acc.data(), n);
      for (int r = 1; r < members; ++r) {
        copy_out(m.in[static_cast<std::size_t>(r)], x.data(), n);
        for (std::size_t k = 0; k < n; ++k) acc[k] = std::max(acc[k], x[k]);
      }
      for (auto& o : m.out) o = bytes_of(acc.data(), n);
    });
    copy_out(result, inout, n);
  }

  Task<> gather(const std::vector<std::byte>& mine, std::vector<std::vector<std::byte>>& all) override {
    const int members = w_.size();
    auto result = co_await meet(kGather, 0, members, rank_, mine, [members](LocalWorld::Meeting& m) {
      for (int r = 0; r < members; ++r) {
        const auto& c = m.in[static_cast<std::size_t>(r)];
        put<std::uint64_t>(m.out[0], c.size());
        m.out[0].insert(m.out[0].end(), c.begin(), c.end());
      }
    });
    all.clear();
    std::size_t off = 0;
    while (off < result.size()) {
      const auto len = get<std::uint64_t>(result, off);
      all.emplace_back(result.begin() + static_cast<std::ptrdiff_t>(off),
                       result.begin() + static_cast<std::ptrdiff_t>(off + len));
      off += len;
    }
  }

  void post(int peer, std::vector<std::byte> data) override {
    w_.mail_[{rank_, peer, parity_}].push_back(std::move(data));
    ++w_.changes_;
  }
  Task<Parcel> take_any() override {
    Parcel p;
    while (!poll_now(p)) co_await sched_.next_tick();
    for (int d = w_.delay(); d > 0; --d) co_await sched_.next_tick();
    co_return p;
  }
  bool poll(Parcel& out) override {
    if (w_.delay() > 0) return false;  // scrambled: not here yet
    return poll_now(out);
  }
  Task<> pump() override {
    for (int d = w_.delay(); d > 0; --d) co_await sched_.next_tick();
  }
  Task<> flush() override { co_return; }

  Task<> bcast(const CommDef& comm, int root, std::vector<std::byte>& data) override {
    const int members = comm.size;
    data = co_await meet(kBcast, comm.gid, members, comm.my_rank, data, [members, root](LocalWorld::Meeting& m) {
      for (int r = 0; r < members; ++r) m.out[static_cast<std::size_t>(r)] = m.in[static_cast<std::size_t>(root)];
    });
  }

  Task<> reduce_sum(const CommDef& comm, int root, double* inout, std::size_t n) override {
    const int members = comm.size;
    auto result = co_await meet(kReduce, comm.gid, members, comm.my_rank, bytes_of(inout, n),
                                [members, n, root](LocalWorld::Meeting& m) {
                                  std::vector<double> acc(n, 0.0), x(n);
                                  for (int r = 0; r < members; ++r) {
                                    copy_out(m.in[static_cast<std::size_t>(r)], x.data(), n);
                                    for (std::size_t k = 0; k < n; ++k) acc[k] += x[k];
                                  }
                                  m.out[static_cast<std::size_t>(root)] = bytes_of(acc.data(), n);
                                });
    if (comm.my_rank == root) copy_out(result, inout, n);
  }

 private:
  // Deposits this rank's part, waits (ticks) until the meeting is complete,
  // and collects the result.
  Task<std::vector<std::byte>> meet(int op, std::uint64_t gid, int members, int my_index,
                                    std::vector<std::byte> contribution,
                                    std::function<void(LocalWorld::Meeting&)> combine) {
    const LocalWorld::Key key{op, gid, seq_[{op, gid}]++};
    LocalWorld::Meeting* m = &w_.deposit(key, members, my_index, std::move(contribution), combine);
    while (!m->ready) {
      idle();
      co_await sched_.next_tick();
    }
    for (int d = w_.delay(); d > 0; --d) co_await sched_.next_tick();
    co_return w_.collect(key, my_index);
  }

  // Takes the first message waiting from any peer (peers in turn).
  bool poll_now(Parcel& out) {
    const int n = w_.size();
    for (int i = 0; i < n; ++i) {
      const int peer = (next_peer_ + i) % n;
      auto it = w_.mail_.find({peer, rank_, parity_});
      if (it == w_.mail_.end() || it->second.empty()) continue;
      out.peer = peer;
      out.data = std::move(it->second.front());
      it->second.pop_front();
      ++w_.changes_;
      next_peer_ = (peer + 1) % n;
      return true;
    }
    return false;
  }

  LocalWorld& w_;
  int next_peer_ = 0;
  int rank_;
  int parity_ = 0;
  Scheduler sched_;
  std::map<std::pair<int, std::uint64_t>, std::uint64_t> seq_;
};

LocalWorld::LocalWorld(int ranks, Options options) : ranks_(ranks), options_(options), rng_(options.seed) {}

int LocalWorld::delay() {
  if (!options_.scramble) return 0;
  return static_cast<int>(rng_() % 4);
}

LocalWorld::Meeting& LocalWorld::deposit(const Key& key, int members, int my_index,
                                         std::vector<std::byte> contribution,
                                         const std::function<void(Meeting&)>& combine_fn) {
  Meeting& m = meetings_[key];  // std::map: references stay valid while others are added
  if (m.expected == 0) {
    m.expected = members;
    m.in.resize(static_cast<std::size_t>(members));
    m.out.resize(static_cast<std::size_t>(members));
  }
  m.in[static_cast<std::size_t>(my_index)] = std::move(contribution);
  if (++m.arrived == m.expected) {
    combine_fn(m);
    m.ready = true;
  }
  ++changes_;
  return m;
}

std::vector<std::byte> LocalWorld::collect(const Key& key, int my_index) {
  auto it = meetings_.find(key);
  std::vector<std::byte> mine = std::move(it->second.out[static_cast<std::size_t>(my_index)]);
  if (++it->second.collected == it->second.expected) meetings_.erase(it);
  ++changes_;
  return mine;
}

void LocalWorld::run(const std::function<Task<>(int, Transport&)>& body) {
  std::vector<std::unique_ptr<LocalTransport>> transports;
  std::vector<Task<>> tasks;
  for (int r = 0; r < ranks_; ++r) transports.push_back(std::make_unique<LocalTransport>(*this, r));
  for (int r = 0; r < ranks_; ++r) tasks.push_back(body(r, *transports[static_cast<std::size_t>(r)]));
  ticks_ = 0;
  std::uniform_int_distribution<int> coin(0, 1);
  auto budget = [&] {
    // Scrambled: half of the resumptions may do only a sliver of local work.
    return options_.scramble && coin(rng_) == 0 ? std::chrono::nanoseconds(1) : std::chrono::nanoseconds(0);
  };
  for (int r = 0; r < ranks_; ++r) {
    transports[static_cast<std::size_t>(r)]->scheduler().set_budget(budget());
    tasks[static_cast<std::size_t>(r)].start();
  }
  std::vector<int> order(static_cast<std::size_t>(ranks_));
  for (int r = 0; r < ranks_; ++r) order[static_cast<std::size_t>(r)] = r;
  int idle_rounds = 0;
  for (;;) {
    bool all_done = true;
    for (auto& t : tasks) all_done = all_done && t.done();
    if (all_done) break;
    std::shuffle(order.begin(), order.end(), rng_);
    const std::uint64_t before = changes_;
    bool sliced = false;
    for (int r : order) {
      Scheduler& s = transports[static_cast<std::size_t>(r)]->scheduler();
      if (tasks[static_cast<std::size_t>(r)].done() || !s.waiting()) continue;
      sliced = sliced || !s.waiting_for_remote();
      ++ticks_;
      s.resume(budget());
    }
    // Late completions count down only while ranks are resumed, so allow a
    // few rounds without a state change before calling it a deadlock.
    idle_rounds = (changes_ == before && !sliced) ? idle_rounds + 1 : 0;
    if (idle_rounds > 16) {
      std::string who;
      for (int r = 0; r < ranks_; ++r) {
        if (!tasks[static_cast<std::size_t>(r)].done()) who += " " + std::to_string(r);
      }
      throw std::runtime_error("LocalWorld: deadlock, ranks" + who + " wait for each other");
    }
  }
  for (auto& t : tasks) t.result();  // rethrows a body's exception
}

}  // namespace onlinews::analysis
