// runtime/mprof.h: the block profile's hooks (Go's mprof.go: blockevent,
// blockprofilerate, and the release time Go keeps in the sudog).
//
// Off (the rate 0), gopark pays one relaxed load and a branch, and its
// return and ready one branch each on a field of the G. On, a park for a
// channel, select, semaphore (Mutex, RWMutex, WaitGroup), Cond or network
// wait stamps the G; ready stamps the release; the woken goroutine samples
// the wait as Go's blocksampled (mprof.go:493) does and adds it to its stack's
// bucket (mprof.cc), under a lock: a profiled program pays for what it
// measures.
#ifndef GORT_RUNTIME_MPROF_H_
#define GORT_RUNTIME_MPROF_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "os/os.h"
#include "runtime2.h"

namespace gort::runtime {

// mutexprofilerate mirrors Go's mutexprofilerate (mprof.go:524): one contended
// release in that many is sampled (0: off).
extern std::atomic<std::int64_t> mutexprofilerate;

// mutexProfileWanted: whether a semaphore wait for w is a Mutex or RWMutex
// one (Go's semaMutexProfile (sema.go:96) callers).
inline bool mutexProfileWanted(waitReason w) {
  return w == waitReason::syncMutexLock || w == waitReason::syncRWMutexLock ||
         w == waitReason::syncRWMutexRLock;
}
// mutexevent mirrors Go's mutexevent (mprof.go:543): a release that woke a
// waiter who waited cycles ns, sampled one in mutexprofilerate, on the
// releaser's stack.
void mutexevent(std::int64_t cycles);

// blockprofilerate mirrors Go's blockprofilerate (mprof.go:455), in
// nanoseconds (gort's clock) instead of CPU ticks.
extern std::atomic<std::int64_t> blockprofilerate;

// blockRecord: one block-profile bucket (Go's blockRecord (mprof.go:149),
// mprof.go:134).
struct blockRecord {
  std::vector<std::uintptr_t> stk;
  double count = 0;
  std::int64_t cycles = 0;  // nanoseconds
};

// blockProfileWanted: whether a park for w is profiled (Go calls blockevent
// from chanrecv, chansend, selectgo, semacquire1 and notifyListWait; gort
// adds network waits).
inline bool blockProfileWanted(waitReason w) {
  return w != waitReason::zero && w != waitReason::sleep &&
         w != waitReason::chanReceiveNilChan &&
         w != waitReason::chanSendNilChan && w != waitReason::selectNoCases;
}

// blockParking stamps gp's park when the block profile is on.
inline void blockParking(G* gp, waitReason w) {
  if (blockprofilerate.load(std::memory_order_relaxed) > 0 &&
      blockProfileWanted(w)) {
    gp->blocktime = os::nanotime();
  }
}
// blockReleased stamps the wake-up of a profiled park (Go's sudog
// (runtime2.go:348) releasetime).
inline void blockReleased(G* gp) {
  if (gp->blocktime != 0) gp->releasetime = os::nanotime();
}
void blockeventSlow(G* gp);
// blockResumed: gp runs again after a park; records a profiled one.
inline void blockResumed(G* gp) {
  if (gp->blocktime != 0) blockeventSlow(gp);
}
// mutexProfile mirrors Go's MutexProfile (mprof.go:798): every bucket.
std::vector<blockRecord> mutexProfile();
// blockProfile mirrors Go's BlockProfile (mprof.go:754): every bucket.
std::vector<blockRecord> blockProfile();

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_MPROF_H_
