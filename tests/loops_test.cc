// tests/loops_test.cc: the benchmark loops of benchmarks/ping_loops.h and
// benchmarks/sched_loops.h, run as correctness checks with a small n on
// every target. Each loop checks every value it passes and aborts the
// process on a broken protocol or a failed system call, so a test here
// fails by crashing (ctest reports it) or by the watchdog; the assertions
// below check what the loops return or leave behind.
#include <cstdint>

#include "benchmarks/ping_loops.h"
#include "benchmarks/sched_loops.h"
#include "gort/gort.h"
#include "gtest/gtest.h"
#include "watchdog.h"

namespace {

using gort_test::RunGuarded;
using gort_test::Scaled;

// GOMAXPROCS and usleep mode of one run of the loops.
struct LoopsParam {
  int procs;
  gort::UsleepMode usleep;
};

class LoopsTest : public ::testing::TestWithParam<LoopsParam> {
 protected:
  gort::Options Opts() const {
    gort::Options options = gort_test::Procs(GetParam().procs);
    options.usleep = GetParam().usleep;
    return options;
  }
  gort_test::TestWatchdog watchdog_;
};

std::string Name(const ::testing::TestParamInfo<LoopsParam>& info) {
  return "Procs" + std::to_string(info.param.procs) +
         (info.param.usleep == gort::UsleepMode::kHighRes ? "HighRes"
                                                          : "LowRes");
}

INSTANTIATE_TEST_SUITE_P(
    Modes, LoopsTest,
    ::testing::Values(LoopsParam{1, gort::UsleepMode::kHighRes},
                      LoopsParam{1, gort::UsleepMode::kLowRes},
                      LoopsParam{2, gort::UsleepMode::kHighRes},
                      LoopsParam{4, gort::UsleepMode::kLowRes}),
    Name);

// The ping family: each round trip of the syscall pings needs sysmon (or
// an idle M) to take back a P from a goroutine blocked in a syscall.
TEST_P(LoopsTest, PingLoops) {
  RunGuarded(
      [] {
        gort::bench::ChanToSyscallPing(Scaled(50));
        gort::bench::SyscallToSyscallPing(Scaled(50));
        gort::bench::ChanToChanPing(Scaled(2000));
        gort::bench::OsYield(Scaled(200));
        gort::bench::OsYieldRaw(Scaled(200));
      },
      Opts());
  // Each syscall ping leaves its P in a syscall once per op: with one P,
  // nothing else runs until it is retaken or handed off.
  if (GetParam().procs == 1) {
    EXPECT_GT(gort::ReadStats().handoffs, 0);
  }
}

TEST_P(LoopsTest, SchedLoops) {
  RunGuarded(
      [] {
        gort::bench::Gosched(Scaled(2000));
        gort::bench::Spawn(Scaled(5000));
        gort::bench::ChanBuffered(Scaled(5000));
        gort::bench::Select2(Scaled(5000));
        gort::bench::Select2Handlers(Scaled(5000));
        gort::bench::ChanContended(Scaled(5000));
        gort::bench::MutexUncontended(Scaled(5000));
        gort::bench::FanOut(Scaled(4));
      },
      Opts());
}

TEST_P(LoopsTest, ParkGoroutines) {
  gort::bench::ParkResult r;
  int after = -1;
  RunGuarded(
      [&] {
        r = gort::bench::ParkGoroutines(Scaled(2000));
        // Every parked goroutine was released and has exited or is exiting.
        while (gort::NumGoroutine() > 1) gort::Gosched();
        after = gort::NumGoroutine();
      },
      Opts());
  EXPECT_EQ(after, 1);
  EXPECT_GT(r.start_ns, 0);
#if !defined(_WIN32)
  EXPECT_GT(r.rss_before, 0);
  EXPECT_GE(r.rss_parked, r.rss_before / 2);
#endif
}

}  // namespace
