// runtime/os/cpuprof_os.h: what the CPU profiler (runtime/cpuprof.cc) needs
// from the OS: a profiling signal whose handler the runtime supplies, a
// per-thread CPU-time timer that sends it (Go's setThreadCPUProfiler
// (os_linux.go:613) (signal_unix.go) on Linux: timer_create on the thread's CPU
// clock, aimed at that thread), and, from inside the handler, the interrupted
// stack. No system header here.
#ifndef GORT_RUNTIME_OS_CPUPROF_OS_H_
#define GORT_RUNTIME_OS_CPUPROF_OS_H_

#include <cstdint>

namespace gort::os {

// installProfHandler: makes onProf the profiling signal's handler (SIGPROF on
// Linux), once per process; onProf runs on the thread the timer fired for
// and must be async-signal-safe. Returns false, with why set to a static
// reason, where this OS has no such signal or timer.
bool installProfHandler(void (*onProf)(), const char** why);

// threadProfTimerStart: arms a timer on thread tid's CPU clock (tid from
// gettid) that sends the profiling signal to that thread every periodNs of
// CPU it uses; returns its handle, or -1 (the thread has exited, or the OS
// refused).
std::intptr_t threadProfTimerStart(std::int64_t tid, std::int64_t periodNs);
// threadProfTimerStop: disarms and deletes a timer from threadProfTimerStart.
void threadProfTimerStop(std::intptr_t timer);

// tracebackSignal, called in onProf: the interrupted instruction's address
// plus one (so that, as the return addresses after it, it names its own call
// when symbolized), then the return addresses of its callers, at most max.
// Frames outside [lo, hi) end the walk, when hi is not nullptr (a goroutine
// stack). Where the handler was not entered through a signal frame
// (ThreadSanitizer delivers signals from its own code), the stack is the
// handler's callers, from the handler itself. Returns how many, 0 where this
// target cannot walk from a signal.
// Async-signal-safe: libgcc's unwinder on the stack, finding unwind tables
// through glibc's lock-free _dl_find_object (glibc 2.35, GCC 12), no
// allocation.
int tracebackSignal(const void* lo, const void* hi, std::uintptr_t* pcs,
                    int max);

}  // namespace gort::os

#endif  // GORT_RUNTIME_OS_CPUPROF_OS_H_
