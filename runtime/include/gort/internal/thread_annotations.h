// gort/internal/thread_annotations.h: clang's thread-safety attributes for
// the public lock types (Mutex, RWMutex), so that users who build with
// clang's -Wthread-safety have gort's locks checked like any other
// capability. They expand to nothing on other compilers. Not part of the
// public API.
#ifndef GORT_INTERNAL_THREAD_ANNOTATIONS_H_
#define GORT_INTERNAL_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define GORT_TSA_(x) __attribute__((x))
#else
#define GORT_TSA_(x)
#endif

// The class is a lock (a capability) named x in diagnostics.
#define GORT_CAPABILITY(x) GORT_TSA_(capability(x))
// The function acquires the lock exclusively (on `this` if no argument).
#define GORT_ACQUIRE(...) GORT_TSA_(acquire_capability(__VA_ARGS__))
// The function acquires the lock shared.
#define GORT_ACQUIRE_SHARED(...) \
  GORT_TSA_(acquire_shared_capability(__VA_ARGS__))
// The function releases the exclusive lock.
#define GORT_RELEASE(...) GORT_TSA_(release_capability(__VA_ARGS__))
// The function releases the shared lock.
#define GORT_RELEASE_SHARED(...) \
  GORT_TSA_(release_shared_capability(__VA_ARGS__))
// The function acquires the lock exclusively when it returns b.
#define GORT_TRY_ACQUIRE(...) GORT_TSA_(try_acquire_capability(__VA_ARGS__))
// The function acquires the lock shared when it returns b.
#define GORT_TRY_ACQUIRE_SHARED(...) \
  GORT_TSA_(try_acquire_shared_capability(__VA_ARGS__))
// The function's body is not checked (it implements the lock).
#define GORT_NO_THREAD_SAFETY_ANALYSIS GORT_TSA_(no_thread_safety_analysis)

#endif  // GORT_INTERNAL_THREAD_ANNOTATIONS_H_
