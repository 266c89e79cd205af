// runtime/proc_findrunnable.cc: finding the next goroutine (Go's proc.go:
// findRunnable, stealWork, checkRunqsNoP, and the randomOrder steal walk).
//
// The search order is Go's: this P's timers; the global queue every 61st
// goroutine run (so a busy local queue cannot starve it; gort takes the head
// of the local queue there when the global one is empty, so runnext cannot
// starve that either); the local queue; the global queue; stealing from
// other Ps in random order (four rounds, the last one also running their due
// timers and taking their runnext); and only then giving up the P. An M
// gives up spinning before it parks and then looks at every queue once more,
// because a goroutine readied in between would have seen a spinning M and
// not woken anyone. The converse race, a waker that finds no idle P while a
// non-spinning M is about to drop one, is closed by sched.needspinning (Go
// 1.20's fix, raised lock-free by gort's wakep): that M takes its P back and
// spins.
//
// An M that found nothing blocks in netpoll until the next timer, as in Go
// (findRunnableBlock, netpoll.cc), once the Run's poller exists. Before the
// first descriptor is registered there is no poller, and one M becomes the
// "timer sleeper" instead: it sleeps on its note until the earliest timer,
// and adding an earlier timer wakes it (wakeTimerSleeper). Back with a P,
// the M from the poller spins again if it spun before (as Go's findRunnable
// (proc.go:2561) does after its netpoll), and the timer sleeper always
// does: the P it gets need not be the one whose timer it waited for, and
// only a spinning M that finds work wakes another for the Ps still idle.
#include "netpoll.h"
#include "os/os.h"
#include "panic.h"
#include "proc.h"
#include "trace.h"

namespace gort::runtime {

namespace {

// stealOrder mirrors Go's randomOrder (proc.go:6222): visit all Ps in a
// pseudo-random order by stepping with an increment coprime to their count.
struct StealOrder {
  std::uint32_t count = 0;
  std::uint32_t coprimes[kMaxGomaxprocs];
  std::uint32_t ncoprimes = 0;
};
StealOrder stealOrder;

std::uint32_t gcd(std::uint32_t a, std::uint32_t b) {
  while (b != 0) {
    std::uint32_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// stealWork mirrors Go's stealWork (proc.go:2905).
G* stealWork(std::int64_t now, bool* inheritTime, std::int64_t* pollUntil,
             bool* newWork) {
  P* pp = getg()->m->p;
  bool ranTimer = false;
  constexpr int kStealTries = 4;
  std::uint32_t n = static_cast<std::uint32_t>(gomaxprocs.load());
  if (n != stealOrder.count) return nullptr;  // resized under us: retry later
  for (int i = 0; i < kStealTries; i++) {
    bool stealTimersOrRunNextG = i == kStealTries - 1;
    for (randomEnum e = stealOrderStart(fastrand()); !e.done(); e.next()) {
      if (sched.gcwaiting.load(std::memory_order_acquire) ||
          sched.exiting.load(std::memory_order_acquire)) {
        *newWork = true;
        return nullptr;
      }
      P* p2 = allp[e.position()];
      if (p2 == pp) continue;
      if (stealTimersOrRunNextG &&
          p2->timer0When.load(std::memory_order_acquire) != 0) {
        bool ran = false;
        std::int64_t w = checkTimers(p2, now, &ran);
        if (w != 0 && (*pollUntil == 0 || w < *pollUntil)) *pollUntil = w;
        if (ran) {
          if (G* gp = runqget(pp, inheritTime)) return gp;
          ranTimer = true;
        }
      }
      if (p2->status.load(std::memory_order_acquire) != _Pidle) {
        if (G* gp = runqsteal(pp, p2, stealTimersOrRunNextG)) {
          *inheritTime = false;
          return gp;
        }
      }
    }
  }
  *newWork = ranTimer;
  return nullptr;
}

// checkRunqsNoP mirrors Go's checkRunqsNoP (proc.go:2979): after spinning
// stops, any non-empty queue means this M should take an idle P and look again.
P* checkRunqsNoP() {
  std::int32_t n = gomaxprocs.load();
  for (std::int32_t i = 0; i < n; i++) {
    P* p2 = allp[i];
    if (p2->status.load(std::memory_order_acquire) != _Pidle &&
        !runqempty(p2)) {
      lock(&sched.lock);
      P* pp = pidlegetSpinning(0);
      unlock(&sched.lock);
      return pp;
    }
  }
  if (sched.runqsize.load(std::memory_order_acquire) != 0) {
    lock(&sched.lock);
    P* pp = pidlegetSpinning(0);
    unlock(&sched.lock);
    return pp;
  }
  return nullptr;
}

// rebecomeSpinning: mp, back from the poller or the timer sleep with a P,
// spins again as it did before it gave its P up (Go's findRunnable
// (proc.go:2561) keeps wasSpinning for that).
void rebecomeSpinning(M* mp) {
  becomeSpinning(mp);
  traceSpinStart(kSpinSelf);
}

// sleepUntilTimer makes this P-less M the timer sleeper until pollUntil
// (Go: netpoll(delay) in findRunnable). Returns a P to run with, or nullptr
// (also when another M already sleeps for the timers).
P* sleepUntilTimer(M* mp, std::int64_t pollUntil) {
  M* none = nullptr;
  if (!sched.timerSleeper.compare_exchange_strong(none, mp)) return nullptr;
  sched.timerSleepUntil.store(pollUntil);
  // A timer added before we published ourselves did not wake us: re-read.
  std::int64_t w = nextTimerWhen();
  if (w != 0 && w < pollUntil) pollUntil = w;
  std::int64_t now = os::nanotime();
  traceMPark();
  if (pollUntil > now && !sched.exiting.load()) {
    notetsleep(&mp->park, pollUntil - now);
  }
  M* self = mp;
  if (!sched.timerSleeper.compare_exchange_strong(self, nullptr)) {
    notesleep(&mp->park);  // a waker claimed us; its notewakeup is coming
  }
  noteclear(&mp->park);
  traceMUnpark();
  sched.timerSleepUntil.store(0, std::memory_order_release);
  if (sched.exiting.load(std::memory_order_acquire)) mexit(mp);
  lock(&sched.lock);
  P* pp = pidleget(0);
  unlock(&sched.lock);
  return pp;
}

}  // namespace

// resetStealOrder mirrors Go's randomOrder.reset (proc.go:6234), called by
// procresize.
void resetStealOrder(std::uint32_t count) {
  stealOrder.count = count;
  stealOrder.ncoprimes = 0;
  for (std::uint32_t i = 1; i <= count; i++) {
    if (gcd(i, count) == 1) stealOrder.coprimes[stealOrder.ncoprimes++] = i;
  }
}

randomEnum stealOrderStart(std::uint32_t r) {
  std::uint32_t n = stealOrder.count;
  return randomEnum{0, n, r % n,
                    stealOrder.coprimes[(r / n) % stealOrder.ncoprimes]};
}

// fairnessCheck: what findRunnable takes at each 61st run, ahead of runnext.
// The check in Go's findRunnable (proc.go:2561) takes one goroutine from the
// global queue. When that is empty, gort's own addition takes the head of
// pp's queue: a goroutine there would otherwise wait behind the same chain
// of runnext goroutines until sysmon preempts one, and then (after a Gosched
// that moves it and the preempted one from the global queue together) be
// put back behind the next chain, one run per 10 ms slice.
static G* fairnessCheck(P* pp) {
  if (sched.runqsize.load(std::memory_order_acquire) > 0) {
    lock(&sched.lock);
    G* gp = globrunqget(pp, 1);
    unlock(&sched.lock);
    if (gp != nullptr) return gp;
  }
  return runqgethead(pp);  // ahead of runnext
}

// findRunnable mirrors Go's findRunnable (proc.go:2561) (findrunnable before
// Go 1.19). Returns with the M holding a P.
G* findRunnable(bool* inheritTime) {
  M* mp = getg()->m;
  for (;;) {
    P* pp = mp->p;
    if (sched.exiting.load(std::memory_order_acquire)) mexit(mp);
    if (sched.gcwaiting.load(std::memory_order_acquire)) {
      gcstopm();
      continue;
    }
    std::int64_t now = 0;  // read lazily: only timers need the clock
    bool ran = false;
    std::int64_t pollUntil = 0;
    if (pp->timer0When.load(std::memory_order_relaxed) != 0) {
      pollUntil = checkTimers(pp, now, &ran);
    }

    // Go counts schedtick here, which a goroutine run from runnext does not
    // advance: a chain of goroutines each starting the next (or a ping-pong
    // pair) then never reaches the check, and the global queue waits for
    // sysmon's preemption, one goroutine per 10 ms slice (golang/go#52934).
    // gort counts every run, so the gap is 61 runs at most.
    if (pp->runtick % 61 == 0) {
      if (G* gp = fairnessCheck(pp)) {
        *inheritTime = false;
        return gp;
      }
    }
    if (G* gp = runqget(pp, inheritTime)) return gp;
    if (sched.runqsize.load(std::memory_order_acquire) != 0) {
      lock(&sched.lock);
      G* gp = globrunqget(pp, 0);
      unlock(&sched.lock);
      if (gp != nullptr) {
        *inheritTime = false;
        return gp;
      }
    }

    // Poll the network without blocking before stealing (Go does).
    if (G* gp = findRunnableNetpoll()) {
      *inheritTime = false;
      return gp;
    }

    // Steal, but keep spinning Ms to at most half the busy Ps.
    std::int32_t procs = gomaxprocs.load();
    if (mp->spinning ||
        2 * sched.nmspinning.load() < procs - sched.npidle.load()) {
      if (!mp->spinning) {
        becomeSpinning(mp);
        traceSpinStart(kSpinSelf);
      }
      bool newWork = false;
      if (G* gp = stealWork(now, inheritTime, &pollUntil, &newWork)) {
        return gp;
      }
      if (newWork) continue;
    }

    // Nothing to do: give up the P.
    lock(&sched.lock);
    if (sched.gcwaiting.load(std::memory_order_acquire) ||
        sched.exiting.load(std::memory_order_acquire)) {
      unlock(&sched.lock);
      continue;
    }
    if (sched.runqsize.load(std::memory_order_acquire) != 0) {
      G* gp = globrunqget(pp, 0);
      unlock(&sched.lock);
      *inheritTime = false;
      return gp;
    }
    if (releasep() != pp) throw_("findrunnable: wrong p");
    pidleput(pp, now);
    // A waker found work but no idle P after this M last looked: take the
    // P back and spin for it rather than park (Go 1.20's needspinning
    // check, made after pidleput because gort's wakep raises it unlocked).
    if (!mp->spinning && sched.needspinning.load() == 1) {
      acquirep(pidleget(0));  // pp, just put
      unlock(&sched.lock);
      becomeSpinning(mp);
      traceSpinStart(kSpinSelf);
      continue;
    }
    unlock(&sched.lock);

    // As Go's findRunnable (proc.go:2561) does with wasSpinning: an M that
    // wakes from its wait for the poller or the next timer with a P spins
    // again, so that when it finds work, resetspinning wakes an M for the
    // Ps still idle, and for their timers (it may not get the P whose timer
    // it slept for).
    bool wasSpinning = mp->spinning;
    if (mp->spinning) {
      mp->spinning = false;
      if (sched.nmspinning.fetch_sub(1) - 1 < 0) {
        throw_("findrunnable: negative nmspinning");
      }
      traceSpinStop(kSpinGaveUp);
      if (P* p2 = checkRunqsNoP()) {
        acquirep(p2);
        becomeSpinning(mp);
        traceSpinStart(kSpinSelf);
        continue;
      }
    }

    pollUntil = nextTimerWhen();
    P* polledP = nullptr;
    G* polledG = nullptr;
    int polled = findRunnableBlock(pollUntil, &polledP, &polledG);
    if (polled == kBlockPolled) {
      if (polledG != nullptr) {
        *inheritTime = false;
        return polledG;
      }
      if (wasSpinning) rebecomeSpinning(mp);
      continue;
    }
    if (polled == kBlockNoPoller && pollUntil != 0) {
      if (P* p2 = sleepUntilTimer(mp, pollUntil)) {
        acquirep(p2);
        // Whether or not it spun before (gort's own; the poller's path above
        // is Go's): the sleeper watched every P's timers, perhaps as the
        // last M to, and spinning hands that watch on.
        rebecomeSpinning(mp);  // hands the timers on
        continue;
      }
    }
    stopm();
  }
}

}  // namespace gort::runtime
