// tests/os_windows_test.cc: the Windows usleep paths of runtime/os/
// os_windows.cc and their fault paths: which path osinit's probe selects, what
// a failing CreateWaitableTimerExW (at the probe, or later for one M),
// SetWaitableTimer or a missing winmm.dll change, the per-M timer's lifetime,
// the 1 ms timer period's lifetime (taken for low-resolution Ms, released when
// every P is idle and at the end of a Run), that winmm.dll comes from System32
// and not from a copy planted beside the program, that usleep runs on the M's
// own stack, that Run's own thread never polls, the due times the trampolines
// pass, and that an exception unwinds through the amd64 trampolines' SEH data;
// and that in high-resolution mode every timed M wait (notetsleep) waits on the
// M's timer and is woken through its event. Windows only.
//
// Wine's timers have about 1 ms granularity whichever path is taken, so
// apart from lower bounds (a sleep of d lasts at least d) nothing here
// measures time: the OS layer's hooks force the faults and its counters say
// which path ran (runtime/os/os_windows_testing.h). Every test runs under
// RunGuarded's watchdog, so a fault path that hangs fails.
#include <windows.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "arch/arch.h"
#include "gort/debug.h"
#include "gort/gort.h"
#include "gort/time.h"
#include "gtest/gtest.h"
#include "lock.h"
#include "os/os.h"
#include "os/os_windows_testing.h"
#include "watchdog.h"

namespace {

namespace wt = gort::os::windows_testing;
using gort_test::Procs;
using gort_test::RunGuarded;

void* NoTimer(std::uint32_t, std::uint32_t) { return nullptr; }
void* NoWinmm() { return nullptr; }
bool NoSearchSystem32() { return false; }

void* RealTimer(std::uint32_t flags, std::uint32_t access) {
  return CreateWaitableTimerExW(nullptr, nullptr, flags, access);
}

// CreateWaitableTimerExW that succeeds for osinit's probe (call 0) and then
// fails for the calls whose index is in [failFrom, failTo): an M left
// without its own timer although the probe found the flag supported.
std::atomic<int> timerCalls{0};
int failFrom = 1, failTo = 1 << 30;
void* TimerFailingAfterProbe(std::uint32_t flags, std::uint32_t access) {
  int i = timerCalls.fetch_add(1);
  if (i >= failFrom && i < failTo) {
    SetLastError(ERROR_NO_SYSTEM_RESOURCES);
    return nullptr;
  }
  return RealTimer(flags, access);
}
void FailTimersAfterProbe(int from, int to) {
  timerCalls.store(0);
  failFrom = from;
  failTo = to;
  wt::hooks.createTimer = TimerFailingAfterProbe;
  wt::reinit();
}

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
    wt::setNtWaitForSingleObjectEntry(nullptr);
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

// After a Run, the 1 ms period is given back: every timeBeginPeriod(1) has
// its timeEndPeriod(1). (There may be more than one of each in a Run: an M
// that starts after the others have ended, as sysmon's may on a loaded
// machine, takes the period again.)
void ExpectPeriodReleased() {
  EXPECT_FALSE(wt::periodIsHeld());
  EXPECT_EQ(wt::counters.timeEndPeriods.load(),
            wt::counters.timeBeginPeriods.load());
}

TEST_F(OsWindowsTest, HighResPathChosenWhenProbeSucceeds) {
  // Wine 8 and Windows 10 1803+ accept CREATE_WAITABLE_TIMER_HIGH_RESOLUTION.
  gort::Stats stats = SleepInRun(gort::UsleepMode::kAuto, 1, 5, 100);
  EXPECT_EQ(stats.usleep, gort::UsleepMode::kHighRes);
  EXPECT_EQ(stats.usleep_fallbacks, 0);
  EXPECT_GE(wt::counters.highResSleeps.load(), 5);
  EXPECT_EQ(wt::counters.lowResSleeps.load(), 0);
  EXPECT_EQ(wt::counters.timeBeginPeriods.load(), 0);
  EXPECT_EQ(wt::counters.timeEndPeriods.load(), 0);
  EXPECT_FALSE(wt::haveWinmm());  // the high-resolution path never loads it
}

TEST_F(OsWindowsTest, ProbeFailureSelectsTimeBeginPeriodAndUsleep2) {
  wt::hooks.createTimer = NoTimer;
  wt::reinit();
  gort::Stats stats = SleepInRun(gort::UsleepMode::kAuto, 1, 5, 100);
  EXPECT_EQ(stats.usleep, gort::UsleepMode::kLowRes);
  EXPECT_GE(wt::counters.timeBeginPeriods.load(), 1);
  EXPECT_TRUE(wt::haveWinmm());
  EXPECT_EQ(wt::counters.timersCreated.load(), 0);
  EXPECT_EQ(wt::counters.highResSleeps.load(), 0);
  EXPECT_GE(wt::counters.lowResSleeps.load(), 5);
  ExpectPeriodReleased();
}

TEST_F(OsWindowsTest, LowResModeForcesTimeBeginPeriodAndUsleep2) {
  bool heldInRun = false;
  gort::Options options = Procs(2);
  options.usleep = gort::UsleepMode::kLowRes;
  gort::Stats stats;
  RunGuarded(
      [&] {
        for (int i = 0; i < 5; i++) gort::debug::Usleep(100);
        heldInRun = wt::periodIsHeld();
        stats = gort::ReadStats();
      },
      options);
  EXPECT_EQ(stats.usleep, gort::UsleepMode::kLowRes);
  EXPECT_EQ(stats.usleep_fallbacks, 0);  // asked for: not a fallback
  EXPECT_TRUE(heldInRun);
  EXPECT_GE(wt::counters.timeBeginPeriods.load(), 1);
  EXPECT_EQ(wt::counters.timersCreated.load(), 0);
  EXPECT_EQ(wt::counters.highResSleeps.load(), 0);
  EXPECT_GE(wt::counters.lowResSleeps.load(), 5);
  // The end of the Run gives the period back (Go's process never does).
  ExpectPeriodReleased();
}

TEST_F(OsWindowsTest, SetWaitableTimerFailureFallsBackWithoutHanging) {
  failedSetTimerCalls.store(0);
  wt::setWaitableTimerEntry(reinterpret_cast<void*>(&FailingSetWaitableTimer));
  // A 1 s sleep on a timer that was never set would wait forever (Go's
  // behaviour); the watchdog fails the test if any of these hangs. The M
  // whose SetWaitableTimer failed becomes a low-resolution M: it sleeps
  // with usleep2, the 1 ms period held for it, and never tries the timer
  // again.
  bool heldInRun = false;
  gort::Options options = Procs(1);
  options.usleep = gort::UsleepMode::kHighRes;
  gort::Stats stats;
  RunGuarded(
      [&] {
        for (int i = 0; i < 3; i++) gort::debug::Usleep(1000);
        heldInRun = wt::periodIsHeld();
        stats = gort::ReadStats();
      },
      options);
  EXPECT_EQ(stats.usleep, gort::UsleepMode::kLowRes)
      << "some Ms sleep at low resolution: not kHighRes for everything";
  // Every M has ended: the counts are final (ReadStats after a Run reports
  // that Run).
  gort::Stats after = gort::ReadStats();
  EXPECT_GE(failedSetTimerCalls.load(), 1);
  EXPECT_LE(failedSetTimerCalls.load(), after.threads) << "once per M";
  EXPECT_EQ(wt::counters.setTimerFailures.load(), failedSetTimerCalls.load());
  EXPECT_EQ(after.usleep_fallbacks, failedSetTimerCalls.load());
  EXPECT_EQ(after.usleep, gort::UsleepMode::kLowRes);
  EXPECT_EQ(wt::counters.highResSleeps.load(), 0);
  EXPECT_GE(wt::counters.lowResSleeps.load(), 3);
  EXPECT_TRUE(heldInRun) << "the fallback would sleep at the 15.6 ms tick";
  EXPECT_GE(wt::counters.timeBeginPeriods.load(), 1);
  ExpectPeriodReleased();
}

TEST_F(OsWindowsTest, MsWithoutTheirOwnTimerSleepAtLowResolution) {
  FailTimersAfterProbe(1, 1 << 30);  // the probe works, no M gets a timer
  EXPECT_TRUE(gort::os::haveHighResTimer());
  bool heldInRun = false;
  gort::Options options = Procs(2);
  options.usleep = gort::UsleepMode::kHighRes;
  gort::Stats stats;
  RunGuarded(
      [&] {
        for (int i = 0; i < 5; i++) gort::debug::Usleep(100);
        heldInRun = wt::periodIsHeld();
        stats = gort::ReadStats();
      },
      options);
  EXPECT_EQ(stats.usleep, gort::UsleepMode::kLowRes);  // main's M fell back
  gort::Stats after = gort::ReadStats();  // every M has started and ended
  EXPECT_EQ(after.usleep_fallbacks, after.threads);
  EXPECT_EQ(wt::counters.timerCreateFailures.load(), after.threads);
  EXPECT_EQ(wt::counters.timersCreated.load(), 0);
  EXPECT_EQ(wt::counters.highResSleeps.load(), 0);
  EXPECT_GE(wt::counters.lowResSleeps.load(), 5);
  EXPECT_TRUE(heldInRun);
  EXPECT_GE(wt::counters.timeBeginPeriods.load(), 1);
  ExpectPeriodReleased();
}

TEST_F(OsWindowsTest, OneMWithoutATimerFallsBackAlone) {
  FailTimersAfterProbe(2, 3);  // only the second M's timer fails
  gort::Options options = Procs(1);
  options.usleep = gort::UsleepMode::kHighRes;
  RunGuarded(
      [&] {
        for (int i = 0; i < 5; i++) gort::debug::Usleep(100);
      },
      options);
  // After the Run, every M has started (and asked for its timer) and ended.
  gort::Stats stats = gort::ReadStats();
  ASSERT_GE(stats.threads, 2);  // main's M and sysmon's
  EXPECT_EQ(stats.usleep_fallbacks, 1);
  EXPECT_EQ(stats.usleep, gort::UsleepMode::kLowRes);
  EXPECT_EQ(wt::counters.timerCreateFailures.load(), 1);
  EXPECT_EQ(wt::counters.timersCreated.load(), stats.threads - 1);
  EXPECT_EQ(wt::counters.timersClosed.load(), stats.threads - 1);
  EXPECT_GE(wt::counters.timeBeginPeriods.load(), 1);
  ExpectPeriodReleased();
}

TEST_F(OsWindowsTest, FallbacksReportedUnderGodebug) {
  FailTimersAfterProbe(1, 1 << 30);
  gort::Options options = Procs(1);
  options.usleep = gort::UsleepMode::kHighRes;
  EXPECT_EXIT(
      {
        _putenv("GODEBUG=usleepdebug=1");
        RunGuarded([] { gort::debug::Usleep(100); }, options);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0),
      "runtime: usleep: \\d+ more M\\(s\\) lost the high-resolution "
      "timer and sleep at low resolution");
  // Without the key, nothing is printed.
  EXPECT_EXIT(
      {
        _putenv("GODEBUG=");
        RunGuarded([] { gort::debug::Usleep(100); }, options);
        std::fprintf(stderr, "done\n");
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "^done");
}

TEST_F(OsWindowsTest, IdlePsReleaseThePeriodAndWorkTakesItBack) {
  // Go's osRelax: with every P idle and sysmon asleep for 60 ms or more,
  // the 1 ms period is given back, and taken again when sysmon wakes.
  gort::Options options = Procs(1);
  options.usleep = gort::UsleepMode::kLowRes;
  RunGuarded(
      [&] {
        // Each wait idles the only P for 200 ms; sysmon relaxes during one
        // of them unless the machine keeps it from noticing for 140 ms.
        for (int i = 0; i < 50 && wt::counters.relaxes.load() == 0; i++) {
          gort::After(std::chrono::milliseconds(200)).Recv();
        }
        gort::debug::Usleep(100);
      },
      options);
  EXPECT_GE(wt::counters.relaxes.load(), 2);  // sysmon's, and Run's end
  // Taken for the Run, released by sysmon, taken again when it woke,
  // released at the end: balanced.
  EXPECT_GE(wt::counters.timeBeginPeriods.load(), 2);
  ExpectPeriodReleased();
}

TEST_F(OsWindowsTest, RunsThreadWaitsForTheMsWithoutPolling) {
  // A goroutine still computing when main returns, and one blocked in a
  // syscall (abandoned): Run's thread waits for them on an event, never in
  // usleep (which without a timer costs a 15.6 ms tick a round).
  gort::Options options = Procs(2);
  std::atomic<bool> started{false};
  RunGuarded(
      [&] {
        gort::Go([&] {
          started.store(true);
          std::int64_t until = gort::Nanotime() + 20'000'000;
          while (gort::Nanotime() < until) {
          }
        });
        gort::Go([] {
          gort::BlockingSyscall([] {
            ::Sleep(50);
            return 0;
          });
        });
        while (!started.load()) gort::Gosched();
      },
      options);
  EXPECT_EQ(wt::counters.nonMSleeps.load(), 0);
}

TEST_F(OsWindowsTest, WinmmMissingFallsBack) {
  // No winmm: usleep2 at the default resolution, no period to release.
  wt::hooks.createTimer = NoTimer;
  wt::hooks.loadWinmm = NoWinmm;
  wt::reinit();
  gort::Stats stats = SleepInRun(gort::UsleepMode::kAuto, 2, 5, 100);
  EXPECT_EQ(stats.usleep, gort::UsleepMode::kLowRes);
  EXPECT_FALSE(wt::haveWinmm());
  EXPECT_EQ(wt::counters.timeBeginPeriods.load(), 0);
  EXPECT_EQ(wt::counters.timeEndPeriods.load(), 0);
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

// ---- winmm.dll from System32 only ------------------------------------------

std::wstring ExeDir() {
  wchar_t path[MAX_PATH];
  DWORD n = GetModuleFileNameW(nullptr, path, MAX_PATH);
  std::wstring s(path, n);
  return s.substr(0, s.find_last_of(L"\\/") + 1);
}

// The marker's path, the same in a death test's child as in its parent.
std::wstring Marker(const wchar_t* name) {
  wchar_t dir[MAX_PATH];
  DWORD n = GetTempPathW(MAX_PATH, dir);
  return std::wstring(dir, n) + L"gort-planted-winmm-" + name;
}

bool Exists(const std::wstring& path) {
  return GetFileAttributesW(path.c_str()) != INVALID_FILE_ATTRIBUTES;
}

// In a fresh process (a death test's child), with the planted DLL's marker
// set: runs a low-resolution Run, which loads winmm.dll, and exits 0 if the
// winmm.dll loaded is System32's, 3 if not.
[[noreturn]] void LowResRunThenCheckWinmm(const std::wstring& marker) {
  SetEnvironmentVariableW(L"GORT_PLANTED_WINMM_MARKER", marker.c_str());
  gort::Options options = Procs(1);
  options.usleep = gort::UsleepMode::kLowRes;
  RunGuarded([] { gort::debug::Usleep(100); }, options);
  HMODULE winmm = GetModuleHandleW(L"winmm.dll");
  wchar_t path[MAX_PATH], sys[MAX_PATH];
  DWORD n = winmm != nullptr ? GetModuleFileNameW(winmm, path, MAX_PATH) : 0;
  UINT m = GetSystemDirectoryW(sys, MAX_PATH);
  bool fromSystem = n > m && _wcsnicmp(path, sys, m) == 0 &&
                    (path[m] == L'\\' || path[m] == L'/');
  std::_Exit(wt::haveWinmm() && fromSystem ? 0 : 3);
}

// Wine prefers its own (builtin) winmm.dll to any other by default. Wine's
// per-program DLL override in the registry (read by each new process, so by
// the death tests' children; a key real Windows ignores) makes it search as
// Windows does, where winmm is no KnownDLL and a copy in the program's
// directory wins.
constexpr wchar_t kWineAppOverrides[] =
    L"Software\\Wine\\AppDefaults\\os_windows_test.exe\\DllOverrides";

class PlantedWinmmTest : public OsWindowsTest {
 protected:
  void SetUp() override {
    OsWindowsTest::SetUp();
    ASSERT_TRUE(Exists(ExeDir() + L"winmm.dll"))
        << "the planted winmm.dll is missing beside the test";
    static const wchar_t kNativeFirst[] = L"native,builtin";
    ASSERT_EQ(RegSetKeyValueW(HKEY_CURRENT_USER, kWineAppOverrides, L"winmm",
                              REG_SZ, kNativeFirst, sizeof(kNativeFirst)),
              ERROR_SUCCESS);
  }
  void TearDown() override {
    RegDeleteKeyValueW(HKEY_CURRENT_USER, kWineAppOverrides, L"winmm");
    OsWindowsTest::TearDown();
  }
};

TEST_F(PlantedWinmmTest, ThePlantWouldBeLoadedByTheDefaultSearchOrder) {
  // The control: without System32-only loading, this Windows (or Wine)
  // picks the planted copy, so the tests below can fail.
  std::wstring marker = Marker(L"control");
  DeleteFileW(marker.c_str());
  EXPECT_EXIT(
      {
        SetEnvironmentVariableW(L"GORT_PLANTED_WINMM_MARKER", marker.c_str());
        LoadLibraryW(L"winmm.dll");
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_TRUE(Exists(marker));
  DeleteFileW(marker.c_str());
}

TEST_F(PlantedWinmmTest, RuntimeLoadsWinmmFromSystem32) {
  std::wstring marker = Marker(L"runtime");
  DeleteFileW(marker.c_str());
  EXPECT_EXIT(LowResRunThenCheckWinmm(marker), ::testing::ExitedWithCode(0),
              "");
  EXPECT_FALSE(Exists(marker)) << "the planted winmm.dll was loaded";
  DeleteFileW(marker.c_str());
}

TEST_F(PlantedWinmmTest, WithoutSearchSystem32LoadsByFullPath) {
  // Windows without LOAD_LIBRARY_SEARCH_SYSTEM32 (7 without KB2533623):
  // the system directory's full path.
  wt::hooks.haveSearchSystem32 = NoSearchSystem32;
  wt::reinit();
  std::wstring marker = Marker(L"fullpath");
  DeleteFileW(marker.c_str());
  EXPECT_EXIT(LowResRunThenCheckWinmm(marker), ::testing::ExitedWithCode(0),
              "");
  EXPECT_FALSE(Exists(marker)) << "the planted winmm.dll was loaded";
  DeleteFileW(marker.c_str());
}

// ---- lower bounds: a sleep of d lasts at least d ----------------------------

constexpr std::uint32_t kSleepUs = 2000;
// gort_usleep2's relative timeout is measured by Windows in interrupt time,
// which advances by whole timer ticks: measured with the performance
// counter, it may end up to one tick (1 ms with the period held) early on
// real Windows. The high-resolution timer has no such error. Under Wine
// both are exact.
constexpr std::int64_t kUsleep2EarlyNs = 1'000'000;

// Sleeps kSleepUs three times on the calling goroutine's M; returns the
// shortest.
std::int64_t ShortestSleepNs() {
  std::int64_t shortest = INT64_MAX;
  for (int i = 0; i < 3; i++) {
    std::int64_t t0 = gort::Nanotime();
    gort::debug::Usleep(kSleepUs);
    std::int64_t d = gort::Nanotime() - t0;
    if (d < shortest) shortest = d;
  }
  return shortest;
}

std::int64_t ShortestInRun(gort::UsleepMode mode) {
  gort::Options options = Procs(1);
  options.usleep = mode;
  std::int64_t shortest = 0;
  RunGuarded([&] { shortest = ShortestSleepNs(); }, options);
  return shortest;
}

TEST_F(OsWindowsTest, HighResSleepLastsAtLeastItsTime) {
  EXPECT_GE(ShortestInRun(gort::UsleepMode::kHighRes),
            std::int64_t{kSleepUs} * 1000);
  EXPECT_GE(wt::counters.highResSleeps.load(), 3);
}

TEST_F(OsWindowsTest, LowResSleepLastsAtLeastItsTime) {
  EXPECT_GE(ShortestInRun(gort::UsleepMode::kLowRes),
            std::int64_t{kSleepUs} * 1000 - kUsleep2EarlyNs);
  EXPECT_GE(wt::counters.lowResSleeps.load(), 3);
}

TEST_F(OsWindowsTest, MWithoutTimerSleepLastsAtLeastItsTime) {
  FailTimersAfterProbe(1, 1 << 30);
  EXPECT_GE(ShortestInRun(gort::UsleepMode::kHighRes),
            std::int64_t{kSleepUs} * 1000 - kUsleep2EarlyNs);
  EXPECT_GE(wt::counters.timerCreateFailures.load(), 1);
}

TEST_F(OsWindowsTest, FailedSetWaitableTimerSleepLastsAtLeastItsTime) {
  // The very sleep whose SetWaitableTimer fails, not only the later ones.
  wt::setWaitableTimerEntry(reinterpret_cast<void*>(&FailingSetWaitableTimer));
  gort::Options options = Procs(1);
  options.usleep = gort::UsleepMode::kHighRes;
  std::int64_t first = 0, rest = 0;
  RunGuarded(
      [&] {
        std::int64_t t0 = gort::Nanotime();
        gort::debug::Usleep(kSleepUs);
        first = gort::Nanotime() - t0;
        rest = ShortestSleepNs();
      },
      options);
  EXPECT_GE(first, std::int64_t{kSleepUs} * 1000 - kUsleep2EarlyNs);
  EXPECT_GE(rest, std::int64_t{kSleepUs} * 1000 - kUsleep2EarlyNs);
  EXPECT_GE(wt::counters.setTimerFailures.load(), 1);
}

TEST_F(OsWindowsTest, SleepOutsideTheRuntimeLastsAtLeastItsTime) {
  // A thread that is no M: usleep2 at whatever period the system has, so
  // on real Windows up to a default tick (15.625 ms) early.
  constexpr std::uint32_t kLongUs = 40'000;
  constexpr std::int64_t kTickNs = 15'625'000;
  std::int64_t took = 0;
  std::thread([&] {
    std::int64_t t0 = gort::Nanotime();
    gort::debug::Usleep(kLongUs);
    took = gort::Nanotime() - t0;
  }).join();
  EXPECT_GE(took, std::int64_t{kLongUs} * 1000 - kTickNs);
  EXPECT_GE(wt::counters.nonMSleeps.load(), 1);
}

// ---- timed M waits on the M's timer ----------------------------------------

using gort::os::TimerMode;
using gort_test::CurrentTestName;
using gort_test::kRunLimit;
using gort_test::Watchdog;

void* NoEvent() { return nullptr; }

// A thread that is an M as far as the OS layer is concerned (its timer mode
// set, its timer and wake event made, released by mdestroy) and runs fn.
template <class Fn>
std::thread MThread(TimerMode mode, Fn fn) {
  return std::thread([mode, fn] {
    gort::os::setThreadTimerMode(mode);
    fn();
    gort::os::mdestroy();
  });
}

// Spins until n timed waits have begun on an M's timer, or `given_up`.
void AwaitTimerSleeps(std::int64_t n, const std::atomic<bool>& given_up) {
  while (wt::counters.timerFutexSleeps.load() < n && !given_up.load()) {
    std::this_thread::yield();
  }
}

constexpr std::int64_t kHourNs = 3'600'000'000'000;

TEST_F(OsWindowsTest, WakeupEndsATimedWaitOnTheTimer) {
  // An hour-long notetsleep on the timer ends at notewakeup, through the
  // M's event (WakeByAddress alone would leave it waiting: the watchdog).
  Watchdog watchdog(CurrentTestName(), kRunLimit);
  ASSERT_TRUE(gort::os::haveHighResTimer());
  gort::runtime::note n;
  std::atomic<bool> woken{false}, done{false};
  std::thread m = MThread(TimerMode::kHighRes, [&] {
    woken.store(gort::runtime::notetsleep(&n, kHourNs));
    done.store(true);
  });
  AwaitTimerSleeps(1, done);
  gort::runtime::notewakeup(&n);
  m.join();
  EXPECT_TRUE(woken.load());
  EXPECT_EQ(wt::counters.timerFutexSleeps.load(), 1);
  EXPECT_EQ(wt::counters.timerFutexWakes.load(), 1);
  EXPECT_EQ(wt::counters.msFutexSleeps.load(), 0);
}

TEST_F(OsWindowsTest, FutexWakeupOfOneWakesOneTimedSleeper) {
  Watchdog watchdog(CurrentTestName(), kRunLimit);
  ASSERT_TRUE(gort::os::haveHighResTimer());
  std::uint32_t word = 0;
  std::atomic<int> returned{0};
  std::atomic<bool> never{false};
  auto sleep = [&] {
    gort::os::futexsleep(&word, 0, kHourNs);
    returned.fetch_add(1);
  };
  std::thread a = MThread(TimerMode::kHighRes, sleep);
  std::thread b = MThread(TimerMode::kHighRes, sleep);
  AwaitTimerSleeps(2, never);
  std::atomic_ref<std::uint32_t>(word).store(1);
  gort::os::futexwakeup(&word, 1);
  EXPECT_EQ(wt::counters.timerFutexWakes.load(), 1) << "one event set";
  while (returned.load() == 0) std::this_thread::yield();
  gort::os::futexwakeup(&word, 1);
  a.join();
  b.join();
  EXPECT_EQ(wt::counters.timerFutexWakes.load(), 2);
  EXPECT_EQ(returned.load(), 2);
}

TEST_F(OsWindowsTest, UsleepAfterAnEarlyWakeLastsItsTime) {
  // A timed wait woken early leaves its timer armed; had it not been
  // cancelled, it would fire during the pause below and (under Wine, where
  // SetWaitableTimer keeps an auto-reset timer signalled) end the next
  // usleep at once.
  Watchdog watchdog(CurrentTestName(), kRunLimit);
  ASSERT_TRUE(gort::os::haveHighResTimer());
  std::uint32_t word = 0;
  std::int64_t took = 0;
  std::atomic<bool> done{false};
  std::thread m = MThread(TimerMode::kHighRes, [&] {
    gort::os::futexsleep(&word, 0, 200'000'000);
    done.store(true);
    ::Sleep(300);
    std::int64_t t0 = gort::Nanotime();
    gort::os::usleep(kSleepUs);
    took = gort::Nanotime() - t0;
  });
  AwaitTimerSleeps(1, done);
  gort::os::futexwakeup(&word, 1);
  m.join();
  EXPECT_GE(took, std::int64_t{kSleepUs} * 1000);
  EXPECT_EQ(wt::counters.highResSleeps.load(), 1);
}

TEST_F(OsWindowsTest, TimedWaitWithFailedSetWaitableTimerFallsBack) {
  // The M's timer cannot be set: the wait is WaitOnAddress's, still at
  // least its time, and the M becomes a low-resolution M, as in usleep.
  Watchdog watchdog(CurrentTestName(), kRunLimit);
  ASSERT_TRUE(gort::os::haveHighResTimer());
  failedSetTimerCalls.store(0);
  wt::setWaitableTimerEntry(reinterpret_cast<void*>(&FailingSetWaitableTimer));
  gort::runtime::note n;
  bool woken = true;
  std::int64_t took = 0;
  MThread(TimerMode::kHighRes, [&] {
    std::int64_t t0 = gort::Nanotime();
    woken = gort::runtime::notetsleep(&n, 5'000'000);
    took = gort::Nanotime() - t0;
  }).join();
  EXPECT_FALSE(woken);
  EXPECT_GE(took, 5'000'000);
  EXPECT_EQ(failedSetTimerCalls.load(), 1) << "then never tried again";
  EXPECT_EQ(wt::counters.setTimerFailures.load(), 1);
  EXPECT_EQ(wt::counters.timerFutexSleeps.load(), 0);
  EXPECT_GE(wt::counters.msFutexSleeps.load(), 1);
  EXPECT_GE(gort::os::timerFallbacks(), 1);
  ExpectPeriodReleased();
}

// Times gort::Sleep(d) `times` times on main in a Run in `mode` with no
// descriptor registered (the idle M waits on its note); returns the
// shortest.
std::int64_t ShortestGortSleep(gort::UsleepMode mode,
                               std::chrono::nanoseconds d, int times) {
  gort::Options options = Procs(1);
  options.usleep = mode;
  std::int64_t shortest = INT64_MAX;
  RunGuarded(
      [&] {
        for (int i = 0; i < times; i++) {
          std::int64_t t0 = gort::Nanotime();
          gort::Sleep(d);
          shortest = std::min(shortest, gort::Nanotime() - t0);
        }
      },
      options);
  return shortest;
}

// ExpectTimedWaitsOn: the Runs so far did their timed M waits on the timer
// (onTimer) or on the address only. At least one: a sleep whose timer is
// due before its M would wait (a loaded machine) has no wait to count.
void ExpectTimedWaitsOn(bool onTimer) {
  std::int64_t timer = wt::counters.timerFutexSleeps.load();
  std::int64_t ms = wt::counters.msFutexSleeps.load();
  EXPECT_GE(onTimer ? timer : ms, 1);
  EXPECT_EQ(onTimer ? ms : timer, 0);
}

TEST_F(OsWindowsTest, HighResSleepWaitsOnTheTimerAndLastsItsTime) {
  // Every timed M wait of the Run (the idle M's, sysmon's) is on a timer.
  EXPECT_GE(ShortestGortSleep(gort::UsleepMode::kHighRes,
                              std::chrono::milliseconds(1), 5),
            1'000'000);
  EXPECT_GE(ShortestGortSleep(gort::UsleepMode::kHighRes,
                              std::chrono::microseconds(10), 20),
            10'000);
  ExpectTimedWaitsOn(true);
}

TEST_F(OsWindowsTest, LowResSleepWaitsOnTheAddressAndLastsItsTime) {
  EXPECT_GE(ShortestGortSleep(gort::UsleepMode::kLowRes,
                              std::chrono::milliseconds(1), 5),
            1'000'000);
  ExpectTimedWaitsOn(false);
}

TEST_F(OsWindowsTest, MsWithoutAWakeEventWaitOnTheAddress) {
  // CreateEventW fails for every M: their timed waits stay WaitOnAddress's
  // (counted), usleep keeps the timer, and the Run is not a fallback.
  wt::hooks.createEvent = NoEvent;
  gort::Options options = Procs(1);
  options.usleep = gort::UsleepMode::kHighRes;
  std::int64_t shortest = INT64_MAX;
  gort::Stats stats;
  RunGuarded(
      [&] {
        for (int i = 0; i < 3; i++) {
          std::int64_t t0 = gort::Nanotime();
          gort::Sleep(std::chrono::milliseconds(1));
          shortest = std::min(shortest, gort::Nanotime() - t0);
        }
        gort::debug::Usleep(100);
        stats = gort::ReadStats();
      },
      options);
  EXPECT_GE(shortest, 1'000'000);
  EXPECT_EQ(stats.usleep, gort::UsleepMode::kHighRes);
  EXPECT_EQ(wt::counters.wakeEventFailures.load(), gort::ReadStats().threads);
  EXPECT_EQ(wt::counters.timerFutexSleeps.load(), 0);
  EXPECT_GE(wt::counters.msFutexSleeps.load(), 1);
  EXPECT_GE(wt::counters.highResSleeps.load(), 1);
}

// ---- due times passed to SetWaitableTimer ---------------------------------

std::atomic<DWORD> recordThread{0};
std::vector<std::int64_t>* recordedDue = nullptr;
// SetWaitableTimer that records the due time it was given (on the thread
// under test only) and then sets the timer for 100 ns, so the trampoline's
// wait returns at once whatever the request.
BOOL WINAPI RecordingSetWaitableTimer(HANDLE timer, const LARGE_INTEGER* due,
                                      LONG period, PTIMERAPCROUTINE fn,
                                      LPVOID arg, BOOL resume) {
  if (GetCurrentThreadId() == recordThread.load() && recordedDue != nullptr) {
    recordedDue->push_back(due->QuadPart);
  }
  LARGE_INTEGER soon;
  soon.QuadPart = -1;
  return SetWaitableTimer(timer, &soon, period, fn, arg, resume);
}

TEST_F(OsWindowsTest, DueTimesReachSetWaitableTimerIn64Bits) {
  // 0, 1 us, and past 214.7 s, where 10 * usec no longer fits 32 bits.
  const std::uint32_t usecs[] = {0,           1,           15,
                                 999'999,     214'748'364, 214'748'365,
                                 300'000'000, 0xfffffffe,  0xffffffff};
  std::vector<std::int64_t> got;
  recordedDue = &got;
  wt::setWaitableTimerEntry(
      reinterpret_cast<void*>(&RecordingSetWaitableTimer));
  gort::Options options = Procs(1);
  options.usleep = gort::UsleepMode::kHighRes;
  RunGuarded(
      [&] {
        for (std::uint32_t usec : usecs) {
          recordThread.store(GetCurrentThreadId());
          gort::debug::Usleep(usec);
          recordThread.store(0);
        }
      },
      options);
  recordedDue = nullptr;
  ASSERT_EQ(got.size(), std::size(usecs));
  for (std::size_t i = 0; i < got.size(); i++) {
    EXPECT_EQ(got[i], -10 * static_cast<std::int64_t>(usecs[i]))
        << "usec=" << usecs[i];
  }
}

// ---- unwinding through the trampolines (amd64 SEH data) ---------------------

struct ThrownInGoroutine : std::runtime_error {
  ThrownInGoroutine() : std::runtime_error("thrown in a goroutine") {}
};

#if defined(__x86_64__)
struct ThrownThroughTrampoline : std::runtime_error {
  ThrownThroughTrampoline() : std::runtime_error("thrown from a Windows API") {}
};
BOOL WINAPI ThrowingSetWaitableTimer(HANDLE, const LARGE_INTEGER*, LONG,
                                     PTIMERAPCROUTINE, LPVOID, BOOL) {
  throw ThrownThroughTrampoline();
}
LONG WINAPI ThrowingNtWait(HANDLE, BOOLEAN, const LARGE_INTEGER*) {
  throw ThrownThroughTrampoline();
}

// Calls fn, which throws from inside a trampoline, with values the compiler
// keeps in callee-saved registers (rbx among them, which the trampoline
// saves) across it: the unwinder must use the trampoline's .pdata/.xdata to
// find the catch and to restore them.
template <class Fn>
void ExpectUnwindsThrough(Fn fn) {
  std::uintptr_t a = 0x1111, b = 0x2222, c = 0x3333, d = 0x4444, e = 0x5555,
                 f = 0x6666, g = 0x7777;
  for (int i = 0; i < 3; i++) {
    asm volatile("" : "+b"(a), "+r"(b), "+r"(c), "+r"(d));
    asm volatile("" : "+r"(e), "+r"(f), "+r"(g));
    bool caught = false;
    try {
      fn();
    } catch (const ThrownThroughTrampoline&) {
      caught = true;
    }
    asm volatile("" : "+b"(a), "+r"(b), "+r"(c), "+r"(d));
    asm volatile("" : "+r"(e), "+r"(f), "+r"(g));
    ASSERT_TRUE(caught);
    ASSERT_EQ(a, 0x1111u + i) << "rbx not restored";
    ASSERT_EQ(b, 0x2222u + i);
    ASSERT_EQ(c, 0x3333u + i);
    ASSERT_EQ(d, 0x4444u + i);
    ASSERT_EQ(e, 0x5555u + i);
    ASSERT_EQ(f, 0x6666u + i);
    ASSERT_EQ(g, 0x7777u + i);
    a++, b++, c++, d++, e++, f++, g++;
  }
}

TEST_F(OsWindowsTest, ExceptionsUnwindThroughTheAmd64Trampolines) {
  wt::setWaitableTimerEntry(reinterpret_cast<void*>(&ThrowingSetWaitableTimer));
  HANDLE timer = CreateWaitableTimerExW(nullptr, nullptr, 0, TIMER_ALL_ACCESS);
  ASSERT_NE(timer, nullptr);
  ExpectUnwindsThrough([&] { gort_usleep2HighRes(10, timer); });
  wt::setWaitableTimerEntry(nullptr);
  wt::setNtWaitForSingleObjectEntry(reinterpret_cast<void*>(&ThrowingNtWait));
  // Through usleep2, and through usleep2HighRes once its timer is set.
  ExpectUnwindsThrough([] { gort_usleep2(10); });
  ExpectUnwindsThrough([&] { gort_usleep2HighRes(10, timer); });
  wt::setNtWaitForSingleObjectEntry(nullptr);
  CloseHandle(timer);
}

#else
TEST_F(OsWindowsTest, ExceptionsUnwindThroughTheAmd64Trampolines) {
  GTEST_SKIP() << "amd64 only: 32-bit Windows unwinds through the fs:[0] "
                  "chain, to which the 386 trampolines add no frame, and "
                  "mingw's i686 C++ exceptions use DWARF tables they lack";
}
#endif  // __x86_64__

TEST_F(OsWindowsTest, ExceptionInAGoroutineThatSleptUnwinds) {
  // A goroutine that slept on its M's timer (through the trampoline, on
  // g0) throws and catches afterwards, and the Run goes on.
  gort::Options options = Procs(2);
  options.usleep = gort::UsleepMode::kHighRes;
  std::atomic<int> caught{0};
  RunGuarded(
      [&] {
        gort::WaitGroup wg;
        for (int i = 0; i < 4; i++) {
          wg.Add(1);
          gort::Go([&] {
            gort::debug::Usleep(100);
            try {
              throw ThrownInGoroutine();
            } catch (const ThrownInGoroutine&) {
              caught++;
            }
            wg.Done();
          });
        }
        wg.Wait();
      },
      options);
  EXPECT_EQ(caught.load(), 4);
  EXPECT_GE(wt::counters.highResSleeps.load(), 4);
}

}  // namespace
