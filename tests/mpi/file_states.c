/* Preloaded by kill_states.py: watches every state the output file passes
 * through, which is what a SIGKILL at that moment would leave.
 *
 * After each call that changes the file named by FILE_STATES_TARGET
 * (pwrite, pwritev, write, ftruncate, on a descriptor open on it), it
 * compares the file's size with the end of file its HDF5 superblock
 * records, and appends a line to FILE_STATES_LOG when the file is shorter:
 * no reader opens such a file ("truncated file").  After each ftruncate it
 * also copies the file to FILE_STATES_DIR/state_<pid>_<n>, for the script
 * to open with h5py: a kill is most likely to land right after a truncate
 * (the slowest of these calls; the signal acts when it returns).  At exit
 * it appends "calls <pid> <changes> <truncates> <short>".
 *
 * With FILE_STATES_FULL_AT=<bytes> it is a full disk instead: a write to
 * the file, or a reservation of its blocks (fallocate), that would reach
 * past that offset fails with ENOSPC, and fstatvfs on it reports only the
 * bytes left below that offset as free (disk_full.py). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

static __thread int inside; /* (the copy's own reads and writes) */
static int changes, truncates, shorts;

static ssize_t (*real_pread)(int, void*, size_t, off_t);
static ssize_t (*real_write)(int, const void*, size_t);

static void resolve(void) {
  if (!real_pread) real_pread = (ssize_t(*)(int, void*, size_t, off_t))dlsym(RTLD_NEXT, "pread");
  if (!real_write) real_write = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
}

static int is_target(int fd) {
  const char* target = getenv("FILE_STATES_TARGET");
  char link[64], path[4096];
  if (!target) return 0;
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  return strcmp(path, target) == 0;
}

static void log_line(const char* line) {
  const char* log = getenv("FILE_STATES_LOG");
  if (!log) return;
  const int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  real_write(fd, line, strlen(line));
  close(fd);
}

/* The end of file the superblock records (versions 0, 2, 3; 8-byte
 * addresses), or 0. */
static uint64_t stored_end(int fd) {
  unsigned char head[48];
  static const unsigned char signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  if (real_pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head || memcmp(head, signature, 8) != 0) return 0;
  const unsigned version = head[8];
  const int at = version == 0 ? 40 : (version == 2 || version == 3) ? 28 : -1;
  if (at < 0) return 0;
  uint64_t end = 0;
  for (int i = 7; i >= 0; --i) end = (end << 8) | head[at + i];
  return end == UINT64_MAX ? 0 : end;
}

static void copy_state(int fd, off_t size) {
  const char* dir = getenv("FILE_STATES_DIR");
  char out[4096];
  if (!dir) return;
  snprintf(out, sizeof out, "%s/state_%d_%05d", dir, (int)getpid(), truncates);
  const int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (o < 0) return;
  static char buf[1 << 16];
  for (off_t at = 0; at < size;) {
    const ssize_t k = real_pread(fd, buf, sizeof buf, at);
    if (k <= 0) break;
    real_write(o, buf, (size_t)k);
    at += k;
  }
  close(o);
}

static void changed(int fd, const char* call) {
  if (inside || !is_target(fd)) return;
  inside = 1;
  resolve();
  struct stat st;
  ++changes;
  const int truncated = strcmp(call, "ftruncate") == 0;
  if (truncated) ++truncates;
  if (fstat(fd, &st) == 0) {
    const uint64_t end = stored_end(fd);
    if (end > (uint64_t)st.st_size) {
      char line[256];
      ++shorts;
      snprintf(line, sizeof line, "short %d %s %lld %llu\n", (int)getpid(), call, (long long)st.st_size,
               (unsigned long long)end);
      log_line(line);
    }
    if (truncated) copy_state(fd, st.st_size);
  }
  inside = 0;
}

__attribute__((destructor)) static void summary(void) {
  if (changes == 0) return;
  char line[128];
  resolve();
  snprintf(line, sizeof line, "calls %d %d %d %d\n", (int)getpid(), changes, truncates, shorts);
  log_line(line);
}

/* Whether a write of `n` bytes at `at` (-1: the descriptor's position)
 * finds the disk full (FILE_STATES_FULL_AT). */
static int full(int fd, off_t at, size_t n) {
  const char* limit = getenv("FILE_STATES_FULL_AT");
  if (!limit || inside || !is_target(fd)) return 0;
  if (at < 0) at = lseek(fd, 0, SEEK_CUR);
  return at + (off_t)n > (off_t)atoll(limit);
}

static size_t iov_bytes(const struct iovec* v, int c) {
  size_t n = 0;
  for (int i = 0; i < c; ++i) n += v[i].iov_len;
  return n;
}

#define WATCH(ret, name, params, args, at, bytes)                      \
  ret name params {                                                    \
    static ret(*real) params;                                          \
    if (!real) real = (ret(*) params)dlsym(RTLD_NEXT, #name);          \
    if (full(fd, at, bytes)) {                                         \
      errno = ENOSPC;                                                  \
      return -1;                                                       \
    }                                                                  \
    const ret r = real args;                                           \
    changed(fd, #name);                                                \
    return r;                                                          \
  }
WATCH(ssize_t, pwrite, (int fd, const void* b, size_t n, off_t o), (fd, b, n, o), o, n)
WATCH(ssize_t, pwrite64, (int fd, const void* b, size_t n, off_t o), (fd, b, n, o), o, n)
WATCH(ssize_t, pwritev, (int fd, const struct iovec* v, int c, off_t o), (fd, v, c, o), o, iov_bytes(v, c))
WATCH(ssize_t, write, (int fd, const void* b, size_t n), (fd, b, n), -1, n)
/* The free space of a disk full at FILE_STATES_FULL_AT. */
static void full_disk(int fd, struct statvfs* fs) {
  const char* limit = getenv("FILE_STATES_FULL_AT");
  struct stat st;
  if (!limit || !is_target(fd) || fstat(fd, &st) != 0 || fs->f_frsize == 0) return;
  const long long left = atoll(limit) - (long long)st.st_size;
  fs->f_bavail = fs->f_bfree = left > 0 ? (fsblkcnt_t)(left / (long long)fs->f_frsize) : 0;
}

int fstatvfs(int fd, struct statvfs* fs) {
  static int (*real)(int, struct statvfs*);
  if (!real) real = (int (*)(int, struct statvfs*))dlsym(RTLD_NEXT, "fstatvfs");
  const int r = real(fd, fs);
  if (r == 0) full_disk(fd, fs);
  return r;
}


WATCH(int, fallocate, (int fd, int mode, off_t o, off_t l), (fd, mode, o, l), o, (size_t)l)
WATCH(int, fallocate64, (int fd, int mode, off_t o, off_t l), (fd, mode, o, l), o, (size_t)l)
WATCH(int, ftruncate, (int fd, off_t l), (fd, l), 0, 0)
WATCH(int, ftruncate64, (int fd, off_t l), (fd, l), 0, 0)
