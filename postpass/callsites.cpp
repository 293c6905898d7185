// Call sites: the code addresses MPI calls returned to (Event::site()),
// named at MPI_Finalize, once per distinct address, off the hot path.  With
// elfutils' libdw (ONLINEWS_HAVE_LIBDW) an address gets the function from
// the object's symbol table and file and line from its DWARF line table
// (where it has one: -g); without libdw, dladdr names exported functions
// only.  An address no symbol covers is named by its object and offset,
// which is the same on every rank that runs the same binary (the address
// itself is not, under ASLR).
#include <cxxabi.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "postpass.hpp"

#if ONLINEWS_HAVE_LIBDW
#include <elfutils/libdwfl.h>
#endif

namespace onlinews::postpass {
namespace {

std::string demangled(const char* symbol) {
  if (symbol == nullptr) return {};
  int status = 0;
  char* d = abi::__cxa_demangle(symbol, nullptr, nullptr, &status);
  std::string out = status == 0 && d != nullptr ? d : symbol;
  std::free(d);
  return out;
}
std::string base_name(const char* path) {
  if (path == nullptr) return "?";
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}
std::string offset_name(const char* object, std::uint64_t offset) {
  char hex[32];
  std::snprintf(hex, sizeof hex, "+0x%llx", static_cast<unsigned long long>(offset));
  return base_name(object) + hex;
}

std::string object_name(const char* object) { return "[" + base_name(object) + "]"; }

// A compiler's clone of a function (GCC: foo.constprop.0, foo.isra.0,
// foo.part.0, foo.cold; demangled C++: "foo() [clone .constprop.0]") is
// named after the function: its time is the function's.
std::string without_clone_suffix(std::string name) {
  const std::size_t clone = name.find(" [clone ");
  if (clone != std::string::npos) return name.substr(0, clone);
  for (const char* suffix : {".constprop.", ".isra.", ".part.", ".cold", ".lto_priv.", ".localalias"}) {
    const std::size_t at = name.find(suffix);
    if (at != std::string::npos && at > 0) return name.substr(0, at);
  }
  return name;
}

#if ONLINEWS_HAVE_LIBDW
bool report_modules(Dwfl* dwfl) {
  dwfl_report_begin_add(dwfl);
  return dwfl_linux_proc_report(dwfl, getpid()) == 0 && dwfl_report_end(dwfl, nullptr, nullptr) == 0;
}
#endif

// The fallback: dladdr (dynamic symbols only).
io::CallsiteRow by_dladdr(std::uint64_t pc) {
  io::CallsiteRow r;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(pc), &info) == 0) {
    r.function = offset_name("?", pc);
    return r;
  }
  const std::uint64_t base = reinterpret_cast<std::uintptr_t>(info.dli_fbase);
  r.function = info.dli_sname != nullptr ? demangled(info.dli_sname) : offset_name(info.dli_fname, pc - base);
  return r;
}

}  // namespace

Symbolizer::Symbolizer() {
#if ONLINEWS_HAVE_LIBDW
  static char* debuginfo_path = nullptr;
  // (Separate debug files only by build id, locally: the standard finder
  // falls back to debuginfod, network requests inside MPI_Finalize.)
  static const Dwfl_Callbacks callbacks = {dwfl_linux_proc_find_elf, dwfl_build_id_find_debuginfo, nullptr,
                                           &debuginfo_path};
  Dwfl* dwfl = dwfl_begin(&callbacks);
  const bool reported = dwfl != nullptr && report_modules(dwfl);
  if (dwfl != nullptr && !reported) {
    dwfl_end(dwfl);
    dwfl = nullptr;
  }
  dwfl_ = dwfl;
#endif
}

Symbolizer::~Symbolizer() {
#if ONLINEWS_HAVE_LIBDW
  if (dwfl_ != nullptr) dwfl_end(static_cast<Dwfl*>(dwfl_));
#endif
}

io::CallsiteRow Symbolizer::name(std::uint64_t pc) const {
#if ONLINEWS_HAVE_LIBDW
  Dwfl_Module* m = dwfl_ != nullptr ? dwfl_addrmodule(static_cast<Dwfl*>(dwfl_), pc) : nullptr;
  if (m != nullptr) {
    io::CallsiteRow r;
    const char* symbol = dwfl_module_addrname(m, pc);
    if (symbol != nullptr) {
      r.function = demangled(symbol);
    } else {
      Dwarf_Addr start = 0;
      const char* object = dwfl_module_info(m, nullptr, &start, nullptr, nullptr, nullptr, nullptr, nullptr);
      r.function = offset_name(object, pc - start);
    }
    if (Dwfl_Line* line = dwfl_module_getsrc(m, pc)) {
      int lineno = 0;
      const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
      if (file != nullptr) {
        r.file = file;
        r.line = lineno;
      }
    }
    return r;
  }
#endif
  return by_dladdr(pc);
}

std::string Symbolizer::function(std::uint64_t pc) {
#if ONLINEWS_HAVE_LIBDW
  if (dwfl_ != nullptr) {
    auto* dwfl = static_cast<Dwfl*>(dwfl_);
    Dwfl_Module* m = dwfl_addrmodule(dwfl, pc);
    // (A few times at most: an address outside every module stays unnamed.)
    if (m == nullptr && reports_ < 8) {
      ++reports_;
      if (report_modules(dwfl)) m = dwfl_addrmodule(dwfl, pc);
    }
    if (m == nullptr) return "[unknown]";
    if (const char* symbol = dwfl_module_addrname(m, pc)) return without_clone_suffix(demangled(symbol));
    return object_name(dwfl_module_info(m, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr));
  }
#endif
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(pc), &info) == 0) return "[unknown]";
  return info.dli_sname != nullptr ? without_clone_suffix(demangled(info.dli_sname)) : object_name(info.dli_fname);
}

std::vector<io::CallsiteRow> name_callsites(const std::vector<std::uint64_t>& sites) {
  const Symbolizer symbols;
  std::vector<io::CallsiteRow> out;
  out.reserve(sites.size());
  // (A return address follows the call: its line is the one before.)
  for (const std::uint64_t site : sites) out.push_back(symbols.name(site > 0 ? site - 1 : 0));
  return out;
}

}  // namespace onlinews::postpass
