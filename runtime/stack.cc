// runtime/stack.cc: goroutine stacks (Go's stack.go, much simplified).
//
// Go grows 2 KiB stacks by copying; C++ frames cannot move, so a gort stack
// is a fixed reservation (256 KiB by default, Options.stack_size to change)
// that the OS commits page by page as it is touched. Where the memory comes
// from, and how it is guarded and pooled, is the context backend's business
// (runtime/os/context.h): slabs of mapped stacks with guard pages for
// fcontext, Windows' own fibre stacks for fibres. Stacks are kept with their
// Gs (gfput/gfget keep a dead G's stack), so steady-state spawning allocates
// nothing; they go back to the OS when Run ends.
#include "os/context.h"
#include "proc.h"

namespace gort::runtime {

// stackalloc mirrors Go's stackalloc: a stack with `size` usable bytes, on
// which goroutine contexts start at gentry.
bool stackalloc(os::Stack* s, std::size_t size) {
  return os::stackAlloc(s, size, gentry);
}

// stackfree mirrors Go's stackfree: s's G is being freed.
void stackfree(os::Stack* s) { os::stackFree(s); }

// stackfreeall returns every stack to the OS when Run ends; with retain, a
// thread abandoned in a syscall still runs on one of them, so they are kept
// mapped for good instead.
void stackfreeall(bool retain) { os::stackFreeAll(retain); }

}  // namespace gort::runtime
