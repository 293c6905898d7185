#pragma once
// What orders memory that MPI hands between threads, said to ThreadSanitizer.
//
// Open MPI calls a user-defined reduction operator inside whichever thread's
// MPI call progresses the nonblocking collective: with MPI_THREAD_MULTIPLE,
// often an application thread, while the MPI thread that started the
// collective reads the result after MPI_Test completes it.  Open MPI orders
// the two with atomics TSan does not see (it is not instrumented), so each
// access of ours would be reported as a race.  Releasing on a tag before
// the call and at the end of the operator, and acquiring at the operator's
// start and after the completion, gives TSan the edges MPI guarantees.
// Without TSan these are empty inline functions.
#if defined(__SANITIZE_THREAD__)
#define ONLINEWS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ONLINEWS_TSAN 1
#endif
#endif
#ifdef ONLINEWS_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace onlinews::rt {

// Everything this thread wrote so far happens before what follows a later
// tsan_acquire(tag) on any thread.
inline void tsan_release([[maybe_unused]] const void* tag) {
#ifdef ONLINEWS_TSAN
  __tsan_release(const_cast<void*>(tag));
#endif
}

inline void tsan_acquire([[maybe_unused]] const void* tag) {
#ifdef ONLINEWS_TSAN
  __tsan_acquire(const_cast<void*>(tag));
#endif
}

}  // namespace onlinews::rt
