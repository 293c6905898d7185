#include "regions.hpp"

#include <cstring>
#include <mutex>
#include <unordered_map>

#include "config.hpp"
#include "postpass/postpass.hpp"
#include "mpi_regions.gen.hpp"
#include "runtime.hpp"

namespace onlinews::rt {
namespace {

std::mutex g_mu;
std::vector<analysis::RegionDef> g_all;      // every region, by id (guarded by g_mu)
std::vector<std::string> g_filters;
std::uint32_t g_tool_analysis = 0, g_tool_decide = 0, g_tool_setup = 0, g_root = 0;
std::uint32_t g_omp_first = 0;  // OmpConstruct c is region g_omp_first + c
std::vector<analysis::CollKind> g_mpi_coll;  // by MPI region id (set by init_regions)
std::vector<std::uint8_t> g_mpi_attrs;       // region_attr, by MPI region id (set by init_regions)

// A lock of the registry, inside a ToolScope: while this thread holds it,
// recording() is false, so its -finstrument-functions hooks only keep their
// depth: instrumented code run inside it (a signal handler) would otherwise
// wait for the lock this thread holds (instrument.cpp).
class RegistryLock {
 public:
  explicit RegistryLock(std::mutex& mu) : lock_(mu) {}

 private:
  ToolScope tool_;  // (first: taken before the lock, released after it)
  std::unique_lock<std::mutex> lock_;
};

std::uint32_t add_locked(analysis::RegionDef def) {
  const auto id = static_cast<std::uint32_t>(g_all.size());
  g_all.push_back(std::move(def));
  return id;
}

// Small per-thread cache from name pointer to id.
struct CacheEntry {
  const char* ptr = nullptr;    // the caller's pointer
  const char* name = nullptr;   // stable copy of the name it had
  std::uint32_t id = 0;
};
// User regions and filtered names by name (guarded by g_mu).
std::unordered_map<std::string, std::uint32_t> g_users;
std::unordered_map<std::string, std::uint32_t> g_sampled;  // sampled functions (g_mu)

bool filtered_locked(const char* name) {
  bool skip = false;
  for (const auto& f : g_filters) skip = skip || glob_match(f.c_str(), name);
  return skip;
}
constexpr std::size_t kCache = 64;
thread_local CacheEntry t_cache[kCache];

}  // namespace

void init_regions(const std::string& root_name, const std::vector<std::string>& filters) {
  RegistryLock lock(g_mu);
  g_all.clear();
  g_users.clear();
  g_sampled.clear();
  append_mpi_regions(g_all);
  g_mpi_coll.clear();
  g_mpi_attrs.clear();
  for (const auto& r : g_all) {
    g_mpi_coll.push_back(r.coll);
    g_mpi_attrs.push_back(r.attrs);
  }
  using analysis::RegionKind;
  g_tool_analysis = add_locked({"onlinews_analysis", RegionKind::Tool, {}, {}, 0, "", 0});
  g_tool_decide = add_locked({"onlinews_cut_decision", RegionKind::Tool, {}, {}, 0, "", 0});
  g_tool_setup = add_locked({"onlinews_setup", RegionKind::Tool, {}, {}, 0, "", 0});
  g_root = add_locked({root_name, RegionKind::Root, {}, {}, 0, "", 0});
  g_omp_first = static_cast<std::uint32_t>(g_all.size());
  using analysis::OmpGroup;
#define ONLINEWS_OMP_CONSTRUCT(id, name, group) add_locked({name, RegionKind::Omp, {}, {}, 0, "", 0, OmpGroup::group});
#include "ompt/constructs.def"
#undef ONLINEWS_OMP_CONSTRUCT
  g_filters = filters;
}

std::uint32_t user_region(const char* name) {
  if (name == nullptr) name = "(null)";
  const std::size_t slot = (reinterpret_cast<std::uintptr_t>(name) >> 3) % kCache;
  CacheEntry& ce = t_cache[slot];
  // A reused buffer may hold another name at the same address: compare.
  if (ce.ptr == name && std::strcmp(ce.name, name) == 0) return ce.id;
  RegistryLock lock(g_mu);
  auto it = g_users.find(name);
  if (it == g_users.end()) {
    std::uint32_t id = kFilteredRegion;
    if (!filtered_locked(name)) {
      // A user region may share its name with an MPI or tool region; it is
      // still a separate region of kind "user".
      id = static_cast<std::uint32_t>(g_all.size());
      g_all.push_back({name, analysis::RegionKind::User, {}, {}, 0, "", 0});
    }
    it = g_users.emplace(name, id).first;
  }
  ce.ptr = name;
  ce.name = it->first.c_str();  // unordered_map keys never move
  ce.id = it->second;
  return ce.id;
}

std::string function_name(std::uint64_t pc) {
  static std::mutex mu;  // (not g_mu: naming takes long, and user_region() needs g_mu meanwhile)
  static postpass::Symbolizer* symbols = nullptr;
  RegistryLock lock(mu);
  if (symbols == nullptr) symbols = new postpass::Symbolizer();
  return symbols->function(pc);
}

std::uint32_t sampled_region(const std::string& name) {
  RegistryLock lock(g_mu);
  auto it = g_sampled.find(name);
  if (it != g_sampled.end()) return it->second;
  std::uint32_t id = kFilteredRegion;
  if (!filtered_locked(name.c_str())) id = add_locked({name, analysis::RegionKind::Sampled, {}, {}, 0, "", 0});
  g_sampled.emplace(name, id);
  return id;
}

bool region_computes(std::uint32_t id) {
  RegistryLock lock(g_mu);
  if (id >= g_all.size()) return false;
  // Computation as the time categories count it; an idle worker thread's
  // region is its waiting.
  const analysis::RegionDef& r = g_all[id];
  return analysis::time_category(&r) == analysis::Metric::comp && r.omp != analysis::OmpGroup::Idle;
}

analysis::CollKind mpi_coll_kind(std::uint32_t id) {
  return id < g_mpi_coll.size() ? g_mpi_coll[id] : analysis::CollKind::None;
}

std::uint8_t mpi_region_attrs(std::uint32_t id) { return id < g_mpi_attrs.size() ? g_mpi_attrs[id] : 0; }

std::uint32_t omp_region(OmpConstruct c) { return g_omp_first + static_cast<std::uint32_t>(c); }

void publish_regions(std::vector<analysis::RegionDef>& regions) {
  RegistryLock lock(g_mu);
  for (std::size_t i = regions.size(); i < g_all.size(); ++i) regions.push_back(g_all[i]);
}

std::uint32_t tool_region_analysis() { return g_tool_analysis; }
std::uint32_t tool_region_decide() { return g_tool_decide; }
std::uint32_t tool_region_setup() { return g_tool_setup; }
std::uint32_t root_region() { return g_root; }

}  // namespace onlinews::rt
