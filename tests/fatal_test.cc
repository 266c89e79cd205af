// tests/fatal_test.cc: misuse of the runtime ends the program with a clear,
// Go-style message and exit status 2, as do a deadlock, an exception or
// gort::Panic escaping a goroutine and a goroutine's stack overflow; and
// hostile configuration (bad $GOMAXPROCS, garbage $GODEBUG, absurd
// Options.stack_size, huge channel capacities) gives a warning or a
// gort::Panic instead of a crash.
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
#if defined(__linux__)
#include <sys/mman.h>  // KernelHasGuardRegions
#include <unistd.h>
#endif

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include "gomaxprocs_env.h"
#include "gort/gort.h"
#include "gtest/gtest.h"
#include "test_os.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using gort_test::DeadlineFromNow;
using gort_test::Procs;
using gort_test::RunGuarded;
using gort_test::RunWithGomaxprocsEnv;

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
// Deadlock, panics and stack overflow

constexpr char kDeadlockMessage[] =
    "fatal error: all goroutines are asleep - deadlock!";

using DeadlockDeathTest = FatalDeathTest;

TEST_F(DeadlockDeathTest, MainBlockedOnChannelReceive) {
  for (int procs : {1, 2}) {
    EXPECT_EXIT(RunGuarded(
                    [] {
                      auto c = gort::MakeChan<int>();
                      c.Recv();
                    },
                    Procs(procs)),
                ::testing::ExitedWithCode(2), kDeadlockMessage)
        << "maxprocs " << procs;
  }
}

TEST_F(DeadlockDeathTest, MainWaitingOnWaitGroup) {
  EXPECT_EXIT(RunGuarded(
                  [] {
                    gort::WaitGroup wg;
                    wg.Add(1);
                    wg.Wait();
                  },
                  Procs(2)),
              ::testing::ExitedWithCode(2), kDeadlockMessage);
}

TEST_F(DeadlockDeathTest, EveryGoroutineBlocked) {
  EXPECT_EXIT(RunGuarded(
                  [] {
                    gort::Mutex mu;
                    auto c = gort::MakeChan<int>();
                    mu.Lock();
                    for (int i = 0; i < 3; i++) {
                      gort::Go([&] { mu.Lock(); });
                    }
                    gort::Go([c] {
                      c.Send(1);
                      c.Send(2);
                    });
                    c.Recv();
                    mu.Lock();
                  },
                  Procs(2)),
              ::testing::ExitedWithCode(2), kDeadlockMessage);
}

TEST_F(DeadlockDeathTest, ReportedOnceSleepersHaveFinished) {
  EXPECT_EXIT(RunGuarded(
                  [] {
                    gort::Go([] { gort::Sleep(5ms); });
                    gort::Sleep(1ms);
                    gort::MakeChan<int>().Recv();
                  },
                  Procs(1)),
              ::testing::ExitedWithCode(2), kDeadlockMessage);
}

using PanicDeathTest = FatalDeathTest;

// Main sleeps up to kDeadline so that only the panic can end the process
// with status 2 (main returning ends the death test without dying).
void SleepUntilKilled() {
  const std::int64_t deadline = DeadlineFromNow();
  while (gort::Nanotime() < deadline) gort::Sleep(1ms);
}

TEST_F(PanicDeathTest, ExceptionEscapingGoroutine) {
  EXPECT_EXIT(RunGuarded(
                  [] {
                    gort::Go([] { throw std::runtime_error("boom"); });
                    SleepUntilKilled();
                  },
                  Procs(2)),
              ::testing::ExitedWithCode(2),
              "panic: boom\\s+goroutine \\S+ \\[running\\]:");
}

// A thrown value that is not a std::exception prints as Go prints a panic
// value: a number as itself, a string as itself, another type by its name.
TEST_F(PanicDeathTest, NonExceptionValuesPrintAsGoPanicValues) {
  auto Dies = [](auto value) {
    RunGuarded(
        [value] {
          gort::Go([value] { throw value; });
          SleepUntilKilled();
        },
        Procs(1));
  };
  EXPECT_EXIT(Dies(42), ::testing::ExitedWithCode(2),
              "panic: 42\\s+goroutine \\S+ \\[running\\]:");
  EXPECT_EXIT(Dies(2.5), ::testing::ExitedWithCode(2), "panic: 2.5\\s");
  EXPECT_EXIT(Dies(7L), ::testing::ExitedWithCode(2), "panic: \\(long\\) 7\\s");
  EXPECT_EXIT(Dies("boom"), ::testing::ExitedWithCode(2), "panic: boom\\s");
  EXPECT_EXIT(Dies(std::string("str")), ::testing::ExitedWithCode(2),
              "panic: str\\s");
  struct Opaque {};
  EXPECT_EXIT(Dies(Opaque{}), ::testing::ExitedWithCode(2),
              "panic: \\(.*::Opaque\\) a C\\+\\+ exception gort cannot print");
}

TEST_F(PanicDeathTest, GortPanicEscapingGoroutine) {
  EXPECT_EXIT(RunGuarded(
                  [] {
                    gort::Go([] {
                      gort::Gosched();
                      throw gort::Panic("something went wrong");
                    });
                    SleepUntilKilled();
                  },
                  Procs(1)),
              ::testing::ExitedWithCode(2),
              "panic: something went wrong\\s+goroutine \\S+ \\[running\\]:");
}

// Recurses n levels deep with a 512-byte frame that cannot be optimised
// away.
__attribute__((noinline)) int Recurse(int n) {
  volatile char frame[512];
  frame[0] = static_cast<char>(n);
  if (n == 0) return frame[0];
  return Recurse(n - 1) + frame[0];
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// Running off the end of a goroutine stack hits its guard page: Go's
// message and status, not a bare segmentation fault.
TEST_F(PanicDeathTest, StackOverflowIsAFatalError) {
  if (kSanitized) GTEST_SKIP() << "the sanitizers report stack overflows";
  EXPECT_EXIT(RunGuarded(
                  [] {
                    gort::Go([] { std::printf("%d\n", Recurse(1 << 20)); });
                    SleepUntilKilled();
                  },
                  Procs(1)),
              ::testing::ExitedWithCode(2),
              "fatal error: stack overflow\\s+goroutine \\S+ \\[running\\]:");
}

// Beyond the guard pages: a Run keeps kHeld goroutines alive (parked on a
// channel, so their stacks stay in use) and then starts one more, the
// kHeld + 1st, which runs `overflow`. With GODEBUG=guardregions=0 guards are
// mprotect'ed pages, and the kernel's default vm.max_map_count (65 530)
// affords about 24 000 of them, so with the default limit that goroutine's
// stack has none and only its canary can catch the overflow (with a raised
// limit it has a guard page, which catches it too). With guard regions (Linux
// 6.13, the default) every stack has its guard. Goroutine ids are sequential
// with one P: main is 1, the last one kHeld + 2.
template <class F>
void RunWithLastOfManyGoroutines(int held, F overflow,
                                 const char* godebug = "guardregions=0") {
  setenv("GODEBUG", godebug, 1);  // in the death test's own process
  gort::Options options = Procs(1);
  options.stack_size = 16 * 1024;  // 40 000 stacks fit 32-bit targets too
  RunGuarded(
      [held, overflow] {
        auto hold = gort::MakeChan<int>();
        gort::WaitGroup started;
        started.Add(held);
        for (int i = 0; i < held; i++) {
          gort::Go([hold, &started] {
            started.Done();
            hold.Recv();
          });
        }
        started.Wait();
        gort::Go(overflow);
        SleepUntilKilled();
      },
      options);
}

std::string OverflowReport(int held) {
  return "fatal error: stack overflow\\s+goroutine " +
         std::to_string(held + 2) + " \\[running\\]:";
}

// The 40 000th goroutine recurses without end: it runs through the stacks
// below its own until it faults, and the fault is reported as its stack
// overflow (its stack pointer is below its limit), not as a crash.
TEST_F(PanicDeathTest, StackOverflowOfThe40000thGoroutineIsAFatalError) {
  if (kSanitized) GTEST_SKIP() << "the sanitizers report stack overflows";
  if (gort_test::UnderWine() && sizeof(void*) == 4) {
    GTEST_SKIP() << "40 000 fibre stacks do not fit in Wine's 32-bit address "
                    "space (see proc_test's HundredThousandTest)";
  }
  const int held = gort_test::Scaled(40000) - 1;
  EXPECT_EXIT(RunWithLastOfManyGoroutines(
                  held, [] { std::printf("%d\n", Recurse(1 << 20)); }),
              ::testing::ExitedWithCode(2), OverflowReport(held));
}

// The 40 000th goroutine goes a few KiB past its limit and comes back
// without faulting; its next switch (a Gosched) finds the canary broken.
TEST_F(PanicDeathTest, StackOverflowThatReturnsIsFatalAtTheNextSwitch) {
  if (kSanitized) GTEST_SKIP() << "the sanitizers report stack overflows";
#if defined(_WIN32)
  GTEST_SKIP() << "Windows fibres reserve more than asked, and every one has "
                  "a guard page: no canary to test";
#endif
  const int held = gort_test::Scaled(40000) - 1;
  // 16 KiB asked, a page more usable without a guard page; 512-byte frames.
  constexpr int kDepth = (16 * 1024 + 4096) / 512 + 10;
  EXPECT_EXIT(
      RunWithLastOfManyGoroutines(held,
                                  [] {
                                    std::printf("%d\n", Recurse(kDepth));
                                    gort::Gosched();
                                    std::fprintf(stderr, "test: not caught\n");
                                    std::_Exit(5);
                                  }),
      ::testing::ExitedWithCode(2), OverflowReport(held));
}

#if defined(__linux__)
// KernelHasGuardRegions: whether madvise(MADV_GUARD_INSTALL) makes a page
// fault here (Linux 6.13; qemu-user accepts the advice and does nothing),
// asked of the kernel directly, not of gort.
bool KernelHasGuardRegions() {
  const long page = sysconf(_SC_PAGESIZE);
  void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  bool faults = false;
  int fds[2];
  if (madvise(p, page, 102 /* MADV_GUARD_INSTALL */) == 0 && pipe(fds) == 0) {
    faults = write(fds[1], p, 1) < 0 && errno == EFAULT;
    close(fds[0]);
    close(fds[1]);
  }
  munmap(p, page);
  return faults;
}

// With guard regions, the 40 000th goroutine's stack has a guard page like
// the first's: the overflow that returns (above) faults on its way down, so
// it never comes back (exit 6) to where only a canary would catch it.
TEST_F(PanicDeathTest, StackOverflowOfThe40000thGoroutineHitsItsGuard) {
  if (kSanitized) GTEST_SKIP() << "the sanitizers report stack overflows";
  if (!KernelHasGuardRegions()) GTEST_SKIP() << "no guard regions here";
  const int held = gort_test::Scaled(40000) - 1;
  constexpr int kDepth = (16 * 1024 + 4096) / 512 + 10;
  EXPECT_EXIT(RunWithLastOfManyGoroutines(
                  held,
                  [] {
                    std::printf("%d\n", Recurse(kDepth));
                    std::_Exit(6);
                  },
                  ""),
              ::testing::ExitedWithCode(2), OverflowReport(held));
}
#endif

// ---------------------------------------------------------------------------
// Hostile input

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
constexpr std::size_t kMaxStack =
    k64Bit ? std::size_t{1} << 30 : std::size_t{1} << 28;

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
