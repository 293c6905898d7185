// Kill safety of the output file (h5_helpers.hpp): its creation under a
// temporary name until its first flush, and the flush, with the
// bookkeeping it needs (the chunk sizes written since the last flush).
#include <fcntl.h>
#include <hdf5.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "h5_helpers.hpp"
#include "h5_file.hpp"

namespace onlinews::io {
namespace {

// H5Fflush that a SIGKILL in the middle of it cannot turn into a file h5py
// refuses ("truncated file: eof < stored_eof"): HDF5 writes the superblock,
// which records the end of the allocated space, before it extends the file
// to that end (H5FD_truncate comes after the metadata cache's flush), and
// the end moves during the flush: the cached chunks of the datasets written
// since the last flush get their space there, with their index's blocks
// and up to an aggregator block (a loaded kill trial found the file 1801
// bytes short).  So the file is first extended (sparse zeros) past
// everything allocated by those chunks' sizes plus slack for the rest,
// then flushed, then trimmed back to the end the superblock now records.
// (A file longer than its stored end opens.  H5Dflush of the written
// datasets before the flush also works, but doubled the epoch's append:
// it walks the whole metadata cache each time.)
constexpr hsize_t kFlushSlack = 4 * 2048 + 4096;  // (aggregator blocks: H5Pset_meta_block_size etc.)
constexpr hsize_t kIndexSlack = 4096;             // per written dataset: its chunk index growing
constexpr unsigned kMaxCompact = 65535;           // (links or attributes in an object header: HDF5's limit)

// The end of file address the superblock on disk records (0: unknown).
// Superblock versions 0 and 1 keep it at byte 40, versions 2 and 3 at byte
// 28 (8-byte addresses, the library's default; base address 0).
haddr_t stored_end(int fd) {
  unsigned char head[48];
  if (pread(fd, head, sizeof head, 0) != static_cast<ssize_t>(sizeof head)) return 0;
  static const unsigned char kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  if (std::memcmp(head, kSignature, 8) != 0) return 0;
  const unsigned version = head[8];
  const std::size_t at = version <= 1 ? 40 : version <= 3 ? 28 : 0;
  if (at == 0 || (version >= 2 && head[9] != 8)) return 0;
  haddr_t end = 0;
  for (int i = 7; i >= 0; --i) end = (end << 8) | head[at + static_cast<std::size_t>(i)];
  return end == HADDR_UNDEF ? 0 : end;
}

// The file descriptor of a `file` written through the default sec2 driver,
// or -1 (the parallel profile's mpio handle is an MPI_File).
int sec2_descriptor(hid_t file) {
  const hid_t fapl = H5Fget_access_plist(file);
  const bool sec2 = fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2;
  if (fapl >= 0) H5Pclose(fapl);
  void* handle = nullptr;
  if (!sec2 || H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || handle == nullptr) return -1;
  return *static_cast<const int*>(handle);
}

// Makes the file at least `end` long before a flush (sparse), if the file
// system has room for what the flush may write: the extension and as much
// again for holes it may fill, and 1 MiB.  A full disk or the file size
// limit is found here, before HDF5 has written anything of the flush; it
// is then not made, and the file keeps what the last one left (a flush
// that failed halfway left one no reader opened).  fallocate would also
// see quotas, but costs 1.4-9.5 ms a flush on ext4 (a journal commit, the
// slack being trimmed after every flush); fstatvfs costs a microsecond.  A
// quota, or a disk filled by others in between, can still fail a flush
// halfway.
bool reserve(int fd, const struct stat& st, off_t end) {
  if (end <= st.st_size) return true;
  const auto grow = static_cast<unsigned long long>(end - st.st_size);
  struct statvfs fs {};
  if (fstatvfs(fd, &fs) == 0 && fs.f_frsize > 0 &&
      static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize < 2 * grow + (1ULL << 20)) {
    return false;
  }
  struct rlimit limit {};
  if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      static_cast<unsigned long long>(end) > limit.rlim_cur) {
    return false;
  }
  (void)ftruncate(fd, end);
  return true;
}

#ifndef RENAME_NOREPLACE
constexpr unsigned RENAME_NOREPLACE = 1;  // (linux/fs.h)
#endif

// rename(2) that fails with EEXIST instead of replacing `to`: renameat2
// where the kernel and file system have it (called through syscall: glibc
// has a wrapper only since 2.28), else link + unlink, else, on a file
// system without hard links either, a check and rename(2) (racy only
// against another job taking the name in between, as free_name is).
bool rename_noreplace(const std::string& from, const std::string& to, int& why) {
  if (syscall(SYS_renameat2, AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  why = errno;
  if (why == EEXIST) return false;
  if (link(from.c_str(), to.c_str()) == 0) {
    unlink(from.c_str());
    return true;
  }
  why = errno;
  if (why == EEXIST) return false;
  if (access(to.c_str(), F_OK) == 0) {
    why = EEXIST;
    return false;
  }
  if (std::rename(from.c_str(), to.c_str()) == 0) return true;
  why = errno;
  return false;
}

}  // namespace

// Creating ~175 datasets takes 10-20 ms, and HDF5 writes their metadata
// only at the first flush: a job killed meanwhile (mpi.kill_trials on a
// loaded machine: 0.4 s after H5Fcreate) left a 97-byte file under the
// result's name that no reader opens.  So the file has a hidden temporary
// name until publish(), unique to this process (host, pid, clock: jobs on
// several hosts may share a directory) and created exclusively (never
// through a planted link).
hid_t create_unnamed(const std::string& path, hid_t fcpl, hid_t fapl, std::string& tmp) {
  const std::size_t slash = path.rfind('/');
  const std::size_t at = slash == std::string::npos ? 0 : slash + 1;
  char host[64] = "host";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  for (int attempt = 0; attempt < 4; ++attempt) {
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    tmp = path.substr(0, at) + "." + path.substr(at) + ".creating." + host + "." + std::to_string(getpid()) + "." +
          std::to_string(stamp % 1000000007);
    const hid_t f = H5Fcreate(tmp.c_str(), H5F_ACC_EXCL, fcpl, fapl);
    if (f >= 0) return f;
  }
  return -1;
}

bool H5File::publish(std::string& error) {
  if (file_ < 0 || creating_.empty()) return file_ >= 0;
  QuietH5 quiet;
  if (!flush_file()) {
    error = "cannot write '" + creating_ + "'";
    return false;
  }
  int why = 0;
  if (!rename_noreplace(creating_, path_, why)) {
    error = "cannot create '" + path_ + "' (" + std::strerror(why) + ")";
    return false;
  }
  creating_.clear();
  return true;
}

bool flush_kill_safe(hid_t file, hsize_t chunk_bytes) {
  hsize_t allocated = 0;
  struct stat st {};
  const hsize_t slack = chunk_bytes + kFlushSlack;
  const int fd = H5Fget_filesize(file, &allocated) >= 0 ? sec2_descriptor(file) : -1;
  if (fd >= 0 && fstat(fd, &st) == 0 && !reserve(fd, st, static_cast<off_t>(allocated + slack))) return false;
  const bool ok = H5Fflush(file, H5F_SCOPE_GLOBAL) >= 0;
  // The slack goes again (the driver trims only what it wrote itself), but
  // never below the end the superblock on disk records: HDF5's end of
  // allocation can be lower than what the flush wrote there (a CI kill
  // trial found a file 1024 bytes short of it, killed after such a trim).
  haddr_t eoa = 0;
  if (fd >= 0 && H5Fget_eoa(file, &eoa) >= 0 && fstat(fd, &st) == 0) {
    const haddr_t end = std::max<haddr_t>(eoa, stored_end(fd));
    if (static_cast<haddr_t>(st.st_size) > end) (void)ftruncate(fd, static_cast<off_t>(end));
  }
  return ok;
}

// H5F__dest flushes, then releases what its aggregators hold (space taken
// during the flush before: a fractal heap's new blocks get theirs only
// when flushed), truncates the file to the lower end, and rewrites the
// superblock only when the metadata cache shuts down.  A kill in between
// left the file 1024 or 1801 bytes short of the end its superblock
// records, in CI kill trials.  After a kill-safe flush, with no fractal
// heap created since (compact_storage), nothing is left to release.
// A file whose flush failed (a full disk) is closed with its writes
// diverted: HDF5 1.10's H5Fclose would fail in the same flush, free the
// file and keep its identifier, which HDF5's shutdown in MPI_Finalize then
// closed again (a SIGSEGV of the application, with either MPI library).
bool close_kill_safe(hid_t file, hsize_t chunk_bytes) {
  const bool flushed = flush_kill_safe(file, chunk_bytes);
  if (!flushed) divert_writes(file);
  return H5Fclose(file) >= 0 && flushed;
}

// The sec2 driver's descriptor is replaced by an empty in-memory file: what
// HDF5 still writes (dirty metadata and chunks, at the close) goes there
// and succeeds, and the file on disk keeps what its last flush left.
void divert_writes(hid_t file) {
  const int fd = sec2_descriptor(file);
  if (fd < 0) return;
  const int scratch = static_cast<int>(syscall(SYS_memfd_create, "onlinews-unwritable", 1U /* MFD_CLOEXEC */));
  if (scratch < 0) return;
  (void)dup2(scratch, fd);
  close(scratch);
}

void compact_storage(hid_t gcpl) {
  H5Pset_link_phase_change(gcpl, kMaxCompact, kMaxCompact);
  H5Pset_attr_phase_change(gcpl, kMaxCompact, kMaxCompact);
}

hid_t create_group(hid_t parent, const char* name) {
  const hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  compact_storage(gcpl);
  const hid_t g = H5Gcreate2(parent, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
  H5Pclose(gcpl);
  return g;
}

void H5File::written(std::int64_t d) {
  if (d < 0) return;
  const auto known = std::find_if(chunk_bytes_.begin(), chunk_bytes_.end(), [d](const auto& x) { return x.first == d; });
  if (known != chunk_bytes_.end()) {
    dirty_bytes_ += known->second;
    return;
  }
  hsize_t bytes = kIndexSlack;
  const hid_t dcpl = H5Dget_create_plist(d);
  const hid_t type = H5Dget_type(d);
  hsize_t dims[H5S_MAX_RANK];
  const int n = dcpl >= 0 ? H5Pget_chunk(dcpl, H5S_MAX_RANK, dims) : -1;
  if (n > 0 && type >= 0) {
    hsize_t chunk = H5Tget_size(type);
    for (int i = 0; i < n; ++i) chunk *= dims[i];
    bytes += chunk;
  }
  if (type >= 0) H5Tclose(type);
  if (dcpl >= 0) H5Pclose(dcpl);
  chunk_bytes_.emplace_back(d, bytes);
  dirty_bytes_ += bytes;
}

bool H5File::flush_file() {
  if (failed_) return false;
  const bool ok = flush_kill_safe(file_, dirty_bytes_);
  dirty_bytes_ = 0;
  failed_ = !ok;
  return ok;
}

}  // namespace onlinews::io
