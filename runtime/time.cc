// runtime/time.cc: per-P timers, Sleep and After (Go's time.go and
// runtime's time.Sleep / time.After support).
//
// Each P keeps a heap of timers ordered by when, under its own timersLock,
// and publishes the earliest when in timer0When so that other Ms can tell
// without locking whether a P has work due. findrunnable runs due timers of
// its own P and, while stealing, of the others. Timer functions run on g0
// with a P held (they ready goroutines or send on a channel). Differences
// from Go: gort's timers are never stopped or modified, only added and run,
// so there is no timer status machine; the heap is binary, not 4-ary.
#include <algorithm>
#include <limits>

#include "gort/internal/chan_impl.h"
#include "gort/runtime.h"
#include "gort/time.h"
#include "netpoll.h"
#include "panic.h"
#include "proc.h"

namespace gort::runtime {

namespace {

bool laterThan(const timer* a, const timer* b) { return a->when > b->when; }

void updateTimer0When(P* pp) ABSL_EXCLUSIVE_LOCKS_REQUIRED(pp->timersLock) {
  pp->timer0When.store(pp->timers.empty() ? 0 : pp->timers.front()->when,
                       std::memory_order_release);
}

// goroutineReady mirrors Go's goroutineReady: the Sleep timer's function.
void goroutineReady(void* arg, std::uintptr_t) {
  goready(static_cast<G*>(arg));
}

// resetForSleep mirrors Go's resetForSleep: arm the timer only after the
// goroutine is parked, so the wakeup cannot race ahead of the park.
bool resetForSleep(G* gp, void*) {
  addtimer(&gp->sleepTimer);
  return true;
}

std::int64_t whenAfter(std::int64_t ns) {
  std::int64_t now = os::nanotime();
  if (ns > std::numeric_limits<std::int64_t>::max() - now) {
    return std::numeric_limits<std::int64_t>::max();
  }
  return now + ns;
}

}  // namespace

// addtimer mirrors Go's addtimer / doaddtimer: on the current P's heap.
void addtimer(timer* t) {
  P* pp = getg()->m->p;
  std::int64_t when = t->when;  // t may fire and be reused once unlocked
  lock(&pp->timersLock);
  pp->timers.push_back(t);
  std::push_heap(pp->timers.begin(), pp->timers.end(), laterThan);
  updateTimer0When(pp);
  unlock(&pp->timersLock);
  wakeTimerSleeper(when);
}

// checkTimers mirrors Go's checkTimers: run pp's due timers; returns the
// next when (0 if none) and sets *ran if any ran. now == 0 means "read the
// clock if a timer is pending", which keeps nanotime off the hot path.
std::int64_t checkTimers(P* pp, std::int64_t now, bool* ran) {
  std::int64_t next = pp->timer0When.load(std::memory_order_acquire);
  if (next == 0) return 0;
  if (now == 0) now = os::nanotime();
  if (now < next) return next;
  lock(&pp->timersLock);
  while (!pp->timers.empty() && pp->timers.front()->when <= now) {
    std::pop_heap(pp->timers.begin(), pp->timers.end(), laterThan);
    timer* t = pp->timers.back();
    pp->timers.pop_back();
    updateTimer0When(pp);
    unlock(&pp->timersLock);
    t->f(t->arg, t->seq);  // may add timers, to this very P
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

// timeSleepUntil mirrors Go's timeSleepUntil: the earliest timer, or the
// largest time if there is none.
std::int64_t timeSleepUntil() {
  std::int64_t w = nextTimerWhen();
  return w == 0 ? std::numeric_limits<std::int64_t>::max() : w;
}

// wakeTimerSleeper mirrors Go's wakeNetPoller: a timer due at `when` was
// added; wake the M sleeping for timers if it would sleep past it, or
// start an M if none sleeps.
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

// moveTimers mirrors Go's moveTimers: a destroyed P's timers go to `to`.
void moveTimers(P* to, P* from) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  lock(&from->timersLock);
  std::vector<timer*> moved;
  moved.swap(from->timers);
  updateTimer0When(from);
  unlock(&from->timersLock);
  lock(&to->timersLock);
  for (timer* t : moved) {
    to->timers.push_back(t);
    std::push_heap(to->timers.begin(), to->timers.end(), laterThan);
  }
  updateTimer0When(to);
  unlock(&to->timersLock);
}

// dropTimers discards pp's pending timers when Run ends (Go's exit simply
// never runs them).
void dropTimers(P* pp) {
  lock(&pp->timersLock);
  for (timer* t : pp->timers) {
    if (t->drop != nullptr) t->drop(t);
  }
  pp->timers.clear();
  updateTimer0When(pp);
  unlock(&pp->timersLock);
}

}  // namespace gort::runtime

namespace gort {

using namespace gort::runtime;

// Sleep mirrors Go's timeSleep.
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

namespace {
// sendTime mirrors Go's sendTime: a non-blocking send of the current time.
void sendTime(void* arg, std::uintptr_t) {
  auto* t = static_cast<timer*>(arg);
  auto* c = static_cast<internal::hchan*>(reinterpret_cast<void*>(t->seq));
  std::int64_t now = os::nanotime();
  internal::scase sc{c, &now, true};
  std::uint16_t order[2];
  bool ok;
  internal::selectgo(&sc, 1, order, false, &ok);
  internal::chanunref(c);
  delete t;
}

void dropAfterTimer(timer* t) {
  internal::chanunref(
      static_cast<internal::hchan*>(reinterpret_cast<void*>(t->seq)));
  delete t;
}
}  // namespace

// After mirrors Go's time.After / NewTimer: a capacity-1 channel and a
// timer that sends on it.
Chan<std::int64_t> After(std::chrono::nanoseconds d) {
  if (getcurg() == nullptr) {
    throw Panic("gort: After called outside a goroutine");
  }
  Chan<std::int64_t> c = MakeChan<std::int64_t>(1);
  internal::chanref(c.raw());
  auto* t = new timer;
  t->when = whenAfter(d.count() > 0 ? d.count() : 0);
  t->f = sendTime;
  t->arg = t;
  t->seq = reinterpret_cast<std::uintptr_t>(c.raw());
  t->drop = dropAfterTimer;
  addtimer(t);
  return c;
}

}  // namespace gort
