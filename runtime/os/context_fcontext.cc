// runtime/os/context_fcontext.cc: the POSIX backend of runtime/os/context.h:
// Boost.Context's fcontext on stacks mapped here (Go's gogo/mcall register
// work, and the part of stack.go and mem_linux.go that maps stacks).
//
// fcontext does the register work: a jump returns the context of the side
// that jumped, and the data it passed, here the slot where that side wants
// its own context saved; the side that wakes up stores it there. A
// goroutine's context is made fresh on its stack each time a goroutine
// starts there; a finished goroutine's context is simply never resumed.
//
// Go grows 2 KiB stacks by copying; C++ frames cannot move, so a gort stack
// is a fixed reservation (256 KiB by default, Options.stack_size to change)
// that the OS commits page by page as it is touched. Stacks are carved out
// of slabs of about 16 MiB, one mapping each, and pooled with their Gs
// (gfput/gfget keep a dead G's stack), so steady-state spawning maps
// nothing. Slabs go back to the OS when Run ends.
//
// The first kGuardedStacks stacks get an inaccessible guard page below them.
// Each guard splits its slab's mapping, and the kernel allows a process
// only about 65 000 mappings (vm.max_map_count), so later stacks go without
// one: that is what lets a million goroutines start.
#include <sys/mman.h>

#include <boost/context/detail/fcontext.hpp>
#include <atomic>
#include <vector>

#include "lock.h"
#include "os/context.h"
#include "os/os.h"
#include "race.h"

namespace gort::os {

namespace ctx = boost::context::detail;
using runtime::lock;
using runtime::mutex;
using runtime::unlock;

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

// The runtime's goroutine entry (always the same function), from stackAlloc.
std::atomic<ContextEntry> entryFn{nullptr};

// sysAllocStack: `size` bytes of lazily committed memory, or nullptr (Go's
// sysAlloc for a stack span).
void* sysAllocStack(std::size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1,
                 0);
  return p == MAP_FAILED ? nullptr : p;
}

// sysGuard: makes [p, p + size) inaccessible (a stack guard page).
bool sysGuard(void* p, std::size_t size) {
  return mprotect(p, size, PROT_NONE) == 0;
}

// sysFreeStack: returns a region from sysAllocStack to the OS.
void sysFreeStack(void* base, std::size_t size) { munmap(base, size); }

// trampoline is the bottom frame of every context: it saves the context
// that jumped here, as switchContext does on return, and runs the entry.
void trampoline(ctx::transfer_t t) {
  *static_cast<Context*>(t.data) = t.fctx;
  entryFn.load(std::memory_order_relaxed)();
}

}  // namespace

// stackAlloc: `size` usable bytes, with one guard page below them while
// guards are affordable.
bool stackAlloc(Stack* s, std::size_t size, ContextEntry entry) {
  entryFn.store(entry, std::memory_order_relaxed);
  std::size_t page = physPageSize();
  std::size_t each = size + page;  // room for a guard page either way
  lock(&stackLock);
  if (slabNext == nullptr || slabEnd - slabNext < static_cast<long>(each)) {
    std::size_t n = kSlabBytes / each;
    if (n == 0) n = 1;
    void* base = sysAllocStack(n * each);
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
  if (guarded) sysGuard(lo, page);
  s->base = lo;
  s->size = each;
  s->guard = page;  // unguarded stacks still leave the page unused
  return true;
}

// stackFree: stacks live until Run ends, with their Gs on the free lists;
// this only forgets the G's claim.
void stackFree(Stack* s) { *s = {}; }

void stackFreeAll(bool retain) {
  static std::vector<Slab>* retained = new std::vector<Slab>;
  lock(&stackLock);
  for (const Slab& slab : slabs) {
    if (retain) {
      retained->push_back(slab);
      continue;
    }
    runtime::racestackfree(slab.base, slab.size);
    sysFreeStack(slab.base, slab.size);
  }
  slabs.clear();
  slabNext = slabEnd = nullptr;
  stacksMade = 0;
  unlock(&stackLock);
}

Context newContext(Stack* s) {
  char* top = static_cast<char*>(s->base) + s->size;
  return ctx::make_fcontext(top, s->size - s->guard, trampoline);
}

void switchContext(Context* save, Context to) {
  ctx::transfer_t t = ctx::jump_fcontext(to, save);
  *static_cast<Context*>(t.data) = t.fctx;
}

}  // namespace gort::os
