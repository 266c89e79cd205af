// runtime/os/cpuprof_linux.cc: the Linux side of runtime/os/cpuprof_os.h.
//
// As Go 1.18+ does (setThreadCPUProfiler (signal_unix.go) and os_linux.go),
// each thread gets its own timer on its own CPU clock, delivering SIGPROF to
// that very thread (SIGEV_THREAD_ID): a process-wide setitimer(ITIMER_PROF)
// would send one signal to whichever thread the kernel picks and lose the
// ticks of threads running at the same time. Unlike Go, the timer is created
// by another thread (the profiler's reader) on the target's clock, named by
// its thread id as glibc's pthread_getcpuclockid names it, so the scheduler
// need not check for a profiling rate as it runs goroutines.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "os/cpuprof_os.h"

namespace gort::os {

namespace {

void (*profHook)() = nullptr;  // ProfHooks::onSignal

void profHandler(int, siginfo_t*, void*) {
  int saved = errno;  // the interrupted code's
  profHook();
  errno = saved;
}

// threadCPUClock: the CPU-time clock of thread tid (the kernel's
// MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)).
clockid_t threadCPUClock(std::int64_t tid) {
  return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6);
}

}  // namespace

bool installProfHandler(const ProfHooks& hooks, const char** why) {
  static bool installed = false;  // callers serialize (cpuprof.cc's lock)
  if (installed) return true;
  profHook = hooks.onSignal;
  struct sigaction sa = {};
  sa.sa_sigaction = profHandler;
  // SA_ONSTACK: the unwinder needs more room than a goroutine may have left.
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGPROF, &sa, nullptr) != 0) {
    *why = "sigaction(SIGPROF) failed";
    return false;
  }
  installed = true;
  return true;
}

std::intptr_t threadProfTimerStart(std::int64_t tid, std::int64_t periodNs,
                                   void*) {
  struct sigevent sev = {};
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = SIGPROF;
  sev._sigev_un._tid = static_cast<pid_t>(tid);
  timer_t t;
  if (timer_create(threadCPUClock(tid), &sev, &t) != 0) return -1;
  struct itimerspec its = {};
  its.it_interval.tv_sec = periodNs / 1000000000;
  its.it_interval.tv_nsec = periodNs % 1000000000;
  // The first tick at a spread offset (Go randomizes it), so that threads
  // started together are not sampled in step.
  std::int64_t first =
      1 + static_cast<std::int64_t>(static_cast<std::uint64_t>(tid) *
                                    2654435761u % periodNs);
  its.it_value.tv_sec = first / 1000000000;
  its.it_value.tv_nsec = first % 1000000000;
  if (timer_settime(t, 0, &its, nullptr) != 0) {
    timer_delete(t);
    return -1;
  }
  return reinterpret_cast<std::intptr_t>(t);
}

void threadProfTimerStop(std::intptr_t timer) {
  timer_delete(reinterpret_cast<timer_t>(timer));
}

}  // namespace gort::os
