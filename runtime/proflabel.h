// runtime/proflabel.h: a goroutine's profiler labels (Go's proflabel.go:
// runtime_setProfLabel / runtime_getProfLabel, and the labelMap runtime/pprof
// hangs there).
//
// In Go the G holds an unsafe.Pointer the garbage collector keeps alive; gort's
// holds a counted labelMap: one reference for the G, one per goroutine
// created under it (newproc1 inherits the pointer, as Go's does) and one per
// CPU sample that names it until the profiler has read the sample, so the
// signal handler only ever adds a reference (an atomic increment) and never
// frees. A labelMap never changes once set on a G; pprof.Do sets a new one.
#ifndef GORT_RUNTIME_PROFLABEL_H_
#define GORT_RUNTIME_PROFLABEL_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gort::runtime {

// labelMap mirrors runtime/pprof's labelMap (label.go): key-value pairs,
// sorted by key, keys unique.
struct labelMap {
  std::atomic<std::int32_t> refs{1};
  std::vector<std::pair<std::string, std::string>> list;
};
static_assert(std::atomic<std::int32_t>::is_always_lock_free,
              "the SIGPROF handler counts references");

// labelRetain adds a reference to l (nullptr: none); async-signal-safe.
inline void labelRetain(labelMap* l) {
  if (l != nullptr) l->refs.fetch_add(1, std::memory_order_relaxed);
}
// labelRelease drops a reference, freeing l with the last.
inline void labelRelease(labelMap* l) {
  if (l != nullptr && l->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete l;
  }
}

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_PROFLABEL_H_
