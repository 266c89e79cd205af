// runtime/netpoll.cc: the portable network poller (Go's netpoll.go).
//
// A goroutine that would block on a descriptor parks on the descriptor's
// pollDesc (netpollblock) instead of in a syscall; the OS poller (epoll on
// Linux, behind os/netpoll_os.h) reports readiness, and netpoll turns ready
// descriptors into runnable goroutines. The scheduler polls without
// blocking before stealing, one M at a time blocks in netpoll until the
// next timer when there is nothing to do (sched_lastpoll == 0 while it
// does), adding an earlier timer breaks that wait (wakeNetPoller), and
// sysmon polls if nobody has for 10 ms.
//
// Differences from Go:
// - The poller is per Run: created by the first descriptor registered,
//   closed when Run ends (descriptors left open become "closed"), so Run
//   can be called again and leaks no descriptor.
// - The OS layer hands back a 64-bit key (a pollDesc slot and its fdseq)
//   rather than a pointer, so a stale event for a reused pollDesc is
//   recognised on every architecture (Go 1.21's taggedPointer, in spirit).
// - A deadline is a pooled, reference-counted deadlineTimer rather than
//   timers embedded in the pollDesc: moving a deadline later keeps the
//   armed timer, which re-arms itself when it fires early; moving it
//   earlier, clearing it or closing the descriptor deletes the armed timer
//   from the heap (deltimer) and changes rseq / wseq (for a call already
//   under way); it returns to the pool when its last reference (the
//   heap's, or a running call's) goes. No allocation once
//   the pool has grown to the number of deadlines pending at once.
// - netpollWaiters counts every goroutine parked here and is decremented
//   for every one readied (Go 1.19 let it drift on the netpoll path), the
//   way Go 1.21 does it: netpoll and netpollunblock only report the change
//   (delta) and the caller applies it once the goroutines are runnable
//   (netpollAdjustWaiters). Applied earlier, a P-less M could see no waiters
//   while sysmon still held the readied goroutine in its list, stop instead
//   of polling, and checkdead would call the program deadlocked.
// - pollUnblock may be called by a thread with no P (a plain thread closing
//   a descriptor through gort::hooks; Go has no such thread). It cannot
//   ready a goroutine onto a P, so it leaves the woken goroutines for the
//   next netpoll (netpollDefer) and breaks the poller's wait, as readiness
//   from the OS would; they count as waiters until that netpoll hands them
//   on, so checkdead and the blocking M still see them.
#include "netpoll.h"

#include <limits>

#include "os/netpoll_os.h"
#include "os/os.h"
#include "panic.h"
#include "park.h"
#include "proc.h"
#include "trace.h"

namespace gort::runtime {

// deadlineTimer: one armed deadline of a pollDesc (Go's pollDesc.rt
// (netpoll.go:103) / .wt).
struct deadlineTimer {
  timer t;
  // References: the timer heap's while pending, a call of deadlineFire's
  // while it runs (time.cc's ref/unref); at zero it goes back to the pool.
  std::atomic<std::int32_t> refs{0};
  pollDesc* pd = nullptr;
  std::int32_t mode = 0;
  deadlineTimer* next = nullptr;  // in the pool
};

namespace {

constexpr std::uint32_t kChunk = 256;        // pollDescs per allocation
constexpr std::uint32_t kMaxChunks = 16384;  // 4 Mi descriptors
constexpr int kBatch = 128;                  // events per netpoll call

// pollCache mirrors Go's pollCache (netpoll.go:168): pollDescs are never freed.
struct pollCache {
  mutex lock;
  pollDesc* first ABSL_GUARDED_BY(lock) = nullptr;
  std::uint32_t nchunks ABSL_GUARDED_BY(lock) = 0;
  std::int32_t nfree ABSL_GUARDED_BY(lock) = 0;
};
pollCache pollcache;
std::atomic<pollDesc*> chunks[kMaxChunks];  // key → pollDesc, lock-free

// The deadline timer pool.
mutex dtLock;
deadlineTimer* dtFree ABSL_GUARDED_BY(dtLock) = nullptr;
std::atomic<std::int32_t> dtAllocated{0};

mutex initLock;
std::atomic<bool> inited{false};
std::atomic<std::uint64_t> runGen{1};
std::atomic<std::int32_t> netpollWaiters{0};
// Go's sched.lastpoll (runtime2.go:770) (0 while an M blocks in netpoll) and
// sched.pollUntil.
std::atomic<std::int64_t> lastpoll{0};
std::atomic<std::int64_t> pollUntil{0};

// Goroutines woken by a thread with no P, for the next netpoll, with the
// change to netpollWaiters that applies once they are handed on.
mutex deferLock;
G* deferred ABSL_GUARDED_BY(deferLock) = nullptr;
std::int32_t deferredDelta ABSL_GUARDED_BY(deferLock) = 0;
std::atomic<bool> anyDeferred{false};

std::uint64_t pdKey(pollDesc* pd) {
  return std::uint64_t{pd->fdseq.load(std::memory_order_relaxed)} << 32 |
         pd->index;
}

pollDesc* pdOfKey(std::uint64_t key) {
  std::uint32_t idx = static_cast<std::uint32_t>(key);
  if (idx / kChunk >= kMaxChunks) return nullptr;
  pollDesc* c = chunks[idx / kChunk].load(std::memory_order_acquire);
  if (c == nullptr) return nullptr;
  pollDesc* pd = &c[idx % kChunk];
  if (pd->fdseq.load(std::memory_order_acquire) !=
      static_cast<std::uint32_t>(key >> 32)) {
    return nullptr;  // stale: the descriptor was closed (and maybe reused)
  }
  return pd;
}

// pollcacheAlloc mirrors Go's pollCache.alloc (netpoll.go:617).
pollDesc* pollcacheAlloc() {
  lock(&pollcache.lock);
  if (pollcache.first == nullptr) {
    if (pollcache.nchunks == kMaxChunks) {
      unlock(&pollcache.lock);
      return nullptr;
    }
    std::uint32_t c = pollcache.nchunks++;
    pollDesc* block = new pollDesc[kChunk];
    for (std::uint32_t i = kChunk; i-- > 0;) {
      block[i].index = c * kChunk + i;
      block[i].link = pollcache.first;
      pollcache.first = &block[i];
      pollcache.nfree++;
    }
    chunks[c].store(block, std::memory_order_release);
  }
  pollDesc* pd = pollcache.first;
  pollcache.first = pd->link;
  pollcache.nfree--;
  unlock(&pollcache.lock);
  return pd;
}

// pollcacheFree mirrors Go's pollCache.free (netpoll.go:265).
void pollcacheFree(pollDesc* pd) {
  // Events already fetched for this registration now look stale.
  pd->fdseq.fetch_add(1, std::memory_order_acq_rel);
  lock(&pollcache.lock);
  pd->link = pollcache.first;
  pollcache.first = pd;
  pollcache.nfree++;
  unlock(&pollcache.lock);
}

void dtPut(deadlineTimer* dt) {
  lock(&dtLock);
  dt->next = dtFree;
  dtFree = dt;
  unlock(&dtLock);
}

// dtRef and dtUnref are a deadline timer's ref and unref (runtime2.h's
// timer): the last reference returns it to the pool.
void dtRef(timer* t) {
  reinterpret_cast<deadlineTimer*>(t)->refs.fetch_add(
      1, std::memory_order_relaxed);
}

void dtUnref(timer* t) {
  auto* dt = reinterpret_cast<deadlineTimer*>(t);
  if (dt->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) dtPut(dt);
}

deadlineTimer* dtGet() {
  lock(&dtLock);
  deadlineTimer* dt = dtFree;
  if (dt != nullptr) dtFree = dt->next;
  unlock(&dtLock);
  if (dt == nullptr) {
    dt = new deadlineTimer;
    dtAllocated.fetch_add(1, std::memory_order_relaxed);
  }
  return dt;
}

// publishInfo mirrors Go's pollDesc.publishInfo (netpoll.go:141): the lock-free
// summary netpollcheckerr reads; pollEventErr is netpoll's (setEventErr).
void publishInfo(pollDesc* pd) ABSL_EXCLUSIVE_LOCKS_REQUIRED(pd->lock) {
  std::uint32_t info = 0;
  if (pd->closing) info |= pollClosing;
  if (pd->rd < 0) info |= pollExpiredRead;
  if (pd->wd < 0) info |= pollExpiredWrite;
  std::uint32_t x = pd->info.load(std::memory_order_relaxed);
  while (!pd->info.compare_exchange_weak(x, (x & pollEventErr) | info)) {
  }
}

// setEventErr mirrors Go's pollDesc.setEventErr (netpoll.go:161): every event
// sets or clears pollEventErr, so one error event does not fail the descriptor
// for good.
void setEventErr(pollDesc* pd, bool b) {
  std::uint32_t x = pd->info.load(std::memory_order_acquire);
  while (((x & pollEventErr) != 0) != b &&
         !pd->info.compare_exchange_weak(x, x ^ pollEventErr)) {
  }
}

// netpollcheckerr mirrors Go's netpollcheckerr (netpoll.go:462).
int netpollcheckerr(pollDesc* pd, std::int32_t mode) {
  std::uint32_t info = pd->info.load(std::memory_order_acquire);
  if (info & pollClosing) return pollErrClosing;
  if ((mode == os::kPollRead && (info & pollExpiredRead)) ||
      (mode == os::kPollWrite && (info & pollExpiredWrite))) {
    return pollErrTimeout;
  }
  // An error event is reported on reads only; a write reports its own.
  if (mode == os::kPollRead && (info & pollEventErr)) return pollErrNotPollable;
  return pollNoError;
}

// netpollblockcommit mirrors Go's netpollblockcommit (netpoll.go:479): gopark's
// unlock function; the park stands only if no wake-up came first.
bool netpollblockcommit(G* gp, void* gpp) {
  auto* slot = static_cast<std::atomic<std::uintptr_t>*>(gpp);
  std::uintptr_t wait = pdWait;
  if (!slot->compare_exchange_strong(wait,
                                     reinterpret_cast<std::uintptr_t>(gp))) {
    return false;
  }
  netpollWaiters.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

void deadlineFire(void* arg, std::uintptr_t seq);

// deldeadline deletes a deadline's armed timer (Go's deltimer (time.go:313)).
// If an M blocks in netpoll until exactly that timer, it is woken to recompute
// its wait (gort's own: Go leaves it asleep): asleep, it would count as a
// running M and keep checkdead from reporting a real deadlock.
void deldeadline(deadlineTimer* dt) {
  std::int64_t when = dt->t.when;
  if (!deltimer(&dt->t)) return;
  // A read-modify-write, paired with findRunnableBlock's exchange: either
  // that M sees the timer gone, or this sees it sleeping for it.
  if (pollUntil.fetch_add(0) == when) netpollBreak();
}

// setDeadline1 arms, keeps or orphans one direction's deadline timer.
void setDeadline1(pollDesc* pd, std::int64_t d, std::int32_t mode)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(pd->lock) {
  bool read = mode == os::kPollRead;
  std::int64_t& dl = read ? pd->rd : pd->wd;
  deadlineTimer*& t = read ? pd->rt : pd->wt;
  std::uintptr_t& seq = read ? pd->rseq : pd->wseq;
  dl = d;
  if (d > 0 && t != nullptr && t->t.when <= d) return;  // re-arms on firing
  if (t != nullptr) {
    seq++;           // a call of deadlineFire already under way finds it stale
    deldeadline(t);  // out of the heap, back to the pool
    t = nullptr;
  }
  if (d <= 0) return;
  deadlineTimer* dt = dtGet();
  dt->pd = pd;
  dt->mode = mode;
  dt->t.when = d;
  dt->t.f = deadlineFire;
  dt->t.arg = dt;
  dt->t.seq = seq;
  dt->t.period = 0;
  dt->t.ref = dtRef;
  dt->t.unref = dtUnref;
  dt->refs.store(1, std::memory_order_relaxed);  // the heap's
  t = dt;
  addtimer(&dt->t);
}

// deadlineFire mirrors Go's netpolldeadlineimpl (netpoll.go:565), run by a P's
// timers.
void deadlineFire(void* arg, std::uintptr_t seq) {
  auto* dt = static_cast<deadlineTimer*>(arg);
  pollDesc* pd = dt->pd;
  bool read = dt->mode == os::kPollRead;
  lock(&pd->lock);
  deadlineTimer*& t = read ? pd->rt : pd->wt;
  std::uintptr_t cur = read ? pd->rseq : pd->wseq;
  if (t != dt || seq != cur) {  // stale: moved earlier, cleared, or closed
    unlock(&pd->lock);
    return;  // this call's reference was the last: back to the pool
  }
  std::int64_t& dl = read ? pd->rd : pd->wd;
  std::int64_t now = os::nanotime();
  if (dl > now) {  // moved later while armed: wait on
    dt->t.when = dl;
    dtRef(&dt->t);  // the heap's again
    addtimer(&dt->t);
    unlock(&pd->lock);
    return;
  }
  dl = -1;
  t = nullptr;
  publishInfo(pd);
  std::int32_t delta = 0;
  G* gp = netpollunblock(pd, dt->mode, false, &delta);
  unlock(&pd->lock);
  if (gp != nullptr) netpollgoready(gp);  // dt goes back to the pool after
  netpollAdjustWaiters(delta);
}

bool netpollGenericInit() {
  if (inited.load(std::memory_order_acquire)) return true;
  lock(&initLock);
  if (!inited.load(std::memory_order_relaxed) && os::netpollinit() == 0) {
    lastpoll.store(os::nanotime(), std::memory_order_relaxed);
    pollUntil.store(0, std::memory_order_relaxed);
    inited.store(true, std::memory_order_release);
  }
  unlock(&initLock);
  return inited.load(std::memory_order_acquire);
}

// listpop takes the first goroutine off a netpoll list, runnable.
G* listpop(G** list) {
  G* gp = *list;
  *list = gp->schedlink;
  gp->schedlink = nullptr;
  traceGoUnpark(gp);
  casgstatus(gp, _Gwaiting, _Grunnable);
  return gp;
}

// hasP: the calling thread holds a P, so it can ready a goroutine itself.
bool hasP() {
  G* g = getg();
  return g != nullptr && g->m != nullptr && g->m->p != nullptr;
}

// netpollDefer: gort's own (see the design comment): rg and wg, woken by a
// thread with no P, wait for the next netpoll, which the poller's break
// makes happen now if an M is blocked in it (else one polls soon: the
// goroutines still count as waiters).
void netpollDefer(G* rg, G* wg, std::int32_t delta) {
  lock(&deferLock);
  for (G* gp : {rg, wg}) {
    if (gp == nullptr) continue;
    gp->schedlink = deferred;
    deferred = gp;
  }
  deferredDelta += delta;
  anyDeferred.store(true, std::memory_order_release);
  unlock(&deferLock);
  netpollBreak();  // an M blocked in netpoll takes them now
}

// takeDeferred moves the deferred goroutines onto a netpoll list and their
// waiter change into *delta.
void takeDeferred(G** list, std::int32_t* delta) {
  if (!anyDeferred.load(std::memory_order_acquire)) return;
  lock(&deferLock);
  while (G* gp = deferred) {
    deferred = gp->schedlink;
    gp->schedlink = *list;
    *list = gp;
  }
  *delta += deferredDelta;
  deferredDelta = 0;
  anyDeferred.store(false, std::memory_order_relaxed);
  unlock(&deferLock);
}

// startIdle mirrors injectglist's startIdle: an M for each idle P, up to n.
void startIdle(std::int32_t n) {
  for (; n > 0 && sched.npidle.load() > 0; n--) startm(nullptr, false);
}

}  // namespace

bool netpollinited() { return inited.load(std::memory_order_acquire); }

std::int32_t netpollWaitersCount() { return netpollWaiters.load(); }

bool netpollAnyWaiters() { return netpollWaiters.load() > 0; }

std::int32_t pollcacheSize() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  lock(&pollcache.lock);
  std::int32_t n = static_cast<std::int32_t>(pollcache.nchunks * kChunk);
  unlock(&pollcache.lock);
  return n;
}

std::int32_t pollcacheFree() {
  lock(&pollcache.lock);
  std::int32_t n = pollcache.nfree;
  unlock(&pollcache.lock);
  return n;
}

std::int32_t deadlineTimersAllocated() { return dtAllocated.load(); }

std::int64_t netpollSleepUntil() {
  if (lastpoll.load(std::memory_order_acquire) != 0) return -1;
  return pollUntil.load(std::memory_order_acquire);
}

// tookNews: whether the rg/wg value a netpollblock took is news, telling
// *clean whether it is pdReady itself.
bool tookNews(std::uintptr_t taken, bool* clean) {
  if (clean != nullptr) *clean = taken == pdReady;
  return pdIsReady(taken);
}

// netpollblock mirrors Go's netpollblock (netpoll.go:499): true if IO is ready,
// false on a deadline or close. waitio: park even if an error is already
// pending.
bool netpollblock(pollDesc* pd, std::int32_t mode, bool waitio, bool* clean) {
  std::atomic<std::uintptr_t>* gpp = mode == os::kPollRead ? &pd->rg : &pd->wg;
  std::uintptr_t old;
  for (;;) {
    old = gpp->load(std::memory_order_acquire);
    if (pdIsReady(old)) {
      if (gpp->compare_exchange_strong(old, 0)) return tookNews(old, clean);
      continue;
    }
    std::uintptr_t nil = 0;
    if (gpp->compare_exchange_strong(nil, pdWait)) break;
    if (!pdIsReady(nil) && nil != 0) throw_("runtime: double wait");
  }
  if (waitio || netpollcheckerr(pd, mode) == pollNoError) {
    // Run's end resumes an abandoned goroutine with an exception at its
    // park point: leave the slot free behind it.
    struct clearOnUnwind {
      std::atomic<std::uintptr_t>* gpp;
      bool done = false;
      ~clearOnUnwind() {
        if (!done) gpp->store(0);
      }
    } guard{gpp};
    gopark(netpollblockcommit, gpp, waitReason::ioWait);
    guard.done = true;
  }
  old = gpp->exchange(0);
  if (old > pdReadyUnclean) throw_("runtime: corrupted polldesc");
  return tookNews(old, clean);
}

// netpollunblock mirrors Go's netpollunblock (netpoll.go:536) (1.21): take the
// waiting goroutine off pd, counting it in *delta; ioready leaves pdReady
// behind for the next netpollblock.
G* netpollunblock(pollDesc* pd, std::int32_t mode, bool ioready,
                  std::int32_t* delta, bool unclean) {
  std::atomic<std::uintptr_t>* gpp = mode == os::kPollRead ? &pd->rg : &pd->wg;
  std::uintptr_t ready = ioready && unclean ? pdReadyUnclean : pdReady;
  for (;;) {
    std::uintptr_t old = gpp->load(std::memory_order_acquire);
    if (pdIsReady(old)) {
      // News is already there; an unclean event marks it (gort's own).
      if (ready == pdReady || old == pdReadyUnclean) return nullptr;
      if (gpp->compare_exchange_strong(old, ready)) return nullptr;
      continue;
    }
    if (old == 0 && !ioready) return nullptr;  // nobody to wake, no news
    std::uintptr_t nw = ioready ? ready : 0;
    if (gpp->compare_exchange_strong(old, nw)) {
      // 0: nobody waits; pdWait: about to park, and will see nw.
      if (old == 0 || old == pdWait) return nullptr;
      (*delta)--;
      return reinterpret_cast<G*>(old);
    }
  }
}

// netpollready mirrors Go's netpollready (netpoll.go:446) (1.21): push pd's
// woken goroutines; returns the change to netpollWaiters, for the caller to
// apply.
std::int32_t netpollready(G** list, pollDesc* pd, std::int32_t mode,
                          bool unclean) {
  std::int32_t delta = 0;
  G* gs[2] = {nullptr, nullptr};
  if (mode & os::kPollRead) {
    gs[0] = netpollunblock(pd, os::kPollRead, true, &delta, unclean);
  }
  if (mode & os::kPollWrite) {
    gs[1] = netpollunblock(pd, os::kPollWrite, true, &delta);
  }
  for (G* gp : gs) {
    if (gp == nullptr) continue;
    gp->schedlink = *list;
    *list = gp;
  }
  return delta;
}

// netpollgoready mirrors Go's netpollgoready (netpoll.go:490); the caller
// adjusts the waiters after it.
void netpollgoready(G* gp) { goready(gp); }

// netpollAdjustWaiters mirrors Go 1.21's netpollAdjustWaiters.
void netpollAdjustWaiters(std::int32_t delta) {
  if (delta != 0) netpollWaiters.fetch_add(delta, std::memory_order_acq_rel);
}

pollDesc* pollOpen(std::uintptr_t fd, int* err) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (!os::netpollSupported() || !netpollGenericInit()) {
    *err = os::netpollSupported() ? 24 /* EMFILE-like */ : -1;
    return nullptr;
  }
  pollDesc* pd = pollcacheAlloc();
  if (pd == nullptr) {
    *err = 24;
    return nullptr;
  }
  lock(&pd->lock);
  std::uintptr_t wg = pd->wg.load(), rg = pd->rg.load();
  if ((wg != 0 && !pdIsReady(wg)) || (rg != 0 && !pdIsReady(rg))) {
    throw_("runtime: blocked read/write on free polldesc");
  }
  pd->fd = fd;
  pd->closing = false;
  pd->rseq++;
  pd->rg.store(0);
  pd->rd = 0;
  pd->wseq++;
  pd->wg.store(0);
  pd->wd = 0;
  pd->rt = pd->wt = nullptr;
  pd->gen = runGen.load();
  pd->info.store(0);
  publishInfo(pd);
  unlock(&pd->lock);
  *err = os::netpollopen(fd, pdKey(pd));
  if (*err != 0) {
    pollcacheFree(pd);
    return nullptr;
  }
  return pd;
}

void pollClose(pollDesc* pd) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (!pd->closing) throw_("runtime: close polldesc w/o unblock");
  std::uintptr_t wg = pd->wg.load(), rg = pd->rg.load();
  if ((wg != 0 && !pdIsReady(wg)) || (rg != 0 && !pdIsReady(rg))) {
    throw_("runtime: blocked read/write on closing polldesc");
  }
  if (!pollStale(pd)) os::netpollclose(pd->fd);
  pollcacheFree(pd);
}

void pollRelease(pollDesc* pd) { pollcacheFree(pd); }

bool pollStale(pollDesc* pd) {
  return pd->gen != runGen.load(std::memory_order_acquire) || !netpollinited();
}

int pollReset(pollDesc* pd, std::int32_t mode) {
  int err = netpollcheckerr(pd, mode);
  if (err != pollNoError) return err;
  (mode == os::kPollRead ? pd->rg : pd->wg).store(0);
  return pollNoError;
}

int pollWait(pollDesc* pd, std::int32_t mode) {
  int err = netpollcheckerr(pd, mode);
  if (err != pollNoError) return err;
  while (!netpollblock(pd, mode, false)) {
    err = netpollcheckerr(pd, mode);
    if (err != pollNoError) return err;
    // A wake-up for a deadline that has since moved: wait again.
  }
  return pollNoError;
}

int pollWaitRead(pollDesc* pd, bool* clean) {
  *clean = false;
  int err = netpollcheckerr(pd, os::kPollRead);
  if (err != pollNoError) return err;
  while (!netpollblock(pd, os::kPollRead, false, clean)) {
    err = netpollcheckerr(pd, os::kPollRead);
    if (err != pollNoError) return err;
  }
  return pollNoError;
}

void pollWaitCanceled(pollDesc* pd, std::int32_t mode) {
  // waitio: the completion must be consumed whatever the error state.
  while (!netpollblock(pd, mode, true)) {
  }
}

std::uint64_t pollKey(pollDesc* pd) { return pdKey(pd); }

void pollSetDeadline(pollDesc* pd, std::int64_t d, std::int32_t mode) {
  lock(&pd->lock);
  if (pd->closing) {
    unlock(&pd->lock);
    return;
  }
  if (mode & os::kPollRead) setDeadline1(pd, d, os::kPollRead);
  if (mode & os::kPollWrite) setDeadline1(pd, d, os::kPollWrite);
  publishInfo(pd);
  G* rg = nullptr;
  G* wg = nullptr;
  std::int32_t delta = 0;
  if (pd->rd < 0) rg = netpollunblock(pd, os::kPollRead, false, &delta);
  if (pd->wd < 0) wg = netpollunblock(pd, os::kPollWrite, false, &delta);
  unlock(&pd->lock);
  if (rg != nullptr) netpollgoready(rg);
  if (wg != nullptr) netpollgoready(wg);
  netpollAdjustWaiters(delta);
}

void pollUnblock(pollDesc* pd) {
  lock(&pd->lock);
  if (pd->closing) throw_("runtime: unblock on closing polldesc");
  pd->closing = true;
  pd->rseq++;
  pd->wseq++;
  // Armed timers leave the heap now (Go's deltimer (time.go:313)), not at their
  // time.
  if (pd->rt != nullptr) deldeadline(pd->rt);
  if (pd->wt != nullptr) deldeadline(pd->wt);
  pd->rt = pd->wt = nullptr;
  publishInfo(pd);
  std::int32_t delta = 0;
  G* rg = netpollunblock(pd, os::kPollRead, false, &delta);
  G* wg = netpollunblock(pd, os::kPollWrite, false, &delta);
  unlock(&pd->lock);
  if (!hasP()) {  // a plain thread: the poller hands them on
    if (rg != nullptr || wg != nullptr) netpollDefer(rg, wg, delta);
    return;
  }
  if (rg != nullptr) netpollgoready(rg);
  if (wg != nullptr) netpollgoready(wg);
  netpollAdjustWaiters(delta);
}

G* netpoll(std::int64_t delay, std::int32_t* delta) {
  *delta = 0;
  if (!netpollinited()) return nullptr;
  os::PollEvent ev[kBatch];
  bool highRes = timerMode == os::TimerMode::kHighRes;
  if (delay != 0) traceNetpollBlock(delay);
  std::int32_t n = os::netpoll(delay, highRes, ev, kBatch);
  if (n < 0) throwErrno("netpoll failed", -n);
  G* list = nullptr;
  for (std::int32_t i = 0; i < n; i++) {
    pollDesc* pd = pdOfKey(ev[i].key);
    if (pd == nullptr) continue;
    setEventErr(pd, ev[i].err);
    *delta += netpollready(&list, pd, ev[i].mode, ev[i].unclean);
  }
  takeDeferred(&list, delta);
  if (delay != 0 || list != nullptr) traceNetpollWake(list);
  return list;
}

void netpollBreak() {
  if (!netpollinited()) return;
  if (int e = os::netpollBreak()) throwErrno("netpollBreak write failed", e);
}

void injectglist(G* list) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (list == nullptr) return;
  G* head = nullptr;
  G* tail = nullptr;
  std::int32_t n = 0;
  while (list != nullptr) {
    G* gp = listpop(&list);
    if (tail == nullptr) {
      head = gp;
    } else {
      tail->schedlink = gp;
    }
    tail = gp;
    n++;
  }
  P* pp = getg()->m->p;
  if (pp == nullptr) {
    lock(&sched.lock);
    globrunqputbatch(head, tail, n);
    unlock(&sched.lock);
    startIdle(n);
    return;
  }
  // As many as there are idle Ps go global, for them; the rest stay here.
  std::int32_t npidle = sched.npidle.load();
  std::int32_t global = 0;
  G* g = head;
  G* gtail = nullptr;
  while (global < npidle && g != nullptr) {
    gtail = g;
    g = g->schedlink;
    global++;
  }
  if (global > 0) {
    gtail->schedlink = nullptr;
    lock(&sched.lock);
    globrunqputbatch(head, gtail, global);
    unlock(&sched.lock);
    startIdle(global);
  }
  while (g != nullptr) {
    G* next = g->schedlink;
    g->schedlink = nullptr;
    runqput(pp, g, false);
    g = next;
  }
}

G* findRunnableNetpoll() {
  if (!netpollinited() || netpollWaiters.load() <= 0 ||
      lastpoll.load(std::memory_order_acquire) == 0) {
    return nullptr;
  }
  std::int32_t delta;
  G* list = netpoll(0, &delta);
  if (list == nullptr) return nullptr;
  G* gp = listpop(&list);
  injectglist(list);
  netpollAdjustWaiters(delta);  // gp is this M's to run: it will not stop
  return gp;
}

int findRunnableBlock(std::int64_t until, P** pp,
                      G** gp) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  *pp = nullptr;
  *gp = nullptr;
  if (!netpollinited()) return kBlockNoPoller;
  M* mp = getg()->m;
  if ((netpollWaiters.load() > 0 || until != 0) && lastpoll.exchange(0) != 0) {
    // deldeadline may have deleted the timer `until` came from before it
    // could see this M's pollUntil: publish it by a read-modify-write,
    // paired with deldeadline's, then look at the timers again. Asleep for
    // a deleted timer, this M would hide a real deadlock from checkdead.
    pollUntil.exchange(until);
    for (std::int64_t w; until != 0 && (w = nextTimerWhen()) != until;) {
      until = w;
      pollUntil.exchange(until);
    }
    if (mp->p != nullptr) throw_("findRunnable: netpoll with p");
    if (mp->spinning) throw_("findRunnable: netpoll with spinning");
    // Nothing left to wait for (the timer deleted, the waiters woken): do
    // not sleep, but leave as a netpoll that found nothing does, taking an
    // idle P to look again. An M that saw lastpoll == 0 meanwhile stopped,
    // trusting this one to poll; stopping here too could leave a goroutine
    // that parks on the poller right after with no M to poll for it.
    G* list = nullptr;
    std::int32_t delta = 0;
    if (until != 0 || netpollWaiters.load() != 0) {
      std::int64_t delay = -1;
      if (until != 0) {
        delay = until - os::nanotime();
        if (delay < 0) delay = 0;
      }
      if (sched.exiting.load(std::memory_order_acquire)) delay = 0;
      traceMPark();
      list = netpoll(delay, &delta);
      traceMUnpark();
    }
    std::int64_t now = os::nanotime();
    pollUntil.store(0, std::memory_order_release);
    lastpoll.store(now, std::memory_order_release);
    if (sched.exiting.load(std::memory_order_acquire)) mexit(mp);
    lock(&sched.lock);
    P* p = pidleget(now);
    unlock(&sched.lock);
    if (p == nullptr) {
      injectglist(list);
      netpollAdjustWaiters(delta);
      return kBlockStop;
    }
    acquirep(p);
    *pp = p;
    if (list != nullptr) {
      *gp = listpop(&list);
      injectglist(list);
    }
    netpollAdjustWaiters(delta);
    return kBlockPolled;
  }
  if (until != 0) {
    std::int64_t pu = pollUntil.load(std::memory_order_acquire);
    if (pu == 0 || pu > until) netpollBreak();
  }
  return kBlockStop;
}

bool wakeNetPoller(std::int64_t when) {
  if (!netpollinited()) return false;
  if (lastpoll.load(std::memory_order_acquire) != 0) return false;
  std::int64_t pu = pollUntil.load(std::memory_order_acquire);
  if (pu == 0 || pu > when) netpollBreak();
  return true;
}

void sysmonNetpoll(std::int64_t now) {
  if (!netpollinited()) return;
  std::int64_t lp = lastpoll.load(std::memory_order_acquire);
  if (lp == 0 || lp + 10'000'000 >= now) return;
  if (!lastpoll.compare_exchange_strong(lp, now)) return;
  std::int32_t delta;
  G* list = netpoll(0, &delta);
  if (list == nullptr) return;
  // Pretend one more M runs while injecting, so checkdead stays quiet
  // (Go does the same).
  incidlelocked(-1);
  injectglist(list);
  incidlelocked(1);
  netpollAdjustWaiters(delta);
}

void netpollExitBreak() { netpollBreak(); }

void netpollRunEnd() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (!netpollinited()) {
    runGen.fetch_add(1);
    return;
  }
  // Descriptors still open belong to no poller now: they read as closed.
  lock(&pollcache.lock);
  std::uint32_t n = pollcache.nchunks;
  unlock(&pollcache.lock);
  for (std::uint32_t c = 0; c < n; c++) {
    pollDesc* block = chunks[c].load(std::memory_order_acquire);
    for (std::uint32_t i = 0; i < kChunk; i++) {
      pollDesc* pd = &block[i];
      lock(&pd->lock);
      pd->closing = true;
      pd->rt = pd->wt = nullptr;  // dropped with the Run's timers
      pd->rg.store(0);
      pd->wg.store(0);
      publishInfo(pd);
      unlock(&pd->lock);
    }
  }
  lock(&deferLock);  // woken too late: the Run's end unwinds them
  deferred = nullptr;
  deferredDelta = 0;
  anyDeferred.store(false, std::memory_order_relaxed);
  unlock(&deferLock);
  os::netpollfini();
  runGen.fetch_add(1);
  netpollWaiters.store(0);
  lastpoll.store(0);
  pollUntil.store(0);
  inited.store(false, std::memory_order_release);
}

}  // namespace gort::runtime
