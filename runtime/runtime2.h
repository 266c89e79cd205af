// runtime/runtime2.h: the scheduler's data structures (Go's runtime2.go).
//
// G is a goroutine: a stack, a saved context and a closure. M is an OS
// thread; its g0 is the thread's own stack, where the scheduler runs. P is a
// processor: the right to run Go code, with a local run queue, a free-G
// cache, a sudog cache and a timer heap. An M must hold a P to run a G;
// there are exactly GOMAXPROCS Ps. schedt holds what is global: idle Ms and
// Ps, the global run queue, the free-G list.
#ifndef GORT_RUNTIME_RUNTIME2_H_
#define GORT_RUNTIME_RUNTIME2_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "gort/runtime.h"
#include "lock.h"
#include "os/gogo_os.h"
#include "os/os.h"

namespace gort::internal {
struct hchan;
}  // namespace gort::internal

namespace gort::runtime {

struct G;
struct M;
struct P;
struct traceBuf;
struct labelMap;
using internal::hchan;

// G statuses (Go's _G* constants).
enum : std::uint32_t {
  _Gidle = 0,      // just allocated
  _Grunnable = 1,  // on a run queue
  _Grunning = 2,   // running on an M with a P
  _Gsyscall = 3,   // in a syscall, on an M, maybe without a P
  _Gwaiting = 4,   // parked (channel, sleep, semaphore)
  _Gdead = 6,      // finished, on a free list
};

// P statuses (Go's _P* constants).
enum : std::uint32_t {
  _Pidle = 0,
  _Prunning = 1,
  _Psyscall = 2,
  _Pgcstop = 3,  // stopped for stop-the-world (procresize)
  _Pdead = 4,
};

// Why a goroutine is parked (Go's waitReason (runtime2.go:1036)), for traces
// and deadlock reports.
enum class waitReason : std::uint8_t {
  zero,
  chanReceive,
  chanSend,
  chanReceiveNilChan,
  chanSendNilChan,
  select,
  selectNoCases,
  sleep,
  semacquire,
  syncMutexLock,
  syncWaitGroupWait,
  syncCondWait,
  syncRWMutexRLock,
  syncRWMutexLock,
  ioWait,  // netpollblock (Go's waitReasonIOWait (runtime2.go:1041))
};

// timer: a call of f(arg, seq) at `when` on a P's heap, repeated every
// `period` ns if period > 0 (Go's timer (time.go:18)). pp and idx say where it
// waits; instead of Go's status machine, deltimer and modtimer take the P's
// timersLock (and `lock` orders modifications of one timer).
struct timer {
  std::int64_t when = 0;    // under pp->timersLock while pending
  std::int64_t period = 0;  // > 0: re-armed after each call (a Ticker)
  void (*f)(void* arg, std::uintptr_t seq) = nullptr;
  void* arg = nullptr;
  std::uintptr_t seq = 0;
  // A timer with an owner (time.h's Timer and Ticker) is counted: the heap
  // holds a reference while the timer is pending and a call of f holds one
  // while it runs. Both nullptr for Sleep's timer, which lives in its G.
  void (*ref)(timer* t) = nullptr;
  void (*unref)(timer* t) = nullptr;
  std::atomic<P*> pp{nullptr};  // the P whose heap holds it; nullptr if none
  std::uint32_t idx = 0;        // index in pp's heap, under pp->timersLock
  mutex lock;                   // held by deltimer/modtimer callers
};

// sudog: a G waiting on a channel or semaphore, with the element it sends or
// the storage it receives into (Go's sudog (runtime2.go:348)).
struct sudog {
  G* g = nullptr;
  sudog* next = nullptr;
  sudog* prev = nullptr;
  void* elem = nullptr;       // data element (may point into the G's stack)
  std::uintptr_t ticket = 0;  // a Cond waiter's ticket (sema.cc)
  bool isSelect = false;
  bool success = false;       // for channels: woken by a value, not by close
  sudog* waitlink = nullptr;  // g.waiting list (select)
  hchan* c = nullptr;
  std::int64_t acquiretime = 0;  // semacquire1's start, for the mutex profile
};

// G mirrors Go's g (runtime2.go:407).
struct G {
  os::Context ctx = nullptr;  // saved context (os/gogo_os.h): the gobuf
  os::Stack stack;
  std::atomic<std::uint32_t> atomicstatus{_Gidle};
  std::atomic<std::int64_t> goid{0};  // atomic: sysmon may print it (blockwarn)
  M* m = nullptr;                     // M running this G, or nullptr
  G* schedlink = nullptr;             // run queue and free list link
  internal::Func fn;  // the goroutine body; empty once it has run
  std::atomic<bool> preempt{false};  // sysmon's request to yield
  waitReason waitreason = waitReason::zero;
  void* param = nullptr;     // wakeup parameter (select's winning sudog)
  sudog* waiting = nullptr;  // sudogs this G waits on (select)
  // The sudog of this G's plain send or receive (chan.cc's park), of which
  // it waits in one at a time; Go takes one from the P's cache instead.
  sudog chanWait;
  std::atomic<bool> selectDone{false};
  bool parkingOnChan = false;
  struct timer
      sleepTimer;  // the timer Sleep uses (Go's g.timer (runtime2.go:489))
  G* alllink = nullptr;   // allgs list
  G* allprev = nullptr;   // allgs list, backwards (the scavenger unlinks Gs)
  G* freeprev = nullptr;  // sched.gFree, backwards (the scavenger's end)
  // The C++ exception-handling state of this goroutine while it is switched
  // out (see gogo.cc); Go has no such thing.
  alignas(void*) unsigned char ehState[3 * sizeof(void*)] = {};
  bool unwinding = false;         // Run ended: unwind this stack (proc_run.cc)
  void* raceFiber = nullptr;      // ThreadSanitizer's fiber (race.h)
  void* asanFakeStack = nullptr;  // AddressSanitizer's switch state
  M* lockedm = nullptr;           // the M this G is wired to (LockOSThread)
  // Return address of the Go call that made it (atomic: a dump reads it
  // while the G may be recycled).
  std::atomic<const void*> gopc{nullptr};
  std::int64_t waitsince = 0;  // when it parked (parkstamp, traceback.cc)
  // A park the block profile measures (mprof.h): when it began and when the
  // goroutine was readied (Go keeps these in the sudog); 0 when not.
  std::int64_t blocktime = 0;
  std::int64_t releasetime = 0;
  // Profiler labels (Go's g.labels (runtime2.go:488)), counted (proflabel.h);
  // atomic: the SIGPROF handler reads it on the thread running the G.
  std::atomic<labelMap*> labels{nullptr};
};

// An M's syscall state, for Run's end (gort's own: Go's process exit never
// waits for threads blocked in syscalls; Run must, or abandon them).
enum class syscallStatus : std::uint8_t {
  running,    // not in a syscall
  inSyscall,  // between entersyscall and exitsyscall
  abandoned,  // in a syscall when Run ended: exitsyscall parks it forever
};

// M mirrors Go's m (runtime2.go:526).
struct M {
  G* g0 = nullptr;  // scheduling context on the thread's own stack
  std::atomic<G*> curg{
      nullptr};        // goroutine running on this M (sysmon reads it)
  P* p = nullptr;      // P held, or nullptr
  P* nextp = nullptr;  // P handed over by startm
  P* oldp = nullptr;   // P held before the syscall
  std::int64_t id = 0;
  bool spinning = false;  // looking for work
  bool blocked = false;   // parked on park
  note park;
  M* schedlink = nullptr;       // midle list
  M* alllink = nullptr;         // allm list
  G* (*mcallfn)(G*) = nullptr;  // what g0 runs after a goroutine switches out
  void (*systemstackfn)(void*) = nullptr;    // systemstack's function
  void* systemstackarg = nullptr;            // and its argument
  bool (*waitunlockf)(G*, void*) = nullptr;  // gopark's unlock function
  void* waitlock = nullptr;                  // and its argument
  void (*mstartfn)() = nullptr;              // sysmon's loop for the sysmon M
  std::uint32_t fastrand[2] = {0, 0};
  std::uint64_t syscalltick = 0;
  os::Thread thread;
  std::atomic<std::int64_t> tid{0};  // OS thread id, for sysmon's blockwarn
  // Whether the M is in a syscall, and whether Run's end abandoned it there.
  std::atomic<syscallStatus> syscallState{syscallStatus::running};
  std::atomic<bool> exited{false};  // its thread is done with the runtime
  void* ehGlobals = nullptr;  // the thread's C++ exception state (gogo.cc)
  // g0's own copy of that state while a goroutine runs (gogo/gogoback).
  alignas(void*) unsigned char g0ehState[3 * sizeof(void*)] = {};
  const void* g0StackLo = nullptr;  // g0's stack, for AddressSanitizer
  std::size_t g0StackSize = 0;
  traceBuf* tracebuf = nullptr;  // execution trace buffer (trace.cc)
  // The trace (traceSeq) its last record went to; 0 once it took or dropped
  // a P since (tracePChanged): then its next own event is recorded.
  std::uint32_t tracePSeq = 0;
  G* lockedg = nullptr;         // the G wired to this M (LockOSThread)
  std::uint32_t lockedExt = 0;  // LockOSThread nesting count
  // Under sched.lock: in stoplockedm, and whether its park note was already
  // woken (by startlockedm, or by Run's end), so only one wakes it.
  bool lockedIdle = false;
  bool lockedWoken = false;
  // Set around execute's status change, so a goroutine dump can stop Gs
  // from starting while it walks their stacks (traceback.cc).
  std::atomic<bool> executing{false};
};

inline constexpr int kRunqSize = 256;
inline constexpr int kSudogCacheSize = 128;
inline constexpr int kStackCacheSize = 16;
inline constexpr int kGFreeLocalMax = 64;

// P mirrors Go's p (runtime2.go:609).
struct P {
  std::int32_t id = 0;
  std::atomic<std::uint32_t> status{_Pidle};
  P* link = nullptr;                        // pidle list
  std::atomic<std::uint32_t> schedtick{0};  // incremented per schedule
  // Incremented per goroutine run, inherited time slice or not; the global
  // queue's fairness check counts these (Go has none: see findRunnable).
  std::uint32_t runtick = 0;
  std::atomic<std::uint32_t> syscalltick{0};  // incremented per syscall
  std::atomic<M*> m{nullptr};  // the M holding this P (sysmon reads it)

  // Go's sysmontick (proc.go:5280): what sysmon last saw of this P.
  std::uint32_t sysmonSchedtick = 0;
  std::int64_t sysmonSchedwhen = 0;
  std::uint32_t sysmonSyscalltick = 0;
  std::int64_t sysmonSyscallwhen = 0;
  // sysmon's blocked-thread check (GODEBUG=blockwarn; Go has none): the
  // schedtick and syscalltick it last saw, since when, on which M, and how
  // many samples in a row found the thread asleep in the kernel.
  std::uint64_t blockTicks = 0;
  std::int64_t blockWhen = 0;
  M* blockM = nullptr;
  G* blockG = nullptr;
  std::int64_t blockSampled = 0;
  int blockSamples = 0;
  bool blockWarned = false;

  std::uint64_t goidcache = 0;
  std::uint64_t goidcacheend = 0;

  // Local run queue: lock-free ring, written only by the owner at the tail,
  // consumed by owner and thieves at the head.
  std::atomic<std::uint32_t> runqhead{0};
  std::atomic<std::uint32_t> runqtail{0};
  std::atomic<G*> runq[kRunqSize];
  std::atomic<G*> runnext{nullptr};  // run next, inheriting the time slice

  // Free Gs with stacks (Go's p.gFree (runtime2.go:647)).
  G* gFree = nullptr;
  std::int32_t gFreeN = 0;

  // Stacks of dead Gs waiting for a G that starts without one (the part of
  // Go's per-P stackcache that gort needs; stack.cc).
  os::Stack stackcache[kStackCacheSize];
  std::int32_t nstackcache = 0;

  // sudog cache (Go's p.sudogcache (runtime2.go:652)).
  sudog* sudogcache[kSudogCacheSize];
  std::int32_t nsudog = 0;

  // Timer heap ordered by when (Go's p.timers (runtime2.go:732)).
  mutex timersLock;
  std::vector<timer*> timers ABSL_GUARDED_BY(timersLock);
  std::atomic<std::int64_t> timer0When{0};  // earliest when, 0 if none
};

// schedt mirrors Go's schedt (runtime2.go:767).
// gQueueChunk: a run of the global run queue's G pointers. Go links the
// queued Gs through g.schedlink; a chunk keeps the pointers together
// instead, so taking a batch reads one array rather than chasing a cache
// miss per G while holding sched.lock (proc_runq.cc).
inline constexpr int kGQueueChunkSize = 256;
struct gQueueChunk {
  gQueueChunk* next = nullptr;
  std::int32_t head = 0;  // slots [head, tail) are queued
  std::int32_t tail = 0;
  G* g[kGQueueChunkSize];
};

// sysmonClock: sysmon's last nanotime reading, republished when it is a
// millisecond old (so parks reading it seldom miss in the cache); 0 while
// sysmon sleeps on its note or has not run yet (gort's own: see parkstamp).
struct alignas(64) sysmonClock {
  std::atomic<std::int64_t> now{0};
};

struct schedt {
  std::atomic<std::uint64_t> goidgen{0};
  mutex lock;

  M* midle ABSL_GUARDED_BY(lock) = nullptr;
  std::int32_t nmidle ABSL_GUARDED_BY(lock) = 0;
  // Idle Ms locked to a G (stoplockedm), as in Go; retake also moves it
  // (below zero while it holds a P in limbo).
  std::int32_t nmidlelocked ABSL_GUARDED_BY(lock) = 0;
  std::int64_t mnext ABSL_GUARDED_BY(lock) = 0;  // ids; also Ms created
  std::int32_t nmsys ABSL_GUARDED_BY(lock) = 0;  // system Ms (sysmon)
  std::int32_t nmexited ABSL_GUARDED_BY(lock) = 0;

  P* pidle ABSL_GUARDED_BY(lock) = nullptr;
  std::atomic<std::int32_t> npidle{0};
  std::atomic<std::int32_t> nmspinning{0};
  // Set by a waker that found work but no idle P (wakep, without the lock;
  // pidlegetSpinning, under it): the next non-spinning M about to drop its P
  // spins instead (Go 1.20's sched.needspinning, the "delicate dance" in
  // findRunnable). Cleared by becomeSpinning.
  std::atomic<std::uint32_t> needspinning{0};

  // Global run queue, a list of chunks (proc_runq.cc), and spare chunks.
  gQueueChunk* runqhead ABSL_GUARDED_BY(lock) = nullptr;
  gQueueChunk* runqtail ABSL_GUARDED_BY(lock) = nullptr;
  gQueueChunk* runqfree ABSL_GUARDED_BY(lock) = nullptr;
  std::atomic<std::int32_t> runqsize{0};  // written under lock

  // Global free-G cache (Go's sched.gFree (runtime2.go:809)).
  mutex gFreeLock;
  G* gFree ABSL_GUARDED_BY(gFreeLock) = nullptr;
  G* gFreeTail ABSL_GUARDED_BY(gFreeLock) = nullptr;  // the longest idle
  std::atomic<std::int32_t> gFreeN{0};                // written under gFreeLock
  // The fewest Gs gFree held since the scavenger last looked: that many at
  // its bottom (gFree is LIFO) sat unused the whole time (gscavenge).
  std::int32_t gFreeLow ABSL_GUARDED_BY(gFreeLock) = 0;
  std::int64_t lastScavenge = 0;  // sysmon's: when gscavenge last looked

  // Global sudog cache (Go's sched.sudogcache (runtime2.go:818)).
  mutex sudoglock;
  sudog* sudogcache ABSL_GUARDED_BY(sudoglock) = nullptr;
  std::int32_t nsudogcache ABSL_GUARDED_BY(sudoglock) = 0;
  // sudogcache's low-water mark since the scavenger last looked (gFreeLow's
  // counterpart).
  std::int32_t sudogLow ABSL_GUARDED_BY(sudoglock) = 0;

  // Stop the world (procresize).
  std::atomic<bool> gcwaiting{false};
  std::int32_t stopwait ABSL_GUARDED_BY(lock) = 0;
  note stopnote;

  // sysmon.
  std::atomic<bool> sysmonwait{false};
  note sysmonnote;
  // sysmon's clock for parks' waitsince stamps (parkstamp), on its own line.
  sysmonClock sysmonclock;

  // The M sleeping until the next timer (Go uses netpoll for this).
  std::atomic<M*> timerSleeper{nullptr};
  std::atomic<std::int64_t> timerSleepUntil{0};

  // Run's lifetime.
  std::atomic<bool> exiting{false};
  note mainDone;
  std::atomic<std::uint32_t> exitEvents{0};  // futex word: see exitEvent

  // usleep fallbacks (os::timerFallbacks) at schedinit, and last reported.
  std::int64_t timerFallbacksBase = 0;
  std::int64_t timerFallbacksReported = 0;

  // Statistics.
  std::atomic<std::int64_t> steals{0};
  std::atomic<std::int64_t> stolen{0};
  std::atomic<std::int64_t> handoffs{0};
  std::atomic<std::int64_t> preemptRequests{0};
  std::atomic<std::int64_t> sysmonWakes{0};
  std::atomic<std::int64_t> blockWarnings{0};
  std::atomic<std::int64_t> gsFreed{0};         // idle Gs gscavenge freed
  std::atomic<std::int64_t> stacksReleased{0};  // and their stacks
  // Goroutines created by no P (Run's main); the rest are counted per P.
  std::atomic<std::uint64_t> gcreatedNoP{0};
};

// gcountShard: goroutines created and ended on one P, written only by the
// M holding it (gcount sums them). Go derives its count from the G free
// lists instead; a single counter shared by every P cost a cache-line
// transfer per goroutine created and per goroutine ended.
struct alignas(64) gcountShard {
  std::atomic<std::uint64_t> created{0};
  std::atomic<std::uint64_t> exited{0};
};

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_RUNTIME2_H_
