// runtime/gogo.cc: switching between goroutine stacks and g0 (Go's
// asm_amd64.s: gogo, mcall, goexit; and proc.go's newproc stack setup).
//
// Every switch goes through g0, the M's own thread stack, as in Go: a
// goroutine that blocks calls mcall(fn), which saves its context and jumps to
// g0; g0 runs fn(gp) and then the scheduler picks the next goroutine and
// gogo()s into it. Boost.Context's fcontext does the register work: a jump
// returns the context of the side that jumped, which is how each side learns
// where to come back to. Unlike Go, g0 does not reset its stack on each
// mcall; it returns into the schedule loop instead (see schedule in proc.cc).
//
// On Windows each goroutine stack is a fibre instead (os::fiber*, created by
// stackalloc): Windows then switches the thread's stack bounds and exception
// list with the stack, which its unwinder checks (Boost's fcontext does not
// under Wine). A G's fibre lives as long as its stack; when a G is reused,
// its fibre resumes where it left off, in goexit1, and loops to run the new
// body, so respawning creates nothing.
#if !defined(_WIN32)
#include <boost/context/detail/fcontext.hpp>
#endif
#include <cxxabi.h>
#include <cstring>
#include <exception>

#include "os/os.h"
#include "panic.h"
#include "proc.h"
#include "race.h"

namespace gort::runtime {

#if !defined(_WIN32)
namespace ctx = boost::context::detail;
#endif

namespace {
thread_local G* tlsg = nullptr;

// The C++ runtime's per-thread exception state (the Itanium C++ ABI's
// __cxa_eh_globals: exceptions being handled, and the uncaught count). A
// goroutine may park inside a catch block and resume on another thread, so
// each G carries its own copy, swapped in and out around every switch.
struct EhGlobals {
  void* caughtExceptions;
  unsigned int uncaughtExceptions;
// ARM EHABI (32-bit ARM, not SJLJ, DWARF or SEH unwinding): the exception
// being cleaned up, pushed by __cxa_begin_cleanup and popped by
// __cxa_end_cleanup around each destructor run during unwinding. The test is
// the one of GCC's and Clang's <unwind.h> (which defines
// __ARM_EABI_UNWINDER__), spelled with the compiler's own macros because
// nothing here includes <unwind.h>.
#if defined(__arm__) && !defined(__USING_SJLJ_EXCEPTIONS__) && \
    !defined(__ARM_DWARF_EH__) && !defined(__SEH__)
  void* propagatingExceptions;
#endif
};
static_assert(sizeof(EhGlobals) <= sizeof(G::ehState));

// The calling thread's exception state; g0 caches it in its M, since the
// address never changes for a thread.
EhGlobals* ehGlobals(M* mp) {
  if (mp->ehGlobals == nullptr) mp->ehGlobals = abi::__cxa_get_globals();
  return static_cast<EhGlobals*>(mp->ehGlobals);
}

// grun runs the goroutine's function and ends the goroutine; on Windows,
// goexit1 returns when the G is reused (see the file comment).
void grun() {
  G* gp = getg();
  try {
    std::move(gp->fn)();
  } catch (const goexitUnwind&) {
    // Run ended while this goroutine was parked; its stack has unwound.
  } catch (const std::exception& e) {
    fatalpanic(e.what(), getg()->goid);
  } catch (...) {
    fatalpanic("unknown C++ exception", getg()->goid);
  }
  getg()->fn = nullptr;  // destroys the closure's captures on this stack
  goexit1();
}

#if !defined(_WIN32)
// gentry is the bottom frame of every goroutine (Go's goexit frame plus the
// call of the goroutine's function).
void gentry(ctx::transfer_t t) {
  G* gp = getg();
  racebackongo(gp, gp->m, true);
  gp->m->g0->ctx = t.fctx;
  grun();
}
#endif
}  // namespace

#if defined(_WIN32)
// gfiberentry is the bottom frame of every goroutine fibre: it records the
// fibre's real stack bounds (for the stack-overflow check) and runs one
// goroutine body after another.
void gfiberentry(void*) {
  G* gp = getg();
  void* lo;
  void* hi;
  os::fiberStack(&lo, &hi);
  gp->stack.base = lo;
  gp->stack.size = static_cast<char*>(hi) - static_cast<char*>(lo);
  gp->stack.guard = os::physPageSize();
  racebackongo(gp, gp->m, true);
  for (;;) {
    grun();
    // Resumed by gogo: this G was reused for a new goroutine.
    racebackongo(getg(), getg()->m, true);
  }
}
#endif

// getg returns the running G (g0 on the scheduler stack). Not inlined, with a
// compiler barrier, so that no caller keeps a thread-local address across a
// switch that may resume it on another thread.
__attribute__((noinline)) G* getg() {
  asm volatile("" ::: "memory");
  return tlsg;
}

__attribute__((noinline)) void setg(G* gp) {
  asm volatile("" ::: "memory");
  tlsg = gp;
}

G* getcurg() {
  G* gp = getg();
  if (gp == nullptr || gp->m == nullptr || gp == gp->m->g0) return nullptr;
  return gp;
}

// gogo mirrors Go's gogo: on g0, jump into gp; returns when gp mcalls back.
void gogo(G* gp) {
  G* g0 = getg();
  EhGlobals* eh = ehGlobals(g0->m);
  EhGlobals saved = *eh;
  std::memcpy(eh, gp->ehState, sizeof(EhGlobals));
  setg(gp);
  racetogo(g0->m, gp);
#if defined(_WIN32)
  if (g0->ctx == nullptr) g0->ctx = os::fiberOfThread();
  os::fiberSwitch(gp->ctx);
  racebackong0(g0->m);
#else
  ctx::transfer_t t = ctx::jump_fcontext(gp->ctx, nullptr);
  racebackong0(g0->m);
  gp->ctx = t.fctx;
#endif
  setg(g0);
  std::memcpy(gp->ehState, eh, sizeof(EhGlobals));
  *eh = saved;
}

// mcall mirrors Go's mcall: from a goroutine, switch to g0 and have it run
// fn(gp); returns when gp is resumed, possibly on another M.
void mcall(G* (*fn)(G*), bool exiting) {
  G* gp = getg();
  M* mp = gp->m;
  mp->mcallfn = fn;
  racetog0(gp, mp, exiting);
#if defined(_WIN32)
  os::fiberSwitch(mp->g0->ctx);
  racebackongo(gp, gp->m, false);
#else
  ctx::transfer_t t = ctx::jump_fcontext(mp->g0->ctx, nullptr);
  racebackongo(gp, gp->m, false);
  gp->m->g0->ctx = t.fctx;
#endif
  if (gp->unwinding) throw goexitUnwind{};
}

// gostart points gp's context at gentry on top of its stack (Go's newproc1
// setting gp.sched.pc to the function and the return address to goexit).
void gostart(G* gp) {
  char* top = static_cast<char*>(gp->stack.base) + gp->stack.size;
  racegostart(gp, static_cast<char*>(gp->stack.base) + gp->stack.guard,
              gp->stack.size - gp->stack.guard);
#if defined(_WIN32)
  (void)top;
  gp->ctx = gp->stack.fiber;
#else
  gp->ctx = ctx::make_fcontext(top, gp->stack.size - gp->stack.guard, gentry);
#endif
}

}  // namespace gort::runtime
