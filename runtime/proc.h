// runtime/proc.h: the scheduler's functions and globals, shared by the
// runtime's files (Go keeps these in one package; each is defined in the .cc
// file named beside it, which mirrors the Go file of the same name).
#ifndef GORT_RUNTIME_PROC_H_
#define GORT_RUNTIME_PROC_H_

#include <cstdint>
#include <string>

#include "runtime2.h"

namespace gort::runtime {

// gort's cap on Ps; Go 1.19 has none (its _MaxGomaxprocs went in Go 1.10).
inline constexpr int kMaxGomaxprocs = 256;
inline constexpr std::int64_t kForcePreemptNS = 10'000'000;  // 10 ms

// --- globals (proc.cc) ---
extern schedt sched;
extern P* allp[kMaxGomaxprocs];  // resized only with the world stopped
extern std::atomic<std::int32_t> gomaxprocs;
extern std::atomic<bool> running;  // between Run's start and its end
extern mutex allglock;
extern G* allgs ABSL_GUARDED_BY(allglock);
extern M* allm ABSL_GUARDED_BY(sched.lock);
extern std::size_t stackSizeSetting;
extern os::TimerMode timerMode;
extern gcountShard gcounts[kMaxGomaxprocs];  // by P id; zeroed per Run

// --- gogo.cc: switching stacks (Go's asm_amd64.s) ---
G* getg();
void setg(G* gp);
G* getcurg();  // the user goroutine on this thread, nullptr on g0 or outside
// g0 only: runs gp; once gp switches back, gogo's caller resumes and must
// call gogoback(its M, gp) before anything else
void gogo(G* gp);
void gogoback(M* mp, G* gp);
// mcall (goroutine only: switch to g0, run fn(curg)) is inline: park.h.
void gostart(G* gp);  // prepares gp's context to start at its body
void gentry();        // the bottom frame of every goroutine context
// goroutine only: run fn(arg) on g0 and come back, status untouched
void systemstack(void (*fn)(void*), void* arg);
void usleepOnG0(std::uint32_t usec);  // on a goroutine: usleep on g0

// goexitUnwind is thrown at a goroutine's park point when Run ends, so its
// stack unwinds and destructors run; gentry catches it. Not a std::exception.
struct goexitUnwind {};

// --- proc.cc: goroutines ---
G* newproc1(internal::Func fn, G* callergp, const void* gopc = nullptr);
// gopark and goparkunlock are inline: park.h.
void goready(G* gp);
void ready(G* gp, bool next);
void gosched();
void goyield();
void goschedIfPreempted();
void goexit1();
void schedule();
void execute(G* gp, bool inheritTime);
G* findRunnable(bool* inheritTime);
void resetStealOrder(std::uint32_t count);
// randomEnum mirrors Go's randomEnum (proc.go:6227): one walk over count Ps
// from pos, stepping by inc, which is coprime to count, so each P comes up
// once.
struct randomEnum {
  std::uint32_t i = 0;
  std::uint32_t count = 0;
  std::uint32_t pos = 0;
  std::uint32_t inc = 0;
  // Whether every P has come up.
  bool done() const { return i == count; }
  // Moves to the next P.
  void next() {
    i++;
    pos = (pos + inc) % count;
  }
  // The current P's index in allp.
  std::uint32_t position() const { return pos; }
};
// stealOrderStart mirrors Go's randomOrder.start (proc.go:6244): the walk for
// random value r over the count Ps of the last resetStealOrder.
randomEnum stealOrderStart(std::uint32_t r);
void resetspinning();
std::uint32_t fastrand();
std::uint32_t fastrandn(std::uint32_t n);
void casgstatus(G* gp, std::uint32_t oldval, std::uint32_t newval);
std::uint32_t readgstatus(G* gp);
// parkstamp: the time a goroutine parks, from sysmon's clock (proc.cc).
std::int64_t parkstamp();
sudog* newSudog();               // allocates one, counted
void freeSudog(sudog* s);        // deletes one, counted
std::int64_t sudogsAllocated();  // allocated and not deleted (tests)
sudog* acquireSudog();
sudog* acquireSudog(P* pp);  // pp: the calling goroutine's P
void releaseSudog(sudog* s);
void releaseSudog(sudog* s, P* pp);
void allgadd(G* gp);
std::int32_t gcount();
void gfput(P* pp, G* gp);
G* gfget(P* pp);
// gscavenge frees the Gs idle on the global free list for a whole
// GODEBUG=scavenge period, and their stacks (sysmon; gort's own).
void gscavenge(std::int64_t now);
void gfpurge(P* pp);

// --- proc_m.cc: Ms and Ps ---
void mstart(void* arg);
std::int64_t mReserveID() ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock);
M* newm(void (*fn)(), P* pp, bool spinning, std::int64_t id = -1);
M* allocm(void (*fn)(), P* pp, bool spinning, std::int64_t id = -1);
void newm1(M* mp);
void startm(P* pp, bool spinning);
void stopm();
void handoffp(P* pp);
void wakep();
void acquirep(P* pp);
P* releasep();
void pidleput(P* pp, std::int64_t now)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock);
P* pidleget(std::int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock);
P* pidlegetSpinning(std::int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock);
void raiseNeedspinning();
void becomeSpinning(M* mp);
void mput(M* mp) ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock);
M* mget() ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock);
void checkdead() ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock);
// incidlelocked mirrors Go's incidlelocked (proc.go:5005) (see retake).
void incidlelocked(std::int32_t v) ABSL_LOCKS_EXCLUDED(sched.lock);
void gcstopm();
[[noreturn]] void mexit(M* mp);
[[noreturn]] void parkForever();

// --- proc_lockosthread.cc: LockOSThread ---
void stoplockedm();
void startlockedm(G* gp);
[[noreturn]] void lockedexit(M* mp);
void wakeLockedMs() ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock);

// --- proc_schedtrace.cc: GODEBUG ---
struct dbgVars {
  int schedtrace = 0;    // ms between SCHED lines; 0 off
  int scheddetail = 0;   // 1: per-P, per-M, per-G lines too
  int blockwarn = 100;   // ms a goroutine may block its thread unwarned; 0 off
  int usleepdebug = 0;   // 1: report Ms that lose kHighRes (gort's own)
  int scavenge = 2000;   // ms a free G may idle before gscavenge frees it
                         // with its stack; 0 off (gort's own)
  int guardregions = 1;  // 0: stack guards by mprotect only (gort's own)
};
extern dbgVars debug;
void parsedebugvars();
void schedtrace(bool detailed);
const char* waitReasonString(waitReason r);

// --- proc_run.cc ---
// initialProcs: GOMAXPROCS at Run's start; *custom tells whether
// Options.maxprocs or $GOMAXPROCS chose it.
std::int32_t initialProcs(int maxprocs, bool verbose, bool* custom = nullptr);
// exitEvent wakes Run's thread waiting for the Ms to end: an M exited, or
// entered a syscall while the Run is exiting.
void exitEvent();

// --- proc_maxprocs.cc: the default GOMAXPROCS ---
// Set once GOMAXPROCS was chosen (Options, $GOMAXPROCS, GOMAXPROCS(n)):
// sysmon then leaves it alone.
extern std::atomic<bool> customGOMAXPROCS;
// adjustCgroupGOMAXPROCS mirrors Go's: procs capped by a cgroup limit (in
// CPUs; <= 0 none) rounded up, but never capped below 2.
std::int32_t adjustCgroupGOMAXPROCS(std::int32_t procs, double limit);
// defaultGOMAXPROCS mirrors Go's: the affinity's CPU count, adjusted for
// the cgroup limit (the cgroup found by maxprocsinit if cached).
std::int32_t defaultGOMAXPROCS(bool cached);
// maxprocsinit finds the cgroup at Run's start and records `custom`.
void maxprocsinit(bool custom);
// sysmonUpdateGOMAXPROCS mirrors Go's: about once a second, resize to
// defaultGOMAXPROCS if it changed and no custom value is set.
void sysmonUpdateGOMAXPROCS(std::int64_t now);
// cgroupRoot: where the cgroup files are read, "" for the real system
// (runtime/export_test.cc's setCgroupRootForTest points it elsewhere).
extern std::string cgroupRoot;
// setCgroupRootForTest makes the runtime read cgroup files under root. It
// is in runtime/export_test.cc, compiled into the tests only.
void setCgroupRootForTest(const char* root);

// --- proc_resize.cc: stop the world and resize ---
P* procresize(std::int32_t nprocs);
void stopTheWorld();
void startTheWorld(std::int32_t newprocs);

// --- proc_runq.cc: run queues ---
void runqput(P* pp, G* gp, bool next);
G* runqget(P* pp, bool* inheritTime);
G* runqgethead(P* pp);
bool runqempty(P* pp);
G* runqsteal(P* pp, P* p2, bool stealRunNextG);
void globrunqput(G* gp) ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock);
void globrunqputhead(G* gp) ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock);
void globrunqputbatch(G* head, G* tail, std::int32_t n)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock);
void globrunqputarray(G* const* gs, std::int32_t n)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock);
G* globrunqget(P* pp, std::int32_t max)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock);
void globrunqfree() ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock);
void runqdrain(P* pp) ABSL_EXCLUSIVE_LOCKS_REQUIRED(sched.lock);

// --- proc_syscall.cc (proc.go's syscall half) ---
void entersyscall();
void entersyscallblock();
void exitsyscall();

// --- proc_sysmon.cc ---
void sysmon();
void wakeSysmon();
void reportTimerFallbacks();

// --- time.cc: timers ---
void addtimer(timer* t);
bool deltimer(timer* t);
bool modtimer(timer* t, std::int64_t when, std::int64_t period);
std::int64_t whenAfter(std::int64_t ns);
std::int64_t checkTimers(P* pp, std::int64_t now, bool* ran);
std::int64_t nextTimerWhen();
void moveTimers(P* to, P* from);
void dropTimers(P* pp);
void wakeTimerSleeper(std::int64_t when);
std::int64_t timeSleepUntil();

// --- stack.cc ---
bool stackalloc(os::Stack* s, std::size_t size);
bool stacktake(P* pp, os::Stack* s);  // a dead G's stack from pp's free list
void stackcacheput(P* pp, os::Stack* s);  // park a dead G's stack on pp
void stackfree(os::Stack* s);
void stackrelease(os::Stack* s);  // an idle G's stack back to the OS
void stackfreeall(bool retain);
bool stackcanaryok(const os::Stack* s);  // no canary, or it is intact
void stackcheck(G* gp);  // g0, after gp switched out: fatal if it overflowed
[[noreturn]] void stackoverflow(
    G* gp);  // "fatal error: stack overflow", exit 2

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_PROC_H_
