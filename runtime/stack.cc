// runtime/stack.cc: goroutine stacks (Go's stack.go, much simplified).
//
// Go grows 2 KiB stacks by copying; C++ frames cannot move, so a gort stack
// is a fixed reservation (256 KiB by default, Options.stack_size to change)
// that the OS commits page by page as it is touched. Stacks are carved out
// of slabs of about 16 MiB, one mapping each, and pooled with their Gs
// (gfput/gfget keep a dead G's stack), so steady-state spawning maps
// nothing. Slabs go back to the OS when Run ends.
//
// Stacks get an inaccessible guard page below them while the kernel's
// mapping limit allows: each guard splits its slab's mapping in two, and
// the kernel allows a process only vm.max_map_count mappings (65 530 by
// default), so the budget is half of what is left when a Run makes its
// first stack, less a headroom for everything else. Later stacks go without
// one (that is what lets a million goroutines start) and get a canary
// instead: kCanaryBytes of a known pattern just below the stack's limit, at
// the top of the region below (each stack gives up its top kCanaryBytes to
// the canary of the stack above, so no page is touched for it that the
// stack below does not touch anyway). stackcheck verifies it whenever the
// goroutine switches to g0 (parks, yields, enters a blocking call through
// the scheduler, exits) and on any fault, so an overflow that writes below
// the limit ends the program with "fatal error: stack overflow" (reliability.md
// states the exact guarantee).
#include <vector>

#include "os/os.h"
#include "panic.h"
#include "proc.h"
#include "race.h"

namespace gort::runtime {

namespace {

constexpr std::size_t kSlabBytes = std::size_t{16} << 20;
// Guards are budgeted from the mappings left, keeping this many (or a
// quarter of them, if more) for threads, the heap and the program.
constexpr std::int64_t kMappingHeadroom = 8192;
// Where the OS sets no mapping limit (Windows never gets here).
constexpr std::int64_t kDefaultGuards = 16384;
constexpr std::size_t kCanaryBytes = 1024;
constexpr std::size_t kCanaryWords = kCanaryBytes / sizeof(std::uintptr_t);

struct Slab {
  void* base;
  std::size_t size;
};

mutex stackLock;
std::vector<Slab> slabs ABSL_GUARDED_BY(stackLock);
char* slabNext ABSL_GUARDED_BY(stackLock) = nullptr;  // next free stack
char* slabEnd ABSL_GUARDED_BY(stackLock) = nullptr;
std::size_t stacksMade ABSL_GUARDED_BY(stackLock) = 0;
[[maybe_unused]] std::int64_t guardBudget ABSL_GUARDED_BY(stackLock) = 0;

// canaryWord: the value of canary word i at address p; it depends on the
// address, so a stack copied or shifted in place does not look intact.
std::uintptr_t canaryWord(const std::uintptr_t* p) {
  return static_cast<std::uintptr_t>(0x9e3779b97f4a7c15ULL) ^
         reinterpret_cast<std::uintptr_t>(p);
}

// guardsAffordable: how many stacks of this Run may have a guard page.
[[maybe_unused]] std::int64_t guardsAffordable() {
  std::int64_t left = os::mappingsLeft();
  if (left < 0) return kDefaultGuards;
  std::int64_t keep = left / 4 > kMappingHeadroom ? left / 4 : kMappingHeadroom;
  return left > keep ? (left - keep) / 2 : 0;
}

}  // namespace

// stackcanaryok reports whether the canary of s (if it has one) is intact.
bool stackcanaryok(const struct stack* s) {
  const std::uintptr_t* c = s->canary;
  if (c == nullptr) return true;
  std::uintptr_t bad = 0;
  for (std::size_t i = 0; i < kCanaryWords; i++) bad |= c[i] ^ canaryWord(c + i);
  return bad == 0;
}

// stackoverflow prints Go's stack overflow report for gp and exits with
// status 2 (Go's newstack, when a stack would grow past its maximum).
void stackoverflow(G* gp) {
  printErr("runtime: goroutine stack exceeds its ");
  printErrInt(static_cast<std::int64_t>(gp->stack.size - gp->stack.guard));
  printErr("-byte limit\nfatal error: stack overflow\n\ngoroutine ");
  printErrInt(gp->goid);
  printErr(" [running]:\n");
  os::exit(2);
}

// stackcheck runs on g0 after every switch back from gp: an unguarded
// stack whose canary was written has overflowed (Go checks the stack bound
// in each function's prologue instead; C++ frames cannot).
void stackcheck(G* gp) {
  if (!stackcanaryok(&gp->stack)) stackoverflow(gp);
}

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
#else
// stackalloc mirrors Go's stackalloc: `size` usable bytes, with one guard
// page below them while guards are affordable, else a canary.
bool stackalloc(struct stack* s, std::size_t size) {
  std::size_t page = os::physPageSize();
  std::size_t each = size + page;  // room for a guard page either way
  lock(&stackLock);
  if (stacksMade == 0) guardBudget = guardsAffordable();  // once per Run
  if (slabNext == nullptr || slabEnd - slabNext < static_cast<long>(each)) {
    // A leading page holds the canary of the slab's first stack.
    std::size_t n = (kSlabBytes - page) / each;
    if (n == 0) n = 1;
    std::size_t bytes = page + n * each;
    void* base = os::sysAllocStack(bytes, 0);
    if (base == nullptr) {
      unlock(&stackLock);
      return false;
    }
    slabs.push_back(Slab{base, bytes});
    slabNext = static_cast<char*>(base) + page;
    slabEnd = static_cast<char*>(base) + bytes;
  }
  char* lo = slabNext;
  slabNext += each;
  bool guarded = static_cast<std::int64_t>(stacksMade++) < guardBudget;
  unlock(&stackLock);
  if (guarded && !os::sysGuard(lo, page)) guarded = false;
  *s = {};
  s->base = lo;
  s->size = each - kCanaryBytes;  // the top is the next stack's canary
  if (guarded) {
    s->guard = page;
  } else {
    // No guard: the page below the stack is usable too, and the canary sits
    // right under it.
    s->guard = 0;
    s->canary = reinterpret_cast<std::uintptr_t*>(lo - kCanaryBytes);
    for (std::size_t i = 0; i < kCanaryWords; i++) {
      s->canary[i] = canaryWord(s->canary + i);
    }
  }
  return true;
}

// stackfree mirrors Go's stackfree. Stacks live until Run ends, with their
// Gs on the free lists; this only forgets the G's claim.
void stackfree(struct stack* s) { *s = {}; }
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
  guardBudget = 0;
  unlock(&stackLock);
}

}  // namespace gort::runtime
