// gort/runtime.h: running goroutines (Go's package runtime, the parts a
// program calls: go statements, Gosched, GOMAXPROCS, NumGoroutine, and the
// syscall wrappers that let sysmon hand a P away while a goroutine blocks).
#ifndef GORT_RUNTIME_H_
#define GORT_RUNTIME_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "gort/internal/func.h"

namespace gort {

// How the runtime's usleep sleeps: Go's default slack, or high resolution.
enum class UsleepMode {
  kAuto,     // kHighRes where the OS allows it, else kLowRes.
  kHighRes,  // Linux: 1 ns timer slack on runtime threads (Windows: HR timer).
  kLowRes,   // Go's behaviour: threads keep the OS default timer slack.
};

// Settings for one call of Run.
struct Options {
  int maxprocs = 0;                       // 0: $GOMAXPROCS, else the CPU count.
  UsleepMode usleep = UsleepMode::kAuto;  // usleep mode of runtime threads.
  // Goroutine stack bytes; 0: 256 KiB. Stacks do not grow as Go's do: a
  // deeper recursion ends the program with "stack overflow"; raise this.
  std::size_t stack_size = 0;
};

// Thrown for Go's run-time panics; what() is Go's message.
class Panic : public std::runtime_error {
 public:
  // Makes a panic carrying Go's message, such as "send on closed channel".
  explicit Panic(const std::string& message) : std::runtime_error(message) {}
};

namespace internal {
// Runs main as goroutine 1 on a fresh runtime; returns when main returns.
void RunMain(Func main, const Options& options);
// Starts fn as a new goroutine (Go's newproc (proc.go:4094)).
void NewProc(Func fn);
// The same, recording pc (the Go call's return address) for "created by".
void NewProc(Func fn, const void* pc);
// Go's entersyscall (proc.go:3678), called before a syscall that may block
// briefly.
void EnterSyscall();
// Go's entersyscallblock (proc.go:3712): hands the P off at once.
void EnterSyscallBlock();
// Go's exitsyscall (proc.go:3773): takes a P back or queues the goroutine and
// waits.
void ExitSyscall();

// Runs fn between enter() and ExitSyscall(); an exception from fn propagates
// after the goroutine has its P back: it is caught, ExitSyscall runs, and
// then it is rethrown.
template <class F>
auto WrapSyscall(void (*enter)(), F&& fn) -> std::invoke_result_t<F> {
  using R = std::invoke_result_t<F>;
  std::exception_ptr error;
  enter();
  if constexpr (std::is_void_v<R>) {
    try {
      std::forward<F>(fn)();
    } catch (...) {
      error = std::current_exception();
    }
    ExitSyscall();
    if (error) std::rethrow_exception(error);
  } else {
    std::optional<R> result;
    try {
      result.emplace(std::forward<F>(fn)());
    } catch (...) {
      error = std::current_exception();
    }
    ExitSyscall();
    if (error) std::rethrow_exception(error);
    return std::move(*result);
  }
}
}  // namespace internal

// Runs main as goroutine 1 and returns when it returns, after the runtime's
// threads have stopped; goroutines still blocked then are abandoned.
template <class F>
void Run(F&& main, const Options& options = {}) {
  internal::RunMain(internal::Func(std::forward<F>(main)), options);
}

// Starts fn as a new goroutine (Go's `go fn()`); fn may be move-only. Never
// inlined, so that a goroutine dump can name the function that called it.
template <class F>
[[gnu::noinline]] void Go(F&& fn) {
  internal::NewProc(internal::Func(std::forward<F>(fn)),
                    __builtin_return_address(0));
}

// Yields the processor so other goroutines may run (runtime.Gosched).
void Gosched();

// Wires the calling goroutine to its thread: no other goroutine runs there
// until as many UnlockOSThread calls; ending while wired ends the thread
// (runtime.LockOSThread).
void LockOSThread();

// Undoes one LockOSThread; does nothing if there is none
// (runtime.UnlockOSThread).
void UnlockOSThread();

// Parks the calling goroutine for at least d (time.Sleep).
void Sleep(std::chrono::nanoseconds d);

// Sets the number of Ps to n and returns the previous value; n < 1 queries.
int GOMAXPROCS(int n);

// The calling goroutine's stack, and with all every other goroutine's, as
// Go's runtime.Stack (mprof.go:1193) formats them; inside a Run only.
std::string Stack(bool all);

// Number of goroutines that exist, main included (runtime.NumGoroutine).
int NumGoroutine();

// Monotonic clock in nanoseconds (runtime.nanotime).
std::int64_t Nanotime();

// Runs fn as a syscall: sysmon may retake the P if fn blocks (Go's
// entersyscall / exitsyscall); returns fn's result, rethrows its exception.
template <class F>
auto Syscall(F&& fn) -> std::invoke_result_t<F> {
  return internal::WrapSyscall(&internal::EnterSyscall, std::forward<F>(fn));
}

// Like Syscall, but hands the P to another thread at once
// (Go's entersyscallblock (proc.go:3712)), for calls known to block.
template <class F>
auto BlockingSyscall(F&& fn) -> std::invoke_result_t<F> {
  return internal::WrapSyscall(&internal::EnterSyscallBlock,
                               std::forward<F>(fn));
}

// A read-only snapshot of scheduler counters, for tests, tools and tracing.
struct Stats {
  int gomaxprocs = 0;         // Ps in use.
  int goroutines = 0;         // Live goroutines (NumGoroutine).
  int threads = 0;            // Ms created by this Run, sysmon included.
  int idle_ps = 0;            // Ps on the idle list.
  int spinning_ms = 0;        // Ms looking for work.
  std::int64_t steals = 0;    // Successful runqsteal calls.
  std::int64_t stolen = 0;    // Goroutines moved by those steals.
  std::int64_t handoffs = 0;  // Ps retaken from syscalls by sysmon.
  std::int64_t preempt_requests = 0;  // Goroutines flagged by sysmon.
  std::int64_t sysmon_wakes = 0;      // Times sysmon's usleep returned.
  std::int64_t block_warnings = 0;    // Blocked-thread warnings printed.
  // Dead goroutines kept for reuse on the global free list, most with their
  // stacks (each P keeps up to 64 more, not counted).
  int free_gs = 0;
  // Idle dead goroutines the scavenger freed during the Run (after
  // GODEBUG=scavenge ms unused, default 2000), and the stacks among them whose
  // memory went back to the OS.
  std::int64_t gs_freed = 0;
  std::int64_t stacks_released = 0;
  int usleep_fallbacks = 0;  // Threads that lost kHighRes: sleep at low res.
  UsleepMode usleep = UsleepMode::kLowRes;  // kHighRes iff every thread has it.
  // How the network poller's timed waits reach below a millisecond while it
  // is in use: "epoll_pwait2", "timerfd", "wait completion packet", "none".
  const char* netpoll_highres = "none";
};

// Returns the counters of the current Run, or of the last one after it ended.
Stats ReadStats();

}  // namespace gort

#endif  // GORT_RUNTIME_H_
