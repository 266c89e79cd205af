// runtime/sysmon.cc: the system monitor (Go's proc.go: sysmon, retake,
// preemptone).
//
// sysmon runs on its own M without a P. It wakes every 20 us while it finds
// something to do, doubling the delay after 50 idle rounds up to 10 ms, and
// sleeps on a note when every P is idle. Each round it retakes Ps that have
// sat in one syscall for a whole tick (handoffp, so other goroutines run)
// and asks goroutines that have run for 10 ms to yield. It wakes by usleep,
// so usleep's real resolution bounds how fast a P stuck in a syscall comes
// back: the point of the whole project.
#include "os/os.h"
#include "panic.h"
#include "proc.h"
#include "trace.h"

namespace gort::runtime {

namespace {

constexpr std::int64_t kForceGCPeriodHalf = 60'000'000'000;  // Go: 2 min / 2

// preemptone mirrors Go's preemptone: flag the G running on pp (gort has no
// async preemption; the G yields at its next safe point).
void preemptone(P* pp) {
  M* mp = pp->m.load(std::memory_order_acquire);
  if (mp == nullptr) return;
  G* gp = mp->curg.load(std::memory_order_acquire);
  if (gp == nullptr || gp == mp->g0) return;
  gp->preempt.store(true, std::memory_order_relaxed);
  tracePreemptReq(pp);
  sched.preemptRequests.fetch_add(1, std::memory_order_relaxed);
}

// retake mirrors Go's retake.
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
    if (pp->status.compare_exchange_strong(s, _Pidle,
                                           std::memory_order_acq_rel)) {
      n++;
      traceProcRetake(pp);
      pp->syscalltick.fetch_add(1, std::memory_order_relaxed);
      sched.handoffs.fetch_add(1, std::memory_order_relaxed);
      handoffp(pp);
    }
  }
  return n;
}

}  // namespace

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

// sysmon mirrors Go's sysmon.
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
          sched.sysmonwait.store(true, std::memory_order_release);
          unlock(&sched.lock);
          std::int64_t sleep = kForceGCPeriodHalf;
          if (next - now < sleep) sleep = next - now;
          notetsleep(&sched.sysmonnote, sleep);
          lock(&sched.lock);
          sched.sysmonwait.store(false, std::memory_order_release);
          noteclear(&sched.sysmonnote);
          idle = 0;
          delay = 20;
        }
      }
      unlock(&sched.lock);
      if (sched.exiting.load(std::memory_order_acquire)) return;
      now = os::nanotime();
    }
    // Timers that should have run already: maybe every P is busy with a
    // goroutine that does not yield. Start an M for them (Go 1.19 does).
    if (timeSleepUntil() < now) startm(nullptr, false);
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
