// Tests of the goroutine-memory scavenger (runtime/proc.cc's gscavenge,
// GODEBUG=scavenge=ms): dead goroutines idle on the global free list for a
// whole period are freed during the Run and their stacks' pages go back to
// the OS (Go frees dead Gs' stacks at each GC and its scavenger returns the
// pages; Go's tests of that are GC tests, so these are gort's own).
//
// Every wait here is for a counter the scavenger moves (ReadStats), bounded
// by the watchdog, never a sleep standing in for it. The RSS check is a
// lower bound on how much came back (half of the spike), on Linux without
// sanitizers only.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "test_os.h"  // first: Winsock before anything includes windows.h
#include "watchdog.h"

namespace {

using gort_test::Procs;
using gort_test::RunGuarded;

class ScavengeTest : public testing::Test {
 protected:
  // Guard pages by mprotect, so that stacks past their budget have canaries
  // (with guard regions every stack is guarded: no canary to test).
  void SetUp() override { setenv("GODEBUG", "scavenge=20,guardregions=0", 1); }
  void TearDown() override { unsetenv("GODEBUG"); }

 private:
  gort_test::TestWatchdog watchdog_;
};

// Death tests re-execute the binary ("threadsafe"): the fixture's watchdog
// is a thread, and a fork with threads is refused by ThreadSanitizer.
class ScavengeDeathTest : public ScavengeTest {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    ScavengeTest::SetUp();
  }
};

// The resident set size in KiB; 0 where it cannot be read or means little
// (not Linux; sanitizers, which keep shadow memory of their own).
std::int64_t RssKiB() {
#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
#endif
  return 0;
}

// SpikeSize: n scaled for the target. ThreadSanitizer makes a fiber for
// each new goroutine (several milliseconds here, most of it clearing the
// fiber's state), so there a spike is a fifth of the scaled size, or two
// spikes of 3 000 take most of the watchdog's 30 s in a loaded ctest run.
int SpikeSize(int n) {
#if defined(__SANITIZE_THREAD__)
  return gort_test::Scaled(n) / 5;
#else
  return gort_test::Scaled(n);
#endif
}

// Uses about 8 KiB of the stack it runs on (so a stack that came back from
// the OS is written again) and returns a value the compiler must compute.
int TouchStack(int depth) {
  volatile char pad[1024];
  pad[0] = static_cast<char>(depth);
  if (depth == 0) return pad[0];
  return TouchStack(depth - 1) + pad[0];
}

// Starts a goroutine that touches its stack, counts itself out of started,
// blocks until `gate` closes, touches its stack again and counts itself out
// of done.
void GoGated(gort::Chan<int> gate, gort::WaitGroup* started,
             gort::WaitGroup* done) {
  gort::Go([gate, started, done] {
    TouchStack(3);
    started->Done();
    (void)gate.RecvOk();
    TouchStack(3);
    done->Done();
  });
}

// Starts n GoGated goroutines; returns once all have started.
void Spike(int n, gort::Chan<int> gate, gort::WaitGroup* done) {
  gort::WaitGroup started;
  started.Add(n);
  done->Add(n);
  for (int i = 0; i < n; i++) GoGated(gate, &started, done);
  started.Wait();
}

// Starts n GoGated goroutines, then lets them all end; returns once they
// have.
void SpikeThatEnds(int n) {
  auto gate = gort::MakeChan<int>();
  gort::WaitGroup done;
  Spike(n, gate, &done);
  gate.Close();
  done.Wait();
}

// Waits (parked in Sleep, not spinning) until the scavenger has freed at
// least want goroutines in this Run.
void AwaitFreed(std::int64_t want) {
  while (gort::ReadStats().gs_freed < want) {
    gort::Sleep(std::chrono::milliseconds(5));
  }
}

// A spike's goroutines end and idle: the scavenger frees them and returns
// their stacks, RSS falls by at least half of what the spike added, and
// the next spike runs on the released stacks (written again, canaries
// included: 30 000 goroutines is past the guard-page budget, so some stacks
// have canaries) without a false "stack overflow". (Windows: fibres, each
// with its own guard page, deleted when released.)
TEST_F(ScavengeTest, IdleGoroutinesAndTheirStacksGoBack) {
  // Wine: fewer fibres; 32-bit: 30 000 stack reservations would not fit.
  const int kN = SpikeSize(sizeof(void*) == 4 ? 3000 : 30000);
  RunGuarded(
      [kN] {
        std::int64_t before = RssKiB();
        auto gate = gort::MakeChan<int>();
        gort::WaitGroup done;
        Spike(kN, gate, &done);
        std::int64_t peak = RssKiB();
        gate.Close();
        done.Wait();
        // Each P keeps up to 64 free Gs and 16 stacks of its own.
        AwaitFreed(kN - 2 * 80);
        gort::Stats s = gort::ReadStats();
        EXPECT_GE(s.stacks_released, kN - 2 * 100);
        EXPECT_LE(s.free_gs, 2 * 80);
        std::int64_t after = RssKiB();
        if (before > 0) {
          EXPECT_LE(after - before, (peak - before) / 2)
              << "KiB: before " << before << ", peak " << peak << ", after "
              << after;
        }
        SpikeThatEnds(kN);
      },
      Procs(2));
}

// Half of a spike ends and is scavenged while the other half, interleaved
// with it on the slabs, stays alive: a released stack's top page holds the
// canary of the stack above, which must survive while that stack is in use
// (the live goroutines then run, park and exit, each switch checking its
// canary).
TEST_F(ScavengeTest, LiveNeighboursKeepTheirCanaries) {
  // Wine: fewer fibres; 32-bit: 30 000 stack reservations would not fit.
  const int kN = SpikeSize(sizeof(void*) == 4 ? 3000 : 30000);
  RunGuarded(
      [kN] {
        auto gateEven = gort::MakeChan<int>();
        auto gateOdd = gort::MakeChan<int>();
        gort::WaitGroup even, odd, started;
        started.Add(kN);
        even.Add(kN / 2);
        odd.Add(kN / 2);
        for (int i = 0; i < kN; i++) {
          auto gate = i % 2 == 0 ? gateEven : gateOdd;
          gort::WaitGroup* done = i % 2 == 0 ? &even : &odd;
          GoGated(gate, &started, done);
        }
        started.Wait();
        gateEven.Close();
        even.Wait();
        AwaitFreed(kN / 2 - 2 * 80);
        gateOdd.Close();
        odd.Wait();
        EXPECT_GE(gort::ReadStats().stacks_released, kN / 2 - 2 * 100);
      },
      Procs(1));
}

// GODEBUG=scavenge=0 turns it off: nothing is freed however long the free
// list idles (sysmon looks every period it would have used, and more).
TEST_F(ScavengeTest, OffWithZero) {
  setenv("GODEBUG", "scavenge=0", 1);
  gort::Stats s;
  RunGuarded(
      [&] {
        SpikeThatEnds(2000);
        gort::Sleep(std::chrono::milliseconds(100));
        s = gort::ReadStats();
      },
      Procs(2));
  EXPECT_EQ(s.gs_freed, 0);
  EXPECT_EQ(s.stacks_released, 0);
  EXPECT_GT(s.free_gs, 1000);
}

// GODEBUG=schedtrace's SCHED lines show the free list and the stacks the
// scavenger released (a line with three digits or more of them). GoogleTest
// has POSIX regular expressions on Linux and its own simple ones on Windows.
#if GTEST_USES_POSIX_RE
constexpr const char* kReleasedLine =
    "SCHED [0-9]+ms: gomaxprocs=2 .* gfree=[0-9]+ "
    "stacksreleased=[0-9][0-9][0-9]+ runqueue=";
#else
constexpr const char* kReleasedLine =
    "SCHED \\d+ms: gomaxprocs=2 .* gfree=\\d+ "
    "stacksreleased=\\d\\d\\d+ runqueue=";
#endif
TEST_F(ScavengeDeathTest, SchedtraceShowsReleasedStacks) {
  EXPECT_EXIT(
      {
        setenv("GODEBUG", "scavenge=20,schedtrace=10,guardregions=0", 1);
        RunGuarded(
            [] {
              SpikeThatEnds(2000);
              AwaitFreed(1000);
              gort::Sleep(std::chrono::milliseconds(30));  // one more line
            },
            Procs(2));
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), kReleasedLine);
}

}  // namespace
