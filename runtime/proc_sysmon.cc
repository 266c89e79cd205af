// runtime/proc_sysmon.cc: the system monitor (Go's proc.go: sysmon, retake,
// preemptone).
//
// sysmon runs on its own M without a P. It wakes every 20 us while it finds
// something to do, doubling the delay after 50 idle rounds up to 10 ms, and
// sleeps on a note when every P is idle. Each round it retakes Ps that have
// sat in one syscall for a whole tick (handoffp, so other goroutines run)
// and asks goroutines that have run for 10 ms to yield. It wakes by usleep,
// so usleep's real resolution bounds how fast a P stuck in a syscall comes
// back: the point of the whole project.
//
// gort adds one check Go does not need (checkblocked): a goroutine that
// blocks its OS thread outside gort::Syscall (a raw blocking call, a
// std::mutex) holds its P without the runtime knowing, which a Go goroutine
// cannot do. sysmon warns once per incident (GODEBUG=blockwarn=ms).
#include <string>

#include "netpoll.h"
#include "os/os.h"
#include "panic.h"
#include "proc.h"
#include "trace.h"

namespace gort::runtime {

namespace {

constexpr std::int64_t kForceGCPeriodHalf = 60'000'000'000;  // Go: 2 min / 2
// Go's osRelaxMinNS (os_windows.go:414) (Windows' value; os::osRelax is a no-op
// elsewhere): a deep sleep shorter than this keeps the 1 ms period, so timers
// due soon stay accurate.
constexpr std::int64_t kOsRelaxMinNS = 60'000'000;

// preemptone mirrors Go's preemptone (proc.go:5388): flag the G running on pp
// (gort has no async preemption; the G yields at its next safe point).
void preemptone(P* pp) {
  M* mp = pp->m.load(std::memory_order_acquire);
  if (mp == nullptr) return;
  G* gp = mp->curg.load(std::memory_order_acquire);
  if (gp == nullptr || gp == mp->g0) return;
  gp->preempt.store(true, std::memory_order_relaxed);
  tracePreemptReq(pp);
  sched.preemptRequests.fetch_add(1, std::memory_order_relaxed);
}

constexpr std::int64_t kBlockSampleNS = 10'000'000;

// checkblocked warns when the goroutine running on pp has gone
// debug.blockwarn ms without a scheduling point or syscall (schedtick and
// syscalltick unchanged, like retake's test) and two samples of its
// thread's state, kBlockSampleNS apart, find it asleep in the kernel.
// A goroutine computing for that long is running, not blocked: no warning.
void checkblocked(P* pp, std::int64_t now) {
  M* mp = pp->m.load(std::memory_order_acquire);
  G* gp = mp != nullptr ? mp->curg.load(std::memory_order_acquire) : nullptr;
  if (gp != nullptr && gp == mp->g0) gp = nullptr;
  std::uint64_t ticks =
      pp->schedtick.load(std::memory_order_relaxed) |
      std::uint64_t{pp->syscalltick.load(std::memory_order_relaxed)} << 32;
  if (gp == nullptr || ticks != pp->blockTicks || mp != pp->blockM ||
      gp != pp->blockG) {
    pp->blockTicks = ticks;
    pp->blockM = mp;
    pp->blockG = gp;
    pp->blockWhen = now;
    pp->blockSampled = 0;
    pp->blockSamples = 0;
    pp->blockWarned = false;
    return;
  }
  std::int64_t held = now - pp->blockWhen;
  if (pp->blockWarned || held < std::int64_t{debug.blockwarn} * 1000000 ||
      now - pp->blockSampled < kBlockSampleNS) {
    return;
  }
  pp->blockSampled = now;
  int blocked = os::threadBlocked(mp->tid.load(std::memory_order_relaxed));
  // The OS cannot tell (Windows, no /proc): stay silent rather than warn a
  // goroutine that may only be computing.
  if (blocked < 0) return;
  pp->blockSamples = blocked == 0 ? 0 : pp->blockSamples + 1;
  if (pp->blockSamples < 2) return;
  pp->blockWarned = true;
  sched.blockWarnings.fetch_add(1, std::memory_order_relaxed);
  std::int64_t goid = gp->goid.load(std::memory_order_relaxed);
  std::string msg = "runtime: goroutine " + std::to_string(goid) +
                    " has held P " + std::to_string(pp->id) + " for " +
                    std::to_string(held / 1000000) +
                    " ms without reaching a scheduling point, its thread "
                    "asleep in the OS (a blocking call outside "
                    "gort::Syscall? an OS lock such as std::mutex?)\n";
  printWarning(msg);
}

// retake mirrors Go's retake (proc.go:5291).
std::uint32_t retake(std::int64_t now) {
  std::uint32_t n = 0;
  std::int32_t procs = gomaxprocs.load();
  for (std::int32_t i = 0; i < procs; i++) {
    P* pp = allp[i];
    if (pp == nullptr) continue;
    std::uint32_t s = pp->status.load(std::memory_order_acquire);
    bool sysretake = false;
    if (s == _Prunning || s == _Psyscall) {
      std::uint32_t t = pp->schedtick.load(std::memory_order_relaxed);
      if (pp->sysmonSchedtick != t) {
        pp->sysmonSchedtick = t;
        pp->sysmonSchedwhen = now;
      } else if (pp->sysmonSchedwhen + kForcePreemptNS <= now) {
        preemptone(pp);
        sysretake = true;  // a syscall that long: retake it below
      }
    }
    if (s == _Prunning && debug.blockwarn > 0) checkblocked(pp, now);
    if (s != _Psyscall) continue;
    std::uint32_t t = pp->syscalltick.load(std::memory_order_relaxed);
    if (!sysretake && pp->sysmonSyscalltick != t) {
      pp->sysmonSyscalltick = t;
      pp->sysmonSyscallwhen = now;
      continue;
    }
    // No other work and someone is already looking: leave it a while.
    if (runqempty(pp) && sched.nmspinning.load() + sched.npidle.load() > 0 &&
        pp->sysmonSyscallwhen + 10'000'000 > now) {
      continue;
    }
    // Count one more running M before the CAS: once it succeeds, the M in
    // the syscall may return, find no P, go idle and call checkdead while
    // pp is still in our hands and no M looks runnable (Go does the same).
    incidlelocked(-1);
    if (pp->status.compare_exchange_strong(s, _Pidle,
                                           std::memory_order_acq_rel)) {
      n++;
      traceProcRetake(pp);
      pp->syscalltick.fetch_add(1, std::memory_order_relaxed);
      sched.handoffs.fetch_add(1, std::memory_order_relaxed);
      handoffp(pp);
    }
    incidlelocked(1);
  }
  return n;
}

// publishClock gives parks (parkstamp) sysmon's reading of the clock once it
// is a millisecond old (gort's own), so the line is written at most once a ms.
void publishClock(std::int64_t now) {
  std::atomic<std::int64_t>& c = sched.sysmonclock.now;
  if (now - c.load(std::memory_order_relaxed) >= 1'000'000) {
    c.store(now, std::memory_order_release);  // after sysmonwait's false
  }
}

}  // namespace

// reportTimerFallbacks prints, under GODEBUG=usleepdebug=1, how many more
// Ms lost kHighRes since the last report and sleep at low resolution, the
// 1 ms timer period held for them (gort's own: Go throws when an M cannot
// create its timer). Called by sysmon and, once its Ms are gone, by Run.
void reportTimerFallbacks() {
  if (debug.usleepdebug <= 0) return;
  std::int64_t n = os::timerFallbacks() - sched.timerFallbacksBase;
  if (n <= sched.timerFallbacksReported) return;
  std::string msg =
      "runtime: usleep: " + std::to_string(n - sched.timerFallbacksReported) +
      " more M(s) lost the high-resolution timer and sleep at "
      "low resolution (1 ms timer period); " +
      std::to_string(n) + " in this Run\n";
  sched.timerFallbacksReported = n;
  os::writeErr(msg.data(), msg.size());
}

// wakeSysmon wakes sysmon if it sleeps because every P was idle (Go does
// this inline in entersyscall, exitsyscall and startTheWorld).
void wakeSysmon() {
  if (!sched.sysmonwait.load(std::memory_order_acquire)) return;
  lock(&sched.lock);
  if (sched.sysmonwait.load(std::memory_order_acquire)) {
    sched.sysmonwait.store(false, std::memory_order_release);
    notewakeup(&sched.sysmonnote);
  }
  unlock(&sched.lock);
}

// sysmon mirrors Go's sysmon (proc.go:5134).
void sysmon() {
  lock(&sched.lock);
  sched.nmsys++;
  checkdead();
  unlock(&sched.lock);
  std::uint32_t idle = 0;
  std::uint32_t delay = 0;
  std::int64_t lasttrace = 0;
  for (;;) {
    if (idle == 0) {
      delay = 20;
    } else if (idle > 50) {
      delay *= 2;
    }
    if (delay > 10 * 1000) delay = 10 * 1000;
    tracedUsleep(delay);
    sched.sysmonWakes.fetch_add(1, std::memory_order_relaxed);
    if (sched.exiting.load(std::memory_order_acquire)) return;
    std::int64_t now = os::nanotime();
    // With schedtrace on, sysmon never sleeps deeply, so the lines keep
    // coming while the program idles (as in Go).
    if (debug.schedtrace <= 0 &&
        (sched.gcwaiting.load(std::memory_order_acquire) ||
         sched.npidle.load() == gomaxprocs.load())) {
      lock(&sched.lock);
      if (sched.gcwaiting.load(std::memory_order_acquire) ||
          sched.npidle.load() == gomaxprocs.load()) {
        std::int64_t next = timeSleepUntil();
        if (sched.exiting.load()) {
          unlock(&sched.lock);
          return;
        }
        if (next > now) {
          // No clock for parks while asleep: they read the real one.
          sched.sysmonclock.now.store(0, std::memory_order_relaxed);
          sched.sysmonwait.store(true, std::memory_order_release);
          unlock(&sched.lock);
          std::int64_t sleep = kForceGCPeriodHalf;
          if (next - now < sleep) sleep = next - now;
          // Wake for the GOMAXPROCS check (sysmonUpdateGOMAXPROCS).
          if (!customGOMAXPROCS.load() && sleep > 1'000'000'000) {
            sleep = 1'000'000'000;
          }
          // Wake for the scavenger while free Gs wait on the global list.
          std::int64_t scav = std::int64_t{debug.scavenge} * 1000000;
          if (scav > 0 && sched.gFreeN.load(std::memory_order_relaxed) > 0 &&
              sleep > scav) {
            sleep = scav;
          }
          traceSysmonIdle();
          bool relax = sleep >= kOsRelaxMinNS;
          if (relax) os::osRelax(true);
          bool syscallWake = notetsleep(&sched.sysmonnote, sleep);
          if (relax) os::osRelax(false);
          lock(&sched.lock);
          sched.sysmonwait.store(false, std::memory_order_release);
          noteclear(&sched.sysmonnote);
          // Woken early (by wakeSysmon: a syscall entered or left with an
          // idle P taken; or by startTheWorld): bet on more syscalls to retake
          // and start the back-off again. Woken by the timeout (a timer is
          // due): keep the back-off, as Go does, so a program that mostly
          // sleeps does not pay for 50 quick rounds after every wake-up.
          if (syscallWake) {
            idle = 0;
            delay = 20;
          }
        }
      }
      unlock(&sched.lock);
      if (sched.exiting.load(std::memory_order_acquire)) return;
      now = os::nanotime();
    }
    publishClock(now);
    sysmonNetpoll(now);  // nobody has polled for 10 ms: poll (Go does)
    // No M is started for overdue timers: whoever waits for the next timer
    // (the M blocked in netpoll, or the timer sleeper) runs them. Go 1.19
    // starts one here only on NetBSD before 9.2, for a kernel bug.
    if (debug.usleepdebug > 0) reportTimerFallbacks();
    sysmonUpdateGOMAXPROCS(now);
    gscavenge(now);
    traceSysmonRefill();
    if (retake(now) != 0) {
      idle = 0;
    } else {
      idle++;
    }
    if (debug.schedtrace > 0 &&
        lasttrace + std::int64_t{debug.schedtrace} * 1000000 <= now) {
      lasttrace = now;
      schedtrace(debug.scheddetail > 0);
    }
  }
}

}  // namespace gort::runtime
