// runtime/os/os.h: the one seam between the scheduler and the operating
// system (Go splits this across os_*.go, sys_*.s and mem_*.go). Everything
// the scheduler needs from the OS is declared here, except goroutine stacks
// and the switches between them (runtime/os/gogo_os.h); each OS implements
// it in runtime/os/os_<goos>.cc on top of the trampolines in runtime/arch.
// No system header is included here, so the scheduler never sees one.
#ifndef GORT_RUNTIME_OS_OS_H_
#define GORT_RUNTIME_OS_OS_H_

#include <cstddef>
#include <cstdint>

namespace gort::os {

// usleep: sleeps for usec microseconds on the calling thread (Go's usleep
// (stubs2.go:21)).
void usleep(std::uint32_t usec);
// usleepOnSystemStack: true if usleep must run on the M's own stack, g0
// (Go's Windows usleep runs through systemstack); elsewhere any stack does.
bool usleepOnSystemStack();
// osyield: gives up the thread's time slice (Go's osyield
// (sys_linux_amd64.s:655)).
void osyield();
// procyield: spins for about `cycles` pause instructions (Go's procyield
// (stubs.go:285)).
void procyield(std::uint32_t cycles);

// futexsleep: sleeps while *addr == val, at most ns (< 0: forever); may
// return early or spuriously (Go's futexsleep (os_linux.go:62)).
void futexsleep(std::uint32_t* addr, std::uint32_t val, std::int64_t ns);
// futexwakeup: wakes up to cnt threads sleeping on addr (Go's futexwakeup
// (os_linux.go:81)).
void futexwakeup(std::uint32_t* addr, std::uint32_t cnt);

// nanotime: monotonic clock in nanoseconds (Go's nanotime (time_nofake.go:18)).
std::int64_t nanotime();
// cputicks: a cheap counter running at a constant rate, for the tracer's
// timestamps (Go's cputicks (cputicks.go:11)): the CPU's time-stamp counter on
// x86 (12 ns a read on the 2-vCPU VM of docs/notes/, clock_gettime 33;
// in the tracer's records 26 ns against 65), the virtual counter on arm64
// Linux, else nanotime. Ticks are not nanoseconds (the tracer converts them
// when it stops) and another CPU's may be slightly off.
inline std::int64_t cputicks() {
#if (defined(__x86_64__) || defined(__i386__)) && \
    (defined(__GNUC__) || defined(__clang__))
  return static_cast<std::int64_t>(__builtin_ia32_rdtsc());
#elif defined(__aarch64__) && defined(__linux__)
  std::uint64_t v;
  asm volatile("mrs %0, cntvct_el0" : "=r"(v));
  return static_cast<std::int64_t>(v);
#else
  return nanotime();
#endif
}
// processFenceInit: readies processFence; true if this OS has it (Linux's
// membarrier with MEMBARRIER_CMD_PRIVATE_EXPEDITED, 4.14 and later), in
// which case a thread may pair a plain store and load with another thread's
// processFence instead of paying a full fence itself. Idempotent.
bool processFenceInit();
// Who asks for a processFence (each is counted apart, for tests).
enum class FenceFor { kDump, kLock, kTrace };
// processFence: a full memory barrier on every thread of the process that is
// running now (threads switched out passed one when they were); only after
// processFenceInit returned true. Go has no twin: gort's own (execute's
// handshake with a goroutine dump, runtime/traceback.h; a mutex's sleepers,
// runtime/lock_futex.cc; a trace record's busy flag, runtime/trace.cc).
void processFence(FenceFor who);
// processFences: how many processFence calls for who this process made.
std::int64_t processFences(FenceFor who);
// getproccount: CPUs this process may run on (Go's getproccount
// (os_linux.go:97)).
int getproccount();

// cgroupFindCPU: finds the cgroup directory whose files limit the calling
// process's CPU time (Go 1.25's cgroup.FindCPU), reading every file under
// the path prefix root ("" for the real system; tests pass a fake tree).
// Writes the directory, root included, to dir (n bytes) and returns its
// cgroup version, 1 or 2; 0 if there is none (and on other OSes).
int cgroupFindCPU(const char* root, char* dir, std::size_t n);
// cgroupReadCPULimit: the CPU limit set in dir (v2 cpu.max, v1
// cpu.cfs_quota_us / cpu.cfs_period_us) in CPUs, fractional; 0 if there is
// no limit, -1 if it cannot be read (Go's cgroup.ReadCPULimit).
double cgroupReadCPULimit(const char* dir, int version);

// An OS thread handle.
struct Thread {
  std::uintptr_t handle = 0;
  void (*fn)(void*) = nullptr;  // what the thread runs, kept here so that
  void* arg = nullptr;          // starting a thread allocates nothing
};
// newosproc: starts an OS thread running fn(arg) (Go's newosproc
// (os_linux.go:166)); false on failure. *out must stay put until the thread has
// started.
bool newosproc(void (*fn)(void*), void* arg, Thread* out);
// threadjoin: waits for a thread started by newosproc to finish.
void threadjoin(Thread t);
// threaddetach: lets a thread finish on its own; it is never joined.
void threaddetach(Thread t);

// Timer resolution of the calling thread for usleep.
enum class TimerMode { kLowRes, kHighRes };
// haveHighResTimer: reports whether kHighRes is available on this OS (on
// Windows, the probe of Go's initHighResTimer (os_windows.go:466), which osinit
// calls).
bool haveHighResTimer();
// setThreadTimerMode: applies mode to the calling runtime thread (the
// timer part of Go's minit (os_linux.go:392)); returns false if the OS refused.
bool setThreadTimerMode(TimerMode mode);
// mdestroy: releases the calling runtime thread's per-M OS state (Windows:
// its waitable timer) when the M ends (Go's mdestroy (os_linux.go:410)).
void mdestroy();
// osRelax: true when every P is idle and sysmon sleeps long, or no Run is in
// progress; false when work resumes. Windows gives back its 1 ms timer
// period meanwhile; a no-op elsewhere (Go's osRelax (os_windows.go:426)).
void osRelax(bool relax);
// timerFallbacks: runtime threads so far that wanted kHighRes and sleep at
// low resolution instead (no timer of their own, or it failed); only grows.
std::int64_t timerFallbacks();

// Goroutine stacks and the contexts on them: runtime/os/gogo_os.h.
// physPageSize: the OS page size.
std::size_t physPageSize();
// mappingsLeft: how many more memory mappings the process may make before
// the kernel refuses (Linux: vm.max_map_count minus the lines of
// /proc/self/maps); -1 where the OS sets no such limit.
std::int64_t mappingsLeft();
// heapRelease: gives the C++ heap's free pages back to the OS (glibc's
// malloc_trim, as bgscavenge (mgcscavenge.go:613) does for the Go heap);
// nothing where the allocator does it by itself.
void heapRelease();

// installFaultHandler: on SIGSEGV/SIGBUS, calls onFault(address, sp) on the
// thread's signal stack, sp being the faulting thread's stack pointer
// (nullptr where the OS layer cannot tell); if it returns, the fault is not
// the runtime's and takes its default action (Go's sighandler
// (signal_unix.go:608), for the one case gort needs).
void installFaultHandler(void (*onFault)(void* addr, void* sp));
// minitSignalStack / unminitSignalStack: give the calling thread an
// alternate signal stack, so a fault on a full goroutine stack can still be
// handled (Go's minitSignalStack (signal_unix.go:1209)).
void minitSignalStack();
void unminitSignalStack();

// gettid: the calling thread's OS id (Linux's gettid), for threadBlocked.
std::int64_t gettid();
// threadBlocked: 1 if thread tid (from gettid) is asleep in the kernel (a
// blocking call, a lock), 0 if it is running or waiting for a CPU, -1 if
// the OS cannot tell. For sysmon's blocked-thread warning only.
int threadBlocked(std::int64_t tid);

// writeErr: writes n bytes to standard error, unbuffered (Go's writeErr
// (write_err.go:11)).
void writeErr(const char* s, std::size_t n);
// writeFile: creates or truncates path and writes n bytes; false on error.
bool writeFile(const char* path, const char* data, std::size_t n);
// exit: ends the process at once with code (Go's exit).
[[noreturn]] void exit(int code);
// crash: ends the process with SIGABRT through any handler installed for
// it (Go's crash (signal_unix.go:951), for GOTRACEBACK=crash).
[[noreturn]] void crash();
// getenv: an environment variable or nullptr (Go's gogetenv (env_posix.go:11)).
const char* getenv(const char* name);

}  // namespace gort::os

#endif  // GORT_RUNTIME_OS_OS_H_
