// runtime/proc.cc: goroutines and the scheduler loop (Go's proc.go, first
// half: newproc, the G free list, the sudog cache, gopark/goready, gosched,
// goexit, execute and schedule).
//
// Goroutine scheduler. The scheduler's job is to distribute ready-to-run
// goroutines over worker threads, as Go's:
//   G - goroutine;  M - worker thread;  P - processor, the right to run Gs.
// An M must hold a P to run a G. Each P has a local run queue; an M that
// runs out of work takes from the global queue, runs due timers, steals half
// of another P's queue, and only then gives up its P and parks.
//
// Worker thread parking/unparking follows Go: an M is woken (wakep) when a
// goroutine becomes ready and there is an idle P but no spinning M; a
// spinning M that finds work wakes another spinning M, so parallelism ramps
// up without a thundering herd; an M that stops spinning re-checks every
// queue after publishing that it is no longer spinning, so no work is
// stranded.
//
// Differences from Go are noted at each function. The main one: g0 does not
// restart schedule() on a fresh stack at every mcall; schedule() is a loop
// that runs the mcall function a goroutine left behind (park_m, gosched_m,
// goexit0, exitsyscall0) and then finds the next goroutine.
#include "proc.h"

#include "gort/runtime.h"
#include "mprof.h"
#include "os/os.h"
#include "os/traceback_os.h"
#include "panic.h"
#include "park.h"
#include "proflabel.h"
#include "race.h"
#include "trace.h"
#include "traceback.h"

namespace gort::runtime {

schedt sched;
P* allp[kMaxGomaxprocs];
std::atomic<std::int32_t> gomaxprocs{0};
std::atomic<bool> running{false};
mutex allglock;
G* allgs = nullptr;
M* allm = nullptr;
std::size_t stackSizeSetting = 0;
os::TimerMode timerMode = os::TimerMode::kLowRes;
gcountShard gcounts[kMaxGomaxprocs];

namespace {
constexpr int kGoidCacheBatch = 16;
}  // namespace

std::uint32_t readgstatus(G* gp) {
  return gp->atomicstatus.load(std::memory_order_acquire);
}

// casgstatus mirrors Go's casgstatus (proc.go:963) as a load and a store: Go's
// compare-and-swap is there for the GC's _Gscan bit, set by other threads;
// gort has no GC, and each change is made by the one thread the protocol
// hands the G to (its M parks it, one readier readies it, one execute runs
// it), so nothing can change the status between the two. The check still
// throws on a wrong incoming status; the store releases what the changer
// wrote (a parked G's saved context, for a dump or the next execute).
void casgstatus(G* gp, std::uint32_t oldval, std::uint32_t newval) {
  if (gp->atomicstatus.load(std::memory_order_acquire) != oldval) {
    throw_("casgstatus: bad incoming values");
  }
  gp->atomicstatus.store(newval, std::memory_order_release);
}

// fastrand mirrors Go's fastrand (stubs.go:127) (wyrand on the M's state).
std::uint32_t fastrand() {
  M* mp = getg()->m;
  std::uint64_t s =
      (static_cast<std::uint64_t>(mp->fastrand[1]) << 32) | mp->fastrand[0];
#ifdef __SIZEOF_INT128__
  s += 0xa0761d6478bd642fULL;
  mp->fastrand[0] = static_cast<std::uint32_t>(s);
  mp->fastrand[1] = static_cast<std::uint32_t>(s >> 32);
  __uint128_t m = static_cast<__uint128_t>(s) * (s ^ 0xe7037ed1a0b428dbULL);
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(m >> 64) ^
                                    static_cast<std::uint64_t>(m));
#else
  // No 64x64->128-bit multiply on 32-bit targets: the xorshift64+ of Go's
  // fastrand instead.
  (void)s;
  std::uint32_t s1 = mp->fastrand[0];
  std::uint32_t s0 = mp->fastrand[1];
  s1 ^= s1 << 17;
  s1 = s1 ^ s0 ^ (s1 >> 7) ^ (s0 >> 16);
  mp->fastrand[0] = s0;
  mp->fastrand[1] = s1;
  return s0 + s1;
#endif
}

// fastrandn mirrors Go's fastrandn (stubs.go:154): a number in [0, n) without
// division.
std::uint32_t fastrandn(std::uint32_t n) {
  return static_cast<std::uint32_t>(
      (static_cast<std::uint64_t>(fastrand()) * n) >> 32);
}

namespace {
// gcountAdd counts one on the running P's shard: a plain increment (only
// the P's owner writes it), released so that gcount sees a goroutine's
// creation whenever it sees its end.
void gcountAdd(std::atomic<std::uint64_t>* c) {
  c->store(c->load(std::memory_order_relaxed) + 1, std::memory_order_release);
}
}  // namespace

// gcount mirrors Go's gcount (proc.go:4476): the live goroutines. The ends are
// read before the creations, and a goroutine's creation happens before its end,
// so the result never counts too few: any goroutine alive between the two
// passes is in it (one that ends meanwhile may be counted too).
std::int32_t gcount() {
  std::uint64_t exited = 0;
  for (const gcountShard& s : gcounts) {
    exited += s.exited.load(std::memory_order_acquire);
  }
  std::uint64_t created = sched.gcreatedNoP.load(std::memory_order_acquire);
  for (const gcountShard& s : gcounts) {
    created += s.created.load(std::memory_order_acquire);
  }
  return static_cast<std::int32_t>(created - exited);
}

// allgadd mirrors Go's allgadd (proc.go:533): every G ever made stays on allgs
// until Run ends, so checkdead can inspect them.
void allgadd(G* gp) {
  lock(&allglock);
  gp->alllink = allgs;
  gp->allprev = nullptr;
  if (allgs != nullptr) allgs->allprev = gp;
  allgs = gp;
  unlock(&allglock);
}

// newproc1 mirrors Go's newproc1 (proc.go:4112). The stack is not allocated
// here but at the first execute (Go allocates 2 KiB at once; gort's stacks are
// larger, so a burst of spawned-but-not-started Gs costs no stacks).
G* newproc1(internal::Func fn, G* callergp, const void* gopc) {
  P* pp = callergp != nullptr ? callergp->m->p : nullptr;
  G* newg = gfget(pp);
  if (newg == nullptr) {
    newg = new G;
    newg->atomicstatus.store(_Gdead, std::memory_order_relaxed);
    allgadd(newg);
  }
  newg->fn = std::move(fn);
  newg->ctx = nullptr;
  newg->preempt.store(false, std::memory_order_relaxed);
  newg->gopc.store(gopc, std::memory_order_relaxed);
  if (callergp != nullptr) {  // labels are inherited, as in Go
    labelMap* l = callergp->labels.load(std::memory_order_relaxed);
    labelRetain(l);
    newg->labels.store(l, std::memory_order_relaxed);
  }
  if (pp != nullptr) {
    if (pp->goidcache == pp->goidcacheend) {
      pp->goidcache = sched.goidgen.fetch_add(kGoidCacheBatch) + 1;
      pp->goidcacheend = pp->goidcache + kGoidCacheBatch;
    }
    newg->goid.store(static_cast<std::int64_t>(pp->goidcache++),
                     std::memory_order_relaxed);
  } else {
    newg->goid.store(static_cast<std::int64_t>(sched.goidgen.fetch_add(1) + 1),
                     std::memory_order_relaxed);
  }
  if (pp != nullptr) {
    gcountAdd(&gcounts[pp->id].created);
  } else {
    sched.gcreatedNoP.fetch_add(1, std::memory_order_release);
  }
  casgstatus(newg, _Gdead, _Grunnable);
  traceGoCreate(newg, callergp);
  return newg;
}

namespace {
// gFreeNAdd: sched.gFreeN changes only under sched.gFreeLock; it is atomic
// so that gfget may see it is zero without the lock.
// It also keeps gFreeLow, the scavenger's low-water mark.
void gFreeNAdd(std::int32_t d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.gFreeLock) {
  std::int32_t n = sched.gFreeN.load(std::memory_order_relaxed) + d;
  sched.gFreeN.store(n, std::memory_order_relaxed);
  if (n < sched.gFreeLow) sched.gFreeLow = n;
}

// gFreePush / gFreePop: the global free list's head, where gfput spills and
// gfget takes (LIFO); its tail holds the Gs idle longest (gscavenge). Every
// G but the head has freeprev pointing at the G above it (set when that one
// was pushed); the head's is stale, so a pop touches no other G.
void gFreePush(G* gp) ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.gFreeLock) {
  gp->schedlink = sched.gFree;
  gp->freeprev = nullptr;
  if (sched.gFree != nullptr) {
    sched.gFree->freeprev = gp;
  } else {
    sched.gFreeTail = gp;
  }
  sched.gFree = gp;
  gFreeNAdd(1);
}

G* gFreePop() ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.gFreeLock) {
  G* gp = sched.gFree;
  if (gp == nullptr) return nullptr;
  sched.gFree = gp->schedlink;
  if (sched.gFree == nullptr) sched.gFreeTail = nullptr;
  gp->schedlink = nullptr;
  gFreeNAdd(-1);
  return gp;
}
}  // namespace

// gfput mirrors Go's gfput (proc.go:4241): keep dead Gs with their stacks per
// P, spilling half to the global list past kGFreeLocalMax.
void gfput(P* pp, G* gp) {
  stackcacheput(pp, &gp->stack);  // for the next G that starts stackless
  gp->schedlink = pp->gFree;
  pp->gFree = gp;
  if (++pp->gFreeN < kGFreeLocalMax) return;
  lock(&sched.gFreeLock);
  while (pp->gFreeN >= kGFreeLocalMax / 2) {
    G* g1 = pp->gFree;
    pp->gFree = g1->schedlink;
    pp->gFreeN--;
    gFreePush(g1);
  }
  unlock(&sched.gFreeLock);
}

// gfget mirrors Go's gfget (proc.go:4284); pp may be nullptr (a G made
// off-runtime).
G* gfget(P* pp) {
  if (pp == nullptr || pp->gFree == nullptr) {
    // As in Go, an empty global list is seen without taking its lock.
    if (sched.gFreeN.load(std::memory_order_relaxed) == 0) return nullptr;
    lock(&sched.gFreeLock);
    if (pp == nullptr) {
      G* gp = gFreePop();
      unlock(&sched.gFreeLock);
      return gp;
    }
    while (pp->gFreeN < kGFreeLocalMax / 2 && sched.gFree != nullptr) {
      G* gp = gFreePop();
      gp->schedlink = pp->gFree;
      pp->gFree = gp;
      pp->gFreeN++;
    }
    unlock(&sched.gFreeLock);
  }
  G* gp = pp->gFree;
  if (gp != nullptr) {
    pp->gFree = gp->schedlink;
    pp->gFreeN--;
  }
  return gp;
}

namespace {
// allgremove takes gp off allgs (Go never frees a G).
void allgremove(G* gp) ABSL_EXCLUSIVE_LOCKS_REQUIRED(allglock) {
  if (gp->allprev != nullptr) {
    gp->allprev->alllink = gp->alllink;
  } else {
    allgs = gp->alllink;
  }
  if (gp->alllink != nullptr) gp->alllink->allprev = gp->allprev;
  gp->alllink = gp->allprev = nullptr;
}

// gfreeidle frees a list of idle free Gs and their stacks, taking allglock
// a batch at a time so that a goroutine dump or checkdead waits little.
void gfreeidle(G* list) {
  constexpr int kBatch = 256;
  while (list != nullptr) {
    G* batch = list;
    G* last = nullptr;
    lock(&allglock);
    for (int i = 0; i < kBatch && list != nullptr; i++) {
      allgremove(list);
      last = list;
      list = list->schedlink;
    }
    unlock(&allglock);
    last->schedlink = nullptr;
    std::int64_t stacks = 0, gs = 0;
    for (G* gp = batch; gp != nullptr; gs++) {
      G* next = gp->schedlink;
      if (gp->stack.base != nullptr) {
        stackrelease(&gp->stack);
        stacks++;
      }
      racefree(gp);
      delete gp;
      gp = next;
    }
    sched.gsFreed.fetch_add(gs, std::memory_order_relaxed);
    sched.stacksReleased.fetch_add(stacks, std::memory_order_relaxed);
  }
}
}  // namespace

namespace {
// sudogscavenge: the sudogs at the bottom of the central cache that no
// acquireSudog took since the last look (Go empties the central sudog cache
// at each GC, clearpools (mgc.go:1587)); true if it freed any.
bool sudogscavenge() {
  lock(&sched.sudoglock);
  std::int32_t n = sched.nsudogcache;
  std::int32_t low = sched.sudogLow < n ? sched.sudogLow : n;
  sudog* idle = nullptr;
  if (low > 0) {
    sudog** link = &sched.sudogcache;
    for (std::int32_t i = 0; i < n - low; i++) link = &(*link)->next;
    idle = *link;
    *link = nullptr;
    sched.nsudogcache -= low;
  }
  sched.sudogLow = sched.nsudogcache;
  unlock(&sched.sudoglock);
  for (sudog* s = idle; s != nullptr;) {
    sudog* next = s->next;
    freeSudog(s);
    s = next;
  }
  return idle != nullptr;
}
}  // namespace

// gscavenge plays the part of two things Go does: free dead Gs' stacks at
// each GC (markrootFreeGStacks (mgcmark.go:293)) and return free memory to the
// OS in the background (bgscavenge (mgcscavenge.go:613)): every
// GODEBUG=scavenge ms, sysmon frees the Gs at the tail of the global free
// list that none of gfget's takes reached since its last look (the list is
// LIFO, so they idled the whole period), with their stacks. A burst's Gs
// come back after two periods at most; a steady load reuses the head of the
// list and loses nothing. They are detached from the tail kScavengeChunk at
// a time, so gFreeLock is held for a bounded walk however long the list.
// The Ps' own lists (up to kGFreeLocalMax Gs each) and stack caches are left
// alone, as Go leaves its per-P caches.
void gscavenge(std::int64_t now) {
  if (debug.scavenge <= 0) return;
  if (now - sched.lastScavenge < std::int64_t{debug.scavenge} * 1000000) return;
  sched.lastScavenge = now;
  constexpr std::int32_t kScavengeChunk = 1024;
  bool freed = sudogscavenge();
  lock(&sched.gFreeLock);
  // Idle the whole last period; from now on gFreeLow counts the tail left
  // untouched since this look began (and then for the next period).
  std::int32_t idle = sched.gFreeLow;
  sched.gFreeLow = sched.gFreeN.load(std::memory_order_relaxed);
  for (;;) {
    if (sched.gFreeLow < idle) idle = sched.gFreeLow;
    std::int32_t k = idle < kScavengeChunk ? idle : kScavengeChunk;
    if (k <= 0) break;
    G* first = sched.gFree;  // k is the whole list: from the head
    if (k < sched.gFreeN.load(std::memory_order_relaxed)) {
      first = sched.gFreeTail;
      for (std::int32_t i = 1; i < k; i++) first = first->freeprev;
      sched.gFreeTail = first->freeprev;  // not the head: freeprev is valid
      sched.gFreeTail->schedlink = nullptr;
    } else {
      sched.gFree = sched.gFreeTail = nullptr;
    }
    sched.gFreeN.store(sched.gFreeN.load(std::memory_order_relaxed) - k,
                       std::memory_order_relaxed);
    sched.gFreeLow -= k;
    idle -= k;
    unlock(&sched.gFreeLock);
    gfreeidle(first);
    freed = true;
    lock(&sched.gFreeLock);
  }
  unlock(&sched.gFreeLock);
  // The heap memory of what was freed back to the OS too (as bgscavenge
  // (mgcscavenge.go:613) returns free heap pages).
  if (freed) os::heapRelease();
}

// gfpurge mirrors Go's gfpurge (proc.go:4342): a destroyed P's free Gs go
// global.
void gfpurge(P* pp) {
  lock(&sched.gFreeLock);
  while (pp->gFree != nullptr) {
    G* gp = pp->gFree;
    pp->gFree = gp->schedlink;
    gFreePush(gp);
  }
  pp->gFreeN = 0;
  unlock(&sched.gFreeLock);
}

// acquireSudog mirrors Go's acquireSudog (proc.go:379): per-P cache, refilled
// from the central cache, so channel waits do not allocate in steady state.
namespace {
std::atomic<std::int64_t> sudogsLive{0};
}  // namespace

// newSudog and freeSudog allocate and delete sudogs, counted so that tests
// can see none outlive a Run (Go garbage-collects its own).
sudog* newSudog() {
  sudogsLive.fetch_add(1, std::memory_order_relaxed);
  return new sudog;
}

void freeSudog(sudog* s) {
  sudogsLive.fetch_sub(1, std::memory_order_relaxed);
  delete s;
}

std::int64_t sudogsAllocated() {
  return sudogsLive.load(std::memory_order_relaxed);
}

sudog* acquireSudog() { return acquireSudog(getg()->m->p); }

// acquireSudog with the caller's P, which a caller that already holds its G
// passes to save a getg() (a call, kept out of line on purpose).
sudog* acquireSudog(P* pp) {
  if (pp->nsudog == 0) {
    lock(&sched.sudoglock);
    while (pp->nsudog < kSudogCacheSize / 2 && sched.sudogcache != nullptr) {
      sudog* s = sched.sudogcache;
      sched.sudogcache = s->next;
      s->next = nullptr;
      pp->sudogcache[pp->nsudog++] = s;
      sched.nsudogcache--;
      if (sched.nsudogcache < sched.sudogLow)
        sched.sudogLow = sched.nsudogcache;
    }
    unlock(&sched.sudoglock);
    if (pp->nsudog == 0) pp->sudogcache[pp->nsudog++] = newSudog();
  }
  sudog* s = pp->sudogcache[--pp->nsudog];
  return s;
}

// releaseSudog mirrors Go's releaseSudog (proc.go:417).
void releaseSudog(sudog* s) { releaseSudog(s, getg()->m->p); }

// releaseSudog onto pp, the caller's P.
void releaseSudog(sudog* s, P* pp) {
  *s = sudog{};
  if (pp->nsudog == kSudogCacheSize) {
    sudog* first = nullptr;
    sudog* last = nullptr;
    std::int32_t moved = pp->nsudog - kSudogCacheSize / 2;
    while (pp->nsudog > kSudogCacheSize / 2) {
      sudog* p = pp->sudogcache[--pp->nsudog];
      if (first == nullptr) {
        first = p;
      } else {
        last->next = p;
      }
      last = p;
    }
    lock(&sched.sudoglock);
    last->next = sched.sudogcache;
    sched.sudogcache = first;
    sched.nsudogcache += moved;
    unlock(&sched.sudoglock);
  }
  pp->sudogcache[pp->nsudog++] = s;
}

// dropg mirrors Go's dropg (proc.go:3262).
static void dropg(M* mp) {
  mp->curg.load(std::memory_order_relaxed)->m = nullptr;
  mp->curg.store(nullptr, std::memory_order_relaxed);
}

// parkstamp is gort's own: the time a goroutine parks, for the dump's "N
// minutes". It reads sysmon's clock (sysmonClock), which is at most a sysmon
// round and a millisecond old, and the real one only while sysmon sleeps on
// its note: a clock read per park was 4 % of a channel ping-pong. Go reads
// none: Go's markroot (mgcmark.go:162) stamps the goroutines the GC finds
// waiting.
std::int64_t parkstamp() {
  std::int64_t t = sched.sysmonclock.now.load(std::memory_order_relaxed);
  return t != 0 ? t : os::nanotime();
}

// park_m mirrors Go's park_m (proc.go:3341): on g0, after gp switched out.
G* park_m(G* gp) {
  M* mp = getg()->m;
  gp->waitsince = parkstamp();  // for the dump's "N minutes"
  casgstatus(gp, _Grunning, _Gwaiting);
  traceGoPark(gp);
  dropg(mp);
  if (auto fn = mp->waitunlockf) {
    bool ok = fn(gp, mp->waitlock);
    mp->waitunlockf = nullptr;
    mp->waitlock = nullptr;
    if (!ok) {
      traceGoUnpark(gp);
      casgstatus(gp, _Gwaiting, _Grunnable);
      return gp;  // run it again at once (Go: execute(gp, true))
    }
  }
  return nullptr;
}

// gopark and goparkunlock: park.h, inline.

// parkunlock_c mirrors Go's parkunlock_c (proc.go:3335).
bool parkunlock_c(G*, void* lk) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  unlock(static_cast<mutex*>(lk));
  return true;
}

// ready mirrors Go's ready (proc.go:843): mark gp runnable and put it on this
// P.
void ready(G* gp, bool next) {
  traceGoUnpark(gp);
  blockReleased(gp);
  casgstatus(gp, _Gwaiting, _Grunnable);
  runqput(getg()->m->p, gp, next);
  wakep();
}

// goready mirrors Go's goready (proc.go:372).
void goready(G* gp) { ready(gp, true); }

// newslice counts a goroutine's fresh time slice on pp (execute's schedtick++
// in Go). Only the P's owner writes schedtick (sysmon reads it), so a plain
// increment will do, as in Go: no locked read-modify-write per switch.
static void newslice(P* pp) {
  auto& tick = pp->schedtick;
  tick.store(tick.load(std::memory_order_relaxed) + 1,
             std::memory_order_relaxed);
}

// gosched_m mirrors Go's gosched_m (proc.go:3382) / goschedImpl: back of the
// global queue. When findRunnable would go straight to the global queue
// (nothing in this P's queue, no timer on it, no stop of the world, an M
// not wired to a G), the next G is taken in the same hold of sched.lock, as
// findRunnable would take it (gort's own: one lock round trip fewer).
static G* gosched_m(G* gp) {
  M* mp = getg()->m;
  casgstatus(gp, _Grunning, _Grunnable);
  traceGoSched(gp);
  dropg(mp);
  P* pp = mp->p;
  bool takeNext = mp->lockedg == nullptr &&
                  pp->timer0When.load(std::memory_order_relaxed) == 0 &&
                  !sched.gcwaiting.load(std::memory_order_acquire) &&
                  runqempty(pp);
  lock(&sched.lock);
  globrunqput(gp);
  G* next = takeNext ? globrunqget(pp, 0) : nullptr;
  unlock(&sched.lock);
  if (next == nullptr) return nullptr;
  if (next->lockedm != nullptr) {  // schedule hands it to its M
    runqput(pp, next, true);
    return nullptr;
  }
  // From the global queue, a fresh slice: execute(next, true) will not count
  // it, so count it here.
  newslice(pp);
  return next;
}

void gosched() { mcall(gosched_m); }

// goyield_m mirrors Go's goyield_m (proc.go:3457): like gosched_m, but to the
// back of this P's own run queue, so that a goroutine just put in runnext runs
// first and the caller soon after, with no trip through the global queue.
static G* goyield_m(G* gp) {
  M* mp = getg()->m;
  P* pp = mp->p;
  casgstatus(gp, _Grunning, _Grunnable);
  traceGoPreempt(gp);
  dropg(mp);
  runqput(pp, gp, false);
  return nullptr;
}

// goyield mirrors Go's goyield (proc.go:3452).
void goyield() { mcall(goyield_m); }

// systemstack_m marks an mcall as systemstack's: schedule runs the M's
// systemstackfn and switches straight back; it is never called itself.
static G* systemstack_m(G* gp) { return gp; }

// systemstack mirrors Go's systemstack (stubs.go:60): run fn(arg) on the M's
// own stack (g0) and come back. Unlike an mcall, the goroutine keeps its M, its
// status (it may be in a syscall, with no P) and its place: no scheduling
// happens in between.
void systemstack(void (*fn)(void*), void* arg) {
  M* mp = getg()->m;
  mp->systemstackfn = fn;
  mp->systemstackarg = arg;
  mcall(systemstack_m);
}

// runSystemstack: schedule's side of systemstack, on g0 after gp switched
// out: run the function and resume gp, as often as gp asks.
static void runSystemstack(M* mp, G* gp) {
  while (mp->mcallfn == systemstack_m) {
    mp->mcallfn = nullptr;
    void (*fn)(void*) = mp->systemstackfn;
    mp->systemstackfn = nullptr;
    fn(mp->systemstackarg);
    gogo(gp);
    gogoback(mp, gp);
    stackcheck(gp);
  }
}

static void usleep1(void* usec) {
  os::usleep(
      static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(usec)));
}

// usleepOnG0 mirrors Go's systemstack (stubs.go:60)(usleep1) on Windows: a
// goroutine's usleep runs on its M's own stack.
void usleepOnG0(std::uint32_t usec) {
  systemstack(usleep1,
              reinterpret_cast<void*>(static_cast<std::uintptr_t>(usec)));
}

// goschedIfPreempted honours sysmon's request at a safe point (Go's
// gopreempt_m reached through a stack check; gort's preemption is
// cooperative only).
void goschedIfPreempted() {
  G* gp = getg();
  if (gp->preempt.load(std::memory_order_relaxed)) {
    gp->preempt.store(false, std::memory_order_relaxed);
    traceGoPreempt(gp, traceStk::self);
    gosched();
  }
}

// goexit0 mirrors Go's goexit0 (proc.go:3480): on g0, recycle the finished G.
static G* goexit0(G* gp) {
  M* mp = getg()->m;
  casgstatus(gp, _Grunning, _Gdead);
  traceGoEnd(gp);
  dropg(mp);
  gp->waitreason = waitReason::zero;
  gp->param = nullptr;
  labelRelease(gp->labels.exchange(nullptr, std::memory_order_relaxed));
  gcountAdd(&gcounts[mp->p->id].exited);
  racegoexit(gp);
  bool locked = gp->lockedm != nullptr;
  gp->lockedm = nullptr;
  gfput(mp->p, gp);
  if (locked)
    lockedexit(mp);  // the thread goes with it (Go's goexit0 (proc.go:3480))
  return nullptr;
}

// mainexit0: goroutine 1 returned. Go's main (proc.go:145) calls exit(0); gort
// wakes Run, which stops the runtime's threads and returns.
static G* mainexit0(G* gp) {
  M* mp = getg()->m;
  casgstatus(gp, _Grunning, _Gdead);
  traceGoEnd(gp);
  dropg(mp);
  gcountAdd(&gcounts[mp->p->id].exited);
  // Sequentially consistent: entersyscall stores syscallState, then loads
  // exiting; Run loads syscallState after this (exitEvent).
  sched.exiting.store(true);
  notewakeup(&sched.mainDone);
  mexit(mp);
}

// goexit1 mirrors Go's goexit1 (proc.go:3469).
void goexit1() {
  G* gp = getg();
  mcall(gp->goid.load(std::memory_order_relaxed) == 1 ? mainexit0 : goexit0,
        true);
}

// execute mirrors Go's execute (proc.go:2517): run gp on this M until it
// switches out (then schedule calls gogoback).
void execute(G* gp, bool inheritTime) {
  M* mp = getg()->m;
  mp->curg.store(gp, std::memory_order_release);  // sysmon may read gp
  gp->m = mp;
  executeEnter(mp);  // a goroutine dump may be walking gp's stack
  casgstatus(gp, _Grunnable, _Grunning);
  executeLeave(mp);
  // A yield request made before gp parked or yielded is stale now that gp
  // starts a fresh slice (Go's execute (proc.go:2517) clears gp.preempt too).
  gp->preempt.store(false, std::memory_order_relaxed);  // stale now
  mp->p->runtick++;
  if (!inheritTime) newslice(mp->p);
  if (gp->ctx == nullptr) {
    if (gp->stack.base == nullptr && !stacktake(mp->p, &gp->stack) &&
        !stackalloc(&gp->stack, stackSizeSetting)) {
      throw_("out of memory allocating a goroutine stack");
    }
    gostart(gp);
  }
  traceGoStart(gp);
  gogo(gp);
}

// schedule mirrors Go's schedule (proc.go:3185), as a loop on g0 (see the file
// comment).
void schedule() {
  M* mp = getg()->m;
  G* next = nullptr;
  bool inheritTime = false;
  for (;;) {
    if (sched.exiting.load(std::memory_order_acquire)) mexit(mp);
    if (next == nullptr && mp->lockedg != nullptr) {
      stoplockedm();  // wired to a G: wait for it alone (Go's schedule
                      // (proc.go:3185))
      next = mp->lockedg;
      inheritTime = false;
    }
    if (next == nullptr) {
      if (sched.gcwaiting.load(std::memory_order_acquire)) {
        gcstopm();
        continue;
      }
      next = findRunnable(&inheritTime);
      if (mp->spinning) resetspinning();
      if (next->lockedm != nullptr) {
        startlockedm(next);  // its own M runs it; this M parks
        next = nullptr;
        continue;
      }
    }
    G* gp = next;
    execute(gp, inheritTime);
    gogoback(mp, gp);
    stackcheck(gp);  // every switch back to g0, exits included
    runSystemstack(mp, gp);
    G* (*fn)(G*) = mp->mcallfn;
    mp->mcallfn = nullptr;
    next = fn(gp);
    inheritTime = true;
  }
}

// resetspinning mirrors Go's resetspinning (proc.go:3097).
void resetspinning() {
  M* mp = getg()->m;
  mp->spinning = false;
  if (sched.nmspinning.fetch_sub(1) - 1 < 0) {
    throw_("findRunnable: negative nmspinning");
  }
  traceSpinStop(kSpinFoundWork);
  wakep();
}

}  // namespace gort::runtime
