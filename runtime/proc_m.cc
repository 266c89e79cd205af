// runtime/proc_m.cc: Ms and Ps changing hands (Go's proc.go: mstart, newm,
// startm, stopm, handoffp, wakep, acquirep/releasep, the idle lists, and
// checkdead).
//
// An M without work parks on its note (stopm); whoever has work for it
// takes it off the idle list, hands it a P through m.nextp and wakes the
// note (startm). handoffp decides whether a P leaving an M (for a syscall,
// or retaken by sysmon) needs a new M at once or can go idle. checkdead runs
// whenever an M goes idle: if no M is running and no goroutine can become
// runnable, the program is deadlocked.
#include "os/net_os.h"
#include "os/os.h"
#include "panic.h"
#include "proc.h"
#include "race.h"
#include "trace.h"

namespace gort::runtime {

namespace {
// mExit unwinds an M's g0 stack back to mstart when Run ends.
struct mExit {};
}  // namespace

// mstart mirrors Go's mstart/mstart1 (proc.go:1345): the body of every runtime
// thread.
void mstart(void* arg) {
  M* mp = static_cast<M*>(arg);
  setg(mp->g0);
  mp->tid.store(os::gettid(), std::memory_order_relaxed);
  raceminit(mp);
  minitSignalStack();
  os::setThreadTimerMode(timerMode);  // a refusal is counted: timerFallbacks
  mp->fastrand[0] = static_cast<std::uint32_t>(mp->id * 0x9e3779b9u + 1);
  mp->fastrand[1] = static_cast<std::uint32_t>(os::nanotime());
  try {
    if (mp->mstartfn != nullptr) {
      mp->mstartfn();
    } else {
      acquirep(mp->nextp);
      mp->nextp = nullptr;
      if (mp->spinning) traceSpinStart(kSpinWoken);  // started to spin
      schedule();
    }
  } catch (const mExit&) {
    // The Run is over: the I/O this thread started must not outlive it.
    if (sched.exiting.load(std::memory_order_acquire)) os::ioThreadExit();
  }
  setg(nullptr);
  unminitSignalStack();
  os::mdestroy();
  mp->exited.store(true, std::memory_order_release);
  exitEvent();
}

// mexit ends the M when Run is over (Go's mexit (proc.go:1471) frees the M's
// resources; gort leaves that to Run, which joins the thread).
void mexit(M* mp) { throw mExit{}; }

// mReserveID mirrors Go's mReserveID (proc.go:773): counting the M before
// sched.lock is dropped keeps checkdead from seeing a moment with no running M
// while an M is on its way to run a P (golang.org/issue/40368).
std::int64_t mReserveID() { return sched.mnext++; }

// newm mirrors Go's newm (proc.go:2096): a new M and thread, starting with pp
// (or fn); id comes from mReserveID, or -1 to reserve one here.
M* newm(void (*fn)(), P* pp, bool spinning, std::int64_t id) {
  M* mp = allocm(fn, pp, spinning, id);
  newm1(mp);
  return mp;
}

// allocm mirrors Go's allocm (proc.go:1715): the M and its g0, counted, not yet
// running.
M* allocm(void (*fn)(), P* pp, bool spinning, std::int64_t id) {
  M* mp = new M;
  mp->g0 = new G;
  mp->g0->m = mp;
  mp->g0->atomicstatus.store(_Grunning, std::memory_order_relaxed);
  mp->mstartfn = fn;
  mp->nextp = pp;
  mp->spinning = spinning;
  lock(&sched.lock);
  mp->id = id >= 0 ? id : mReserveID();
  mp->alllink = allm;
  allm = mp;
  unlock(&sched.lock);
  return mp;
}

// newm1 mirrors Go's newm1 (proc.go:2145): start mp's thread.
void newm1(M* mp) {
  if (!os::newosproc(mstart, mp, &mp->thread)) {
    throw_("newosproc: cannot create a thread");
  }
}

// mput mirrors Go's mput (proc.go:5538): put mp on the idle list, then look for
// deadlock.
void mput(M* mp) {
  mp->schedlink = sched.midle;
  sched.midle = mp;
  sched.nmidle++;
  checkdead();
}

// mget mirrors Go's mget (proc.go:5552).
M* mget() {
  M* mp = sched.midle;
  if (mp != nullptr) {
    sched.midle = mp->schedlink;
    sched.nmidle--;
  }
  return mp;
}

// pidleput mirrors Go's pidleput (proc.go:5707).
void pidleput(P* pp, std::int64_t now) {
  if (!runqempty(pp)) throw_("pidleput: P has non-empty run queue");
  pp->status.store(_Pidle, std::memory_order_release);
  pp->link = sched.pidle;
  sched.pidle = pp;
  sched.npidle.fetch_add(1);
}

// pidleget mirrors Go's pidleget (proc.go:5734).
P* pidleget(std::int64_t now) {
  P* pp = sched.pidle;
  if (pp != nullptr) {
    sched.pidle = pp->link;
    sched.npidle.fetch_sub(1);
  }
  return pp;
}

// pidlegetSpinning mirrors Go 1.20's pidlegetSpinning: pidleget for a
// caller that found work to spin for. With no idle P it raises
// sched.needspinning, so the M that next drops a P spins instead of parking.
P* pidlegetSpinning(std::int64_t now) {
  P* pp = pidleget(now);
  if (pp == nullptr) raiseNeedspinning();
  return pp;
}

// raiseNeedspinning sets sched.needspinning without sched.lock (Go 1.20
// sets it under the lock, in pidlegetSpinning). The store is sequentially
// consistent and the caller reads npidle after it, while an M dropping its P
// counts itself in npidle before it reads needspinning: one of the two sees
// the other. Already set, it is left alone, so a busy P's wakep only reads it.
void raiseNeedspinning() {
  if (sched.needspinning.load(std::memory_order_relaxed) == 0) {
    sched.needspinning.store(1);
  }
}

// becomeSpinning mirrors Go 1.20's m.becomeSpinning: count mp in nmspinning
// and clear a pending needspinning, which this spinning M now answers.
void becomeSpinning(M* mp) {
  mp->spinning = true;
  sched.nmspinning.fetch_add(1);
  sched.needspinning.store(0, std::memory_order_relaxed);
}

// acquirep mirrors Go's acquirep/wirep (proc.go:4944).
void acquirep(P* pp) {
  M* mp = getg()->m;
  if (mp->p != nullptr || pp->m.load(std::memory_order_relaxed) != nullptr) {
    throw_("wirep: already in go");
  }
  mp->p = pp;
  pp->m.store(mp, std::memory_order_release);  // sysmon may read mp
  pp->status.store(_Prunning, std::memory_order_release);
  tracePChanged(mp);  // took pp
}

// releasep mirrors Go's releasep (proc.go:4985).
P* releasep() {
  M* mp = getg()->m;
  P* pp = mp->p;
  if (pp == nullptr || pp->m.load(std::memory_order_relaxed) != mp) {
    throw_("releasep: invalid p state");
  }
  mp->p = nullptr;
  tracePChanged(mp);  // dropped pp
  pp->m.store(nullptr, std::memory_order_relaxed);
  pp->status.store(_Pidle, std::memory_order_release);
  return pp;
}

// stopm mirrors Go's stopm (proc.go:2231): park this M until startm hands it a
// P.
void stopm() {
  M* mp = getg()->m;
  if (mp->p != nullptr) throw_("stopm holding p");
  if (mp->spinning) throw_("stopm spinning");
  lock(&sched.lock);
  if (sched.exiting.load()) {
    unlock(&sched.lock);
    mexit(mp);
  }
  mput(mp);
  unlock(&sched.lock);
  mp->blocked = true;
  traceMPark();
  notesleep(&mp->park);
  noteclear(&mp->park);
  traceMUnpark();
  mp->blocked = false;
  if (sched.exiting.load(std::memory_order_acquire)) mexit(mp);
  acquirep(mp->nextp);
  mp->nextp = nullptr;
  if (mp->spinning) traceSpinStart(kSpinWoken);  // startm woke it to spin
}

// startm mirrors Go's startm (proc.go:2269): run pp (or an idle P) on an idle
// or new M. If spinning, the caller has already counted the M in nmspinning,
// and finding no idle P raises needspinning (pidlegetSpinning).
void startm(P* pp, bool spinning) {
  lock(&sched.lock);
  if (pp == nullptr) {
    pp = spinning ? pidlegetSpinning(0) : pidleget(0);
    if (pp == nullptr) {
      unlock(&sched.lock);
      if (spinning && sched.nmspinning.fetch_sub(1) - 1 < 0) {
        throw_("startm: negative nmspinning");
      }
      return;
    }
  }
  M* nmp = mget();
  if (nmp == nullptr) {
    std::int64_t id = mReserveID();
    unlock(&sched.lock);
    newm(nullptr, pp, spinning, id);
    return;
  }
  unlock(&sched.lock);
  nmp->spinning = spinning;
  nmp->nextp = pp;
  notewakeup(&nmp->park);
}

// handoffp mirrors Go's handoffp (proc.go:2354): pp lost its M (syscall or
// retake); start an M for it if there is work or nobody else is looking, else
// idle it.
void handoffp(P* pp) {
  if (!runqempty(pp) || sched.runqsize.load(std::memory_order_acquire) != 0) {
    startm(pp, false);
    return;
  }
  std::int32_t zero = 0;
  if (sched.nmspinning.load() + sched.npidle.load() == 0 &&
      sched.nmspinning.compare_exchange_strong(zero, 1)) {
    sched.needspinning.store(0, std::memory_order_relaxed);
    startm(pp, true);
    return;
  }
  lock(&sched.lock);
  if (sched.gcwaiting.load(std::memory_order_acquire)) {
    pp->status.store(_Pgcstop, std::memory_order_release);
    if (--sched.stopwait == 0) notewakeup(&sched.stopnote);
    unlock(&sched.lock);
    return;
  }
  if (sched.runqsize.load(std::memory_order_acquire) != 0) {
    unlock(&sched.lock);
    startm(pp, false);
    return;
  }
  // Go here starts an M when this is the last running P and no M blocks in
  // netpoll; gort leaves the network to sysmon's 10 ms poll (see
  // "Differences from Go"). With timers pending, make sure someone wakes
  // for them (Go: wakeNetPoller in handoffp).
  std::int64_t when = pp->timer0When.load(std::memory_order_acquire);
  pidleput(pp, 0);
  unlock(&sched.lock);
  if (when != 0) wakeTimerSleeper(when);
}

// wakep mirrors Go's wakep (proc.go:2422): start one spinning M if a P is idle
// and no M is spinning already. With no idle P, Go 1.19 just returns; an M
// that looked everywhere before the work appeared, without spinning, could
// then drop its P and park, leaving the work behind a busy P (a lost wakeup
// that cooperative gort, with no preemption to rescue it, cannot outwait).
// Go 1.20 closes it with needspinning, taking sched.lock in every wakep;
// gort raises needspinning without the lock, so with every P busy a wakep
// still costs two loads, as in Go 1.19.
void wakep() {
  if (sched.nmspinning.load() != 0) return;
  if (sched.npidle.load() == 0) {
    raiseNeedspinning();
    if (sched.npidle.load() == 0) return;  // a P idled since: wake for it
  }
  std::int32_t zero = 0;
  if (!sched.nmspinning.compare_exchange_strong(zero, 1)) return;
  startm(nullptr, true);
}

// gcstopm mirrors Go's gcstopm (proc.go:2483): give the P to a stopping world,
// then park.
void gcstopm() {
  M* mp = getg()->m;
  if (mp->spinning) {
    mp->spinning = false;
    sched.nmspinning.fetch_sub(1);
    traceSpinStop(kSpinGCStop);
  }
  P* pp = releasep();
  lock(&sched.lock);
  pp->status.store(_Pgcstop, std::memory_order_release);
  if (--sched.stopwait == 0) notewakeup(&sched.stopnote);
  unlock(&sched.lock);
  stopm();
}

// incidlelocked mirrors Go's incidlelocked (proc.go:5005): retake pretends one
// more M runs while it holds a P between its CAS and handoffp.
void incidlelocked(std::int32_t v) {
  lock(&sched.lock);
  sched.nmidlelocked += v;
  if (v > 0) checkdead();
  unlock(&sched.lock);
}

// checkdead mirrors Go's checkdead (proc.go:5017): called with sched.lock held
// when an M goes idle.
void checkdead() {
  if (sched.exiting.load(std::memory_order_acquire)) return;
  std::int32_t run = static_cast<std::int32_t>(sched.mnext) - sched.nmidle -
                     sched.nmidlelocked - sched.nmsys - sched.nmexited;
  if (run > 0) return;
  if (run < 0) throw_("checkdead: inconsistent counts");
  lock(&allglock);
  for (G* gp = allgs; gp != nullptr; gp = gp->alllink) {
    std::uint32_t s = readgstatus(gp);
    if (s == _Grunnable || s == _Grunning || s == _Gsyscall) {
      // Go prints the same before this throw; the counts say which M was
      // wrongly thought idle.
      printErr("runtime: checkdead: find g ");
      printErrInt(gp->goid);
      printErr(" in status ");
      printErrInt(s);
      printErr(" (mcount=");
      printErrInt(sched.mnext);
      printErr(" nmidle=");
      printErrInt(sched.nmidle);
      printErr(" nmidlelocked=");
      printErrInt(sched.nmidlelocked);
      printErr(" nmsys=");
      printErrInt(sched.nmsys);
      printErr(" npidle=");
      printErrInt(sched.npidle.load());
      printErr(" runqsize=");
      printErrInt(sched.runqsize.load());
      printErr(")\n");
      unlock(&allglock);
      throw_("checkdead: runnable g");
    }
  }
  unlock(&allglock);
  std::int32_t n = gomaxprocs.load();
  for (std::int32_t i = 0; i < n; i++) {
    if (allp[i]->timer0When.load(std::memory_order_acquire) != 0) return;
  }
  // Every goroutine with its frames, in goroutine order, as Go's fatal
  // (panic.go:1059) prints them (sched.lock is held: the dump takes no lock).
  fatal("all goroutines are asleep - deadlock!");
}

}  // namespace gort::runtime
