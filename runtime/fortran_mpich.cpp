// MPICH's Fortran bindings (docs/design.md, "Fortran").  libmpichfort's
// mpif.h and `use mpi` entry points call the C MPI_* functions, so the C
// wrappers see them; but its mpi_f08 entry points for calls without a
// buffer (MPI_Init, MPI_Wait*, MPI_Barrier, MPI_Comm_split, ...) call
// PMPI_* directly, MPICH 4.0 as Open MPI does.  Rather than re-implementing
// MPICH's f08 argument conventions (and its quirks, which a program may
// rely on: 4.0's 0-based MPI_Waitany index, pmodels/mpich#6270), the
// library points libmpichfort's own PLT/GOT slots of those PMPI_* functions
// at the C wrappers, once, at load: the binding converts its arguments as
// without onlinews and then calls us.  And because a Fortran program
// references only Fortran symbols, a linker that drops unneeded libraries
// (--as-needed, the default of Debian's gfortran) would drop -lonlinews:
// the library defines MPI_Init's Fortran entry points, which forward to
// MPICH's own.
#include "fortran.hpp"

#if defined(MPICH_VERSION) && !ONLINEWS_FORTRAN_WRAPPERS && defined(__linux__) && \
    (defined(__x86_64__) || defined(__aarch64__))
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "onlinews.h"  // ONLINEWS_API

namespace onlinews::rt::fortran {
namespace {

constexpr int kMaxObjects = 4;
PatchReport g_report;

#if defined(__x86_64__)
constexpr std::uint32_t kJumpSlot = R_X86_64_JUMP_SLOT, kGlobDat = R_X86_64_GLOB_DAT;
#else
constexpr std::uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT, kGlobDat = R_AARCH64_GLOB_DAT;
#endif

bool is_mpich_fortran(const char* path) {
  if (path == nullptr) return false;
  const char* base = std::strrchr(path, '/');
  base = base != nullptr ? base + 1 : path;
  // (Debian: libmpichfort.so.12; upstream MPICH and Intel MPI: libmpifort.so.12)
  return std::strncmp(base, "libmpichfort.so", 15) == 0 || std::strncmp(base, "libmpifort.so", 13) == 0;
}

const PmpiRedirect* find_redirect(const char* name) {
  const PmpiRedirect* end = kPmpiRedirects + kPmpiRedirectCount;
  const PmpiRedirect* it = std::lower_bound(kPmpiRedirects, end, name, [](const PmpiRedirect& r, const char* n) {
    return std::strcmp(r.pmpi_name, n) < 0;
  });
  return it != end && std::strcmp(it->pmpi_name, name) == 0 ? it : nullptr;
}

// glibc stores the dynamic section's addresses relocated on these targets;
// an unrelocated (small) value is an offset from the load address.
template <typename T>
T* at(const dl_phdr_info* info, ElfW(Addr) p) {
  return reinterpret_cast<T*>(p < info->dlpi_addr ? info->dlpi_addr + p : p);
}

struct Relro {
  ElfW(Addr) lo = 0, hi = 0;
};

// One slot: a writable GOT (lazy binding, partial RELRO) is written in
// place; a slot in the pages the dynamic linker made read-only after
// relocation (PT_GNU_RELRO rounded down at both ends, as glibc protects it:
// the last partial page stays writable) is made writable around the write.
bool write_slot(void** slot, void* target, const Relro& relro) {
  const auto a = reinterpret_cast<ElfW(Addr)>(slot);
  const auto page = static_cast<ElfW(Addr)>(sysconf(_SC_PAGESIZE));
  if (a >= (relro.lo & ~(page - 1)) && a < (relro.hi & ~(page - 1))) {
    void* start = reinterpret_cast<void*>(a & ~(page - 1));
    if (mprotect(start, page, PROT_READ | PROT_WRITE) != 0) return false;
    *slot = target;
    mprotect(start, page, PROT_READ);
    return true;
  }
  *slot = target;
  return true;
}

void patch_relocations(const dl_phdr_info* info, const ElfW(Rela)* rel, std::size_t bytes, const ElfW(Sym)* symtab,
                       const char* strtab, const Relro& relro) {
  for (std::size_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
    const auto type = static_cast<std::uint32_t>(ELF64_R_TYPE(rel[i].r_info));
    if (type != kJumpSlot && type != kGlobDat) continue;
    const char* name = strtab + symtab[ELF64_R_SYM(rel[i].r_info)].st_name;
    if (std::strncmp(name, "PMPI_", 5) != 0) continue;
    const PmpiRedirect* r = find_redirect(name);
    if (r == nullptr) continue;
    if (write_slot(reinterpret_cast<void**>(info->dlpi_addr + rel[i].r_offset), r->wrapper, relro)) {
      ++g_report.redirected;
    } else {
      ++g_report.failed;
    }
  }
}

int patch_object(dl_phdr_info* info, std::size_t, void*) {
  if (!is_mpich_fortran(info->dlpi_name) || g_report.objects >= kMaxObjects) return 0;
  ++g_report.objects;
  const ElfW(Dyn)* dyn = nullptr;
  Relro relro;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_DYNAMIC) dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + ph.p_vaddr);
    if (ph.p_type == PT_GNU_RELRO) relro = {info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz};
  }
  if (dyn == nullptr) return 0;
  ElfW(Addr) symtab = 0, strtab = 0, jmprel = 0, rela = 0;
  std::size_t pltrelsz = 0, relasz = 0;
  bool plt_is_rela = true;
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB: symtab = d->d_un.d_ptr; break;
      case DT_STRTAB: strtab = d->d_un.d_ptr; break;
      case DT_JMPREL: jmprel = d->d_un.d_ptr; break;
      case DT_PLTRELSZ: pltrelsz = d->d_un.d_val; break;
      case DT_PLTREL: plt_is_rela = d->d_un.d_val == DT_RELA; break;
      case DT_RELA: rela = d->d_un.d_ptr; break;
      case DT_RELASZ: relasz = d->d_un.d_val; break;
      default: break;
    }
  }
  if (symtab == 0 || strtab == 0 || !plt_is_rela) return 0;
  const auto* syms = at<const ElfW(Sym)>(info, symtab);
  const auto* strs = at<const char>(info, strtab);
  if (jmprel != 0) patch_relocations(info, at<const ElfW(Rela)>(info, jmprel), pltrelsz, syms, strs, relro);
  // (Some linkers let DT_RELASZ cover .rela.plt too: then only the part before it.)
  if (rela != 0 && jmprel > rela && jmprel < rela + relasz) relasz = jmprel - rela;
  if (rela != 0) patch_relocations(info, at<const ElfW(Rela)>(info, rela), relasz, syms, strs, relro);
  return 0;
}

// At load (the libraries loaded with the program are relocated by then,
// and no MPI call has been made): a library constructor, not MPI_Init,
// because the f08 MPI_Init itself calls PMPI_Init.
[[gnu::constructor]] void redirect_at_load() { dl_iterate_phdr(&patch_object, nullptr); }

}  // namespace

const PatchReport& mpich_fortran_patch() { return g_report; }

}  // namespace onlinews::rt::fortran

// --- MPI_Init's Fortran entry points (so that -lonlinews stays linked) -----
// MPICH's, resolved when libonlinews is loaded (weak: null if libmpichfort
// is not loaded by then, as in a C program).
extern "C" {
void pmpi_init_(MPI_Fint* ierr) __attribute__((weak));
void pmpi_init_thread_(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) __attribute__((weak));
void pmpir_init_f08_(MPI_Fint* ierr) __attribute__((weak));
void pmpir_init_thread_f08_(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) __attribute__((weak));

}  // extern "C"

namespace {
using InitFn = void (*)(MPI_Fint*);
using InitThreadFn = void (*)(MPI_Fint*, MPI_Fint*, MPI_Fint*);
// MPICH's entry point if it is there; else the C call (libmpichfort loaded
// later, by dlopen: MPICH's other entry points set up their Fortran
// constants at first use).
void init_via(InitFn mpich, MPI_Fint* ierr) {
  if (mpich != nullptr) {
    mpich(ierr);
  } else {
    onlinews::rt::fortran::set_ierr(ierr, MPI_Init(nullptr, nullptr));
  }
}
void init_thread_via(InitThreadFn mpich, MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  if (mpich != nullptr) {
    mpich(required, provided, ierr);
  } else {
    int p = 0;
    onlinews::rt::fortran::set_ierr(ierr, MPI_Init_thread(nullptr, nullptr, *required, &p));
    *provided = p;
  }
}
}  // namespace

extern "C" {
// mpif.h, use mpi: MPICH's binding sets up its Fortran constants, then calls
// MPI_Init (ours).  mpi_f08 (ierror optional): MPICH's calls PMPI_Init,
// redirected above.
void ow_mpich_init(MPI_Fint* ierr) { init_via(pmpi_init_, ierr); }
void ow_mpich_init_thread(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  init_thread_via(pmpi_init_thread_, required, provided, ierr);
}
void ow_mpich_init_f08(MPI_Fint* ierr) { init_via(pmpir_init_f08_, ierr); }
void ow_mpich_init_thread_f08(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  init_thread_via(pmpir_init_thread_f08_, required, provided, ierr);
}

ONLINEWS_API void mpi_init_(MPI_Fint*) __attribute__((alias("ow_mpich_init")));
ONLINEWS_API void mpi_init__(MPI_Fint*) __attribute__((alias("ow_mpich_init")));
ONLINEWS_API void mpi_init(MPI_Fint*) __attribute__((alias("ow_mpich_init")));
ONLINEWS_API void MPI_INIT(MPI_Fint*) __attribute__((alias("ow_mpich_init")));
ONLINEWS_API void mpi_init_thread_(MPI_Fint*, MPI_Fint*, MPI_Fint*) __attribute__((alias("ow_mpich_init_thread")));
ONLINEWS_API void mpi_init_thread__(MPI_Fint*, MPI_Fint*, MPI_Fint*) __attribute__((alias("ow_mpich_init_thread")));
ONLINEWS_API void mpi_init_thread(MPI_Fint*, MPI_Fint*, MPI_Fint*) __attribute__((alias("ow_mpich_init_thread")));
ONLINEWS_API void MPI_INIT_THREAD(MPI_Fint*, MPI_Fint*, MPI_Fint*) __attribute__((alias("ow_mpich_init_thread")));
ONLINEWS_API void mpi_init_f08_(MPI_Fint*) __attribute__((alias("ow_mpich_init_f08")));
ONLINEWS_API void mpi_init_thread_f08_(MPI_Fint*, MPI_Fint*, MPI_Fint*) __attribute__((alias("ow_mpich_init_thread_f08")));
}  // extern "C"
#else
namespace onlinews::rt::fortran {
const PatchReport& mpich_fortran_patch() {
  static const PatchReport none;
  return none;
}
}  // namespace onlinews::rt::fortran
#endif
