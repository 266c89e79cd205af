// runtime/os/cpuprof_os.h: what the CPU profiler (runtime/cpuprof.cc) needs
// from the OS. Two shapes, one per OS family, behind one interface:
//   - signal (Linux): a profiling signal whose handler the runtime supplies,
//     and a per-thread CPU-time timer that sends it (Go's
//     setThreadCPUProfiler (os_linux.go:613) (signal_unix.go): timer_create
//     on the thread's CPU clock, aimed at that thread); the handler runs on
//     the sampled thread and walks its own stack (tracebackSignal);
//   - sampler (Windows, as Go's profileLoop (os_windows.go:1244)): a thread
//     of the OS layer's own suspends each armed thread that used a period of
//     CPU since its last sample, asks the runtime, while it is suspended,
//     what runs there, and walks the suspended thread's stack for it.
// No system header here.
#ifndef GORT_RUNTIME_OS_CPUPROF_OS_H_
#define GORT_RUNTIME_OS_CPUPROF_OS_H_

#include <cstdint>

namespace gort::os {

// ProfHooks: the runtime's side of a sample, one member per shape.
struct ProfHooks {
  // Signal shape: runs on the thread the timer fired for; async-signal-safe.
  void (*onSignal)();
  // Sampler shape: called on the sampler thread while the thread armed with
  // arg is suspended at stack pointer sp. Returns where the walk goes (pcs,
  // room for max) and a cookie for onWalked, or nullptr for no sample. Must
  // not allocate nor take a lock the suspended thread may hold.
  void* (*onSuspended)(void* arg, std::uintptr_t sp, std::uintptr_t** pcs,
                       int* max);
  // Sampler shape: after the walk, with the thread resumed: n frames, as
  // tracebackSignal returns them (the sampled pc plus one, then return
  // addresses).
  void (*onWalked)(void* cookie, int n);
};

// installProfHandler: installs hooks, once per process (SIGPROF's handler on
// Linux; the sampler thread on Windows). Returns false, with why set to a
// static reason, where this OS has no such signal, timer or sampler.
bool installProfHandler(const ProfHooks& hooks, const char** why);

// threadProfTimerStart: arms thread tid (from gettid) to be sampled every
// periodNs of CPU it uses (a timer on its CPU clock sending the signal to it;
// on Windows, a place in the sampler's list, arg being what onSuspended
// gets); returns its handle, or -1 (the thread has exited, or the OS
// refused).
std::intptr_t threadProfTimerStart(std::int64_t tid, std::int64_t periodNs,
                                   void* arg);
// threadProfTimerStop: disarms a handle from threadProfTimerStart; once it
// returns, no sample of that thread is being taken (sampler shape).
void threadProfTimerStop(std::intptr_t timer);

// tracebackSignal, called in onSignal: the interrupted instruction's address
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
