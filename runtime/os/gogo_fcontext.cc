// runtime/os/gogo_fcontext.cc: the POSIX backend of runtime/os/gogo_os.h:
// stacks mapped here (the part of stack.go and mem_linux.go that maps
// stacks), switched by gort's own gort_gogo where runtime/arch has one
// (linux/amd64: runtime/arch/gogo_linux_amd64.S, Go's gogo/mcall (stubs.go:233)
// register work) and by Boost.Context's fcontext elsewhere.
//
// gort_gogo stores the running side's stack pointer in the save slot and loads
// the other's: callee-saved registers, stack pointer and PC only, as Go's gogo
// (stubs.go:233). fcontext also saves the x87 control word and MXCSR on every
// jump (slow instructions; docs/notes/performance-switch.md), and a jump
// returns the context of the side that jumped and the data it passed, here the
// slot where that side wants its own context saved; the side that wakes up
// stores it there. Either way a goroutine's context is made fresh on its stack
// each time a goroutine starts there; a finished goroutine's context
// is simply never resumed. runtime/CMakeLists.txt picks the switch
// (GORT_CONTEXT_SWITCH; GORT_ARCH_GOGO is defined for gort_gogo).
//
// Go grows 2 KiB stacks by copying; C++ frames cannot move, so a gort stack
// is a fixed reservation (256 KiB by default, Options.stack_size to change)
// that the OS commits page by page as it is touched. Stacks are carved out
// of slabs of about 16 MiB, one mapping each, and pooled with their Gs
// (gfput/gfget keep a dead G's stack), so steady-state spawning maps
// nothing. The scavenger gives an idle stack's pages back (stackRelease:
// madvise, the range stays mapped) and stackAlloc hands released stacks
// out before carving new ones; slabs are unmapped when Run ends.
//
// Every stack gets an inaccessible guard page below it where the kernel has
// guard regions (Linux 6.13's MADV_GUARD_INSTALL: a marker in the page
// table, no new mapping), installed for a whole slab when it is mapped, with
// one process_madvise call where that takes them (Linux 6.15). Elsewhere
// (older kernels, qemu-user, which ignores the advice; GODEBUG=guardregions=0)
// a guard is an mprotect'ed page, which splits its slab's mapping in two and
// costs about four times as much; the kernel allows a process only
// vm.max_map_count mappings (65 530 by default), so those are budgeted: half
// of what is left when a Run makes its first stack, less a headroom for
// everything else. Later stacks go without one (that is what lets a million
// goroutines start) and get a canary instead: kCanaryBytes of a known pattern
// just below the stack's limit, at the top of the region below (each stack
// gives up its top kCanaryBytes to the canary of the stack above, so no page is
// touched for it that the stack below does not touch anyway). The runtime
// checks it (stackIntact) whenever the goroutine switches to g0 and on any
// fault, so an overflow that writes below the limit ends the program with
// "fatal error: stack overflow" (reliability.md states the exact guarantee).
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <vector>

#if defined(GORT_ARCH_GOGO)
#include "arch/arch.h"
#else
#include <boost/context/detail/fcontext.hpp>
#endif

#include "lock.h"
#include "os/gogo_os.h"
#include "os/os.h"

namespace gort::os {

using runtime::lock;
using runtime::mutex;
using runtime::unlock;

namespace {

constexpr std::size_t kSlabBytes = std::size_t{16} << 20;
// Guards are budgeted from the mappings left, keeping this many (or a
// quarter of them, if more) for threads, the heap and the program.
constexpr std::int64_t kMappingHeadroom = 8192;
// Where the OS sets no mapping limit.
constexpr std::int64_t kDefaultGuards = 16384;
constexpr std::size_t kCanaryBytes = 1024;
constexpr std::size_t kCanaryWords = kCanaryBytes / sizeof(std::uintptr_t);
// How guard pages are made (guardHow).
enum GuardHow : int {
  kGuardMprotect = 0,  // mprotect, budgeted
  kGuardRegion = 1,    // madvise(MADV_GUARD_INSTALL), one call per stack
  kGuardBatch = 2,     // process_madvise: a slab's guards in a few calls
};
#if defined(__linux__)
constexpr int kMadvGuardInstall = 102;  // MADV_GUARD_INSTALL (Linux 6.13)
#endif

struct Slab {
  void* base;
  std::size_t size;
  std::size_t each;  // one stack's share, its guard or lower page included
  // Per stack: kReleased once stackRelease gave its memory back (until
  // stackAlloc hands it out again), kGuarded if it has a guard page.
  std::vector<std::uint8_t> state;
  std::size_t nreleased = 0;
};
constexpr std::uint8_t kReleased = 1;
constexpr std::uint8_t kGuarded = 2;

mutex stackLock;
std::vector<Slab> slabs ABSL_GUARDED_BY(stackLock);
char* slabNext ABSL_GUARDED_BY(stackLock) = nullptr;  // next free stack
char* slabEnd ABSL_GUARDED_BY(stackLock) = nullptr;
std::size_t stacksMade ABSL_GUARDED_BY(stackLock) = 0;
std::int64_t guardBudget ABSL_GUARDED_BY(stackLock) = 0;
bool regionsAllowed ABSL_GUARDED_BY(stackLock) = true;          // GODEBUG
GuardHow guardHow ABSL_GUARDED_BY(stackLock) = kGuardMprotect;  // this Run's
// Slabs holding released stacks (maybe stale: nreleased says), for
// stackAlloc to reuse before carving new ones. Slabs, not stacks, so that
// what the scavenger keeps per released stack is one byte.
std::vector<std::uint32_t> slabsWithFree ABSL_GUARDED_BY(stackLock);

// canaryWord: the value of the canary word at p; it depends on the address,
// so a stack copied or shifted in place does not look intact.
std::uintptr_t canaryWord(const std::uintptr_t* p) {
  return static_cast<std::uintptr_t>(0x9e3779b97f4a7c15ULL) ^
         reinterpret_cast<std::uintptr_t>(p);
}

// guardsAffordable: how many stacks of this Run may have a guard page.
std::int64_t guardsAffordable() {
  std::int64_t left = mappingsLeft();
  if (left < 0) return kDefaultGuards;
  std::int64_t keep = left / 4 > kMappingHeadroom ? left / 4 : kMappingHeadroom;
  return left > keep ? (left - keep) / 2 : 0;
}

// The runtime's goroutine entry (always the same function), from stackAlloc.
std::atomic<ContextEntry> entryFn{nullptr};

// sysAllocStack: `size` bytes of lazily committed memory, or nullptr (Go's
// sysAlloc for a stack span).
void* sysAllocStack(std::size_t size) {
  void* p =
      mmap(nullptr, size, PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// sysGuard: makes [p, p + size) inaccessible (a stack guard page).
bool sysGuard(void* p, std::size_t size) {
  return mprotect(p, size, PROT_NONE) == 0;
}

#if defined(__linux__)
// guardFaults: whether the kernel refuses to read p (EFAULT), as it does a
// guard page; qemu-user accepts MADV_GUARD_INSTALL and does nothing, so the
// advice's result alone does not say.
bool guardFaults(void* p) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  ssize_t r = write(fds[1], p, 1);
  bool faulted = r < 0 && errno == EFAULT;
  close(fds[0]);
  close(fds[1]);
  return faulted;
}

// sysGuardRegions: guard pages at the n addresses in v (each size bytes)
// with one process_madvise call per 64; false if any call fails.
bool sysGuardRegions(iovec* v, std::size_t n) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
  if (pidfd < 0) return false;
  bool ok = true;
  for (std::size_t i = 0; ok && i < n; i += 64) {
    std::size_t k = n - i < 64 ? n - i : 64;
    std::size_t want = 0;
    for (std::size_t j = 0; j < k; j++) want += v[i + j].iov_len;
    long done =
        syscall(SYS_process_madvise, pidfd, v + i, k, kMadvGuardInstall, 0);
    ok = done == static_cast<long>(want);
  }
  close(pidfd);
  return ok;
}

// probeGuardRegions: how this kernel can make guard pages (once a process).
GuardHow probeGuardRegions() {
  std::size_t page = physPageSize();
  void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return kGuardMprotect;
  GuardHow how = kGuardMprotect;
  iovec v{p, page};
  if (sysGuardRegions(&v, 1) && guardFaults(p)) {
    how = kGuardBatch;
  } else if (madvise(p, page, kMadvGuardInstall) == 0 && guardFaults(p)) {
    how = kGuardRegion;
  }
  munmap(p, page);
  return how;
}
#else
GuardHow probeGuardRegions() { return kGuardMprotect; }
#endif

// guardHowForRun: how this Run's stacks get guards (with stackLock held, at
// its first stack).
GuardHow guardHowForRun() ABSL_EXCLUSIVE_LOCKS_REQUIRED(stackLock) {
  static const GuardHow kernel = probeGuardRegions();
  return regionsAllowed ? kernel : kGuardMprotect;
}

// guardSlab: with guard regions, every stack of a new slab gets its guard
// now (its first page); a stack whose guard failed gets a canary instead.
void guardSlab(Slab* slab, std::size_t page)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(stackLock) {
#if defined(__linux__)
  std::size_t n = slab->state.size();
  char* first = static_cast<char*>(slab->base) + page;
  if (guardHow == kGuardBatch) {
    std::vector<iovec> v(n);
    for (std::size_t i = 0; i < n; i++) v[i] = {first + i * slab->each, page};
    if (sysGuardRegions(v.data(), n)) {
      for (std::uint8_t& st : slab->state) st = kGuarded;
      return;
    }
  }
  for (std::size_t i = 0; i < n; i++) {
    if (madvise(first + i * slab->each, page, kMadvGuardInstall) == 0) {
      slab->state[i] = kGuarded;
    }
  }
#else
  (void)slab;
  (void)page;
#endif
}

// sysFreeStack: returns a region from sysAllocStack to the OS.
void sysFreeStack(void* base, std::size_t size) { munmap(base, size); }

// sysUnused: gives [p, p + size)'s pages back to the OS; the range stays
// mapped and reads as zeros when touched again (Go's sysUnusedOS
// (mem_linux.go:39)).
void sysUnused(void* p, std::size_t size) { madvise(p, size, MADV_DONTNEED); }

// writeCanary fills s's canary, if it has one.
void writeCanary(Stack* s) {
  if (s->canary == nullptr) return;
  for (std::size_t i = 0; i < kCanaryWords; i++) {
    s->canary[i] = canaryWord(s->canary + i);
  }
}

#if !defined(GORT_ARCH_GOGO)
namespace ctx = boost::context::detail;

// trampoline is the bottom frame of every fcontext context: it saves the
// context that jumped here, as switchContext does on return, and runs the
// entry.
void trampoline(ctx::transfer_t t) {
  *static_cast<Context*>(t.data) = t.fctx;
  entryFn.load(std::memory_order_relaxed)();
}
#endif

}  // namespace

// reuseReleased: a released stack into *s, if there is one; its canary's
// page may have gone back to the OS too, so the canary is written again.
bool reuseReleased(Stack* s, std::size_t page)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(stackLock) {
  while (!slabsWithFree.empty()) {
    std::uint32_t k = slabsWithFree.back();
    Slab& slab = slabs[k];
    if (slab.nreleased == 0) {
      slabsWithFree.pop_back();
      continue;
    }
    std::size_t i = 0;
    while ((slab.state[i] & kReleased) == 0) i++;
    slab.state[i] &= static_cast<std::uint8_t>(~kReleased);
    slab.nreleased--;
    char* lo = static_cast<char*>(slab.base) + page + i * slab.each;
    *s = {};
    s->base = lo;
    s->size = slab.each - kCanaryBytes;
    s->slab = k;
    s->index = static_cast<std::uint32_t>(i);
    if (slab.state[i] & kGuarded) {
      s->guard = page;
    } else {
      s->canary = reinterpret_cast<std::uintptr_t*>(lo - kCanaryBytes);
      writeCanary(s);
    }
    return true;
  }
  return false;
}

// stackAlloc: `size` usable bytes, with one guard page below them while
// guards are affordable, else a canary.
bool stackAlloc(Stack* s, std::size_t size, ContextEntry entry) {
  entryFn.store(entry, std::memory_order_relaxed);
  std::size_t page = physPageSize();
  std::size_t each = size + page;  // room for a guard page either way
  lock(&stackLock);
  if (reuseReleased(s, page)) {
    unlock(&stackLock);
    return true;
  }
  if (stacksMade == 0) {  // once per Run
    guardHow = guardHowForRun();
    guardBudget = guardHow == kGuardMprotect ? guardsAffordable() : 0;
  }
  if (slabNext == nullptr || slabEnd - slabNext < static_cast<long>(each)) {
    // A leading page holds the canary of the slab's first stack.
    std::size_t n = (kSlabBytes - page) / each;
    if (n == 0) n = 1;
    std::size_t bytes = page + n * each;
    void* base = sysAllocStack(bytes);
    if (base == nullptr) {
      unlock(&stackLock);
      return false;
    }
    slabs.push_back(Slab{base, bytes, each, std::vector<std::uint8_t>(n), 0});
    slabNext = static_cast<char*>(base) + page;
    slabEnd = static_cast<char*>(base) + bytes;
    if (guardHow != kGuardMprotect) guardSlab(&slabs.back(), page);
  }
  char* lo = slabNext;
  slabNext += each;
  bool budgeted = static_cast<std::int64_t>(stacksMade++) < guardBudget;
  Slab& slab = slabs.back();
  *s = {};
  s->slab = static_cast<std::uint32_t>(slabs.size() - 1);
  s->index = static_cast<std::uint32_t>(
      (lo - static_cast<char*>(slab.base) - page) / each);
  s->base = lo;
  s->size = each - kCanaryBytes;          // the top is the next stack's canary
  if (slab.state[s->index] & kGuarded) {  // a guard region, made with the slab
    unlock(&stackLock);
    s->guard = page;
    return true;
  }
  if (budgeted && sysGuard(lo, page)) {
    slab.state[s->index] = kGuarded;
    unlock(&stackLock);
    s->guard = page;
    return true;
  }
  unlock(&stackLock);
  // No guard: the page below the stack is usable too, and the canary sits
  // right under it, in the top of the region below.
  s->canary = reinterpret_cast<std::uintptr_t*>(lo - kCanaryBytes);
  writeCanary(s);
  return true;
}

// stackRelease: all of the stack's pages but the top one go back to the OS
// at once. The top page also holds the canary of the stack above, so it
// goes only once that stack is released too (or there is none); and the
// page below, which holds this stack's canary (the top page of the stack
// below, or the slab's leading page), goes now if nothing else uses it. A
// stack in use never loses its canary, and stackAlloc writes a released
// stack's canary again before handing it out.
void stackRelease(Stack* s) {
  std::size_t page = physPageSize();
  char* lo = static_cast<char*>(s->base);
  lock(&stackLock);
  Slab& slab = slabs[s->slab];
  std::size_t each = slab.each;
  std::size_t i = s->index;
  sysUnused(lo, each - page);  // a guard region stays (the kernel keeps it)
  slab.state[i] |= kReleased;
  if (slab.nreleased++ == 0) slabsWithFree.push_back(s->slab);
  bool last = i + 1 == slab.state.size();
  if (last || (slab.state[i + 1] & kReleased)) {
    sysUnused(lo + each - page, page);
  }
  if (i == 0 || (slab.state[i - 1] & kReleased)) sysUnused(lo - page, page);
  unlock(&stackLock);
  *s = {};
}

bool stacksShareable() { return true; }

bool terminateAtThrow() { return true; }

bool stackIntact(const Stack* s) {
  const std::uintptr_t* c = s->canary;
  if (c == nullptr) return true;
  std::uintptr_t bad = 0;
  for (std::size_t i = 0; i < kCanaryWords; i++)
    bad |= c[i] ^ canaryWord(c + i);
  return bad == 0;
}

// stackFree: stacks live until Run ends, with their Gs on the free lists;
// this only forgets the G's claim.
void stackFree(Stack* s) { *s = {}; }

void stackFreeAll(bool retain, void (*beforeUnmap)(void*, std::size_t)) {
  static std::vector<Slab>* retained = new std::vector<Slab>;
  lock(&stackLock);
  for (const Slab& slab : slabs) {
    if (retain) {
      retained->push_back(slab);
      continue;
    }
    if (beforeUnmap != nullptr) beforeUnmap(slab.base, slab.size);
    sysFreeStack(slab.base, slab.size);
  }
  slabs.clear();
  slabsWithFree.clear();
  slabNext = slabEnd = nullptr;
  stacksMade = 0;
  guardBudget = 0;
  unlock(&stackLock);
}

void stackUseGuardRegions(bool allow) {
  lock(&stackLock);
  regionsAllowed = allow;
  unlock(&stackLock);
}

#if defined(GORT_ARCH_GOGO)
// newContext: gort_gostart at the bottom of the stack calls the entry (Go's
// newproc1 pointing gp.sched at the function, with goexit below it).
Context newContext(Stack* s) {
  char* top = static_cast<char*>(s->base) + s->size;
  return gort_newcontext(top, entryFn.load(std::memory_order_relaxed));
}

// switchContext: gort_gogo stores *save itself before the jump.
void switchContext(Context* save, Context to) { gort_gogo(save, to); }
#else
Context newContext(Stack* s) {
  char* top = static_cast<char*>(s->base) + s->size;
  return ctx::make_fcontext(top, s->size - s->guard, trampoline);
}

void switchContext(Context* save, Context to) {
  ctx::transfer_t t = ctx::jump_fcontext(to, save);
  *static_cast<Context*>(t.data) = t.fctx;
}
#endif

}  // namespace gort::os
