// runtime/stack.cc: goroutine stacks (Go's stack.go, much simplified).
//
// Go grows 2 KiB stacks by copying; C++ frames cannot move, so a gort stack
// is a fixed reservation (256 KiB by default, Options.stack_size to change)
// that the OS commits page by page as it is touched. Where the memory comes
// from, and how it is guarded and pooled, is the context backend's business
// (runtime/os/gogo_os.h): slabs of mapped stacks with guard pages for
// fcontext, Windows' own fibre stacks for fibres. Stacks are kept with their
// Gs (gfput/gfget keep a dead G's stack), so steady-state spawning allocates
// nothing. A G idle on the global free list for a whole GODEBUG=scavenge
// period is freed during the Run and its stack's pages go back to the OS
// (stackrelease; proc.cc's gscavenge); the rest go when Run ends. Where the
// backend's stacks can change hands (fcontext's can, a fibre's cannot), a dead
// G's stack waits in its P's stack cache (or, when that is full, with the G on
// the free lists) for the next G that starts without one, so a burst reuses a
// few hot stacks.
#include "os/gogo_os.h"
#include "os/os.h"
#include "panic.h"
#include "proc.h"
#include "race.h"

namespace gort::runtime {

// stackalloc mirrors Go's stackalloc (stack.go:344): a stack with `size` usable
// bytes, on which goroutine contexts start at gentry.
bool stackalloc(os::Stack* s, std::size_t size) {
  return os::stackAlloc(s, size, gentry);
}

// stackcanaryok reports whether s's canary, if it has one, is intact.
bool stackcanaryok(const os::Stack* s) { return os::stackIntact(s); }

// stackoverflow prints Go's stack overflow report for gp and exits with
// status 2 (Go's newstack (stack.go:962), when a stack would grow past its
// maximum).
void stackoverflow(G* gp) {
  printErr("runtime: goroutine stack exceeds its ");
  printErrInt(static_cast<std::int64_t>(gp->stack.size - gp->stack.guard));
  printErr("-byte limit\n");
  printFatal("stack overflow");
  printErr("\ngoroutine ");
  printErrInt(gp->goid);
  printErr(" [running]:\n");
  // Not dieFatal: on Windows this runs on what is left of the overflowed
  // stack, in the exception handler, where a traceback or even getenv (for
  // GOTRACEBACK) overflows it again and the process hangs.
  os::exit(2);
}

// stackcheck runs on g0 after every switch back from gp: an unguarded
// stack whose canary was written has overflowed (Go checks the stack bound
// in each function's prologue instead; C++ frames cannot).
void stackcheck(G* gp) {
  if (!stackcanaryok(&gp->stack)) stackoverflow(gp);
}

// stackfree mirrors Go's stackfree (stack.go:447): s's G is being freed.
void stackfree(os::Stack* s) { os::stackFree(s); }

// stackrelease: an idle G's stack goes back to the OS during the Run (the
// scavenger, proc.cc's gscavenge; Go frees dead Gs' stacks at each GC,
// markrootFreeGStacks (mgcmark.go:293), and its scavenger returns the pages).
void stackrelease(os::Stack* s) {
  racestackfree(s->base, s->size);
  os::stackRelease(s);
}

// stackfreeall returns every stack to the OS when Run ends; with retain, a
// thread abandoned in a syscall still runs on one of them, so they are kept
// mapped for good instead.
void stackfreeall(bool retain) { os::stackFreeAll(retain, racestackfree); }

// stackcacheput plays the part of Go's per-P stackcache: a dead G's stack
// waits in pp's cache, while there is room, for the next G that starts
// without one, rather than riding with the G into newproc1 and idling on a
// goroutine that has not started (Skynet's wide levels, bursts).
void stackcacheput(P* pp, os::Stack* s) {
  if (!os::stacksShareable()) return;
  if (s->base == nullptr || pp->nstackcache == kStackCacheSize) return;
  pp->stackcache[pp->nstackcache++] = *s;
  *s = {};
}

// stacktake finds a stack for a G that is about to run for the first time
// without one: from pp's cache, else the stack of the dead G at the head of
// pp's free list (the goroutine that exited last on this P, its top page
// resident and hot in the cache), instead of touching a fresh stack. Without
// it every goroutine of a burst faults in a page of its own. A donor stays
// on the free list, stackless.
bool stacktake(P* pp, os::Stack* s) {
  if (!os::stacksShareable()) return false;
  if (pp->nstackcache > 0) {
    *s = pp->stackcache[--pp->nstackcache];
    pp->stackcache[pp->nstackcache] = {};
    return true;
  }
  G* donor = pp->gFree;
  if (donor == nullptr || donor->stack.base == nullptr) return false;
  *s = donor->stack;
  donor->stack = {};
  return true;
}

}  // namespace gort::runtime
