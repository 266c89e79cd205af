// tests/blockwarn_test.cc: sysmon's warning about a goroutine that blocks
// its OS thread outside gort::Syscall (GODEBUG=blockwarn=ms, default 100;
// runtime/proc_sysmon.cc checkblocked). Go has no twin: a Go goroutine cannot
// block its thread without the runtime knowing.
//
// The warning must appear, once per incident, for a raw blocking call and
// for a std::mutex that another thread holds; it must not appear for a
// program whose goroutines park, sit in gort::Syscall for long, or compute
// for long without a scheduling point (running is not blocking), nor when
// blockwarn=0. The waits are driven by the warning counter in
// gort::ReadStats, not by the clock.
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "watchdog.h"

// ThreadSanitizer's runtime blocks threads on its own locks, so there the
// check is off by default (runtime/proc_schedtrace.cc) and can warn falsely.
#if defined(__SANITIZE_THREAD__)
#define GORT_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GORT_TEST_TSAN 1
#endif
#endif

namespace {

using gort_test::Procs;
using gort_test::RunGuarded;

constexpr const char* kWarning =
    "runtime: goroutine 2 has held P 0 for [0-9]+ ms without reaching a "
    "scheduling point, its thread asleep in the OS \\(a blocking call "
    "outside gort::Syscall\\? an OS lock such as std::mutex\\?\\)";

// Sleeps the calling thread for ms milliseconds, without telling gort.
void RawSleepMs(int ms) {
  struct timespec ts = {0, 1'000'000};
  for (int i = 0; i < ms; i++) nanosleep(&ts, nullptr);
}

std::int64_t Warnings() { return gort::ReadStats().block_warnings; }

class BlockWarnDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// Child: goroutine 2 blocks its thread (P 0, the only one) in raw
// nanosleeps until the warning is counted, then for 300 ms more (30 of
// sysmon's samples); exits 0 if exactly one warning was printed.
[[noreturn]] void BlockUntilWarnedThenMore() {
  std::int64_t n = 0;
  RunGuarded(
      [&] {
        auto done = gort::MakeChan<int>();
        gort::Go([&] {
          while (Warnings() == 0) RawSleepMs(1);
          RawSleepMs(300);
          n = Warnings();
          done.Send(1);
        });
        done.Recv();
      },
      Procs(1));
  std::fprintf(stderr, "test: %lld warnings\n", static_cast<long long>(n));
  std::_Exit(n == 1 ? 0 : 1);
}

TEST_F(BlockWarnDeathTest, RawBlockingCallWarnsOncePerIncident) {
  EXPECT_EXIT(
      {
#ifdef GORT_TEST_TSAN
        setenv("GODEBUG", "blockwarn=100", 1);  // off by default there
#else
        unsetenv("GODEBUG");  // on by default, at 100 ms
#endif
        BlockUntilWarnedThenMore();
      },
      ::testing::ExitedWithCode(0), kWarning);
}

// The mistake docs/reliability.md describes: a goroutine waits for a
// std::mutex. Here a plain thread holds it until the warning is counted.
TEST_F(BlockWarnDeathTest, StdMutexHeldElsewhereWarns) {
  EXPECT_EXIT(
      {
        setenv("GODEBUG", "blockwarn=20", 1);
        std::mutex mu;
        std::atomic<bool> held{false};
        std::atomic<bool> running{false};
        std::thread holder([&] {
          std::lock_guard<std::mutex> lock(mu);
          held.store(true);
          while (!running.load() || Warnings() == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
        });
        while (!held.load()) std::this_thread::yield();
        RunGuarded(
            [&] {
              auto done = gort::MakeChan<int>();
              gort::Go([&] {
                running.store(true);
                std::lock_guard<std::mutex> lock(mu);  // blocks the thread
                done.Send(1);
              });
              done.Recv();
            },
            Procs(1));
        holder.join();
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), kWarning);
}

class BlockWarnTest : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("GODEBUG"); }
};

// Blocking in gort::Syscall / BlockingSyscall for over two thresholds,
// parking on channels, and computing for six thresholds without a
// scheduling point: no warning.
TEST_F(BlockWarnTest, WellBehavedProgramGetsNoWarning) {
#ifdef GORT_TEST_TSAN
  GTEST_SKIP() << "ThreadSanitizer's own locks block threads: false warnings";
#endif
  setenv("GODEBUG", "blockwarn=50", 1);
  RunGuarded(
      [] {
        gort::WaitGroup wg;
        wg.Add(4);
        auto ping = gort::MakeChan<int>();
        auto pong = gort::MakeChan<int>();
        const int rounds = gort_test::Scaled(20000);
        gort::Go([&] {
          for (int i = 0; i < rounds; i++) pong.Send(ping.Recv() + 1);
          wg.Done();
        });
        gort::Go([&] {
          int v = 0;
          for (int i = 0; i < rounds; i++) {
            ping.Send(v);
            v = pong.Recv();
          }
          EXPECT_EQ(v, rounds);
          wg.Done();
        });
        gort::Go([&] {
          for (int i = 0; i < 2; i++) {
            gort::Syscall([] { RawSleepMs(120); });
            gort::BlockingSyscall([] { RawSleepMs(120); });
          }
          wg.Done();
        });
        gort::Go([&] {
          const std::int64_t end = gort::Nanotime() + 300'000'000;
          volatile std::uint64_t x = 0;
          while (gort::Nanotime() < end) x = x + 1;
          wg.Done();
        });
        wg.Wait();
      },
      Procs(2));
  EXPECT_EQ(gort::ReadStats().block_warnings, 0);
}

// blockwarn=0 turns the check off.
TEST_F(BlockWarnTest, ZeroTurnsTheWarningOff) {
  setenv("GODEBUG", "blockwarn=0", 1);
  RunGuarded(
      [] {
        auto done = gort::MakeChan<int>();
        gort::Go([&] {
          RawSleepMs(300);
          done.Send(1);
        });
        done.Recv();
      },
      Procs(1));
  EXPECT_EQ(gort::ReadStats().block_warnings, 0);
}

}  // namespace
