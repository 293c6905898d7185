// Definition unification: every rank sends its regions and call-path tree to
// rank 0, which merges them by (region name, kind), call sites by (function,
// file, line) and call paths by (parent, region, call site), and sends each
// rank the global id of every local call path.
#include <cstring>
#include <map>
#include <tuple>

#include "postpass.hpp"

namespace onlinews::postpass {
namespace {

const char* kind_name(analysis::RegionKind k) {
  switch (k) {
    case analysis::RegionKind::Root: return "root";
    case analysis::RegionKind::User: return "user";
    case analysis::RegionKind::Mpi: return "mpi";
    case analysis::RegionKind::Omp: return "omp";
    case analysis::RegionKind::Tool: return "tool";
    case analysis::RegionKind::Sampled: return "sampled";
  }
  return "user";
}

void put_str(std::vector<char>& b, const std::string& s) { b.insert(b.end(), s.c_str(), s.c_str() + s.size() + 1); }
std::string get_str(const char*& p) {
  std::string s(p);
  p += s.size() + 1;
  return s;
}

}  // namespace

Unified unify(const analysis::Definitions& defs, const analysis::CallpathTree& tree, MPI_Comm comm) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  const auto& nodes = tree.nodes();
  // This rank's call sites, named once each (addresses differ across ranks).
  std::map<std::uint64_t, std::size_t> site_index;
  std::vector<std::uint64_t> sites;
  for (const auto& n : nodes) {
    if (n.site != 0 && site_index.emplace(n.site, sites.size()).second) sites.push_back(n.site);
  }
  const std::vector<io::CallsiteRow> site_names = name_callsites(sites);
  // Serialize: call paths as (parent, region name, kind, file, line, call
  // site function, file, line) records.
  std::vector<char> buf;
  for (const auto& n : nodes) {
    const analysis::RegionDef* r = defs.region(n.region);
    const long long parent_id = n.parent == analysis::kNoCallpath ? -1 : static_cast<long long>(n.parent);
    const std::string parent = std::to_string(parent_id);
    put_str(buf, parent);
    put_str(buf, r != nullptr ? r->name : "(unknown)");
    put_str(buf, r != nullptr ? kind_name(r->kind) : "user");
    put_str(buf, r != nullptr ? r->file : "");
    put_str(buf, std::to_string(r != nullptr ? r->line : 0));
    const io::CallsiteRow* site = n.site != 0 ? &site_names[site_index[n.site]] : nullptr;
    put_str(buf, site != nullptr ? site->function : "");
    put_str(buf, site != nullptr ? site->file : "");
    put_str(buf, std::to_string(site != nullptr ? site->line : 0));
  }
  int len = static_cast<int>(buf.size());
  std::vector<int> lens(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm);
  std::vector<char> all;
  if (rank == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      displs[static_cast<std::size_t>(r)] = total;
      total += lens[static_cast<std::size_t>(r)];
    }
    all.resize(static_cast<std::size_t>(total) + 1);
  }
  PMPI_Gatherv(buf.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, comm);

  Unified u;
  std::vector<std::int64_t> maps;        // rank 0: concatenated per-rank maps
  std::vector<int> map_counts(static_cast<std::size_t>(size)), map_displs(static_cast<std::size_t>(size));
  if (rank == 0) {
    std::map<std::pair<std::string, std::string>, std::int64_t> region_ids;
    std::map<std::tuple<std::string, std::string, std::int64_t>, std::int64_t> site_ids;
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::int64_t> cp_ids;
    for (int r = 0; r < size; ++r) {
      const char* p = all.data() + displs[static_cast<std::size_t>(r)];
      const char* end = p + lens[static_cast<std::size_t>(r)];
      std::vector<std::int64_t> local;  // local cp -> global
      map_displs[static_cast<std::size_t>(r)] = static_cast<int>(maps.size());
      while (p < end) {
        const long long parent = std::stoll(get_str(p));
        const std::string name = get_str(p), kind = get_str(p), file = get_str(p);
        const long long line = std::stoll(get_str(p));
        const std::string site_function = get_str(p), site_file = get_str(p);
        const long long site_line = std::stoll(get_str(p));
        std::int64_t site = -1;
        if (!site_function.empty()) {
          auto sk = std::make_tuple(site_function, site_file, static_cast<std::int64_t>(site_line));
          auto sit = site_ids.find(sk);
          if (sit == site_ids.end()) {
            sit = site_ids.emplace(sk, static_cast<std::int64_t>(u.callsites.size())).first;
            u.callsites.push_back({site_function, site_file, site_line});
          }
          site = sit->second;
        }
        auto rk = std::make_pair(name, kind);
        auto rit = region_ids.find(rk);
        if (rit == region_ids.end()) {
          rit = region_ids.emplace(rk, static_cast<std::int64_t>(u.regions.size())).first;
          u.regions.push_back({name, kind, file, line});
        }
        const std::int64_t gparent =
            parent < 0 || parent >= static_cast<long long>(local.size()) ? -1 : local[static_cast<std::size_t>(parent)];
        auto ck = std::make_tuple(gparent, rit->second, site);
        auto cit = cp_ids.find(ck);
        if (cit == cp_ids.end()) {
          cit = cp_ids.emplace(ck, static_cast<std::int64_t>(u.callpaths.size())).first;
          u.callpaths.push_back({gparent, rit->second, site});
        }
        local.push_back(cit->second);
      }
      map_counts[static_cast<std::size_t>(r)] = static_cast<int>(local.size());
      maps.insert(maps.end(), local.begin(), local.end());
    }
    u.n_callpaths = static_cast<std::int64_t>(u.callpaths.size());
  }
  PMPI_Bcast(&u.n_callpaths, 1, MPI_INT64_T, 0, comm);
  u.callpath_map.resize(nodes.size());
  PMPI_Scatterv(maps.data(), map_counts.data(), map_displs.data(), MPI_INT64_T, u.callpath_map.data(),
                static_cast<int>(nodes.size()), MPI_INT64_T, 0, comm);
  return u;
}

std::string callsite_name(const io::CallsiteRow& site) {
  if (site.file.empty()) return site.function;
  const std::size_t slash = site.file.rfind('/');
  return site.function + " (" + (slash == std::string::npos ? site.file : site.file.substr(slash + 1)) + ":" +
         std::to_string(site.line) + ")";
}

std::string callpath_name(const Unified& u, std::int64_t cp) {
  std::string s;
  int guard = 0;
  while (cp >= 0 && cp < static_cast<std::int64_t>(u.callpaths.size()) && guard++ < 64) {
    const auto& c = u.callpaths[static_cast<std::size_t>(cp)];
    std::string name = u.regions[static_cast<std::size_t>(c.region)].name;
    if (c.callsite >= 0 && c.callsite < static_cast<std::int64_t>(u.callsites.size())) {
      name += " @ " + callsite_name(u.callsites[static_cast<std::size_t>(c.callsite)]);
    }
    s = s.empty() ? name : name + " > " + s;
    cp = c.parent;
  }
  return s;
}

}  // namespace onlinews::postpass
