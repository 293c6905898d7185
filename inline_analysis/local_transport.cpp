#include "local_transport.hpp"

#include <cstring>
#include <exception>
#include <thread>

namespace onlinews::analysis {
namespace {

enum Op : int { kExchange = 1, kAllreduce = 2, kScan = 3, kMax = 4, kBcast = 5, kReduce = 6 };

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

}  // namespace

class LocalTransport final : public Transport {
 public:
  LocalTransport(LocalWorld& w, int rank) : w_(w), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return w_.size(); }

  void exchange(const std::vector<Parcel>& out, std::vector<Parcel>& in) override {
    // Serialize: [count][dest][len][bytes]...
    std::vector<std::byte> c;
    auto put = [&](const void* p, std::size_t n) {
      const auto* b = static_cast<const std::byte*>(p);
      c.insert(c.end(), b, b + n);
    };
    const std::uint64_t count = out.size();
    put(&count, sizeof count);
    for (const auto& p : out) {
      const std::int64_t dest = p.peer;
      const std::uint64_t len = p.data.size();
      put(&dest, sizeof dest);
      put(&len, sizeof len);
      put(p.data.data(), len);
    }
    const int n = w_.size();
    auto result = w_.meet({kExchange, 0, seq_[{kExchange, 0}]++}, n, rank_, std::move(c), [n](LocalWorld::Meeting& m) {
      // Route every parcel to its destination, ordered by source.
      for (int src = 0; src < n; ++src) {
        const auto& c2 = m.in[src];
        std::size_t off = 0;
        std::uint64_t cnt;
        std::memcpy(&cnt, c2.data(), sizeof cnt);
        off += sizeof cnt;
        for (std::uint64_t k = 0; k < cnt; ++k) {
          std::int64_t dest;
          std::uint64_t len;
          std::memcpy(&dest, c2.data() + off, sizeof dest);
          off += sizeof dest;
          std::memcpy(&len, c2.data() + off, sizeof len);
          off += sizeof len;
          auto& o = m.out[static_cast<std::size_t>(dest)];
          const std::int64_t s = src;
          o.insert(o.end(), reinterpret_cast<const std::byte*>(&s), reinterpret_cast<const std::byte*>(&s) + sizeof s);
          o.insert(o.end(), reinterpret_cast<const std::byte*>(&len),
                   reinterpret_cast<const std::byte*>(&len) + sizeof len);
          o.insert(o.end(), c2.begin() + static_cast<std::ptrdiff_t>(off),
                   c2.begin() + static_cast<std::ptrdiff_t>(off + len));
          off += len;
        }
      }
    });
    in.clear();
    std::size_t off = 0;
    while (off < result.size()) {
      std::int64_t src;
      std::uint64_t len;
      std::memcpy(&src, result.data() + off, sizeof src);
      off += sizeof src;
      std::memcpy(&len, result.data() + off, sizeof len);
      off += sizeof len;
      Parcel p;
      p.peer = static_cast<int>(src);
      p.data.assign(result.begin() + static_cast<std::ptrdiff_t>(off),
                    result.begin() + static_cast<std::ptrdiff_t>(off + len));
      off += len;
      in.push_back(std::move(p));
    }
  }

  void allreduce(const CommDef& comm, CollRecord* inout, std::size_t n) override {
    const int members = comm.size;
    auto result = w_.meet({kAllreduce, comm.gid, seq_[{kAllreduce, comm.gid}]++}, members, comm.my_rank,
                          bytes_of(inout, n), [members, n](LocalWorld::Meeting& m) {
                            std::vector<CollRecord> acc(n);
                            copy_out(m.in[0], acc.data(), n);
                            for (int r = 1; r < members; ++r) {
                              std::vector<CollRecord> x(n);
                              copy_out(m.in[r], x.data(), n);
                              for (std::size_t k = 0; k < n; ++k) combine(acc[k], x[k]);
                            }
                            for (auto& o : m.out) o = bytes_of(acc.data(), n);
                          });
    copy_out(result, inout, n);
  }

  void scan(const CommDef& comm, ScanRecord* inout, std::size_t n) override {
    const int members = comm.size;
    auto result = w_.meet({kScan, comm.gid, seq_[{kScan, comm.gid}]++}, members, comm.my_rank, bytes_of(inout, n),
                          [members, n](LocalWorld::Meeting& m) {
                            std::vector<ScanRecord> acc(n);
                            copy_out(m.in[0], acc.data(), n);
                            m.out[0] = bytes_of(acc.data(), n);
                            for (int r = 1; r < members; ++r) {
                              std::vector<ScanRecord> x(n);
                              copy_out(m.in[r], x.data(), n);
                              for (std::size_t k = 0; k < n; ++k) combine(acc[k], x[k]);
                              m.out[r] = bytes_of(acc.data(), n);
                            }
                          });
    copy_out(result, inout, n);
  }

  void post(int peer, std::vector<std::byte> data) override {
    std::lock_guard<std::mutex> lock(w_.mu_);
    w_.mail_[{rank_, peer}].push_back(std::move(data));
    w_.cv_.notify_all();
  }
  std::vector<std::byte> take(int peer) override {
    std::unique_lock<std::mutex> lock(w_.mu_);
    auto& q = w_.mail_[{peer, rank_}];
    w_.cv_.wait(lock, [&] { return !q.empty(); });
    std::vector<std::byte> d = std::move(q.front());
    q.pop_front();
    return d;
  }
  void flush() override {}

  void bcast(const CommDef& comm, int root, std::vector<std::byte>& data) override {
    const int members = comm.size;
    data = w_.meet({kBcast, comm.gid, seq_[{kBcast, comm.gid}]++}, members, comm.my_rank, data,
                   [members, root](LocalWorld::Meeting& m) {
                     for (int r = 0; r < members; ++r) m.out[static_cast<std::size_t>(r)] = m.in[static_cast<std::size_t>(root)];
                   });
  }

  void reduce_sum(const CommDef& comm, int root, double* inout, std::size_t n) override {
    const int members = comm.size;
    auto result = w_.meet({kReduce, comm.gid, seq_[{kReduce, comm.gid}]++}, members, comm.my_rank,
                          bytes_of(inout, n), [members, n, root](LocalWorld::Meeting& m) {
                            std::vector<double> acc(n, 0.0), x(n);
                            for (int r = 0; r < members; ++r) {
                              copy_out(m.in[static_cast<std::size_t>(r)], x.data(), n);
                              for (std::size_t k = 0; k < n; ++k) acc[k] += x[k];
                            }
                            m.out[static_cast<std::size_t>(root)] = bytes_of(acc.data(), n);
                          });
    if (comm.my_rank == root) copy_out(result, inout, n);
  }

  void allreduce_max(double* inout, std::size_t n) override {
    const int members = w_.size();
    auto result = w_.meet({kMax, 0, seq_[{kMax, 0}]++}, members, rank_, bytes_of(inout, n),
                          [members, n](LocalWorld::Meeting& m) {
                            std::vector<double> acc(n);
                            copy_out(m.in[0], acc.data(), n);
                            for (int r = 1; r < members; ++r) {
                              std::vector<double> x(n);
                              copy_out(m.in[r], x.data(), n);
                              for (std::size_t k = 0; k < n; ++k) acc[k] = std::max(acc[k], x[k]);
                            }
                            for (auto& o : m.out) o = bytes_of(acc.data(), n);
                          });
    copy_out(result, inout, n);
  }

 private:
  LocalWorld& w_;
  int rank_;
  std::map<std::pair<int, std::uint64_t>, std::uint64_t> seq_;
};

LocalWorld::LocalWorld(int ranks) : ranks_(ranks) {}

std::vector<std::byte> LocalWorld::meet(const Key& key, int members, int my_index, std::vector<std::byte> contribution,
                                        const std::function<void(Meeting&)>& combine_fn) {
  std::unique_lock<std::mutex> lock(mu_);
  Meeting& m = meetings_[key];
  if (m.expected == 0) {
    m.expected = members;
    m.in.resize(static_cast<std::size_t>(members));
    m.out.resize(static_cast<std::size_t>(members));
  }
  m.in[static_cast<std::size_t>(my_index)] = std::move(contribution);
  if (++m.arrived == m.expected) {
    combine_fn(m);
    m.ready = true;
    cv_.notify_all();
  } else {
    cv_.wait(lock, [&] { return m.ready; });
  }
  std::vector<std::byte> mine = std::move(m.out[static_cast<std::size_t>(my_index)]);
  if (++m.collected == m.expected) meetings_.erase(key);
  return mine;
}

void LocalWorld::run(const std::function<void(int, Transport&)>& body) {
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(ranks_));
  for (int r = 0; r < ranks_; ++r) {
    threads.emplace_back([&, r] {
      LocalTransport t(*this, r);
      try {
        body(r, t);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace onlinews::analysis
