// runtime/traceback.cc: the goroutine dump (Go's traceback.go:
// goroutineheader, tracebackothers; signal_unix.go's SIGQUIT; and
// runtime.Stack), printed on SIGQUIT, on a fatal error as $GOTRACEBACK
// asks, and returned by gort::Stack.
//
// Design. A dump must read a parked goroutine's stack while nobody resumes
// it, and SIGQUIT can arrive at any instant on any thread, including one
// that holds a runtime lock or is half-way through a switch. So:
//
// - The signal handler does almost nothing (async-signal-safe): it sets a
//   flag and wakes a dedicated dumper thread (a plain thread, not an M)
//   with a futex. The dumper runs ordinary code: it may lock, allocate and
//   read debug information. Go instead dumps from the handler itself, which
//   its runtime makes safe; a C++ program's malloc and unwinder are not.
// - Instead of Go's full stop-the-world (which needs every running goroutine
//   to reach a safe point, and gort's preemption is cooperative) the dump
//   freezes only what it reads: dumpFreezing stops any G from becoming
//   _Grunning (execute's executeEnter/executeLeave handshake), so a G seen
//   _Gwaiting or _Grunnable keeps its stack and saved context until the dump
//   ends. Goroutines already running go on; their header says so and their
//   stack is reported unavailable, as Go does for a goroutine running on
//   another thread. Parking, readying and creating goroutines continue.
// - The stack is walked from the saved context by the platform unwinder
//   (runtime/os/traceback_*.cc), then named with debug information.
// - On a fatal error the dying thread may hold sched.lock or allglock, so
//   tracebackFatal takes no lock and waits for the freeze a bounded time.
//
// Format, as Go's: "goroutine N [wait reason, M minutes, locked to
// thread]:", frames innermost first ("function(args)" then "\tfile:line
// +0xoff"), then "created by function" and the line of the Go call. Runtime
// frames (gort::runtime, the closure glue) are hidden unless
// GOTRACEBACK=system or crash, or in a SIGQUIT dump, as in Go.
#include "traceback.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "gort/debug.h"
#include "gort/runtime.h"
#include "os/os.h"
#include "os/traceback_os.h"
#include "panic.h"
#include "proc.h"
#include "proflabel.h"

namespace gort::runtime {

std::atomic<bool> dumpFreezing{false};

namespace {

constexpr int kMaxFrames = 100;  // Go's _TracebackMaxFrames (runtime2.go:1032)
constexpr std::int64_t kMinute = 60'000'000'000;

mutex dumpLock;  // one dump at a time (not taken on fatal paths)

// How one dump prints.
struct Printer {
  bool showRuntime = false;
  std::int64_t now = 0;
  std::string out;
  std::unordered_map<std::uintptr_t, std::string> frames;  // pc -> text
  std::unordered_map<std::uintptr_t, std::string> creators;
};

void appendHex(std::string* s, std::uintptr_t v) {
  static const char kDigits[] = "0123456789abcdef";
  char buf[2 * sizeof(v) + 2];
  int i = sizeof(buf);
  do {
    buf[--i] = kDigits[v & 15];
    v >>= 4;
  } while (v != 0);
  buf[--i] = 'x';
  buf[--i] = '0';
  s->append(buf + i, sizeof(buf) - i);
}

bool startsWith(const std::string& s, const char* prefix) {
  return s.compare(0, std::strlen(prefix), prefix) == 0;
}

// isRuntimeFrame: frames Go would call runtime-internal (showframe).
bool isRuntimeFrame(const std::string& f) {
  return startsWith(f, "gort::runtime::") || startsWith(f, "gort::os::") ||
         startsWith(f, "gort::internal::") || startsWith(f, "gort::Stack[") ||
         startsWith(f, "gort::Stack(") || startsWith(f, "std::__invoke") ||
         startsWith(f, "std::invoke<") ||
         f.find("internal_any_invocable::") != std::string::npos ||
         // The closure glue; its demangled name starts with a return type.
         f.find("gort::internal::Func::") != std::string::npos ||
         startsWith(f, "gort_unwind_parked") ||
         startsWith(f, "jump_fcontext") || startsWith(f, "make_fcontext") ||
         startsWith(f, "gort_gogo") || startsWith(f, "gort_gostart") ||
         // Inlined frames carry DWARF's unqualified names.
         startsWith(f, "__invoke") || startsWith(f, "invoke<") ||
         startsWith(f, "InvokeR<") || startsWith(f, "LocalInvoker<") ||
         startsWith(f, "RemoteInvoker<") || f == "grun" || f == "gentry" ||
         f == "gbody" || f == "gbodyCatching" || f == "onTerminate" ||
         f == "tracebackSelf" || f == "mcall" || f == "gopark";
}

constexpr int kMaxInlined = 16;

// appendFrame appends one frame as Go prints it: "function\n\tfile:line
// +0xoff\n" (no offset for an inlined call).
void appendFrame(std::string* s, const os::Symbol& sym, std::uintptr_t pc) {
  // GCC's " [clone .cold]" (a function's split-off part) is the function.
  std::size_t clone = sym.function.find(" [clone ");
  *s += sym.function.empty() ? std::string("?") : sym.function.substr(0, clone);
  *s += "\n\t";
  if (!sym.file.empty()) {
    *s += sym.file;
    *s += ':';
    *s += std::to_string(sym.line);
  } else {
    *s += sym.module.empty() ? std::string("?") : sym.module;
  }
  if (sym.offset != 0) {
    *s += " +";
    appendHex(s, sym.offset);
  } else if (sym.file.empty()) {
    *s += " pc=";
    appendHex(s, pc);
  }
  *s += '\n';
}

// frameText: the frames at return address pc (inlined calls expanded),
// runtime frames left out unless shown; cached per dump.
const std::string& frameText(Printer* p, std::uintptr_t pc) {
  auto it = p->frames.find(pc);
  if (it != p->frames.end()) return it->second;
  std::string& s = p->frames[pc];
  os::Symbol syms[kMaxInlined];
  int n = os::symbolize(pc, syms, kMaxInlined);
  if (n == 0) appendFrame(&s, syms[0], pc);
  for (int i = 0; i < n; i++) {
    if (!p->showRuntime && isRuntimeFrame(syms[i].function)) continue;
    appendFrame(&s, syms[i], pc);
  }
  return s;
}

// framesAfterThrow: where a panicking goroutine's own frames start in pcs
// (the throw's caller): a goroutine that throws past gbody reaches
// std::terminate from the throw itself (gbody in gogo.cc), so the innermost
// frames are the terminate handler's and the C++ runtime's. 0 when no throw
// is on the stack (the exception was caught after unwinding).
int framesAfterThrow(const std::uintptr_t* pcs, int n) {
  os::Symbol syms[kMaxInlined];
  for (int i = 0; i < n; i++) {
    int k = os::symbolize(pcs[i], syms, kMaxInlined);
    for (int j = 0; j < k; j++) {
      const std::string& f = syms[j].function;
      if (f == "__cxa_throw" || f == "__cxa_rethrow" ||
          startsWith(f, "std::rethrow_exception")) {
        return i + 1;  // the throw's caller
      }
    }
  }
  return 0;
}

void printFrames(Printer* p, const std::uintptr_t* pcs, int n) {
  if (n < 0) {
    p->out += "\tstack unavailable on this target\n";
    return;
  }
  for (int i = 0; i < n; i++) p->out += frameText(p, pcs[i]);
  if (n == kMaxFrames) p->out += "...additional frames elided...\n";
}

// printCreatedBy mirrors Go's printcreatedby (traceback.go:780): the function
// that called Go (the innermost frame at the call that is not the runtime's).
void printCreatedBy(Printer* p, G* gp) {
  auto pc = reinterpret_cast<std::uintptr_t>(
      gp->gopc.load(std::memory_order_relaxed));
  if (pc == 0) return;
  auto it = p->creators.find(pc);
  if (it == p->creators.end()) {
    os::Symbol syms[kMaxInlined];
    int n = os::symbolize(pc, syms, kMaxInlined);
    int i = 0;
    while (i < n - 1 && isRuntimeFrame(syms[i].function)) i++;
    std::string s = "created by ";
    appendFrame(&s, syms[n > 0 ? i : 0], pc);
    it = p->creators.emplace(pc, std::move(s)).first;
  }
  p->out += it->second;
}

const char* statusString(std::uint32_t s) {
  switch (s) {
    case _Gidle:
      return "idle";
    case _Grunnable:
      return "runnable";
    case _Grunning:
      return "running";
    case _Gsyscall:
      return "syscall";
    case _Gwaiting:
      return "waiting";
    case _Gdead:
      return "dead";
  }
  return "???";
}

// goroutineheader mirrors Go's goroutineheader (traceback.go:1004). Fields
// other than goid and status are read only for a G that cannot run during the
// dump.
void goroutineheader(Printer* p, G* gp, std::uint32_t status, bool self) {
  p->out += "goroutine ";
  p->out += std::to_string(gp->goid.load(std::memory_order_relaxed));
  p->out += " [";
  bool stopped = status == _Gwaiting || status == _Grunnable;
  if (status == _Gwaiting && gp->waitreason != waitReason::zero) {
    p->out += waitReasonString(gp->waitreason);
  } else {
    p->out += statusString(status);
  }
  if (status == _Gwaiting && gp->waitsince != 0) {
    std::int64_t waited = (p->now - gp->waitsince) / kMinute;
    if (waited >= 1) {
      p->out += ", ";
      p->out += std::to_string(waited);
      p->out += waited == 1 ? " minute" : " minutes";
    }
  }
  if ((stopped || self) && gp->lockedm != nullptr) {
    p->out += ", locked to thread";
  }
  p->out += "]:\n";
}

// One goroutine as the frozen phase records it; printed after the thaw, so
// symbolizing (slow) does not keep goroutines from running.
struct Record {
  std::int64_t goid = 0;
  std::string header;
  int n = 0;  // frames in pcs; -1: this target cannot walk; -2: running
  std::uintptr_t pcs[kMaxFrames];
  G* gp = nullptr;
};

void printRecord(Printer* p, const Record& r) {
  p->out += '\n';
  p->out += r.header;
  if (r.n == -2) {
    p->out += "\tgoroutine running on other thread; stack unavailable\n";
  } else {
    printFrames(p, r.pcs, r.n);
  }
  printCreatedBy(p, r.gp);
}

// record1 records one goroutine that is not the caller; false if dead.
bool record1(Printer* p, G* gp, Record* r) {
  std::uint32_t status = readgstatus(gp);
  if (status == _Gdead || status == _Gidle) return false;
  Printer h;
  h.now = p->now;
  goroutineheader(&h, gp, status, false);
  r->header = std::move(h.out);
  r->goid = gp->goid.load(std::memory_order_relaxed);
  r->gp = gp;
  r->n = 0;
  if (status == _Gwaiting || status == _Grunnable) {
    if (gp->ctx != nullptr) {
      char* lo = static_cast<char*>(gp->stack.base) + gp->stack.guard;
      char* hi = static_cast<char*>(gp->stack.base) + gp->stack.size;
      r->n = os::tracebackParked(gp->ctx, lo, hi, r->pcs, kMaxFrames);
    }
  } else {
    r->n = -2;
  }
  return true;
}

// tracebackSelf prints the calling goroutine first, as Go's Stack
// (mprof.go:1193) and fatal tracebacks do.
void tracebackSelf(Printer* p, G* me) {
  goroutineheader(p, me, _Grunning, true);
  std::uintptr_t pcs[kMaxFrames];
  char* lo = static_cast<char*>(me->stack.base) + me->stack.guard;
  char* hi = static_cast<char*>(me->stack.base) + me->stack.size;
  printFrames(p, pcs, os::tracebackSelf(lo, hi, pcs, kMaxFrames));
  printCreatedBy(p, me);
}

// How a dump may lock: Stack locks; SIGQUIT tries for about a second, then
// reads without the lock (the process is ending, and the holder may never
// let go: a thread blocked for good, or a dump in progress); a fatal error
// never locks (the dying thread may hold the lock itself).
enum class LockMode { kLock, kTry, kNone };

bool acquire(mutex* l, LockMode mode) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (mode == LockMode::kLock) {
    lock(l);
    return true;
  }
  if (mode == LockMode::kNone) return false;
  for (int i = 0; i < 10000; i++) {
    std::uint32_t unlocked = 0;
    if (l->key.compare_exchange_strong(unlocked, 1,
                                       std::memory_order_acquire)) {
      return true;
    }
    os::usleep(100);
  }
  return false;
}

void release(mutex* l, bool held) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (held) unlock(l);
}

// freezetheworld mirrors Go's freezetheworld (proc.go:876) in purpose: no G
// starts running until thawtheworld. Waits for the Ms inside execute's window;
// except with kLock, gives up on one after about a second (a fatal error
// may have come from that very window).
void freezetheworld(LockMode mode) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  dumpFreezing.store(true, std::memory_order_seq_cst);
  // execute's half was a plain store and load: order them for it.
  if (fenceLight) {
    os::processFence(os::FenceFor::kDump);
  }
  G* g = getg();
  M* self = g != nullptr ? g->m : nullptr;
  bool held = acquire(&sched.lock, mode);
  for (M* mp = allm; mp != nullptr; mp = mp->alllink) {
    if (mp == self) continue;
    for (int i = 0; mp->executing.load(std::memory_order_seq_cst); i++) {
      if (mode != LockMode::kLock && i > 10000) break;
      os::usleep(100);
    }
  }
  release(&sched.lock, held);
}

void thawtheworld() { dumpFreezing.store(false, std::memory_order_seq_cst); }

// tracebackothers mirrors Go's tracebackothers (traceback.go:1041): every
// goroutine but me, walked frozen, printed after in goroutine order (Go's
// allgs is in creation order; gort's list is newest first); thaws unless the
// process is ending.
void tracebackothers(Printer* p, G* me,
                     LockMode mode) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  std::vector<Record> records;
  freezetheworld(mode);
  bool held = acquire(&allglock, mode);
  for (G* gp = allgs; gp != nullptr; gp = gp->alllink) {
    if (gp == me) continue;
    records.emplace_back();
    if (!record1(p, gp, &records.back())) records.pop_back();
  }
  release(&allglock, held);
  if (mode == LockMode::kLock) thawtheworld();
  std::sort(records.begin(), records.end(),
            [](const Record& a, const Record& b) { return a.goid < b.goid; });
  for (const Record& r : records) printRecord(p, r);
}

// The SIGQUIT path: the handler wakes the dumper thread.
std::atomic<std::uint32_t> quitPending{0};
os::Thread dumperThread;

void onQuit() {
  quitPending.store(1, std::memory_order_release);
  os::futexwakeup(reinterpret_cast<std::uint32_t*>(&quitPending), 1);
}

// dumpAndQuit mirrors the SIGQUIT case of Go's sighandler (signal_unix.go:608):
// print every goroutine (runtime frames included) and exit with status 2.
void dumpAndQuit() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  bool crash = false;
  int level = gotraceback(&crash);
  startpanic();
  printErr("SIGQUIT: quit\n");
  if (level > 0 && running.load()) {
    // Another dump (gort::Stack) may hold the lock: wait a while, then go on
    // without it, since the process ends anyway.
    acquire(&dumpLock, LockMode::kTry);
    Printer p;
    p.showRuntime = true;
    p.now = os::nanotime();
    tracebackothers(&p, nullptr, LockMode::kTry);
    if (!p.out.empty()) p.out.erase(0, 1);  // no blank line first
    os::writeErr(p.out.data(), p.out.size());
  }
  exitFatal();
}

void dumper(void*) {
  for (;;) {
    while (quitPending.load(std::memory_order_acquire) == 0) {
      os::futexsleep(reinterpret_cast<std::uint32_t*>(&quitPending), 0, -1);
    }
    dumpAndQuit();
  }
}

}  // namespace

void executeWaitThaw(M* mp) {
  while (dumpFreezing.load(std::memory_order_seq_cst)) {
    mp->executing.store(false, std::memory_order_seq_cst);
    while (dumpFreezing.load(std::memory_order_acquire)) os::usleep(100);
    mp->executing.store(true, std::memory_order_seq_cst);
  }
}

// gotraceback mirrors Go's gotraceback (runtime1.go:37) (setTraceback's
// spellings).
int gotraceback(bool* crash) {
  *crash = false;
  const char* tb = os::getenv("GOTRACEBACK");
  if (tb == nullptr || *tb == '\0' || std::strcmp(tb, "single") == 0) return 1;
  if (std::strcmp(tb, "none") == 0 || std::strcmp(tb, "0") == 0) return 0;
  if (std::strcmp(tb, "all") == 0 || std::strcmp(tb, "1") == 0) return 2;
  if (std::strcmp(tb, "system") == 0 || std::strcmp(tb, "2") == 0) return 3;
  if (std::strcmp(tb, "crash") == 0) {
    *crash = true;
    return 3;
  }
  return 1;
}

void tracebackFatal(throwType t) {
  bool crash = false;
  int level = gotraceback(&crash);
  if (level == 0 || !running.load()) return;
  G* me = getcurg();
  Printer p;
  p.showRuntime = level >= 3 || t == throwType::runtime;
  p.now = os::nanotime();
  if (me != nullptr) {
    // fatalpanic or throw_ has printed the header.
    std::uintptr_t pcs[kMaxFrames];
    char* lo = static_cast<char*>(me->stack.base) + me->stack.guard;
    char* hi = static_cast<char*>(me->stack.base) + me->stack.size;
    int n = os::tracebackSelf(lo, hi, pcs, kMaxFrames);
    int from = t == throwType::none ? framesAfterThrow(pcs, n) : 0;
    printFrames(&p, pcs + from, n - from);
    printCreatedBy(&p, me);
  }
  if (t != throwType::none || level >= 2) {
    tracebackothers(&p, me, LockMode::kNone);
  }
  os::writeErr(p.out.data(), p.out.size());
}

void initQuitHandler() {
  static bool done = false;
  if (done) return;
  done = true;
  if (!os::newosproc(dumper, nullptr, &dumperThread)) return;
  os::threaddetach(dumperThread);
  os::installQuitHandler(onQuit);
}

void goroutineStacks(
    std::vector<std::vector<std::uintptr_t>>* out,
    std::vector<std::vector<std::pair<std::string, std::string>>>* labels)
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  G* me = getcurg();
  std::uintptr_t pcs[kMaxFrames];
  // labelsOf: gp's labels, stable while it is parked (or is me).
  auto labelsOf = [labels](G* gp, bool stable) {
    if (labels == nullptr) return;
    labels->emplace_back();
    const labelMap* l = gp->labels.load(std::memory_order_relaxed);
    if (stable && l != nullptr) labels->back() = l->list;
  };
  if (me != nullptr) {
    char* lo = static_cast<char*>(me->stack.base) + me->stack.guard;
    char* hi = static_cast<char*>(me->stack.base) + me->stack.size;
    int n = os::tracebackSelf(lo, hi, pcs, kMaxFrames);
    out->emplace_back(pcs, pcs + (n > 0 ? n : 0));
    labelsOf(me, true);
  }
  Printer p;
  p.now = os::nanotime();
  lock(&dumpLock);
  freezetheworld(LockMode::kLock);
  lock(&allglock);
  Record r;
  for (G* gp = allgs; gp != nullptr; gp = gp->alllink) {
    if (gp == me || !record1(&p, gp, &r)) continue;
    out->emplace_back(r.pcs, r.pcs + (r.n > 0 ? r.n : 0));
    labelsOf(gp, r.n != -2);
  }
  unlock(&allglock);
  thawtheworld();
  unlock(&dumpLock);
}

int threadCount() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  lock(&sched.lock);
  int n = 0;
  for (M* mp = allm; mp != nullptr; mp = mp->alllink) n++;
  unlock(&sched.lock);
  return n;
}

}  // namespace gort::runtime

namespace gort {

using namespace gort::runtime;

std::string Stack(bool all) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (!running.load()) throw Panic("gort: Stack called outside gort::Run");
  G* me = getcurg();
  bool crash = false;
  Printer p;
  p.showRuntime = gotraceback(&crash) >= 3;
  p.now = os::nanotime();
  if (me != nullptr) tracebackSelf(&p, me);
  if (all) {
    lock(&dumpLock);
    tracebackothers(&p, me, LockMode::kLock);
    unlock(&dumpLock);
    if (me == nullptr && !p.out.empty()) p.out.erase(0, 1);  // leading \n
  }
  return p.out;
}

}  // namespace gort
