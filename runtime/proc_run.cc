// runtime/proc_run.cc: starting and ending a runtime (Go's proc.go schedinit
// and main, runtime1.go's environment parsing, and exit), plus the small
// exported functions (Gosched, NumGoroutine, Nanotime, statistics).
//
// Run is Go's process lifetime made repeatable: schedinit resets every
// global, the caller's thread waits while goroutine 1 runs, and when it
// returns every M is woken to exit and joined. Goroutines still parked are
// abandoned as Go's exit abandons them: taken off their channels and
// semaphores and freed, pending timers dropped. An M stuck in a syscall
// cannot be joined; it is left parked forever once its syscall returns,
// with its G kept, so nothing it touches is freed under it.
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "chan.h"
#include "cpuprof.h"
#include "gort/debug.h"
#include "gort/defer.h"
#include "gort/runtime.h"
#include "netpoll.h"
#include "os/netpoll_os.h"
#include "os/os.h"
#include "panic.h"
#include "proc.h"
#include "proflabel.h"
#include "race.h"
#include "trace.h"
#include "traceback.h"

namespace gort::runtime {

void clearSemaphores();  // sema.cc

namespace {

constexpr std::size_t kDefaultStackSize = 256 * 1024;
constexpr std::size_t kMinStackSize = 16 * 1024;
// Go's maxstacksize (stack.go:521): 1 GB on 64-bit targets, 250 MB on 32-bit
// ones, where a few 1 GiB stacks would not fit the address space.
constexpr std::size_t kMaxStackSize =
    sizeof(void*) >= 8 ? std::size_t{1} << 30 : std::size_t{1} << 28;

std::atomic<bool> runActive{false};
// Ms (and their Gs) left in syscalls by earlier Runs: kept reachable.
std::vector<M*> abandonedMs;

void warn(const std::string& msg) {
  std::string line = "gort: " + msg + "\n";
  os::writeErr(line.data(), line.size());
}

}  // namespace

// initialProcs reads Options.maxprocs, then $GOMAXPROCS, else takes the
// default, which respects CPU affinity and cgroup limits (Go's schedinit
// (proc.go:658)).
std::int32_t initialProcs(int maxprocs, bool verbose, bool* custom) {
  if (custom != nullptr) *custom = true;
  if (maxprocs > 0) {
    if (maxprocs > kMaxGomaxprocs) {
      if (verbose) {
        warn("Options.maxprocs=" + std::to_string(maxprocs) +
             " is above the limit; using " + std::to_string(kMaxGomaxprocs));
      }
      return kMaxGomaxprocs;
    }
    return maxprocs;
  }
  const char* env = os::getenv("GOMAXPROCS");
  if (env == nullptr) {
    if (custom != nullptr) *custom = false;
    return defaultGOMAXPROCS(false);
  }
  char* end = nullptr;
  errno = 0;
  long n = std::strtol(env, &end, 10);
  if (*env == '\0' || *end != '\0' || errno == ERANGE || n <= 0) {
    std::int32_t ncpu = defaultGOMAXPROCS(false);
    if (custom != nullptr) *custom = false;
    if (verbose) {
      warn("ignoring invalid GOMAXPROCS=\"" + std::string(env) +
           "\" (want a positive integer); using " + std::to_string(ncpu));
    }
    return ncpu;
  }
  if (n > kMaxGomaxprocs) {
    if (verbose) {
      warn("GOMAXPROCS=" + std::string(env) + " is above the limit; using " +
           std::to_string(kMaxGomaxprocs));
    }
    return kMaxGomaxprocs;
  }
  return static_cast<std::int32_t>(n);
}

namespace {

std::size_t stackSizeFor(std::size_t requested) {
  if (requested == 0) return kDefaultStackSize;
  std::size_t page = os::physPageSize();
  std::size_t size = requested;
  if (size < kMinStackSize) {
    warn("Options.stack_size=" + std::to_string(requested) +
         " is too small; using " + std::to_string(kMinStackSize));
    size = kMinStackSize;
  } else if (size > kMaxStackSize) {
    warn("Options.stack_size=" + std::to_string(requested) +
         " is too large; using " + std::to_string(kMaxStackSize));
    size = kMaxStackSize;
  }
  return (size + page - 1) / page * page;
}

// resetSched puts every scheduler global back to its zero state. sched is
// rebuilt from schedt's initialisers, not reset field by field, so a field
// added later cannot carry one Run's state into the next. Nothing runs
// between Runs (Run has joined or abandoned every M), and schedt holds no
// resources (static_assert below), so ending its lifetime frees nothing.
void resetSched() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  static_assert(std::is_trivially_destructible_v<schedt>,
                "schedt must hold no resources: resetSched re-creates it");
  std::destroy_at(&sched);
  std::construct_at(&sched);
  for (gcountShard& s : gcounts) {
    s.created.store(0, std::memory_order_relaxed);
    s.exited.store(0, std::memory_order_relaxed);
  }
  sched.timerFallbacksBase = os::timerFallbacks();
  gomaxprocs.store(0);
  allm = nullptr;
  allgs = nullptr;
}

// schedinit mirrors Go's schedinit (proc.go:658).
void schedinit(const Options& o) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  resetSched();
  initFaultHandler();
  initQuitHandler();
  initTerminateHandler();
  parsedebugvars();
  os::stackUseGuardRegions(debug.guardregions > 0);
  traceStartRun();
  stackSizeSetting = stackSizeFor(o.stack_size);
  bool high = o.usleep != UsleepMode::kLowRes && os::haveHighResTimer();
  if (o.usleep == UsleepMode::kHighRes && !high) {
    warn("high-resolution usleep is not available; using low resolution");
  }
  timerMode = high ? os::TimerMode::kHighRes : os::TimerMode::kLowRes;
  bool custom = false;
  std::int32_t procs = initialProcs(o.maxprocs, true, &custom);
  maxprocsinit(custom);
  lock(&sched.lock);
  procresize(procs);
  unlock(&sched.lock);
}

// wakeAllForExit wakes every M that sleeps so it can see sched.exiting;
// returns whether all Ms have exited or are abandoned in syscalls.
bool wakeAllForExit() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  lock(&sched.lock);
  while (M* mp = mget()) notewakeup(&mp->park);
  wakeLockedMs();
  if (sched.sysmonwait.load()) {
    sched.sysmonwait.store(false);
    notewakeup(&sched.sysmonnote);
  }
  bool done = true;
  for (M* mp = allm; mp != nullptr; mp = mp->alllink) {
    if (mp->exited.load(std::memory_order_acquire)) continue;
    syscallStatus in = syscallStatus::inSyscall;
    if (mp->syscallState.compare_exchange_strong(in,
                                                 syscallStatus::abandoned) ||
        in == syscallStatus::abandoned) {
      continue;
    }
    done = false;
  }
  unlock(&sched.lock);
  if (M* ts = sched.timerSleeper.exchange(nullptr)) notewakeup(&ts->park);
  netpollExitBreak();
  return done;
}

// abandonWaiters takes parked goroutines off the channels they wait on,
// and frees the sudogs of goroutines parked, or readied but never run, on
// a channel or a semaphore (each on its G's waiting list).
void abandonWaiters() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  for (G* gp = allgs; gp != nullptr; gp = gp->alllink) {
    std::uint32_t s = readgstatus(gp);
    if (s != _Gwaiting && s != _Grunnable) continue;
    for (sudog* sg = gp->waiting; sg != nullptr;) {
      sudog* next = sg->waitlink;
      if (sg->c != nullptr) chanAbandon(sg);
      if (sg != &gp->chanWait) freeSudog(sg);
      sg = next;
    }
    gp->waiting = nullptr;
  }
  clearSemaphores();
}

// freeAll releases the Gs, stacks, Ps, Ms and caches of the ended Run.
void freeAll() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  cpuprofRunEnd();  // before the Ms it samples go
  // Timers first: a Sleep timer lives inside its G.
  for (int i = 0; i < kMaxGomaxprocs; i++) {
    if (allp[i] != nullptr) dropTimers(allp[i]);
  }
  std::vector<G*> keep;
  for (M* mp = allm; mp != nullptr;) {
    M* next = mp->alllink;
    if (mp->syscallState.load() == syscallStatus::abandoned) {
      os::threaddetach(mp->thread);
      keep.push_back(mp->curg.load());
      abandonedMs.push_back(mp);
    } else {
      os::threadjoin(mp->thread);
      delete mp->g0;
      delete mp;
    }
    mp = next;
  }
  for (G* gp = allgs; gp != nullptr;) {
    G* next = gp->alllink;
    bool kept = false;
    for (G* k : keep) kept |= k == gp;
    if (!kept) {
      labelRelease(gp->labels.exchange(nullptr, std::memory_order_relaxed));
      stackfree(&gp->stack);
      racefree(gp);
      delete gp;
    }
    gp = next;
  }
  stackfreeall(!keep.empty());  // a kept G still runs on a slab
  for (int i = 0; i < kMaxGomaxprocs; i++) {
    P* pp = allp[i];
    if (pp == nullptr) continue;
    while (pp->nsudog > 0) freeSudog(pp->sudogcache[--pp->nsudog]);
    delete pp;
    allp[i] = nullptr;
  }
  globrunqfree();
  while (sudog* s = sched.sudogcache) {
    sched.sudogcache = s->next;
    freeSudog(s);
  }
}

// unwindAbandoned resumes each goroutine that was parked or runnable when
// main returned, on this thread acting as a temporary M, so that its park
// point throws goexitUnwind and its destructors run (C++ needs that where
// Go's exit needs nothing). A goroutine that parks again while unwinding
// is left as it is.
void unwindAbandoned() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  M um;
  G ug0;
  um.g0 = &ug0;
  ug0.m = &um;
  ug0.atomicstatus.store(_Grunning);
  um.p = allp[0];
  allp[0]->m.store(&um);
  setg(&ug0);
  raceminit(&um);
  for (G* gp = allgs; gp != nullptr; gp = gp->alllink) {
    std::uint32_t s = readgstatus(gp);
    if ((s != _Gwaiting && s != _Grunnable) || gp->ctx == nullptr) continue;
    gp->unwinding = true;
    gp->atomicstatus.store(_Grunning);
    gp->m = &um;
    um.curg.store(gp);
    gogo(gp);
    gogoback(&um, gp);
    um.curg.store(nullptr);
    um.mcallfn = nullptr;
    gp->m = nullptr;
    gp->unwinding = false;
    if (readgstatus(gp) == _Grunning) gp->atomicstatus.store(_Gwaiting);
  }
  setg(nullptr);
  allp[0]->m.store(nullptr);
}

}  // namespace

void exitEvent() {
  sched.exitEvents.fetch_add(1);
  os::futexwakeup(reinterpret_cast<std::uint32_t*>(&sched.exitEvents), 1);
}

// waitForMs blocks Run's thread until every M has exited or is abandoned in
// a syscall, woken by exitEvent rather than polling (a poll under Windows'
// default timer would cost 15.6 ms a round).
void waitForMs() {
  for (;;) {
    std::uint32_t seen = sched.exitEvents.load();
    if (wakeAllForExit()) return;
    os::futexsleep(reinterpret_cast<std::uint32_t*>(&sched.exitEvents), seen,
                   -1);
  }
}

// parkForever blocks an M abandoned in a syscall when its call returns.
void parkForever() {
  std::uint32_t never = 0;
  for (;;) os::futexsleep(&never, 0, -1);
}

}  // namespace gort::runtime

namespace gort {

using namespace gort::runtime;

void internal::RunMain(internal::Func main, const Options& options) {
  // Misuse panics, as Go called outside a Run does: nothing has changed yet,
  // so the caller may recover and go on.
  if (getg() != nullptr) throw Panic("gort: Run called inside gort::Run");
  bool idle = false;
  if (!runActive.compare_exchange_strong(idle, true)) {
    throw Panic("gort: Run called while another Run is in progress");
  }
  schedinit(options);
  G* mainG = newproc1(std::move(main), nullptr);
  lock(&sched.lock);
  globrunqput(mainG);
  unlock(&sched.lock);
  running.store(true);
  os::osRelax(false);  // work starts: the OS may raise its timer resolution
  // sysmon's M is made first, so nothing allocates once main runs, and
  // started last, so its first checkdead sees main's M running.
  M* sysmonM = allocm(sysmon, nullptr, false);
  startm(nullptr, false);
  newm1(sysmonM);

  notesleep(&sched.mainDone);
  waitForMs();
  abandonWaiters();
  unwindAbandoned();
  abandonWaiters();  // in case a destructor parked again
  freeAll();
  netpollRunEnd();
  reportTimerFallbacks();
  os::osRelax(true);  // nothing runs until the next Run
  traceEndRun();
  running.store(false);
  runActive.store(false);
}

void internal::NewProc(internal::Func fn) {
  NewProc(std::move(fn), __builtin_return_address(0));
}

void internal::NewProc(internal::Func fn, const void* pc) {
  G* gp = getcurg();
  if (gp == nullptr) {
    if (!running.load() || getg() != nullptr) {
      throw Panic("gort: Go called outside gort::Run");
    }
    // From a thread that is not the runtime's: queue globally.
    G* newg = newproc1(std::move(fn), nullptr, pc);
    lock(&sched.lock);
    globrunqput(newg);
    unlock(&sched.lock);
    wakep();
    return;
  }
  // A safe point, as the prologue of Go's newproc (proc.go:4094) is: without it
  // a chain of goroutines that each spawn the next and exit would inherit one
  // time slice forever (runnext) and starve every other goroutine on the P.
  goschedIfPreempted();
  G* newg = newproc1(std::move(fn), gp, pc);
  runqput(gp->m->p, newg, true);
  wakep();
}

void Gosched() {
  if (getcurg() == nullptr) {
    throw Panic("gort: Gosched called outside a goroutine");
  }
  gosched();
}

int NumGoroutine() { return gcount(); }

// Not in Go: whether unwindAbandoned is unwinding the calling goroutine.
bool internal::ExitUnwinding() {
  G* gp = getcurg();
  return gp != nullptr && gp->unwinding;
}

std::int64_t Nanotime() { return os::nanotime(); }

Stats ReadStats() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  Stats s;
  s.gomaxprocs = gomaxprocs.load();
  s.goroutines = gcount();
  lock(&sched.lock);
  s.threads = static_cast<int>(sched.mnext);
  unlock(&sched.lock);
  s.idle_ps = sched.npidle.load();
  s.spinning_ms = sched.nmspinning.load();
  s.steals = sched.steals.load();
  s.stolen = sched.stolen.load();
  s.handoffs = sched.handoffs.load();
  s.preempt_requests = sched.preemptRequests.load();
  s.sysmon_wakes = sched.sysmonWakes.load();
  s.block_warnings = sched.blockWarnings.load();
  s.free_gs = sched.gFreeN.load(std::memory_order_relaxed);
  s.gs_freed = sched.gsFreed.load();
  s.stacks_released = sched.stacksReleased.load();
  s.usleep_fallbacks =
      static_cast<int>(os::timerFallbacks() - sched.timerFallbacksBase);
  s.usleep = timerMode == os::TimerMode::kHighRes && s.usleep_fallbacks == 0
                 ? UsleepMode::kHighRes
                 : UsleepMode::kLowRes;
  if (netpollinited()) s.netpoll_highres = os::netpollHighResMethod();
  return s;
}

void debug::Usleep(std::uint32_t usec) {
  // Where the OS sleeps on the M's own state (Windows: its timer), usleep
  // runs on g0 (Go's systemstack (stubs.go:60)); elsewhere on any stack, as in
  // Go.
  if (os::usleepOnSystemStack() && runtime::getcurg() != nullptr) {
    runtime::usleepOnG0(usec);
    return;
  }
  os::usleep(usec);
}

}  // namespace gort
