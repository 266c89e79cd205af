// runtime/os/os_windows_testing.h: test hooks of runtime/os/os_windows.cc.
// tests/os_windows_test.cc replaces the Windows calls the usleep and timed
// futex paths depend on, to force each fault path (no high-resolution
// timer, a failing SetWaitableTimer, no wake event, winmm missing, no
// LOAD_LIBRARY_SEARCH_SYSTEM32) and reads what the OS layer did. Nothing here
// is meant for programs.
#ifndef GORT_RUNTIME_OS_OS_WINDOWS_TESTING_H_
#define GORT_RUNTIME_OS_OS_WINDOWS_TESTING_H_

#include <atomic>
#include <cstdint>

namespace gort::os::windows_testing {

// The replaceable calls. Defaults are the real Windows functions; a test
// sets one, calls reinit(), and restores the defaults with reset().
struct Hooks {
  // CreateWaitableTimerExW(NULL, NULL, flags, access); returns a HANDLE.
  void* (*createTimer)(std::uint32_t flags, std::uint32_t access);
  // winmm.dll from System32 (loadSystemLib); returns an HMODULE or nullptr.
  void* (*loadWinmm)();
  // Whether LoadLibraryExW takes LOAD_LIBRARY_SEARCH_SYSTEM32; false makes
  // loadSystemLib load by the system directory's full path instead.
  bool (*haveSearchSystem32)();
  // CreateEventW(NULL, FALSE, FALSE, NULL): an M's wake event for its
  // timed futex waits; returns a HANDLE or nullptr.
  void* (*createEvent)();
};
// hooks: the calls os_windows.cc makes through.
extern Hooks hooks;

// What the OS layer has done since the last reset(), for assertions.
struct Counters {
  std::atomic<std::int64_t> timersCreated{0};        // per-M timers (minit)
  std::atomic<std::int64_t> timersClosed{0};         // per-M timers (mdestroy)
  std::atomic<std::int64_t> timerCreateFailures{0};  // Ms left without one
  std::atomic<std::int64_t> highResSleeps{0};        // usleep2HighRes completed
  std::atomic<std::int64_t> lowResSleeps{0};         // usleep2 on an M (incl.
                                                     // fallbacks)
  std::atomic<std::int64_t> setTimerFailures{0};     // SetWaitableTimer failed
  std::atomic<std::int64_t> timeBeginPeriods{0};     // timeBeginPeriod(1) calls
  std::atomic<std::int64_t> timeEndPeriods{0};       // timeEndPeriod(1) calls
  std::atomic<std::int64_t> relaxes{0};              // osRelax(true) calls
  std::atomic<std::int64_t> onG0Sleeps{0};           // on an M's own stack
  std::atomic<std::int64_t> offG0Sleeps{0};        // on an M, not its own stack
  std::atomic<std::int64_t> nonMSleeps{0};         // on a thread that is no M
  std::atomic<std::int64_t> wakeEventFailures{0};  // Ms left without one
  // Timed futexsleeps that began waiting on the M's timer and wake event.
  std::atomic<std::int64_t> timerFutexSleeps{0};
  // Wake events futexwakeup set for them.
  std::atomic<std::int64_t> timerFutexWakes{0};
  // Timed futexsleeps in WaitOnAddress (whole milliseconds).
  std::atomic<std::int64_t> msFutexSleeps{0};
};
// counters: updated by usleep, futexsleep, futexwakeup, minit, mdestroy and
// osRelax.
extern Counters counters;

// reinit: runs osinit's probe and resolution again with the current hooks
// (only between Runs: no M may be running).
void reinit();
// reset: the real Windows calls again, counters zeroed, reinit().
void reset();
// setWaitableTimerEntry: replaces the entry point the trampolines call for
// SetWaitableTimer (a __stdcall function); nullptr restores the real one.
void setWaitableTimerEntry(void* fn);
// setNtWaitForSingleObjectEntry: the same for NtWaitForSingleObject.
void setNtWaitForSingleObjectEntry(void* fn);
// haveWinmm: whether winmm.dll was loaded (only the low-resolution path
// loads it).
bool haveWinmm();
// periodIsHeld: whether the OS layer holds timeBeginPeriod(1) now.
bool periodIsHeld();

}  // namespace gort::os::windows_testing

#endif  // GORT_RUNTIME_OS_OS_WINDOWS_TESTING_H_
