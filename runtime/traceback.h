// runtime/traceback.h: the goroutine dump (Go's traceback.go and the
// SIGQUIT half of signal_unix.go); see traceback.cc.
#ifndef GORT_RUNTIME_TRACEBACK_H_
#define GORT_RUNTIME_TRACEBACK_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "panic.h"
#include "runtime2.h"

namespace gort::runtime {

// Set while a dump walks parked goroutines' stacks: no G may start running.
extern std::atomic<bool> dumpFreezing;
void executeWaitThaw(M* mp);

// executeEnter / executeLeave bracket execute's change of a G to _Grunning:
// a dump that has set dumpFreezing waits until no M is between the two, and
// an M that sees the flag waits for the dump to end (a Dekker handshake:
// each side stores its flag, then loads the other's). Where the OS can fence
// another thread (fenceLight, lock.h), execute's half is a plain store and
// load and freezetheworld's half fences every running thread between its
// store and its loads: no locked instruction on the switch path, which on
// some hosts costs a tenth of a channel round trip
// (docs/notes/performance-switch.md).
// Else both halves are sequentially consistent.
inline void executeEnter(M* mp) {
  if (fenceLight) {
    mp->executing.store(true, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // keep the order
    if (dumpFreezing.load(std::memory_order_relaxed)) executeWaitThaw(mp);
    return;
  }
  mp->executing.store(true, std::memory_order_seq_cst);
  if (dumpFreezing.load(std::memory_order_seq_cst)) executeWaitThaw(mp);
}
inline void executeLeave(M* mp) {
  mp->executing.store(false, std::memory_order_release);
}

// gotraceback mirrors Go's gotraceback (runtime1.go:37): $GOTRACEBACK as a
// level (0 none, 1 single, 2 all, 3 system), and whether it asks for a crash.
int gotraceback(bool* crash);
// tracebackFatal prints, on a fatal error, the running goroutine's stack
// (from the throw, for a panic) and every other goroutine (for a fatal error,
// or a panic at level >= 2), as Go's dopanic_m (panic.go:1243) does; takes no
// lock.
void tracebackFatal(throwType t);
// initQuitHandler installs the SIGQUIT dump, once per process.
void initQuitHandler();

// goroutineStacks mirrors Go's goroutineProfileWithLabels (mprof.go:852):
// the return addresses of the calling goroutine (first, if on one) and of
// every other, walked frozen as the dump walks them; a goroutine running on
// another thread has an empty stack (Go stops the world to walk it).
// With labels, also each one's profiler labels (none for one running on
// another thread, which may change them meanwhile).
void goroutineStacks(
    std::vector<std::vector<std::uintptr_t>>* out,
    std::vector<std::vector<std::pair<std::string, std::string>>>* labels =
        nullptr);
// threadCount: the Ms ever created (the total of the threadcreate profile in
// Go).
int threadCount();

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_TRACEBACK_H_
