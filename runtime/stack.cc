// runtime/stack.cc: goroutine stacks (Go's stack.go, much simplified).
//
// Go grows 2 KiB stacks by copying; C++ frames cannot move, so a gort stack
// is a fixed reservation (256 KiB by default, Options.stack_size to change)
// that the OS commits page by page as it is touched. Stacks are carved out
// of slabs of about 16 MiB, one mapping each, and pooled: a dead G's stack
// waits in its P's stack cache (or, when that is full, with the G on the
// free lists) for the next G that starts without one, so steady-state
// spawning maps nothing and a burst reuses a few hot stacks. Slabs go back
// to the OS when Run ends.
//
// The first kGuardedStacks stacks get an inaccessible guard page below them.
// Each guard splits its slab's mapping, and the kernel allows a process
// only about 65 000 mappings (vm.max_map_count), so later stacks go without
// one: that is what lets a million goroutines start.
#include <vector>

#include "os/os.h"
#include "panic.h"
#include "proc.h"
#include "race.h"

namespace gort::runtime {

namespace {

constexpr std::size_t kSlabBytes = std::size_t{16} << 20;
constexpr std::size_t kGuardedStacks = 16384;

struct Slab {
  void* base;
  std::size_t size;
};

mutex stackLock;
std::vector<Slab> slabs ABSL_GUARDED_BY(stackLock);
char* slabNext ABSL_GUARDED_BY(stackLock) = nullptr;  // next free stack
char* slabEnd ABSL_GUARDED_BY(stackLock) = nullptr;
std::size_t stacksMade ABSL_GUARDED_BY(stackLock) = 0;

}  // namespace

#if defined(_WIN32)
// On Windows a goroutine stack is a fibre's (see gogo.cc): Windows reserves
// it, with its own guard page, and frees it with the fibre. base holds the
// fibre until the fibre first runs and records its real bounds.
bool stackalloc(struct stack* s, std::size_t size) {
  void* f = os::fiberCreate(size, gfiberentry);
  if (f == nullptr) return false;
  *s = {};
  s->fiber = f;
  s->base = f;
  s->size = size;
  return true;
}

void stackfree(struct stack* s) {
  if (s->fiber != nullptr) os::fiberDelete(s->fiber);
  *s = {};
}

// stacktake and stackcacheput: a fibre resumes only in its own G's loop,
// so Windows stacks never change hands.
bool stacktake(P*, struct stack*) { return false; }
void stackcacheput(P*, struct stack*) {}
#else
// stackalloc mirrors Go's stackalloc: `size` usable bytes, with one guard
// page below them while guards are affordable.
bool stackalloc(struct stack* s, std::size_t size) {
  std::size_t page = os::physPageSize();
  std::size_t each = size + page;  // room for a guard page either way
  lock(&stackLock);
  if (slabNext == nullptr || slabEnd - slabNext < static_cast<long>(each)) {
    std::size_t n = kSlabBytes / each;
    if (n == 0) n = 1;
    void* base = os::sysAllocStack(n * each, 0);
    if (base == nullptr) {
      unlock(&stackLock);
      return false;
    }
    slabs.push_back(Slab{base, n * each});
    slabNext = static_cast<char*>(base);
    slabEnd = slabNext + n * each;
  }
  char* lo = slabNext;
  slabNext += each;
  bool guarded = stacksMade++ < kGuardedStacks;
  unlock(&stackLock);
  if (guarded && !os::sysGuard(lo, page)) guarded = false;
  s->base = lo;
  s->size = each;
  s->guard = page;  // unguarded stacks still leave the page unused
  return true;
}

// stackfree mirrors Go's stackfree. Stacks live until Run ends, with their
// Gs on the free lists; this only forgets the G's claim.
void stackfree(struct stack* s) { *s = {}; }

// stackcacheput plays the part of Go's per-P stackcache: a dead G's stack
// waits in pp's cache, while there is room, for the next G that starts
// without one, rather than riding with the G into newproc1 and idling on a
// goroutine that has not started (Skynet's wide levels, bursts).
void stackcacheput(P* pp, struct stack* s) {
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
bool stacktake(P* pp, struct stack* s) {
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
#endif

// stackfreeall returns every slab to the OS when Run ends; with retain, a
// thread abandoned in a syscall still runs on one of them, so they are kept
// mapped for good instead.
void stackfreeall(bool retain) {
  static std::vector<Slab>* retained = new std::vector<Slab>;
  lock(&stackLock);
  for (const Slab& slab : slabs) {
    if (retain) {
      retained->push_back(slab);
      continue;
    }
    racestackfree(slab.base, slab.size);
    os::sysFreeStack(slab.base, slab.size);
  }
  slabs.clear();
  slabNext = slabEnd = nullptr;
  stacksMade = 0;
  unlock(&stackLock);
}

}  // namespace gort::runtime
