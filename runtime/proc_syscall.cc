// runtime/proc_syscall.cc: goroutines entering and leaving system calls (Go's
// proc.go: entersyscall, entersyscallblock, exitsyscall, exitsyscall0).
//
// entersyscall only marks the P _Psyscall and leaves it attached to no M;
// nothing else happens unless the call blocks. sysmon then sees the same
// syscalltick twice in a row and retakes the P (retake -> handoffp), so the
// other goroutines run on another M. On return exitsyscall tries to win
// back the same P with a CAS, then any idle P; failing both the goroutine
// goes to the global queue and this M parks. entersyscallblock is for calls
// known to block: it hands the P off at once instead of waiting for sysmon.
#include "gort/runtime.h"
#include "panic.h"
#include "park.h"
#include "proc.h"
#include "trace.h"

namespace gort::runtime {

namespace {

// entersyscall_gcwait mirrors Go's: a stop-the-world is waiting for this P.
void entersyscall_gcwait(P* pp) {
  lock(&sched.lock);
  std::uint32_t s = _Psyscall;
  if (sched.stopwait > 0 && pp->status.compare_exchange_strong(s, _Pgcstop)) {
    if (--sched.stopwait == 0) notewakeup(&sched.stopnote);
  }
  unlock(&sched.lock);
}

// exitsyscallfast mirrors Go's exitsyscallfast (proc.go:3857): the old P if it
// is still ours (*kept: sysmon never took it), else any idle P.
bool exitsyscallfast(P* oldp, bool* kept) {
  std::uint32_t s = _Psyscall;
  if (oldp != nullptr && oldp->status.compare_exchange_strong(
                             s, _Pidle, std::memory_order_acq_rel)) {
    acquirep(oldp);
    *kept = true;
    return true;
  }
  if (sched.npidle.load() > 0) {
    lock(&sched.lock);
    P* pp = pidleget(0);
    unlock(&sched.lock);
    if (pp != nullptr) {
      acquirep(pp);
      wakeSysmon();
      return true;
    }
  }
  return false;
}

// exitsyscall0 mirrors Go's exitsyscall0 (proc.go:3940): on g0, no P could be
// had.
G* exitsyscall0(G* gp) {
  M* mp = getg()->m;
  traceGoSysExit(gp, false);
  casgstatus(gp, _Gsyscall, _Grunnable);
  mp->curg.store(nullptr, std::memory_order_relaxed);
  gp->m = nullptr;
  lock(&sched.lock);
  P* pp = pidleget(0);
  if (pp == nullptr) globrunqput(gp);
  unlock(&sched.lock);
  if (pp != nullptr) {
    acquirep(pp);
    wakeSysmon();
    return gp;
  }
  if (mp->lockedg != nullptr) {
    stoplockedm();  // wait for gp alone (Go's exitsyscall0 (proc.go:3940))
    return gp;
  }
  stopm();
  return nullptr;
}

}  // namespace

// entersyscall mirrors Go's entersyscall (proc.go:3678) / reentersyscall.
void entersyscall() {
  G* gp = getg();
  M* mp = gp->m;
  P* pp = mp->p;
  traceStamp at = traceStampNow(pp);
  casgstatus(gp, _Grunning, _Gsyscall);
  pp->m.store(nullptr, std::memory_order_relaxed);
  mp->oldp = pp;
  mp->p = nullptr;
  pp->status.store(_Psyscall, std::memory_order_release);
  traceGoSysCallAt(gp, at);  // the P is let go: see traceGoSysCallAt
  mp->syscallState.store(syscallStatus::inSyscall);
  if (sched.exiting.load()) exitEvent();  // Run abandons this M
  if (sched.sysmonwait.load(std::memory_order_acquire)) wakeSysmon();
  if (sched.gcwaiting.load(std::memory_order_acquire)) {
    entersyscall_gcwait(pp);
  }
}

// entersyscallblock mirrors Go's entersyscallblock (proc.go:3712): hand the P
// off now.
void entersyscallblock() {
  G* gp = getg();
  M* mp = gp->m;
  traceGoSysCall(gp, true);
  casgstatus(gp, _Grunning, _Gsyscall);
  mp->oldp = nullptr;
  mp->syscallState.store(syscallStatus::inSyscall);
  if (sched.exiting.load()) exitEvent();
  P* pp = releasep();
  pp->syscalltick.fetch_add(1, std::memory_order_relaxed);
  handoffp(pp);
}

// exitsyscall mirrors Go's exitsyscall (proc.go:3773).
void exitsyscall() {
  G* gp = getg();
  M* mp = gp->m;
  syscallStatus in = syscallStatus::inSyscall;
  if (!mp->syscallState.compare_exchange_strong(in, syscallStatus::running)) {
    parkForever();  // Run ended and abandoned this M
  }
  P* oldp = mp->oldp;
  mp->oldp = nullptr;
  tracePrefetch(mp);
  bool kept = false;
  if (exitsyscallfast(oldp, &kept)) {
    getg()->m->p->syscalltick.fetch_add(1, std::memory_order_relaxed);
    traceGoSysExit(gp, true, kept);
    casgstatus(gp, _Gsyscall, _Grunning);
    goschedIfPreempted();
    return;
  }
  mcall(exitsyscall0);
}

}  // namespace gort::runtime

namespace gort::internal {

void EnterSyscall() {
  if (runtime::getcurg() != nullptr) runtime::entersyscall();
}

void EnterSyscallBlock() {
  if (runtime::getcurg() != nullptr) runtime::entersyscallblock();
}

void ExitSyscall() {
  if (runtime::getcurg() != nullptr) runtime::exitsyscall();
}

}  // namespace gort::internal
