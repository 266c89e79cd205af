// runtime/os/gogo_fiber.cc: the Windows backend of runtime/os/gogo_os.h:
// every goroutine stack is a fibre (Go's Windows port switches stacks in
// assembly instead; gort needs Windows to keep the thread's stack bounds,
// exception list and floating-point state right on every switch, which
// C++ exceptions under Wine and Windows check, and Boost's fcontext does
// not do under Wine).
//
// Windows reserves each fibre's stack, with its own guard page, and frees it
// with the fibre, so a stack and its context are one thing here: a G's fibre
// lives as long as its stack. When the G is reused its fibre resumes where
// it left off, in goexit1, and the entry loops to run the new body, so
// respawning creates nothing. A runtime thread becomes a fibre itself the
// first time its g0 switches away.

#include <atomic>

#include "os/gogo_os.h"
#include "os/os.h"
#include "os/windows_sdk.h"

namespace gort::os {

namespace {

// The runtime's goroutine entry (always the same function), from stackAlloc.
std::atomic<ContextEntry> entryFn{nullptr};

// fiberStart is the bottom frame of every fibre (stdcall on 386): it records
// the fibre's real stack bounds, which Windows chose, for the stack-overflow
// check, and runs the entry.
VOID WINAPI fiberStart(LPVOID param) {
  Stack* s = static_cast<Stack*>(param);
  ULONG_PTR lo = 0, hi = 0;
  GetCurrentThreadStackLimits(&lo, &hi);
  s->base = reinterpret_cast<void*>(lo);
  s->size = hi - lo;
  s->guard = physPageSize();
  entryFn.load(std::memory_order_relaxed)();
}

// fiberOfThread: the calling thread as a fibre, converting it the first time.
// GetCurrentFiber reads the TEB through mingw-w64's __readgsqword, whose
// memory operand GCC 12 takes for an access to address 0x20 (or 0x10 on
// 386) and warns about (-Warray-bounds); the read is of %gs/%fs, not 0x20.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
void* fiberOfThread() {
  if (IsThreadAFiber()) return GetCurrentFiber();
  return ConvertThreadToFiberEx(nullptr, FIBER_FLAG_FLOAT_SWITCH);
}
#pragma GCC diagnostic pop

}  // namespace

// stackAlloc: a fibre with a `size`-byte stack reservation; until the fibre
// first runs, base holds the fibre (the bounds are not known yet).
bool stackAlloc(Stack* s, std::size_t size, ContextEntry entry) {
  entryFn.store(entry, std::memory_order_relaxed);
  *s = {};
  void* f = CreateFiberEx(0, size, FIBER_FLAG_FLOAT_SWITCH, fiberStart, s);
  if (f == nullptr) return false;
  s->owner = f;
  s->base = f;
  s->size = size;
  return true;
}

void stackFree(Stack* s) {
  if (s->owner != nullptr) DeleteFiber(s->owner);
  *s = {};
}

// stackRelease: the fibre goes, and with it its stack.
void stackRelease(Stack* s) { stackFree(s); }

// stacksShareable: a fibre resumes only in its own G's loop.
bool stacksShareable() { return false; }

// terminateAtThrow: not relied on under SEH; goroutines catch instead.
bool terminateAtThrow() { return false; }

// stackIntact: fibre stacks always have Windows' guard page, no canary.
bool stackIntact(const Stack*) { return true; }

// stackFreeAll: each fibre's stack went with its fibre in stackFree.
void stackFreeAll(bool, void (*)(void*, std::size_t)) {}

// stackUseGuardRegions: every fibre has Windows' own guard page.
void stackUseGuardRegions(bool) {}

Context newContext(Stack* s) { return s->owner; }

void switchContext(Context* save, Context to) {
  if (*save == nullptr) *save = fiberOfThread();
  SwitchToFiber(to);
}

}  // namespace gort::os
