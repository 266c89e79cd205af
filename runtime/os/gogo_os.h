// runtime/os/gogo_os.h: the stack-switch seam. Every goroutine runs in an
// execution context on a stack of its own; the scheduler allocates those
// stacks, makes contexts on them and switches between them only through this
// header (Go does this part in asm_<arch>.s's gogo and mcall, and in
// stack.go's calls into mem_<os>.go). Each target has one backend, chosen
// in runtime/CMakeLists.txt as the OS file is:
//   os/gogo_fcontext.cc  POSIX: stacks the backend maps itself (with
//                           guard pages), switched by runtime/arch's
//                           gort_gogo where there is one (linux/amd64),
//                           else by Boost.Context's fcontext;
//   os/gogo_fiber.cc     Windows: fibres, whose stacks Windows allocates
//                           (the OS then keeps the thread's stack bounds and
//                           exception list right on every switch).
// No system header is included here, so the scheduler never sees one.
#ifndef GORT_RUNTIME_OS_GOGO_OS_H_
#define GORT_RUNTIME_OS_GOGO_OS_H_

#include <cstddef>
#include <cstdint>

namespace gort::os {

// Context: a suspended execution context, what a switch resumes (Go's
// gobuf). nullptr is "none yet".
using Context = void*;

// ContextEntry: the bottom frame of every goroutine context; never returns.
using ContextEntry = void (*)();

// Stack: one goroutine stack. [base, base + guard) is the guard region
// (inaccessible, or just unused); the goroutine runs in [base + guard,
// base + size).
struct Stack {
  void* base = nullptr;  // start of the reservation (the guard)
  std::size_t size = 0;  // whole reservation, guard included
  std::size_t guard = 0;
  Context owner = nullptr;  // a backend whose stacks come with their own
                            // context (fibres) keeps it here
  // A stack without a guard page: the words just below its limit, which
  // stackIntact checks (nullptr when the stack has a guard).
  std::uintptr_t* canary = nullptr;
  // Where a backend that carves stacks out of slabs (fcontext) put this one:
  // its slab and its index there (stackRelease finds its neighbours).
  std::uint32_t slab = 0;
  std::uint32_t index = 0;
};

// stackAlloc: gives *s a stack with `size` usable bytes, on which contexts
// will start at entry; false when out of memory (Go's stackalloc
// (stack.go:344), OS part).
bool stackAlloc(Stack* s, std::size_t size, ContextEntry entry);
// stackIntact: false if s has a canary and something wrote over it (the
// goroutine ran below its stack); true for guarded stacks.
bool stackIntact(const Stack* s);
// stacksShareable: whether a stack may pass from one goroutine to another
// (the runtime's per-P stack cache); false where a stack is bound to its
// own context (fibres).
bool stacksShareable();
// stackFree: *s's goroutine is gone for good; forgets the stack (the backend
// may keep its memory until stackFreeAll). Go's stackfree (stack.go:447), OS
// part.
void stackFree(Stack* s);
// stackRelease: s's goroutine is gone and its G is being freed while the Run
// goes on (the runtime's scavenger): the stack's memory goes back to the OS
// (its address range may be handed out again by stackAlloc); *s is emptied.
// What markrootFreeGStacks (mgcmark.go:293) and then the background
// scavenger do for an idle G's stack in Go, OS part.
void stackRelease(Stack* s);
// stackFreeAll: returns every stack's memory to the OS when Run ends; with
// retain, an abandoned thread may still run on one, so it stays mapped.
// beforeUnmap (may be nullptr) sees each region just before it is unmapped
// (the runtime forgets its sanitizer state there; the OS layer knows none).
void stackFreeAll(bool retain,
                  void (*beforeUnmap)(void* base, std::size_t size));
// stackUseGuardRegions: whether the next Run's stacks may get their guard
// pages as guard regions where the kernel has them (GODEBUG=guardregions=0:
// not; mprotect'ed pages, budgeted), for a backend that maps its own stacks.
void stackUseGuardRegions(bool allow);

// terminateAtThrow: an exception that leaves a noexcept function calls
// std::terminate from the throw itself, before any frame is unwound (GCC's
// two-phase unwinding fails in its search phase there), so the throwing
// frames can still be walked; false where that is not relied on (Windows'
// SEH unwinding).
bool terminateAtThrow();

// newContext: the context that starts a goroutine at s's entry. A backend
// whose stacks come with their own context (fibres) returns that one, which
// on a reused stack resumes where the last goroutine left it: the entry
// must loop (see gentry in gogo.cc).
Context newContext(Stack* s);
// switchContext: saves the running context in *save and resumes `to`;
// returns when something switches back to what was saved. A backend may
// leave *save alone when it already holds the running context.
void switchContext(Context* save, Context to);

}  // namespace gort::os

#endif  // GORT_RUNTIME_OS_GOGO_OS_H_
