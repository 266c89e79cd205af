// runtime/panic.cc: the process-ending paths (Go's throw (panic.go:1040) and
// fatalpanic). Output goes straight to file descriptor 2 without allocating,
// because these run on broken state: a corrupt scheduler, or a goroutine stack.
#include "panic.h"

#include <cstring>
#include <string>

#include "lock.h"
#include "os/os.h"
#include "proc.h"
#include "race.h"
#include "traceback.h"

namespace gort::runtime {

void printErr(const char* s) { os::writeErr(s, std::strlen(s)); }

void printErrInt(std::int64_t v) {
  char buf[24];
  int i = sizeof(buf);
  bool neg = v < 0;
  std::uint64_t u = neg ? 0 - static_cast<std::uint64_t>(v) : v;
  do {
    buf[--i] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (neg) buf[--i] = '-';
  os::writeErr(buf + i, sizeof(buf) - i);
}

void sigstackoverflow(void* addr, void* sp) {
  G* gp = getg();
  if (gp == nullptr || gp->m == nullptr || gp == gp->m->g0) return;
  char* lo = static_cast<char*>(gp->stack.base);
  if (lo == nullptr) return;
  char* a = static_cast<char*>(addr);
  // A fault in the guard page; or, on a stack without one, a broken canary
  // or a stack pointer below the limit: the goroutine ran off its stack
  // through the memory below before it hit something unmapped.
  bool inGuard = a >= lo && a < lo + gp->stack.guard;
  bool belowLimit = sp != nullptr && gp->stack.canary != nullptr &&
                    static_cast<char*>(sp) < lo;
  if (!inGuard && !belowLimit && stackcanaryok(&gp->stack)) return;
  stackoverflow(gp);
}

void minitSignalStack() {
#if !defined(GORT_ASAN) && !defined(GORT_TSAN)
  os::minitSignalStack();
#endif
}

void unminitSignalStack() {
#if !defined(GORT_ASAN) && !defined(GORT_TSAN)
  os::unminitSignalStack();
#endif
}

void initFaultHandler() {
#if !defined(GORT_ASAN) && !defined(GORT_TSAN)
  static bool done = false;
  if (!done) os::installFaultHandler(sigstackoverflow);
  done = true;
#endif
}

namespace {
// panicLock orders startpanic against printWarning (a leaf lock).
mutex panicLock;
// panicking mirrors Go's panicking (panic.go:1076): set once a fatal error or
// an unrecovered panic has begun its report.
bool panicking ABSL_GUARDED_BY(panicLock) = false;
}  // namespace

void startpanic() {
  lock(&panicLock);
  panicking = true;
  unlock(&panicLock);
}

void printWarning(const std::string& msg) {
  lock(&panicLock);
  if (!panicking) os::writeErr(msg.data(), msg.size());
  unlock(&panicLock);
}

void dieFatal(throwType t) {
  tracebackFatal(t);
  exitFatal();
}

void exitFatal() {
  const char* tb = os::getenv("GOTRACEBACK");
  if (tb != nullptr && std::strcmp(tb, "crash") == 0) os::crash();
  os::exit(2);
}

void printFatal(const char* msg) {
  startpanic();
  printErr("fatal error: ");
  printErr(msg);
  printErr("\n");
}

void throw_(const char* msg) {
  printFatal(msg);
  dieFatal(throwType::runtime);
}

void fatal(const char* msg) {
  printFatal(msg);
  dieFatal(throwType::user);
}

void throwErrno(const char* msg, int err) {
  startpanic();
  printErr("runtime: ");
  printErr(msg);
  printErr(": errno ");
  printErrInt(err);
  printErr("\n");
  throw_(msg);
}

void fatalpanic(const char* msg, std::int64_t goid) {
  startpanic();
  printErr("panic: ");
  printErr(msg);
  printErr("\n\ngoroutine ");
  printErrInt(goid);
  printErr(" [running]:\n");
  dieFatal(throwType::none);
}

}  // namespace gort::runtime
