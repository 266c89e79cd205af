// runtime/park.h: mcall, gopark and goparkunlock, inline (Go's mcall
// (stubs.go:40) in asm_amd64.s; gopark (proc.go:346) and goparkunlock
// (proc.go:368)).
//
// Design. A goroutine resumes where it switched out, and the returns it
// makes there are predicted from the processor's return-address stack,
// which holds the calls made on this thread since: g0's (schedule, execute)
// and other goroutines', not this goroutine's. So each frame between the
// switch and the code that parked can cost a mispredicted return on each
// resume: with mcall and gopark out of line, a channel receive that parked
// returned from mcall into gopark, from gopark into the channel's park, and
// from there into chanrecv. Inline, the switch is made in the parking
// function's own frame (chan.cc inlines its park into chansend and chanrecv
// too), and ChanToChanPing took about 0.72 of the time
// (docs/notes/performance-log.md).
// Go's mcall (stubs.go:40) is assembly called from gopark, so Go pays these
// returns; gort's g0 side already resumes by a jump (gogoback in schedule).
#ifndef GORT_RUNTIME_PARK_H_
#define GORT_RUNTIME_PARK_H_

#include "absl/base/attributes.h"
#include "mprof.h"
#include "os/gogo_os.h"
#include "proc.h"
#include "race.h"

namespace gort::runtime {

// park_m mirrors Go's park_m (proc.go:3341): on g0, after gp switched out
// (proc.cc).
G* park_m(G* gp);

// mcallg is mcall for a caller that has its G (gp, the running goroutine)
// at hand: one getg fewer.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void mcallg(G* gp, G* (*fn)(G*),
                                                bool exiting) {
  M* mp = gp->m;
  mp->mcallfn = fn;
  racetog0(gp, mp, exiting);
  os::switchContext(&gp->ctx, mp->g0->ctx);
  racebackongo(gp, gp->m, false);
  if (gp->unwinding) throw goexitUnwind{};
}

// mcall mirrors Go's mcall (stubs.go:40): from a goroutine, switch to g0 and
// have it run fn(gp); returns when gp is resumed, possibly on another M.
// exiting: gp never resumes. Always inline (the file comment says why).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void mcall(G* (*fn)(G*),
                                               bool exiting = false) {
  mcallg(getg(), fn, exiting);
}

// gopark mirrors Go's gopark (proc.go:346): park the calling goroutine;
// unlockf(gp, lock), run on g0 after the switch, may refuse (false) and the
// goroutine runs on at once. Always inline (the file comment says why).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void gopark(bool (*unlockf)(G*, void*),
                                                void* lock, waitReason reason) {
  G* gp = getg();
  M* mp = gp->m;
  mp->waitlock = lock;
  mp->waitunlockf = unlockf;
  gp->waitreason = reason;
  blockParking(gp, reason);
  mcallg(gp, park_m, false);
  blockResumed(gp);
}

// parkunlock_c mirrors Go's parkunlock_c (proc.go:3335): goparkunlock's
// unlockf (proc.cc).
bool parkunlock_c(G* gp, void* lock);

// goparkunlock mirrors Go's goparkunlock (proc.go:368): park, unlocking l
// once the goroutine is off its stack.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void goparkunlock(mutex* l,
                                                      waitReason reason)
    ABSL_UNLOCK_FUNCTION(l) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  gopark(parkunlock_c, l, reason);
}

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_PARK_H_
