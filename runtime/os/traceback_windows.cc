// runtime/os/traceback_windows.cc: the Windows side of
// runtime/os/traceback_os.h.
//
// Goroutine stacks are fibres here; walking a switched-out fibre is not done
// yet, so a dump prints each goroutine's header and "stack unavailable on
// this target" (docs/targets.md). Naming addresses (symbolize) is
// symbolize_windows.cc's; the CPU profiler's walk of a suspended thread is
// cpuprof_windows.cc's. Ctrl-Break in a console is Windows' SIGQUIT: the
// console calls its handler on a new thread, which wakes the dumper like the
// Linux signal handler does.
#include <windows.h>

#include "os/traceback_os.h"

namespace gort::os {

int tracebackParked(void*, const void*, const void*, std::uintptr_t*, int) {
  return -1;
}

int tracebackSelf(const void*, const void*, std::uintptr_t*, int) { return -1; }

int tracebackParkedCached(void* ctx, const void* lo, const void* hi,
                          std::uintptr_t* pcs, int max, std::uint64_t** tag) {
  if (tag != nullptr) *tag = nullptr;
  return tracebackParked(ctx, lo, hi, pcs, max);
}

int tracebackSelfCached(const void* lo, const void* hi, std::uintptr_t* pcs,
                        int max, std::uint64_t** tag) {
  if (tag != nullptr) *tag = nullptr;
  return tracebackSelf(lo, hi, pcs, max);
}

std::int64_t tracebackCacheHits() { return 0; }

namespace {
void (*quitHook)() = nullptr;

BOOL WINAPI ctrlHandler(DWORD type) {
  if (type != CTRL_BREAK_EVENT || quitHook == nullptr) return FALSE;
  quitHook();
  for (;;) Sleep(INFINITE);  // the dumper ends the process
}
}  // namespace

bool installQuitHandler(void (*onQuit)()) {
  quitHook = onQuit;
  return SetConsoleCtrlHandler(ctrlHandler, TRUE) != 0;
}

}  // namespace gort::os
