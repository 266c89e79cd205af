// tests/alloc_test.cc: the scheduler's steady state allocates nothing.
//
// This binary replaces the global operator new to count every allocation in
// the process. After a warm-up (sudog caches filled, free Gs with stacks on
// the P's list), channel operations, selects and Gosched must not allocate
// at all: sudogs come from the per-P cache, a parked goroutine's context
// lives on its own stack, and the run queues are fixed rings. A count, not
// a time, so the assertions are deterministic.
//
// With one P nothing may allocate. With two, the scheduler may still start
// an M (a thread: an M, its g0 and a start record) the first time both Ps
// want one at once, and sudogs may move between the Ps' caches until both
// are full: one-time costs, bounded whatever the number of operations, so
// the bound kOneTime is far below one allocation per operation.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "test_os.h"  // setenv on Windows too
#include "watchdog.h"

namespace {
std::atomic<std::int64_t> allocations{0};
}  // namespace

// GCC cannot tell that these free() calls match the malloc() below.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

// Counting replacements of the global operator new and its deletes (the
// aligned forms are left to the library: nothing on the measured paths
// uses them).
void* operator new(std::size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void operator delete(void* p) noexcept { std::free(p); }  // NOLINT
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using gort_test::Procs;
using gort_test::RunGuarded;

constexpr int kWarmup = 1000;
constexpr int kOps = 20000;
constexpr std::int64_t kOneTime = 16;

// The allowed allocation count at maxprocs procs.
std::int64_t Allowed(int procs) { return procs == 1 ? 0 : kOneTime; }

// Allocations made while body() runs; body runs once to warm up first.
template <class F>
std::int64_t AllocationsDuring(F body) {
  body(kWarmup);
  std::int64_t before = allocations.load();
  body(kOps);
  return allocations.load() - before;
}

class AllocTest : public ::testing::TestWithParam<int> {};

TEST_P(AllocTest, UnbufferedPingPongDoesNotAllocate) {
  std::int64_t n = -1;
  RunGuarded(
      [&] {
        auto ping = gort::MakeChan<int>();
        auto pong = gort::MakeChan<int>();
        gort::Go([=] {
          while (auto v = ping.RecvOk()) pong.Send(*v + 1);
        });
        n = AllocationsDuring([&](int ops) {
          for (int i = 0; i < ops; i++) {
            ping.Send(i);
            if (pong.Recv() != i + 1) std::abort();
          }
        });
        ping.Close();
      },
      Procs(GetParam()));
  EXPECT_GE(n, 0);
  EXPECT_LE(n, Allowed(GetParam()))
      << "allocations in " << kOps << " round trips";
}

TEST_P(AllocTest, BufferedChannelDoesNotAllocate) {
  std::int64_t n = -1;
  RunGuarded(
      [&] {
        auto c = gort::MakeChan<int>(128);
        auto done = gort::MakeChan<std::int64_t>();
        gort::Go([=] {
          std::int64_t sum = 0;
          while (auto v = c.RecvOk()) sum += *v;
          done.Send(sum);
        });
        n = AllocationsDuring([&](int ops) {
          for (int i = 0; i < ops; i++) c.Send(i);
        });
        c.Close();
        std::int64_t expect = std::int64_t{kWarmup} * (kWarmup - 1) / 2 +
                              std::int64_t{kOps} * (kOps - 1) / 2;
        EXPECT_EQ(done.Recv(), expect);
      },
      Procs(GetParam()));
  EXPECT_GE(n, 0);
  EXPECT_LE(n, Allowed(GetParam())) << "allocations in " << kOps << " sends";
}

TEST_P(AllocTest, SelectDoesNotAllocate) {
  std::int64_t n = -1;
  RunGuarded(
      [&] {
        auto a = gort::MakeChan<int>();
        auto b = gort::MakeChan<int>();
        gort::Go([=] {
          for (int i = 0;; i++) {
            if (!(i % 2 == 0 ? a : b).RecvOk()) return;
          }
        });
        n = AllocationsDuring([&](int ops) {
          for (int i = 0; i < ops; i++) {
            gort::Select(gort::SendCase(a, i), gort::SendCase(b, i));
          }
        });
        a.Close();
        b.Close();
      },
      Procs(GetParam()));
  EXPECT_GE(n, 0);
  EXPECT_LE(n, Allowed(GetParam())) << "allocations in " << kOps << " selects";
}

TEST_P(AllocTest, GoschedDoesNotAllocate) {
  std::int64_t n = -1;
  RunGuarded(
      [&] {
        std::atomic<bool> stop{false};
        gort::WaitGroup wg;
        wg.Add(1);
        gort::Go([&] {
          while (!stop.load()) gort::Gosched();
          wg.Done();
        });
        n = AllocationsDuring([&](int ops) {
          for (int i = 0; i < ops; i++) gort::Gosched();
        });
        stop.store(true);
        wg.Wait();
      },
      Procs(GetParam()));
  EXPECT_GE(n, 0);
  EXPECT_LE(n, Allowed(GetParam()))
      << "allocations in " << kOps << " Gosched calls";
}

INSTANTIATE_TEST_SUITE_P(Maxprocs, AllocTest, ::testing::Values(1, 2));

// Burst starts 200 goroutines that end at once and waits for them.
void Burst() {
  gort::WaitGroup wg;
  wg.Add(200);
  for (int i = 0; i < 200; i++) gort::Go([&wg] { wg.Done(); });
  wg.Wait();
}

// SlowestBurst: the slowest of five bursts in a fresh Run with the scavenger
// off, the first of which makes the Gs (and under ThreadSanitizer a fiber
// for each, several milliseconds apiece).
std::chrono::nanoseconds SlowestBurst() {
  setenv("GODEBUG", "scavenge=0", 1);
  std::chrono::nanoseconds slowest{0};
  RunGuarded(
      [&] {
        for (int i = 0; i < 5; i++) {
          auto t0 = std::chrono::steady_clock::now();
          Burst();
          slowest = std::max<std::chrono::nanoseconds>(
              slowest, std::chrono::steady_clock::now() - t0);
        }
      },
      Procs(1));
  unsetenv("GODEBUG");
  return slowest;
}

// The scavenger (GODEBUG=scavenge) frees only Gs that idled a whole period:
// bursts of 200 goroutines, one after another, each far shorter than a
// period, reuse the same free Gs and stacks across its looks and allocate
// nothing (a scavenger that freed the free list's Gs regardless would have
// the next burst allocate them again). One P: the same Gs cycle every
// burst. The period is 100 ms, or three times the slowest burst of a Run
// like the test's where bursts are slower (ThreadSanitizer: the first burst
// of a Run makes its fibers and takes about a second, and a shorter period
// would free that burst's first Gs before the next, whose new fibers would
// make it as slow again); the test's Run spans six looks, or at least two.
TEST(AllocScavengeTest, SpawnBurstsDoNotAllocateAcrossScavenges) {
  const auto slowest =
      std::chrono::duration_cast<std::chrono::milliseconds>(SlowestBurst());
  const std::int64_t period = std::max<std::int64_t>(100, 3 * slowest.count());
  const std::int64_t window = std::max<std::int64_t>(600, 2 * period);
  setenv("GODEBUG", ("scavenge=" + std::to_string(period)).c_str(), 1);
  std::int64_t n = -1, freed = -1, bursts = 0;
  RunGuarded(
      [&] {
        for (int i = 0; i < 20; i++) Burst();  // warm up
        std::int64_t before = allocations.load();
        std::int64_t freedBefore = gort::ReadStats().gs_freed;
        auto end = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(window);
        while (std::chrono::steady_clock::now() < end) {
          Burst();
          bursts++;
        }
        n = allocations.load() - before;
        freed = gort::ReadStats().gs_freed - freedBefore;
      },
      Procs(1));
  unsetenv("GODEBUG");
  EXPECT_GT(bursts, 0);
  EXPECT_EQ(n, 0) << "allocations in " << bursts << " bursts, scavenge period "
                  << period << " ms";
  EXPECT_EQ(freed, 0) << "Gs in use freed by the scavenger";
}

}  // namespace
