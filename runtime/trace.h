// runtime/trace.h: the execution tracer's hooks (Go's trace.go, in spirit:
// traceGoCreate, traceGoStart, traceGoPark, traceGoUnpark, ...).
//
// Each hook is one line at its event site in the scheduler. Off, a hook
// costs one relaxed load and a branch (traceEnabled()); on, it appends a
// fixed-size record to the calling M's own buffer (trace.cc), so the hot
// path takes no global lock and allocates only when a chunk of records
// fills. Events Go's trace carries a stack with (create, block, unblock,
// yield, syscall) walk the goroutine's return addresses (only while a trace
// in Go's format runs) and store their id in the trace's stack table
// (trace_stack.h), as Go's traceStackID (trace.go:784) does. When the trace
// stops, trace_go.cc writes the records and the table in the execution-trace
// format of Go 1.19, or trace_json.cc the records as Chrome trace event JSON.
#ifndef GORT_RUNTIME_TRACE_H_
#define GORT_RUNTIME_TRACE_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "os/os.h"
#include "runtime2.h"
#include "trace_stack.h"

namespace gort::runtime {

// traceEv: the kinds of event recorded (Go's traceEv* constants, fewer).
enum class traceEv : std::uint8_t {
  GoCreate,      // g created; a0 = creator goid (0: outside a goroutine)
  GoStart,       // g starts running on this M and P
  GoBlock,       // g parks; reason = waitReason
  GoUnblock,     // g made runnable; a0 = goid of the waker (0: runtime)
  GoSched,       // g yields (Gosched) and goes to the global queue
  GoPreempt,     // g yields at sysmon's request
  GoEnd,         // g finished
  GoSysCall,     // g enters a syscall; a0 = 1 if the P is handed off at once
  GoSysExit,     // g leaves it; a0 = 1 fast (has a P, runs on), 0 queued
  ProcRetake,    // sysmon took P a0 from a syscall (handoffp)
  PreemptReq,    // sysmon asked the goroutine running on P a0 to yield
  Steal,         // this P stole a1 goroutines from P a0
  MPark,         // this M parks (stopm, or sleeps for timers)
  MUnpark,       // this M wakes up
  Usleep,        // usleep(a0 us) took a1 (ticks, then ns); event time: start
  Gomaxprocs,    // GOMAXPROCS changes from a1 to a0
  NetpollBlock,  // this M blocks in netpoll for a0 ns (-1: no timeout)
  NetpollWake,   // netpoll returned a0 ready goroutines (a1 = 1: blocking)
  SpinStart,     // this M starts spinning; a0 = traceSpinHow
  SpinStop,      // this M stops spinning; a0 = traceSpinWhy
  Count,
};

// traceRecord: one event as stored in a buffer.
struct traceRecord {
  std::int64_t ts;  // cputicks; nanotime once StopTrace has converted it
  std::int64_t g;   // goid, or 0
  std::int64_t a0;
  std::int64_t a1;
  std::int32_t m;  // M id, -1 outside the runtime's threads
  std::int16_t p;  // P id, -1 without a P
  traceEv ev;
  std::uint8_t reason;  // waitReason for GoBlock
  std::uint32_t stk;    // id in the trace's traceStackTable (0: no stack)
};

// traceStk: whose stack an event records.
enum class traceStk : std::uint8_t {
  none,
  self,    // the calling goroutine's own (skipped on g0)
  parked,  // the goroutine passed, switched out (its saved context)
};

extern std::atomic<bool> traceOn;
extern std::atomic<bool> traceWalkStacks;  // the trace running is Go's format

// traceEnabled is the only cost of a hook while no trace runs.
inline bool traceEnabled() { return traceOn.load(std::memory_order_relaxed); }
// traceGoFormat: the trace running is written in Go's format (and its events
// walk their stacks); the JSON export records gort's own events too.
inline bool traceGoFormat() {
  return traceWalkStacks.load(std::memory_order_relaxed);
}

// traceEvent records ev on the calling thread's M buffer (or, off the
// runtime's threads, on a shared buffer under a lock).
void traceEvent(traceEv ev, std::int64_t g, std::int64_t a0 = 0,
                std::int64_t a1 = 0, std::uint8_t reason = 0);
// traceOwnEvent records one of gort's own events (Go's format has none of
// them: spinning, M park and unpark, usleep, netpoll, steal, preemption
// request). The JSON export draws them; a trace in Go's format records one
// only when it is the first record of the calling M since the M took or
// dropped a P, which is all the writer reads from it (trace_go.cc's handle),
// so the file is the same and a record is saved (20-50 ns in place, on the
// scheduler's own path; docs/notes/trace-cost-records.md).
void traceOwnEvent(traceEv ev, std::int64_t a0 = 0, std::int64_t a1 = 0);
// traceOwnSkip: traceOwnEvent would not record now.
bool traceOwnSkip();
// kTraceShadow: the reason of an own event recorded only because a test asked
// for the skipped ones too (traceCapture::shadow).
constexpr std::uint8_t kTraceShadow = 0xff;

// traceCapture: for tests (export_test.cc), what StopTrace last turned into a
// file: the records (stamps in nanotime, in buffer order), the stacks, the span
// and GOMAXPROCS; with shadow set, own events traceOwnSkip skips are
// recorded as well, with reason kTraceShadow.
struct traceCapture {
  std::vector<traceRecord> recs;
  traceStacks stacks;
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int32_t procs = 0;
  bool shadow = false;
};
extern std::atomic<traceCapture*> traceCaptureForTest;

// traceGo writes recs (sorted by time first) and their stacks in Go 1.19's
// execution-trace format (trace_go.cc).
std::string traceGo(std::vector<traceRecord>& recs, const traceStacks& stacks,
                    std::int64_t start, std::int64_t end, std::int32_t procs);
// tracePChanged: the calling M took or dropped a P (acquirep, releasep), so
// its next own event tells the writer something. entersyscall drops its P
// without either, but the M's next record is then exitsyscall's: GoSysExit
// (no P), or one after acquirep.
inline void tracePChanged(M* mp) { mp->tracePSeq = 0; }
// traceEventStack is traceEvent with a stack (how; gp for traceStk::parked).
void traceEventStack(traceEv ev, std::int64_t g, traceStk how, G* gp,
                     std::int64_t a0 = 0, std::int64_t a1 = 0,
                     std::uint8_t reason = 0);
std::int64_t traceCurGoid();  // goid running on this thread, 0 on g0
void traceUsleepSlow(std::uint32_t usec);
void traceUsleepFlush();  // record the thread's last usleep now
void traceStartRun();     // schedinit: honour $GORT_TRACE
void traceEndRun();       // end of Run: write $GORT_TRACE, release buffers

// traceGoCreate mirrors Go's traceGoCreate (trace.go:1251).
inline void traceGoCreate(G* newg, G* caller) {
  if (traceEnabled()) {
    traceEventStack(traceEv::GoCreate, newg->goid, traceStk::self, nullptr,
                    caller ? caller->goid.load(std::memory_order_relaxed) : 0,
                    static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(
                        newg->gopc.load(std::memory_order_relaxed))));
  }
}
// traceGoStart mirrors Go's traceGoStart (trace.go:1259).
inline void traceGoStart(G* gp) {
  if (traceEnabled()) traceEvent(traceEv::GoStart, gp->goid);
}
// traceGoPark mirrors Go's traceGoPark (trace.go:1289): gp parks for
// gp->waitreason.
inline void traceGoPark(G* gp) {
  if (traceEnabled()) {
    traceEventStack(traceEv::GoBlock, gp->goid, traceStk::parked, gp, 0, 0,
                    static_cast<std::uint8_t>(gp->waitreason));
  }
}
// traceGoUnpark mirrors Go's traceGoUnpark (trace.go:1296): the caller readies
// gp.
inline void traceGoUnpark(G* gp) {
  if (traceEnabled()) {
    traceEventStack(traceEv::GoUnblock, gp->goid, traceStk::self, nullptr,
                    traceCurGoid());
  }
}
// traceGoSched mirrors Go's traceGoSched (trace.go:1277).
inline void traceGoSched(G* gp) {
  if (traceEnabled()) {
    traceEventStack(traceEv::GoSched, gp->goid, traceStk::parked, gp);
  }
}
// traceGoPreempt mirrors Go's traceGoPreempt (trace.go:1283); how: parked
// on g0 (gp switched out), self on gp.
inline void traceGoPreempt(G* gp, traceStk how = traceStk::parked) {
  if (traceEnabled()) traceEventStack(traceEv::GoPreempt, gp->goid, how, gp);
}
// traceGoEnd mirrors Go's traceGoEnd (trace.go:1273).
inline void traceGoEnd(G* gp) {
  if (traceEnabled()) traceEvent(traceEv::GoEnd, gp->goid);
}
// traceGoSysCall mirrors Go's traceGoSysCall (trace.go:1307); block:
// entersyscallblock.
inline void traceGoSysCall(G* gp, bool block) {
  if (traceEnabled()) {
    traceEventStack(traceEv::GoSysCall, gp->goid, traceStk::self, nullptr,
                    block ? 1 : 0);
  }
}
// traceStamp: when an event happened and on which P, taken where it happens
// and recorded a little later (on: a trace ran when it was taken).
struct traceStamp {
  bool on = false;
  std::int64_t ts = 0;
  std::int16_t p = -1;
};
// traceStampNow: the stamp of an event happening now on pp.
inline traceStamp traceStampNow(P* pp) {
  if (!traceEnabled()) return {};
  return {true, os::cputicks(), static_cast<std::int16_t>(pp->id)};
}
void traceGoSysCallAtSlow(G* gp, const traceStamp& at);
// traceGoSysCallAt is traceGoSysCall for entersyscall, stamped (at) while
// the goroutine still held its P and written once the P is _Psyscall: the
// walk and the record then lengthen no window in which sysmon finds the P
// running and flags its goroutine (docs/notes/trace-cost.md). The file is the
// same as if it were written at the stamp.
inline void traceGoSysCallAt(G* gp, const traceStamp& at) {
  if (at.on) traceGoSysCallAtSlow(gp, at);
}
// tracePrefetch: the calling M, just back from a sleep (possibly on another
// CPU), is about to take a P and record an event: start loading the lines
// that record will write, so the misses overlap the P's own rather than
// lengthen the time the P is running.
void tracePrefetchSlow(M* mp);
inline void tracePrefetch(M* mp) {
  if (traceEnabled()) tracePrefetchSlow(mp);
}
// traceGoSysExit mirrors Go's traceGoSysExit (trace.go:1311); fast: gp kept
// running; kept: on the P it entered the call with, never retaken, which
// Go's format does not record (Go's exitsyscall (proc.go:3773) traces nothing
// then either), so only the JSON export, which draws the call's length, pays
// for the record.
inline void traceGoSysExit(G* gp, bool fast, bool kept = false) {
  if (traceEnabled() && !(kept && traceGoFormat())) {
    traceEvent(traceEv::GoSysExit, gp->goid, fast ? 1 : 0);
  }
}
// traceProcRetake: sysmon retook pp from a syscall (Go's traceGoSysBlock
// (trace.go:1330) and traceProcStop, seen from sysmon).
inline void traceProcRetake(P* pp) {
  if (traceEnabled()) traceEvent(traceEv::ProcRetake, 0, pp->id);
}
// tracePreemptReq: sysmon flagged the goroutine running on pp to yield (its
// goid is not read here: that G may be exiting and reused meanwhile; it
// records GoPreempt itself when it yields).
inline void tracePreemptReq(P* pp) {
  if (traceEnabled()) traceOwnEvent(traceEv::PreemptReq, pp->id);
}
// traceSteal: runqsteal took n goroutines from victim.
inline void traceSteal(P* victim, std::uint32_t n) {
  if (traceEnabled()) traceOwnEvent(traceEv::Steal, victim->id, n);
}
// traceMPark / traceMUnpark: the calling M sleeps on its note / wakes.
inline void traceMPark() {
  if (traceEnabled()) traceOwnEvent(traceEv::MPark);
}
inline void traceMUnpark() {
  if (traceEnabled()) traceOwnEvent(traceEv::MUnpark);
}
// traceGomaxprocs mirrors Go's traceGomaxprocs (trace.go:1167).
inline void traceGomaxprocs(std::int32_t now, std::int32_t old) {
  if (traceEnabled()) traceEvent(traceEv::Gomaxprocs, 0, now, old);
}
// traceNetpollBlock: this M is about to wait in the poller (delay ns).
inline void traceNetpollBlock(std::int64_t delay) {
  if (traceEnabled()) traceOwnEvent(traceEv::NetpollBlock, delay);
}
// traceNetpollWake: netpoll readied the goroutines of list (schedlink).
inline void traceNetpollWake(G* list) {
  if (traceEnabled()) {
    std::int64_t n = 0;
    for (G* gp = list; gp != nullptr; gp = gp->schedlink) n++;
    traceOwnEvent(traceEv::NetpollWake, n);
  }
}
// How an M came to spin (SpinStart's a0) and why it stopped (SpinStop's).
enum traceSpinHow : std::int64_t { kSpinSelf = 0, kSpinWoken = 1 };
enum traceSpinWhy : std::int64_t {
  kSpinFoundWork = 0,  // resetspinning: findRunnable returned a goroutine
  kSpinGaveUp = 1,     // findRunnable gave up its P to park
  kSpinGCStop = 2,     // gcstopm: the world stops
};
// traceSpinStart: this M starts looking for work to steal (gort's; Go's
// trace has no spinning event).
inline void traceSpinStart(traceSpinHow how) {
  if (traceEnabled()) traceOwnEvent(traceEv::SpinStart, how);
}
// traceSpinStop: this M stops spinning.
inline void traceSpinStop(traceSpinWhy why) {
  if (traceEnabled()) traceOwnEvent(traceEv::SpinStop, why);
}
// traceSysmonIdle: sysmon is about to sleep on its note; its last usleep is
// recorded now rather than before its next one (traceUsleepSlow).
inline void traceSysmonIdle() {
  if (traceEnabled()) traceUsleepFlush();
}
void traceRefillPool();
std::int64_t tracePoolChunks();  // chunks ready in the pool (for tests)
// traceSysmonRefill: sysmon keeps the trace's chunk pool topped up (gort's;
// Go allocates a trace buffer where it fills, on the goroutine's path).
inline void traceSysmonRefill() {
  if (traceEnabled()) traceRefillPool();
}
// tracedUsleep is os::usleep, timed and recorded while a trace runs.
inline void tracedUsleep(std::uint32_t usec) {
  if (traceEnabled()) {
    traceUsleepSlow(usec);
  } else {
    os::usleep(usec);
  }
}

}  // namespace gort::runtime

#endif  // GORT_RUNTIME_TRACE_H_
