// runtime/os/cpuprof_stub.cc: runtime/os/cpuprof_os.h where gort has no CPU
// profiler yet (Windows: Go samples there from a thread that suspends each
// runtime thread and reads its context, not done here).
#include "os/cpuprof_os.h"

namespace gort::os {

bool installProfHandler(void (*)(), const char** why) {
  *why =
      "CPU profiling is not implemented on this OS (gort samples with "
      "SIGPROF and per-thread CPU timers, Linux only)";
  return false;
}

std::intptr_t threadProfTimerStart(std::int64_t, std::int64_t) { return -1; }

void threadProfTimerStop(std::intptr_t) {}

int tracebackSignal(const void*, const void*, std::uintptr_t*, int) {
  return 0;
}

}  // namespace gort::os
