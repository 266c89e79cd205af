// tests/fatal_test.cc: misuse of the runtime ends the program with a clear,
// Go-style message and exit status 2, and hostile configuration (bad
// $GOMAXPROCS, garbage $GODEBUG, absurd Options.stack_size, huge channel
// capacities) gives a warning or a gort::Panic instead of a crash.
//
// Already covered elsewhere, so not repeated here:
//   - send on closed channel escaping a goroutine:
//     chan_test ChanDeathTest.UncaughtChannelPanicInGoroutineIsFatal
//   - negative WaitGroup counter escaping a goroutine:
//     sync_test WaitGroupDeathTest.UncaughtNegativeCounterPanicEndsProgram
//   - unlock of an unlocked Mutex: sync_test MutexDeathTest.*
//   - GOMAXPROCS=abc / -1 / 0 / 4x and 1000:
//     gomaxprocs_api_test GomaxprocsEnvDeathTest.*
//
// Every death test runs in the threadsafe style (the child re-executes the
// binary) because the runtime makes threads. A child that could hang is
// bounded by RunGuarded's watchdog (exit 3, which fails the expectation).
#if !defined(_WIN32)
#include <signal.h>  // SIGABRT: GotracebackCrashAbortsAfterTheMessage
#endif

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "test_os.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using gort_test::Procs;
using gort_test::RunGuarded;

class FatalDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// GOTRACEBACK=crash (as in Go) turns a fatal error's exit status 2 into an
// abort, which debuggers, core dumps and libFuzzer (scripts/fuzz.sh) catch.
// Linux only: Windows has no SIGABRT for GoogleTest to see.
#if !defined(_WIN32)
TEST_F(FatalDeathTest, GotracebackCrashAbortsAfterTheMessage) {
  EXPECT_EXIT(
      {
        setenv("GOTRACEBACK", "crash", 1);
        RunGuarded([] { gort::MakeChan<int>().Recv(); }, Procs(1));
        std::_Exit(4);
      },
      ::testing::KilledBySignal(SIGABRT),
      "fatal error: all goroutines are asleep - deadlock!");
}
#endif

// ---------------------------------------------------------------------------
// Hostile input

// For death-test children: runs with $GOMAXPROCS = value and exits 0 if
// GOMAXPROCS(0) was want (-1: what it is with $GOMAXPROCS unset), else 1.
[[noreturn]] void RunWithGomaxprocsEnv(const char* value, int want) {
  if (want < 0) {
    unsetenv("GOMAXPROCS");
    RunGuarded([&] { want = gort::GOMAXPROCS(0); });
  }
  setenv("GOMAXPROCS", value, 1);
  int got = 0;
  RunGuarded([&] { got = gort::GOMAXPROCS(0); });
  if (got != want) {
    std::fprintf(stderr, "test: GOMAXPROCS(0) = %d, want %d\n", got, want);
    std::_Exit(1);
  }
  std::_Exit(0);
}

TEST_F(FatalDeathTest, HugeGomaxprocsEnvIsCappedWithAWarning) {
  EXPECT_EXIT(RunWithGomaxprocsEnv("99999999", 256),
              ::testing::ExitedWithCode(0),
              "gort: GOMAXPROCS=99999999 is above the limit; using 256");
}

TEST_F(FatalDeathTest, OverflowingGomaxprocsEnvIsIgnoredWithAWarning) {
  // Beyond long: strtol reports ERANGE; the CPU count is used.
  EXPECT_EXIT(RunWithGomaxprocsEnv("99999999999999999999999", -1),
              ::testing::ExitedWithCode(0),
              "gort: ignoring invalid GOMAXPROCS");
}

// Runs a little goroutine traffic; exits 0 if it all completed.
[[noreturn]] void RunTrafficAndExit(const gort::Options& options) {
  int sum = 0;
  RunGuarded(
      [&] {
        auto c = gort::MakeChan<int>();
        gort::WaitGroup wg;
        for (int i = 1; i <= 10; i++) {
          wg.Add(1);
          gort::Go([c, i, &wg] {
            c.Send(i);
            wg.Done();
          });
        }
        for (int i = 0; i < 10; i++) sum += c.Recv();
        wg.Wait();
      },
      options);
  if (sum != 55) {
    std::fprintf(stderr, "test: sum = %d, want 55\n", sum);
    std::_Exit(1);
  }
  std::_Exit(0);
}

TEST_F(FatalDeathTest, GarbageGodebugWarnsAndRunStillWorks) {
  EXPECT_EXIT(
      {
        setenv("GODEBUG", "schedtrace=abc,zzz=1,,=", 1);
        RunTrafficAndExit(Procs(2));
      },
      ::testing::ExitedWithCode(0),
      "gort: GODEBUG: bad value \"abc\" for schedtrace ignored\n"
      "gort: GODEBUG: unknown key \"zzz\" ignored\n"
      "gort: GODEBUG: unknown key \"\" ignored");
}

TEST_F(FatalDeathTest, MalformedGodebugFieldWarns) {
  EXPECT_EXIT(
      {
        setenv("GODEBUG", "justakey,scheddetail=-1,schedtrace=99999999999999",
               1);
        RunTrafficAndExit(Procs(2));
      },
      ::testing::ExitedWithCode(0),
      "gort: GODEBUG: malformed setting \"justakey\" ignored\n"
      "gort: GODEBUG: bad value \"-1\" for scheddetail ignored\n"
      "gort: GODEBUG: bad value \"99999999999999\" for schedtrace ignored");
}

TEST_F(FatalDeathTest, TinyStackSizeWarnsAndGoroutinesRun) {
  EXPECT_EXIT(
      {
        gort::Options options = Procs(2);
        options.stack_size = 1;
        RunTrafficAndExit(options);
      },
      ::testing::ExitedWithCode(0),
      "gort: Options.stack_size=1 is too small; using 16384");
}

// The size cases run on every target with values of the target's width:
// SIZE_MAX (which a 32-bit size_t holds, and where 32-bit arithmetic
// overflows) everywhere, and values beyond 32 bits only where size_t has
// them.
constexpr bool k64Bit = sizeof(std::size_t) >= 8;
constexpr std::size_t kSizeMax = std::numeric_limits<std::size_t>::max();
// Go's maxAlloc: the most bytes one allocation may ask for (1 TiB on 64-bit
// targets, 2 GiB on 32-bit ones).
constexpr std::size_t kMaxAlloc =
    k64Bit ? static_cast<std::size_t>(std::uint64_t{1} << 40) : kSizeMax >> 1;

// The largest stack Options.stack_size may ask for: 1 GiB, 256 MiB on
// 32-bit targets (Go's maxstacksize is 1 GB and 250 MB).
constexpr std::size_t kMaxStack = k64Bit ? std::size_t{1} << 30
                                         : std::size_t{1} << 28;

// Runs two goroutines (two stacks of the capped size, which a 32-bit
// address space holds) with Options.stack_size = size; the warning names
// size and the cap.
void ExpectStackSizeCapped(std::size_t size) {
  EXPECT_EXIT(
      {
        gort::Options options = Procs(2);
        options.stack_size = size;
        int got = 0;
        RunGuarded(
            [&got] {
              auto c = gort::MakeChan<int>();
              gort::Go([c] { c.Send(42); });
              got = c.Recv();
            },
            options);
        std::_Exit(got == 42 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0),
      "gort: Options.stack_size=" + std::to_string(size) +
          " is too large; using " + std::to_string(kMaxStack));
}

TEST_F(FatalDeathTest, HugeStackSizeWarnsAndGoroutinesRun) {
  ExpectStackSizeCapped(kSizeMax);
  ExpectStackSizeCapped(kSizeMax / 2 + 1);
  if (k64Bit) {
    ExpectStackSizeCapped(static_cast<std::size_t>(std::uint64_t{1} << 40));
  }
}

TEST_F(FatalDeathTest, AbsurdMaxprocsOptionIsCappedWithAWarning) {
  EXPECT_EXIT(
      {
        int got = 0;
        RunGuarded([&] { got = gort::GOMAXPROCS(0); }, Procs(99999999));
        std::_Exit(got == 256 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0),
      "gort: Options.maxprocs=99999999 is above the limit; using 256");
}

// Not a death test: a huge capacity is a catchable gort::Panic, inside and
// outside Run, and the runtime keeps working afterwards.
struct Big {
  char bytes[1024];
};

template <class T>
void ExpectMakechanOutOfRange(std::size_t cap) {
  try {
    auto c = gort::MakeChan<T>(cap);
    ADD_FAILURE() << "MakeChan(" << cap << ") returned, cap " << c.Cap();
  } catch (const gort::Panic& p) {
    EXPECT_STREQ(p.what(), "makechan: size out of range") << "cap " << cap;
  }
}

// Capacities MakeChan refuses on this target, whatever its width.
template <class F>
void ForEachHugeCapacity(F check) {
  check(kSizeMax, sizeof(int), "SIZE_MAX ints");
  check(kMaxAlloc / sizeof(int) + 1, sizeof(int), "maxAlloc + 1 bytes of ints");
  check(std::size_t{0xffffffff}, sizeof(Big), "2^32 - 1 Bigs");
  check(kMaxAlloc / sizeof(Big) + 1, sizeof(Big), "maxAlloc + 1 bytes of Bigs");
  if (k64Bit) {
    // More elements than a channel counts (Go's hchan holds a uint).
    check(static_cast<std::size_t>(std::uint64_t{1} << 32), sizeof(int),
          "2^32 ints");
    check(static_cast<std::size_t>(std::uint64_t{1} << 40), sizeof(int),
          "2^40 ints");
  }
}

void ExpectHugeCapacitiesOutOfRange() {
  int n = 0;
  ForEachHugeCapacity([&n](std::size_t cap, std::size_t elem, const char*) {
    if (elem == sizeof(int)) {
      ExpectMakechanOutOfRange<int>(cap);
    } else {
      ExpectMakechanOutOfRange<Big>(cap);
    }
    ++n;
  });
  EXPECT_EQ(n, k64Bit ? 6 : 4);
}

TEST(MakechanTest, HugeCapacityPanicsInsideRun) {
  int checked = 0;
  RunGuarded(
      [&] {
        ExpectHugeCapacitiesOutOfRange();
        // The runtime still works.
        auto c = gort::MakeChan<int>(1);
        gort::Go([c] { c.Send(42); });
        checked = c.Recv();
      },
      Procs(2));
  EXPECT_EQ(checked, 42);
}

TEST(MakechanTest, HugeCapacityPanicsOutsideRun) {
  ExpectHugeCapacitiesOutOfRange();
}

}  // namespace
