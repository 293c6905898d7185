/* onlinews — online wait-state analysis for MPI programs.
 *
 * Link with -lonlinews (or LD_PRELOAD libonlinews.so) and run as usual; the
 * analyzer intercepts MPI through the PMPI interface.  This header is only
 * needed to mark user regions:
 *
 *   onlinews_region_begin("solver");  ...  onlinews_region_end("solver");
 *
 * or, in C++, with the RAII helper:
 *
 *   { onlinews::Region r{"solver"};  ... }
 *
 * Region names are matched by content; passing the same string literal every
 * time is the fastest path.  Calls are cheap (tens of nanoseconds), thread-safe
 * (each thread records into its own buffer) and never fail: if the analyzer is
 * disabled or not initialized they do nothing.
 */
#ifndef ONLINEWS_H
#define ONLINEWS_H

#define ONLINEWS_VERSION_MAJOR 0
#define ONLINEWS_VERSION_MINOR 1
#define ONLINEWS_VERSION_PATCH 0

#if defined(__GNUC__)
#define ONLINEWS_API __attribute__((visibility("default")))
#else
#define ONLINEWS_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Begin a user region on the calling thread. */
ONLINEWS_API void onlinews_region_begin(const char* name);

/* End the innermost user region of the calling thread.  `name` must be the
 * one given to the matching begin; a mismatch is reported once and the
 * region stack is repaired (the named region and anything opened inside it
 * are closed). */
ONLINEWS_API void onlinews_region_end(const char* name);

/* 1 while the analyzer is recording on this process, 0 otherwise. */
ONLINEWS_API int onlinews_active(void);

#ifdef __cplusplus
} /* extern "C" */

namespace onlinews {

/* Scoped user region: begins in the constructor, ends in the destructor. */
class Region {
 public:
  explicit Region(const char* name) noexcept : name_(name) { onlinews_region_begin(name_); }
  ~Region() { onlinews_region_end(name_); }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

 private:
  const char* name_;
};

}  // namespace onlinews
#endif /* __cplusplus */

#endif /* ONLINEWS_H */
