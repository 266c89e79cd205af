// runtime/os/cpuprof_stub.cc: runtime/os/cpuprof_os.h where gort has no CPU
// profiler (an OS with neither the signal shape of cpuprof_linux.cc nor the
// sampler shape of cpuprof_windows.cc).
#include "os/cpuprof_os.h"

namespace gort::os {

bool installProfHandler(const ProfHooks&, const char** why) {
  *why =
      "CPU profiling is not implemented on this OS (gort samples with "
      "SIGPROF on Linux and a sampling thread on Windows)";
  return false;
}

std::intptr_t threadProfTimerStart(std::int64_t, std::int64_t, void*) {
  return -1;
}

void threadProfTimerStop(std::intptr_t) {}

int tracebackSignal(const void*, const void*, std::uintptr_t*, int) {
  return 0;
}

}  // namespace gort::os
