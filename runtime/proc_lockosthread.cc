// runtime/proc_lockosthread.cc: wiring a goroutine to its thread (Go's
// proc.go: LockOSThread, UnlockOSThread, dolockOSThread, startlockedm,
// stoplockedm, and goexit0's "locked" case).
//
// A locked G and its M point at each other (gp->lockedm, mp->lockedg). While
// they do, the M runs no other goroutine: when the G blocks, schedule() on
// that M gives its P away and sleeps in stoplockedm instead of looking for
// work; whichever M later finds the G runnable hands its own P to the locked
// M (startlockedm) and parks itself. A G that ends while still locked takes
// its thread with it: the thread may have been left in a state no other
// goroutine expects (thread-local settings, a GL context), so the M exits
// rather than returning to the idle pool, as Go's does. The M's record stays
// on allm until Run ends, which joins the finished thread.
//
// Differences from Go: only the external (user) count exists, since gort's
// runtime never locks a goroutine internally; gort's Ms sleep on m->park in
// stoplockedm exactly as Go's do, but Run's end must find them there to let
// them exit, hence m->lockedIdle and m->lockedWoken (under sched.lock), so
// that the note is woken once.
#include "gort/runtime.h"
#include "panic.h"
#include "proc.h"

namespace gort::runtime {

// stoplockedm mirrors Go's stoplockedm (proc.go:2435): the M's locked G is not
// runnable; give the P away and sleep until startlockedm hands one back with
// the G. The G may already be on a run queue, and startlockedm may have woken
// this M's note before it sleeps: the note keeps that wakeup.
void stoplockedm() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  M* mp = getg()->m;
  if (mp->lockedg == nullptr || mp->lockedg->lockedm != mp) {
    throw_("stoplockedm: inconsistent locking");
  }
  lock(&sched.lock);
  if (sched.exiting.load(std::memory_order_acquire)) {
    unlock(&sched.lock);
    mexit(mp);
  }
  mp->lockedIdle = true;
  unlock(&sched.lock);
  if (mp->p != nullptr) handoffp(releasep());
  incidlelocked(1);
  notesleep(&mp->park);
  noteclear(&mp->park);
  lock(&sched.lock);
  mp->lockedIdle = false;
  mp->lockedWoken = false;
  unlock(&sched.lock);
  if (sched.exiting.load(std::memory_order_acquire)) mexit(mp);
  if (readgstatus(mp->lockedg) != _Grunnable) {
    throw_("stoplockedm: not runnable");
  }
  acquirep(mp->nextp);
  mp->nextp = nullptr;
}

// startlockedm mirrors Go's startlockedm (proc.go:2463): gp, just found
// runnable, is wired to another M; give that M this P and park this one.
void startlockedm(G* gp) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  M* mp = gp->lockedm;
  M* self = getg()->m;
  if (mp == self) throw_("startlockedm: locked to me");
  if (mp->nextp != nullptr) throw_("startlockedm: m has p");
  lock(&sched.lock);
  bool woken = mp->lockedWoken;  // only by Run's end: gp cannot run twice
  mp->lockedWoken = true;
  unlock(&sched.lock);
  if (woken) mexit(self);
  incidlelocked(-1);
  mp->nextp = releasep();
  notewakeup(&mp->park);
  stopm();
}

// wakeLockedMs lets Ms asleep in stoplockedm see that Run is ending.
void wakeLockedMs() ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock) {
  for (M* mp = allm; mp != nullptr; mp = mp->alllink) {
    if (!mp->lockedIdle || mp->lockedWoken) continue;
    mp->lockedWoken = true;
    notewakeup(&mp->park);
  }
}

// lockedexit ends the M whose locked G has just ended (Go's goexit0
// (proc.go:3480) jumping to mstart, then mexit): its P goes to another M and
// the thread exits.
void lockedexit(M* mp) {
  mp->lockedg = nullptr;
  mp->lockedExt = 0;
  handoffp(releasep());
  lock(&sched.lock);
  sched.nmexited++;
  checkdead();
  unlock(&sched.lock);
  mexit(mp);
}

}  // namespace gort::runtime

namespace gort {

using namespace gort::runtime;

// LockOSThread mirrors Go's LockOSThread (proc.go:4400) / dolockOSThread.
void LockOSThread() {
  G* gp = getcurg();
  if (gp == nullptr)
    throw Panic("gort: LockOSThread called outside a goroutine");
  M* mp = gp->m;
  if (mp->lockedExt + 1 == 0) throw Panic("LockOSThread nesting overflow");
  mp->lockedExt++;
  mp->lockedg = gp;
  gp->lockedm = mp;
}

// UnlockOSThread mirrors Go's UnlockOSThread (proc.go:4453) / dounlockOSThread.
void UnlockOSThread() {
  G* gp = getcurg();
  if (gp == nullptr) {
    throw Panic("gort: UnlockOSThread called outside a goroutine");
  }
  M* mp = gp->m;
  if (mp->lockedExt == 0) return;
  if (--mp->lockedExt != 0) return;
  mp->lockedg = nullptr;
  gp->lockedm = nullptr;
}

}  // namespace gort
