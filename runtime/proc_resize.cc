// runtime/proc_resize.cc: changing GOMAXPROCS (Go's proc.go: stopTheWorld,
// startTheWorld, procresize, and runtime.GOMAXPROCS from debug.go).
//
// To change the number of Ps the world stops: every P is taken away from
// its M (idle Ps at once, Ps in syscalls by CAS, running Ps when their
// goroutine reaches a safe point and its M calls gcstopm). procresize then
// creates or retires Ps: a retired P's queued goroutines go to the global
// queue and its timers to the caller's P. P objects are never freed while
// Run lasts, so sysmon may read allp without a lock.
#include "gort/runtime.h"
#include "netpoll.h"
#include "panic.h"
#include "proc.h"
#include "sema.h"
#include "trace.h"

namespace gort::runtime {

namespace {
// worldsema mirrors Go's worldsema (proc.go:1147): one stop-the-world at a
// time.
std::uint32_t worldsema = 1;

// preemptall mirrors Go's preemptall (proc.go:5365).
void preemptall() {
  std::int32_t n = gomaxprocs.load();
  for (std::int32_t i = 0; i < n; i++) {
    P* pp = allp[i];
    if (pp->status.load(std::memory_order_acquire) != _Prunning) continue;
    M* mp = pp->m.load(std::memory_order_acquire);
    G* gp = mp != nullptr ? mp->curg.load(std::memory_order_acquire) : nullptr;
    if (gp != nullptr) gp->preempt.store(true, std::memory_order_relaxed);
  }
}

// destroyp mirrors Go's p.destroy (proc.go:4711): move pp's work to the
// caller's P and the global lists.
void destroyp(P* pp, P* to) ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock) {
  runqdrain(pp);
  moveTimers(to, pp);
  gfpurge(pp);
  lock(&sched.sudoglock);
  while (pp->nsudog > 0) {
    sudog* s = pp->sudogcache[--pp->nsudog];
    s->next = sched.sudogcache;
    sched.sudogcache = s;
  }
  unlock(&sched.sudoglock);
  pp->status.store(_Pdead, std::memory_order_release);
}
}  // namespace

// procresize mirrors Go's procresize (proc.go:4801): with sched.lock held and
// the world stopped (or not yet started: then the caller has no M). Returns the
// Ps that have work, linked through p.link, each with an M in p.m if one was
// idle.
P* procresize(std::int32_t nprocs) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  std::int32_t old = gomaxprocs.load();
  traceGomaxprocs(nprocs, old);
  for (std::int32_t i = 0; i < nprocs; i++) {
    if (allp[i] == nullptr) {
      allp[i] = new P;
      allp[i]->id = i;
    }
    if (i >= old) allp[i]->status.store(_Pgcstop, std::memory_order_release);
  }
  G* g = getg();
  M* mp = g != nullptr ? g->m : nullptr;
  if (mp != nullptr) {
    if (mp->p != nullptr && mp->p->id < nprocs) {
      mp->p->status.store(_Prunning, std::memory_order_release);
    } else {
      if (mp->p != nullptr) {
        mp->p->m.store(nullptr, std::memory_order_relaxed);
        mp->p = nullptr;
      }
      allp[0]->m.store(nullptr, std::memory_order_relaxed);
      acquirep(allp[0]);
    }
  }
  for (std::int32_t i = nprocs; i < old; i++) destroyp(allp[i], mp->p);
  gomaxprocs.store(nprocs, std::memory_order_release);
  resetStealOrder(static_cast<std::uint32_t>(nprocs));

  P* runnablePs = nullptr;
  for (std::int32_t i = nprocs - 1; i >= 0; i--) {
    P* pp = allp[i];
    if (mp != nullptr && mp->p == pp) continue;
    pp->status.store(_Pidle, std::memory_order_release);
    if (runqempty(pp)) {
      pidleput(pp, 0);
    } else {
      pp->m.store(mget(), std::memory_order_relaxed);
      pp->link = runnablePs;
      runnablePs = pp;
    }
  }
  return runnablePs;
}

// stopTheWorld mirrors Go's stopTheWorldWithSema (proc.go:1179).
void stopTheWorld() {
  semacquire(&worldsema);
  M* mp = getg()->m;
  lock(&sched.lock);
  sched.stopwait = gomaxprocs.load();
  sched.gcwaiting.store(true, std::memory_order_release);
  preemptall();
  mp->p->status.store(_Pgcstop, std::memory_order_release);
  sched.stopwait--;
  std::int32_t n = gomaxprocs.load();
  for (std::int32_t i = 0; i < n; i++) {
    P* pp = allp[i];
    std::uint32_t s = _Psyscall;
    if (pp->status.compare_exchange_strong(s, _Pgcstop)) {
      pp->syscalltick.fetch_add(1, std::memory_order_relaxed);
      sched.stopwait--;
    }
  }
  while (P* pp = pidleget(0)) {
    pp->status.store(_Pgcstop, std::memory_order_release);
    sched.stopwait--;
  }
  bool wait = sched.stopwait > 0;
  unlock(&sched.lock);
  if (!wait) return;
  for (;;) {
    if (notetsleep(&sched.stopnote, 100 * 1000)) {
      noteclear(&sched.stopnote);
      return;
    }
    if (sched.exiting.load()) return;  // Run is ending: nobody will stop
    preemptall();
  }
}

// startTheWorld mirrors Go's startTheWorldWithSema (proc.go:1258).
void startTheWorld(std::int32_t newprocs) {
  if (netpollinited()) {  // I/O ready meanwhile (Go)
    std::int32_t delta;
    injectglist(netpoll(0, &delta));
    netpollAdjustWaiters(delta);
  }
  lock(&sched.lock);
  P* p1 = procresize(newprocs);
  sched.gcwaiting.store(false, std::memory_order_release);
  if (sched.sysmonwait.load(std::memory_order_acquire)) {
    sched.sysmonwait.store(false, std::memory_order_release);
    notewakeup(&sched.sysmonnote);
  }
  unlock(&sched.lock);
  while (p1 != nullptr) {
    P* pp = p1;
    p1 = p1->link;
    if (M* mp = pp->m.load(std::memory_order_relaxed)) {
      pp->m.store(nullptr, std::memory_order_relaxed);
      mp->nextp = pp;
      notewakeup(&mp->park);
    } else {
      newm(nullptr, pp, false);
    }
  }
  semrelease(&worldsema);
  wakep();
}

}  // namespace gort::runtime

namespace gort {

using namespace gort::runtime;

int GOMAXPROCS(int n) {
  if (n < 1) return running.load() ? gomaxprocs.load() : initialProcs(0, false);
  if (getcurg() == nullptr) {
    throw Panic("gort: GOMAXPROCS called outside a goroutine");
  }
  if (n > kMaxGomaxprocs) n = kMaxGomaxprocs;
  customGOMAXPROCS.store(true);  // sysmon no longer adjusts it (Go 1.25)
  std::int32_t ret = gomaxprocs.load();
  if (n == ret) return ret;
  stopTheWorld();
  ret = gomaxprocs.load();
  startTheWorld(n);
  return ret;
}

}  // namespace gort
