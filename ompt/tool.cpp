// ompt_start_tool: the entry point an OpenMP runtime looks for (OpenMP 5.x
// §4.2.1).  LLVM's libomp calls it once, at its initialization, which may
// come before or after MPI_Init; the callbacks record only between MPI_Init
// and MPI_Finalize (rt::recording()).
#include <link.h>
#include <omp-tools.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "callbacks.hpp"
#include "ompt.hpp"
#include "runtime/config.hpp"

namespace onlinews::ompt {
namespace {

bool g_started = false;
int g_unavailable = 0;        // callbacks the runtime will never (or only sometimes) deliver
const char* g_missing = nullptr;  // the first of them

int initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (set_callback == nullptr) return 0;  // (0: the runtime drops the tool)
  // Every callback of the list, with the support level the runtime returns:
  // "sometimes" and better are used, "never" counted (and named in the
  // finalize report at ONLINEWS_VERBOSE=1).
#define ONLINEWS_OMPT_CALLBACK(event, handler)                                                     \
  if (set_callback(event, reinterpret_cast<ompt_callback_t>(&handler)) < ompt_set_sometimes) {     \
    ++g_unavailable;                                                                                \
    if (g_missing == nullptr) g_missing = #event;                                                   \
  }
#include "callbacks.def"
#undef ONLINEWS_OMPT_CALLBACK
  g_started = true;
  return 1;
}

void finalize(ompt_data_t*) {}

// Which OpenMP runtime the process loaded, if any.
struct Loaded {
  bool libgomp = false, libomp = false;
};
Loaded loaded_runtimes() {
  Loaded l;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* p) {
        auto* out = static_cast<Loaded*>(p);
        const char* name = info->dlpi_name;
        if (name == nullptr) return 0;
        const char* base = std::strrchr(name, '/');
        base = base != nullptr ? base + 1 : name;
        if (std::strncmp(base, "libgomp.so", 10) == 0) out->libgomp = true;
        if (std::strncmp(base, "libomp.so", 9) == 0 || std::strncmp(base, "libomp5.so", 10) == 0 ||
            std::strncmp(base, "libiomp5.so", 11) == 0) {
          out->libomp = true;
        }
        return 0;
      },
      &l);
  return l;
}

}  // namespace

bool tool_started() { return g_started; }

void report_support(int verbose) {
  if (g_started) {
    if (g_unavailable > 0 && verbose >= 1) {
      std::fprintf(stderr, "onlinews: the OpenMP runtime does not deliver %d OMPT callback%s (%s%s): what "
                   "they report is not recorded\n", g_unavailable, g_unavailable == 1 ? "" : "s", g_missing,
                   g_unavailable > 1 ? ", ..." : "");
    }
    return;
  }
  const Loaded l = loaded_runtimes();
  if (l.libgomp && !l.libomp) {
    std::fprintf(stderr,
                 "onlinews: this program's OpenMP runtime is GCC's libgomp, which has no OMPT interface: OpenMP "
                 "constructs are not analyzed (threads' time only).  To analyze them, use LLVM's libomp: compile "
                 "with clang -fopenmp=libomp, link GCC-compiled code with -lomp instead of -fopenmp, or run with "
                 "LD_PRELOAD=libomp.so.5 (Debian: libomp-dev)\n");
  } else if (const char* other = std::getenv("OMP_TOOL_LIBRARIES"); l.libomp && other != nullptr && *other != '\0') {
    std::fprintf(stderr, "onlinews: OMP_TOOL_LIBRARIES names another OMPT tool (%s), which onlinews leaves in "
                 "charge: OpenMP constructs are not analyzed\n", other);
  } else if (l.libomp && verbose >= 1) {
    std::fprintf(stderr, "onlinews: the OpenMP runtime did not start onlinews' OMPT tool (OMP_TOOL=disabled?): "
                 "OpenMP constructs are not analyzed\n");
  }
}

}  // namespace onlinews::ompt

// The OpenMP runtime's hook.  ONLINEWS_ENABLE=0 declines (as MPI_Init
// will); so does OMP_TOOL_LIBRARIES, which names the tool the user chose
// (only one tool can run, and the runtime asks this function first);
// OMP_TOOL=disabled keeps the runtime from asking at all.
extern "C" __attribute__((visibility("default"))) ompt_start_tool_result_t* ompt_start_tool(unsigned int,
                                                                                           const char*) {
  if (const char* raw = std::getenv("ONLINEWS_ENABLE"); raw != nullptr) {
    bool on = true;
    if (onlinews::rt::parse_bool_text(raw, on) && !on) return nullptr;
  }
  if (const char* other = std::getenv("OMP_TOOL_LIBRARIES"); other != nullptr && *other != '\0') return nullptr;
  static ompt_start_tool_result_t result{&onlinews::ompt::initialize, &onlinews::ompt::finalize, {0}};
  return &result;
}
