// runtime/time.cc: per-P timers and Sleep (Go's runtime/time.go and
// time.Sleep's support).
//
// Each P keeps a 4-ary heap of timers ordered by when, under its own
// timersLock, and publishes the earliest when in timer0When so that other
// Ms can tell without locking whether a P has work due. findRunnable runs
// due timers of its own P and, while stealing, of the others. Timer
// functions run on g0 with a P held (they ready goroutines, send on a
// channel or start a goroutine). Differences from Go 1.19: no status
// machine and no lazily deleted timers. A timer records the P whose heap
// holds it and its index there, so deltimer removes it at once under that
// P's lock, and modtimer is deltimer followed by addtimer on the caller's P;
// a per-timer lock orders concurrent Stop and Reset calls. Timer and Ticker
// (pkg/time/sleep.cc) build on these.

#include "gort/time.h"

#include <algorithm>
#include <limits>

#include "gort/internal/chan_impl.h"
#include "gort/runtime.h"
#include "netpoll.h"
#include "panic.h"
#include "park.h"
#include "proc.h"

namespace gort::runtime {

namespace {

// updateTimer0When mirrors Go's updateTimer0When (time.go:1004).
void updateTimer0When(P* pp) ABSL_EXCLUSIVE_LOCKS_REQUIRED(pp->timersLock) {
  pp->timer0When.store(pp->timers.empty() ? 0 : pp->timers.front()->when,
                       std::memory_order_release);
}

// siftupTimer mirrors Go's siftupTimer (time.go:1068): moves timers[i] up the
// 4-ary heap.
void siftupTimer(std::vector<timer*>& h, std::size_t i) {
  timer* t = h[i];
  while (i > 0) {
    std::size_t p = (i - 1) / 4;
    if (t->when >= h[p]->when) break;
    h[i] = h[p];
    h[i]->idx = static_cast<std::uint32_t>(i);
    i = p;
  }
  h[i] = t;
  t->idx = static_cast<std::uint32_t>(i);
}

// siftdownTimer mirrors Go's siftdownTimer (time.go:1093): moves timers[i]
// down.
void siftdownTimer(std::vector<timer*>& h, std::size_t i) {
  timer* t = h[i];
  const std::size_t n = h.size();
  for (;;) {
    std::size_t c = 4 * i + 1;
    if (c >= n) break;
    std::size_t best = c;
    for (std::size_t k = c + 1; k < c + 4 && k < n; k++) {
      if (h[k]->when < h[best]->when) best = k;
    }
    if (h[best]->when >= t->when) break;
    h[i] = h[best];
    h[i]->idx = static_cast<std::uint32_t>(i);
    i = best;
  }
  h[i] = t;
  t->idx = static_cast<std::uint32_t>(i);
}

// doaddtimer mirrors Go's doaddtimer (time.go:289): t joins pp's heap.
void doaddtimer(P* pp, timer* t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(pp->timersLock) {
  pp->timers.push_back(t);
  t->pp.store(pp, std::memory_order_release);
  siftupTimer(pp->timers, pp->timers.size() - 1);
  updateTimer0When(pp);
}

// dodeltimer mirrors Go's dodeltimer (time.go:378): takes timers[i] out of pp's
// heap.
void dodeltimer(P* pp, std::size_t i)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(pp->timersLock) {
  std::vector<timer*>& h = pp->timers;
  h[i]->pp.store(nullptr, std::memory_order_release);
  std::size_t last = h.size() - 1;
  if (i != last) {
    h[i] = h[last];
    h[i]->idx = static_cast<std::uint32_t>(i);
  }
  h.pop_back();
  if (i != last) {
    siftupTimer(h, i);
    siftdownTimer(h, i);
  }
  updateTimer0When(pp);
}

// unlinktimer takes t off whichever heap holds it; false if none does.
// The heap's reference passes to the caller.
bool unlinktimer(timer* t) {
  for (;;) {
    P* pp = t->pp.load(std::memory_order_acquire);
    if (pp == nullptr) return false;
    lock(&pp->timersLock);
    if (t->pp.load(std::memory_order_relaxed) == pp) {
      dodeltimer(pp, t->idx);
      unlock(&pp->timersLock);
      return true;
    }
    unlock(&pp->timersLock);  // it fired or moved meanwhile: look again
  }
}

// goroutineReady mirrors Go's goroutineReady (time.go:248): the Sleep timer's
// function.
void goroutineReady(void* arg, std::uintptr_t) {
  goready(static_cast<G*>(arg));
}

// resetForSleep mirrors Go's resetForSleep (time.go:202): arm the timer only
// after the goroutine is parked, so the wakeup cannot race ahead of the park.
bool resetForSleep(G* gp, void*) {
  addtimer(&gp->sleepTimer);
  return true;
}

}  // namespace

// whenAfter mirrors Go's time.when (time/sleep.go:28): now + ns, saturating;
// now for ns <= 0.
std::int64_t whenAfter(std::int64_t ns) {
  std::int64_t now = os::nanotime();
  if (ns <= 0) return now;
  if (ns > std::numeric_limits<std::int64_t>::max() - now) {
    return std::numeric_limits<std::int64_t>::max();
  }
  return now + ns;
}

// addtimer mirrors Go's addtimer (time.go:256) / doaddtimer: on the current P's
// heap. A counted timer's caller has taken the reference the heap now holds.
void addtimer(timer* t) {
  P* pp = getg()->m->p;
  std::int64_t when = t->when;  // t may fire and be reused once unlocked
  lock(&pp->timersLock);
  doaddtimer(pp, t);
  unlock(&pp->timersLock);
  wakeTimerSleeper(when);
}

// deltimer mirrors Go's deltimer (time.go:313): reports whether t was pending,
// and if so removes it and drops the heap's reference. A call of f already
// under way is not waited for (in Go 1.19 it is not either).
bool deltimer(timer* t) {
  lock(&t->lock);
  bool pending = unlinktimer(t);
  unlock(&t->lock);
  if (pending && t->unref != nullptr) t->unref(t);
  return pending;
}

// modtimer mirrors Go's modtimer (time.go:438): t, pending or not, is set to
// fire at when (then every period ns if period > 0) on the caller's P; reports
// whether it was pending.
bool modtimer(timer* t, std::int64_t when, std::int64_t period) {
  lock(&t->lock);
  bool pending = unlinktimer(t);
  if (!pending && t->ref != nullptr) t->ref(t);  // the heap's reference
  t->when = when;
  t->period = period;
  addtimer(t);
  unlock(&t->lock);
  return pending;
}

// checkTimers mirrors Go's checkTimers (proc.go:3279) and runOneTimer: run pp's
// due timers; returns the next when (0 if none) and sets *ran if any ran. now
// == 0 means "read the clock if a timer is pending", which keeps nanotime off
// the hot path.
std::int64_t checkTimers(P* pp, std::int64_t now, bool* ran) {
  std::int64_t next = pp->timer0When.load(std::memory_order_acquire);
  if (next == 0) return 0;
  if (now == 0) now = os::nanotime();
  if (now < next) return next;
  lock(&pp->timersLock);
  while (!pp->timers.empty() && pp->timers.front()->when <= now) {
    timer* t = pp->timers.front();
    void (*f)(void*, std::uintptr_t) = t->f;
    void* arg = t->arg;
    std::uintptr_t seq = t->seq;
    void (*unref)(timer*) = t->unref;  // a Sleep timer may be reused after f
    if (t->period > 0) {
      // Stays in the heap, next due at the first multiple of period after
      // now: ticks nobody could take in time are skipped, not queued.
      std::int64_t delta = now - t->when;
      std::int64_t steps = 1 + delta / t->period;
      if (steps >
          (std::numeric_limits<std::int64_t>::max() - t->when) / t->period) {
        t->when = std::numeric_limits<std::int64_t>::max();
      } else {
        t->when += steps * t->period;
      }
      siftdownTimer(pp->timers, 0);
      updateTimer0When(pp);
      if (t->ref != nullptr) t->ref(t);  // for the call below
    } else {
      dodeltimer(pp, 0);  // the heap's reference passes to the call
    }
    unlock(&pp->timersLock);
    f(arg, seq);  // may add timers, to this very P
    if (unref != nullptr) unref(t);
    *ran = true;
    lock(&pp->timersLock);
  }
  next = pp->timers.empty() ? 0 : pp->timers.front()->when;
  unlock(&pp->timersLock);
  return next;
}

// nextTimerWhen: the earliest timer on any P, or 0.
std::int64_t nextTimerWhen() {
  std::int64_t next = 0;
  std::int32_t n = gomaxprocs.load();
  for (std::int32_t i = 0; i < n; i++) {
    std::int64_t w = allp[i]->timer0When.load(std::memory_order_acquire);
    if (w != 0 && (next == 0 || w < next)) next = w;
  }
  return next;
}

// timeSleepUntil mirrors Go's timeSleepUntil (time.go:1030): the earliest
// timer, or the largest time if there is none.
std::int64_t timeSleepUntil() {
  std::int64_t w = nextTimerWhen();
  return w == 0 ? std::numeric_limits<std::int64_t>::max() : w;
}

// wakeTimerSleeper mirrors Go's wakeNetPoller (proc.go:3078): a timer due at
// `when` was added; wake the M sleeping for timers if it would sleep past it,
// or start an M if none sleeps.
void wakeTimerSleeper(std::int64_t when) {
  if (wakeNetPoller(when)) return;  // an M waits in the poller instead
  M* mp = sched.timerSleeper.load(std::memory_order_acquire);
  if (mp == nullptr) {
    wakep();
    return;
  }
  std::int64_t until = sched.timerSleepUntil.load(std::memory_order_acquire);
  if (until != 0 && until <= when) return;
  if (sched.timerSleeper.compare_exchange_strong(mp, nullptr)) {
    notewakeup(&mp->park);
  }
}

// moveTimers mirrors Go's moveTimers (time.go:613): a destroyed P's timers go
// to `to`. The world is stopped, so nothing looks for them meanwhile.
void moveTimers(P* to, P* from) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  lock(&from->timersLock);
  std::vector<timer*> moved;
  moved.swap(from->timers);
  updateTimer0When(from);
  unlock(&from->timersLock);
  lock(&to->timersLock);
  for (timer* t : moved) doaddtimer(to, t);
  unlock(&to->timersLock);
}

// dropTimers discards pp's pending timers when Run ends (Go's exit simply
// never runs them), dropping the heap's references.
void dropTimers(P* pp) {
  lock(&pp->timersLock);
  std::vector<timer*> dropped;
  dropped.swap(pp->timers);
  for (timer* t : dropped) t->pp.store(nullptr, std::memory_order_release);
  updateTimer0When(pp);
  unlock(&pp->timersLock);
  for (timer* t : dropped) {
    if (t->unref != nullptr) t->unref(t);
  }
}

}  // namespace gort::runtime

namespace gort {

using namespace gort::runtime;

// Sleep mirrors Go's timeSleep (time.go:178).
void Sleep(std::chrono::nanoseconds d) {
  G* gp = getcurg();
  if (gp == nullptr) throw Panic("gort: Sleep called outside a goroutine");
  if (d.count() <= 0) {
    goschedIfPreempted();
    return;
  }
  timer* t = &gp->sleepTimer;
  t->when = whenAfter(d.count());
  t->f = goroutineReady;
  t->arg = gp;
  gopark(resetForSleep, nullptr, waitReason::sleep);
}

}  // namespace gort
