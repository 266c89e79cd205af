// runtime/stack.cc: goroutine stacks (Go's stack.go, much simplified).
//
// Go grows 2 KiB stacks by copying; C++ frames cannot move, so a gort stack
// is a fixed reservation (256 KiB by default, Options.stack_size to change)
// that the OS commits page by page as it is touched, with an inaccessible
// guard page below it. Stacks are pooled with their Gs (gfput/gfget keep a
// dead G's stack), so steady-state spawning maps nothing.
#include "os/os.h"
#include "proc.h"

namespace gort::runtime {

// stackalloc mirrors Go's stackalloc: a fresh mapping of `size` usable bytes
// plus one guard page.
bool stackalloc(struct stack* s, std::size_t size) {
  std::size_t guard = os::physPageSize();
  std::size_t total = size + guard;
  void* base = os::sysAllocStack(total, guard);
  if (base == nullptr) return false;
  s->base = base;
  s->size = total;
  s->guard = guard;
  return true;
}

// stackfree mirrors Go's stackfree.
void stackfree(struct stack* s) {
  if (s->base != nullptr) os::sysFreeStack(s->base, s->size);
  *s = {};
}

}  // namespace gort::runtime
