// runtime/gogo.cc: switching between goroutine stacks and g0 (Go's
// asm_amd64.s: gogo, mcall, goexit; and proc.go's newproc stack setup).
//
// Every switch goes through g0, the M's own thread stack, as in Go: a
// goroutine that blocks calls mcall(fn), which saves its context and jumps to
// g0; g0 runs fn(gp) and then the scheduler picks the next goroutine and
// gogo()s into it. The register work is the context backend's
// (runtime/os/gogo_os.h: gort's own gort_gogo on linux/amd64, Boost's
// fcontext on other POSIX targets, fibres on Windows); this file
// keeps what every backend shares: the running G, the C++ exception state
// and the sanitizers' view of each switch. Unlike Go, g0 does not reset its
// stack on each mcall; it resumes in the schedule loop instead (see
// schedule in proc.cc), where gogoback undoes what gogo swapped.
#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <typeinfo>

#include "os/gogo_os.h"
#include "panic.h"
#include "proc.h"
#include "race.h"

namespace gort::runtime {

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
static_assert(sizeof(EhGlobals) <= sizeof(M::g0ehState));

// The calling thread's exception state; g0 caches it in its M, since the
// address never changes for a thread.
EhGlobals* ehGlobals(M* mp) {
  if (mp->ehGlobals == nullptr) mp->ehGlobals = abi::__cxa_get_globals();
  return static_cast<EhGlobals*>(mp->ehGlobals);
}

// panicValue formats the exception being handled as Go prints a panic
// would its panic value: a number or a string as itself, a std::exception
// by what(), anything else by its type name. Not in Go: C++ throws values
// of any type, so the type is named where the value cannot be printed.
std::string panicValue() {
  const std::type_info* t = abi::__cxa_current_exception_type();
  std::string type = "unknown type";
  if (t != nullptr) {
    int status = 0;
    char* d = abi::__cxa_demangle(t->name(), nullptr, nullptr, &status);
    type = status == 0 && d != nullptr ? d : t->name();
    std::free(d);
  }
  char buf[64];
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (const std::string& v) {
    return v;
  } catch (const char* v) {
    return v != nullptr ? v : "(const char*) nullptr";
  } catch (bool v) {
    return v ? "true" : "false";
  } catch (char v) {
    std::snprintf(buf, sizeof buf, "(char) %d", v);
  } catch (int v) {
    std::snprintf(buf, sizeof buf, "%d", v);
  } catch (unsigned v) {
    std::snprintf(buf, sizeof buf, "%u", v);
  } catch (long v) {
    std::snprintf(buf, sizeof buf, "%ld", v);
  } catch (unsigned long v) {
    std::snprintf(buf, sizeof buf, "%lu", v);
  } catch (long long v) {
    std::snprintf(buf, sizeof buf, "%lld", v);
  } catch (unsigned long long v) {
    std::snprintf(buf, sizeof buf, "%llu", v);
  } catch (double v) {
    std::snprintf(buf, sizeof buf, "%g", v);
  } catch (float v) {
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
  } catch (...) {
    return "(" + type + ") a C++ exception gort cannot print";
  }
  if (type == "int" || type == "double") return buf;
  return "(" + type + ") " + buf;
}

// gbody runs the goroutine's function. An exception nothing in the
// goroutine catches is a panic nobody recovers; gbody being noexcept, GCC's
// unwinder finds no handler for it and the C++ runtime calls std::terminate
// from the throw itself, every throwing frame still on the stack, where
// onTerminate reports it (Go's fatalpanic (panic.go:1143) prints the panicking
// stack as it was at the panic too). Unlike Go, which runs deferred calls
// first, destructors between the throw and here do not run: the process ends as
// std::terminate ends it. goexitUnwind is the one exception caught.
void gbody(G* gp) noexcept {
  try {
    std::move(gp->fn)();
  } catch (const goexitUnwind&) {
    // Run ended while this goroutine was parked; its stack has unwound.
  }
}

// gbodyCatching is gbody where terminateAtThrow is false: the exception is
// caught after its frames have unwound, so the report has no throwing frame.
void gbodyCatching(G* gp) {
  try {
    std::move(gp->fn)();
  } catch (const goexitUnwind&) {
  } catch (...) {
    std::string v = panicValue();
    fatalpanic(v.c_str(), gp->goid);
  }
}

// grun runs the goroutine's function and ends the goroutine; goexit1
// returns only on a backend whose contexts outlive their goroutines
// (fibres), when the G is reused (see gentry).
void grun() {
  G* gp = getg();
  if (os::terminateAtThrow()) {
    gbody(gp);
  } else {
    gbodyCatching(gp);
  }
  getg()->fn = nullptr;  // destroys the closure's captures on this stack
  goexit1();
}

std::terminate_handler prevTerminate = nullptr;

// onTerminate: std::terminate on a goroutine with an exception in flight is
// an unrecovered panic (gbody); anything else is the program's own business.
[[noreturn]] void onTerminate() {
  G* gp = getcurg();
  if (gp != nullptr && std::current_exception() != nullptr) {
    std::string v = panicValue();
    fatalpanic(v.c_str(), gp->goid);
  }
  if (prevTerminate != nullptr) prevTerminate();
  std::abort();
}

}  // namespace

void initTerminateHandler() {
  static bool done = false;
  if (done) return;
  done = true;
  prevTerminate = std::set_terminate(onTerminate);
}

// gentry is the bottom frame of every goroutine context (Go's goexit
// (stubs.go:299) frame plus the call of the goroutine's function). On POSIX
// each goroutine gets a fresh context and the loop never comes round; a fibre
// resumes here when its G is reused, so the loop runs one body after another.
void gentry() {
  racebackongo(getg(), getg()->m, true);
  for (;;) {
    grun();
    // Resumed by gogo: this G was reused for a new goroutine.
    racebackongo(getg(), getg()->m, true);
  }
}

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

// getcurg: not inlined either, and reads the thread-local itself rather
// than through getg (one call per use instead of two; the chan and select
// paths call it on every operation).
__attribute__((noinline)) G* getcurg() {
  asm volatile("" ::: "memory");
  G* gp = tlsg;
  if (gp == nullptr || gp->m == nullptr || gp == gp->m->g0) return nullptr;
  return gp;
}

// gogo mirrors Go's gogo (stubs.go:233): on g0, jump into gp. g0 never changes
// threads, so gogo reads and writes the thread-local g directly instead of
// through getg/setg. The switch is gogo's last call, so the compiler makes it a
// jump (execute's call of gogo is one too): g0's context is saved with
// schedule's own return address, and when gp mcalls back, g0 resumes in
// schedule without returning through gogo, a return the processor would
// mispredict (the goroutine's calls are on top of its return-address
// stack). Whatever the compiler does, gogo's caller then calls gogoback.
void gogo(G* gp) {
  asm volatile("" ::: "memory");
  G* g0 = tlsg;
  M* mp = g0->m;
  EhGlobals* eh = ehGlobals(mp);
  std::memcpy(mp->g0ehState, eh, sizeof(EhGlobals));
  std::memcpy(eh, gp->ehState, sizeof(EhGlobals));
  tlsg = gp;
  racetogo(mp, gp);
  os::switchContext(&g0->ctx, gp->ctx);
}

// gogoback: g0 of mp runs again after gp switched out; restores what gogo
// swapped (gort's: Go's gogo (stubs.go:233) has no way back).
void gogoback(M* mp, G* gp) {
  asm volatile("" ::: "memory");
  racebackong0(mp);
  tlsg = mp->g0;
  EhGlobals* eh = ehGlobals(mp);
  std::memcpy(gp->ehState, eh, sizeof(EhGlobals));
  std::memcpy(eh, mp->g0ehState, sizeof(EhGlobals));
  asm volatile("" ::: "memory");
}

// mcall: park.h, inline.

// gostart points gp's context at gentry on its stack (Go's newproc1
// (proc.go:4112) setting gp.sched.pc to the function and the return address to
// goexit).
void gostart(G* gp) {
  racegostart(gp, static_cast<char*>(gp->stack.base) + gp->stack.guard,
              gp->stack.size - gp->stack.guard);
  gp->ctx = os::newContext(&gp->stack);
}

}  // namespace gort::runtime
