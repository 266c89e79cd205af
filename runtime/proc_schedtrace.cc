// runtime/proc_schedtrace.cc: GODEBUG=schedtrace=X,scheddetail=1 (Go's
// proc.go schedtrace and runtime1.go's parsedebugvars, for those two keys).
//
// sysmon calls schedtrace every X milliseconds; the lines have Go's format,
// so tools and eyes trained on Go's output read them as they are. Fields
// gort has no counterpart for (mallocing, locks, lockedg, ...) print Go's
// idle values.
#include <cerrno>
#include <cstdlib>
#include <string>

#include "os/os.h"
#include "panic.h"
#include "proc.h"
#include "race.h"

namespace gort::runtime {

dbgVars debug;

namespace {
std::int64_t starttime = 0;

void warnGodebug(const std::string& msg) {
  std::string line = "gort: GODEBUG: " + msg + "\n";
  os::writeErr(line.data(), line.size());
}

void setDebugVar(const std::string& key, const std::string& value) {
  int* dst = nullptr;
  if (key == "schedtrace") dst = &debug.schedtrace;
  if (key == "scheddetail") dst = &debug.scheddetail;
  if (key == "blockwarn") dst = &debug.blockwarn;
  if (key == "usleepdebug") dst = &debug.usleepdebug;
  if (key == "scavenge") dst = &debug.scavenge;
  if (key == "guardregions") dst = &debug.guardregions;
  if (dst == nullptr) {
    warnGodebug("unknown key \"" + key + "\" ignored");
    return;
  }
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno == ERANGE || v < 0 ||
      v > 1000000000) {
    warnGodebug("bad value \"" + value + "\" for " + key + " ignored");
    return;
  }
  *dst = static_cast<int>(v);
}
}  // namespace

const char* waitReasonString(waitReason r) {
  switch (r) {
    case waitReason::zero:
      return "";
    case waitReason::chanReceive:
      return "chan receive";
    case waitReason::chanSend:
      return "chan send";
    case waitReason::chanReceiveNilChan:
      return "chan receive (nil chan)";
    case waitReason::chanSendNilChan:
      return "chan send (nil chan)";
    case waitReason::select:
      return "select";
    case waitReason::selectNoCases:
      return "select (no cases)";
    case waitReason::sleep:
      return "sleep";
    case waitReason::semacquire:
      return "semacquire";
    case waitReason::syncMutexLock:
      return "sync.Mutex.Lock";
    case waitReason::syncWaitGroupWait:
      return "sync.WaitGroup.Wait";
    case waitReason::syncCondWait:
      return "sync.Cond.Wait";
    case waitReason::syncRWMutexRLock:
      return "sync.RWMutex.RLock";
    case waitReason::syncRWMutexLock:
      return "sync.RWMutex.Lock";
    case waitReason::ioWait:
      return "IO wait";
  }
  return "?";
}

// parsedebugvars mirrors Go's parsedebugvars (runtime1.go:358) for gort's keys:
// reads $GODEBUG at each Run.
void parsedebugvars() {
  debug = dbgVars{};
#ifdef GORT_TSAN
  // ThreadSanitizer's runtime blocks threads on its own locks (for tens to
  // hundreds of ms on a loaded machine), which sysmon cannot tell from a
  // goroutine blocking its thread: off unless GODEBUG asks for it.
  debug.blockwarn = 0;
#endif
  starttime = 0;
  const char* env = os::getenv("GODEBUG");
  if (env == nullptr) return;
  std::string s(env);
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    std::string field = s.substr(pos, comma - pos);
    pos = comma + 1;
    if (field.empty()) continue;
    std::size_t eq = field.find('=');
    if (eq == std::string::npos) {
      warnGodebug("malformed setting \"" + field + "\" ignored");
      continue;
    }
    setDebugVar(field.substr(0, eq), field.substr(eq + 1));
  }
}

// schedtrace mirrors Go's schedtrace (proc.go:5417).
void schedtrace(bool detailed) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  std::int64_t now = os::nanotime();
  if (starttime == 0) starttime = now;
  std::string out;
  auto num = [&](std::int64_t v) { out += std::to_string(v); };
  lock(&sched.lock);
  out += "SCHED ";
  num((now - starttime) / 1000000);
  out += "ms: gomaxprocs=";
  num(gomaxprocs.load());
  out += " idleprocs=";
  num(sched.npidle.load());
  out += " threads=";
  num(sched.mnext);
  out += " spinningthreads=";
  num(sched.nmspinning.load());
  out += " idlethreads=";
  num(sched.nmidle);
  // gort's own: dead Gs kept for reuse on the global list, and the idle
  // ones (with their stacks) the scavenger gave back so far.
  out += " gfree=";
  num(sched.gFreeN.load(std::memory_order_relaxed));
  out += " stacksreleased=";
  num(sched.stacksReleased.load(std::memory_order_relaxed));
  out += " runqueue=";
  num(sched.runqsize.load());
  if (detailed) {
    out += " gcwaiting=";
    num(sched.gcwaiting.load());
    out += " nmidlelocked=";
    num(sched.nmidlelocked);
    out += " stopwait=";
    num(sched.stopwait);
    out += " sysmonwait=";
    num(sched.sysmonwait.load());
    out += "\n";
  }
  std::int32_t n = gomaxprocs.load();
  for (std::int32_t i = 0; i < n; i++) {
    P* pp = allp[i];
    M* mp = pp->m.load(std::memory_order_relaxed);
    std::uint32_t h = pp->runqhead.load();
    std::uint32_t t = pp->runqtail.load();
    if (detailed) {
      out += "  P";
      num(i);
      out += ": status=";
      num(pp->status.load());
      out += " schedtick=";
      num(pp->schedtick.load());
      out += " syscalltick=";
      num(pp->syscalltick.load());
      out += " m=";
      num(mp != nullptr ? mp->id : -1);
      out += " runqsize=";
      num(t - h);
      out += " gfreecnt=";
      num(pp->gFreeN);
      out += " timerslen=";
      lock(&pp->timersLock);
      num(static_cast<std::int64_t>(pp->timers.size()));
      unlock(&pp->timersLock);
      out += "\n";
    } else {
      out += i == 0 ? " [" : " ";
      num(t - h);
      if (i == n - 1) out += "]\n";
    }
  }
  if (detailed) {
    for (M* mp = allm; mp != nullptr; mp = mp->alllink) {
      P* pp = mp->p;
      G* gp = mp->curg.load(std::memory_order_relaxed);
      out += "  M";
      num(mp->id);
      out += ": p=";
      num(pp != nullptr ? pp->id : -1);
      out += " curg=";
      num(gp != nullptr ? gp->goid.load(std::memory_order_relaxed) : -1);
      out += " mallocing=0 throwing=0 preemptoff= locks=0 dying=0 spinning=";
      out += mp->spinning ? "true" : "false";
      out += " blocked=";
      out += mp->blocked ? "true" : "false";
      out += " lockedg=-1\n";
    }
    lock(&allglock);
    for (G* gp = allgs; gp != nullptr; gp = gp->alllink) {
      M* mp = gp->m;
      out += "  G";
      num(gp->goid.load(std::memory_order_relaxed));
      out += ": status=";
      num(readgstatus(gp));
      out += "(";
      out += waitReasonString(gp->waitreason);
      out += ") m=";
      num(mp != nullptr ? mp->id : -1);
      out += " lockedm=-1\n";
    }
    unlock(&allglock);
  }
  unlock(&sched.lock);
  os::writeErr(out.data(), out.size());
}

}  // namespace gort::runtime
