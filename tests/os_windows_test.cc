// tests/os_windows_test.cc: the Windows usleep paths of runtime/os/
// os_windows.cc and their fault paths (issues 4 and 8): which path osinit's
// probe selects, what a failing CreateWaitableTimerExW, SetWaitableTimer or
// a missing winmm.dll change, the per-M timer's lifetime, and that usleep
// runs on the M's own stack. Windows only.
//
// Wine's timers have about 1 ms granularity whichever path is taken, so
// nothing here measures time: the OS layer's hooks force the faults and its
// counters say which path ran (runtime/os/os_windows_testing.h). Every test
// runs under RunGuarded's watchdog, so a fault path that hangs fails.
#include <windows.h>

#include <atomic>
#include <cstdint>

#include "gort/debug.h"
#include "gort/gort.h"
#include "gtest/gtest.h"
#include "os/os_windows_testing.h"
#include "watchdog.h"

namespace {

namespace wt = gort::os::windows_testing;
using gort_test::Procs;
using gort_test::RunGuarded;

void* NoTimer(std::uint32_t, std::uint32_t) { return nullptr; }
void* NoWinmm() { return nullptr; }

std::atomic<int> failedSetTimerCalls{0};
// A SetWaitableTimer that always fails, as the trampolines call it.
BOOL WINAPI FailingSetWaitableTimer(HANDLE, const LARGE_INTEGER*, LONG,
                                    PTIMERAPCROUTINE, LPVOID, BOOL) {
  failedSetTimerCalls.fetch_add(1);
  SetLastError(ERROR_INVALID_HANDLE);
  return FALSE;
}

class OsWindowsTest : public ::testing::Test {
 protected:
  void SetUp() override { wt::reset(); }
  void TearDown() override {
    wt::setWaitableTimerEntry(nullptr);
    wt::reset();
  }

  // Runs a Run in `mode` whose main goroutine calls debug::Usleep(usec)
  // `times` times; returns the Run's Stats.
  static gort::Stats SleepInRun(gort::UsleepMode mode, int procs, int times,
                                std::uint32_t usec) {
    gort::Options options = Procs(procs);
    options.usleep = mode;
    gort::Stats stats;
    RunGuarded(
        [&] {
          for (int i = 0; i < times; i++) gort::debug::Usleep(usec);
          stats = gort::ReadStats();
        },
        options);
    return stats;
  }
};

TEST_F(OsWindowsTest, HighResPathChosenWhenProbeSucceeds) {
  // Wine 8 and Windows 10 1803+ accept CREATE_WAITABLE_TIMER_HIGH_RESOLUTION.
  gort::Stats stats = SleepInRun(gort::UsleepMode::kAuto, 1, 5, 100);
  EXPECT_EQ(stats.usleep, gort::UsleepMode::kHighRes);
  EXPECT_GE(wt::counters.highResSleeps.load(), 5);
  EXPECT_EQ(wt::counters.lowResSleeps.load(), 0);
  EXPECT_EQ(wt::counters.timeBeginPeriods.load(), 0);
  EXPECT_FALSE(wt::haveWinmm());  // the high-resolution path never loads it
}

TEST_F(OsWindowsTest, ProbeFailureSelectsTimeBeginPeriodAndUsleep2) {
  wt::hooks.createTimer = NoTimer;
  wt::reinit();
  gort::Stats stats = SleepInRun(gort::UsleepMode::kAuto, 1, 5, 100);
  EXPECT_EQ(stats.usleep, gort::UsleepMode::kLowRes);
  EXPECT_EQ(wt::counters.timeBeginPeriods.load(), 1);
  EXPECT_TRUE(wt::haveWinmm());
  EXPECT_EQ(wt::counters.timersCreated.load(), 0);
  EXPECT_EQ(wt::counters.highResSleeps.load(), 0);
  EXPECT_GE(wt::counters.lowResSleeps.load(), 5);
}

TEST_F(OsWindowsTest, LowResModeForcesTimeBeginPeriodAndUsleep2) {
  gort::Stats stats = SleepInRun(gort::UsleepMode::kLowRes, 2, 5, 100);
  EXPECT_EQ(stats.usleep, gort::UsleepMode::kLowRes);
  EXPECT_EQ(wt::counters.timeBeginPeriods.load(), 1);
  EXPECT_EQ(wt::counters.timersCreated.load(), 0);
  EXPECT_EQ(wt::counters.highResSleeps.load(), 0);
  EXPECT_GE(wt::counters.lowResSleeps.load(), 5);
}

TEST_F(OsWindowsTest, SetWaitableTimerFailureFallsBackWithoutHanging) {
  failedSetTimerCalls.store(0);
  wt::setWaitableTimerEntry(
      reinterpret_cast<void*>(&FailingSetWaitableTimer));
  // A 1 s sleep on a timer that was never set would wait forever (Go's
  // behaviour); the watchdog fails the test if any of these hangs.
  gort::Stats stats = SleepInRun(gort::UsleepMode::kHighRes, 1, 3, 1000);
  EXPECT_EQ(stats.usleep, gort::UsleepMode::kHighRes);
  EXPECT_GE(failedSetTimerCalls.load(), 3);
  EXPECT_EQ(wt::counters.setTimerFailures.load(), failedSetTimerCalls.load());
  EXPECT_EQ(wt::counters.highResSleeps.load(), 0);
  EXPECT_GE(wt::counters.lowResSleeps.load(), 3);
}

TEST_F(OsWindowsTest, WinmmMissingFallsBack) {
  wt::hooks.createTimer = NoTimer;
  wt::hooks.loadWinmm = NoWinmm;
  wt::reinit();
  gort::Stats stats = SleepInRun(gort::UsleepMode::kAuto, 2, 5, 100);
  EXPECT_EQ(stats.usleep, gort::UsleepMode::kLowRes);
  EXPECT_FALSE(wt::haveWinmm());
  EXPECT_EQ(wt::counters.timeBeginPeriods.load(), 0);
  EXPECT_GE(wt::counters.lowResSleeps.load(), 5);
}

TEST_F(OsWindowsTest, EachMOwnsOneTimerAndReleasesIt) {
  gort::Options options = Procs(4);
  options.usleep = gort::UsleepMode::kHighRes;
  int threads = 0;
  RunGuarded(
      [&] {
        gort::WaitGroup wg;
        for (int i = 0; i < 8; i++) {
          wg.Add(1);
          gort::Go([&] {
            // Blocking syscalls make the runtime start more Ms.
            gort::BlockingSyscall([] {
              ::Sleep(5);
              return 0;
            });
            wg.Done();
          });
        }
        wg.Wait();
        threads = gort::ReadStats().threads;
      },
      options);
  // Run has joined every M: each created exactly one timer and closed it.
  EXPECT_GE(threads, 2);
  EXPECT_EQ(wt::counters.timersCreated.load(), gort::ReadStats().threads);
  EXPECT_EQ(wt::counters.timersClosed.load(),
            wt::counters.timersCreated.load());
}

TEST_F(OsWindowsTest, UsleepAlwaysRunsOnG0) {
  SleepInRun(gort::UsleepMode::kHighRes, 1, 5, 100);
  SleepInRun(gort::UsleepMode::kLowRes, 2, 5, 100);
  EXPECT_GE(wt::counters.onG0Sleeps.load(), 10);
  EXPECT_EQ(wt::counters.offG0Sleeps.load(), 0);
}

}  // namespace
