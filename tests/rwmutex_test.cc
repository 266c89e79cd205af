// tests/rwmutex_test.cc: RWMutex, in the spirit of Go's
// sync/rwmutex_test.go: readers share the lock, writers exclude everyone,
// a waiting writer keeps new readers out (writer preference), TryLock and
// TryRLock, the standard lock adaptors, and misuse is fatal.
#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using gort_test::DeadlineFromNow;
using gort_test::Procs;
using gort_test::RunGuarded;

template <class C>
bool GoschedUntil(C cond) {
  const std::int64_t deadline = DeadlineFromNow();
  while (!cond() && gort::Nanotime() < deadline) gort::Gosched();
  return cond();
}

// Go's TestParallelReaders: n goroutines all hold the read lock at once
// (each waits, holding it, until all have it).
TEST(RWMutexTest, ReadersHoldTheLockTogether) {
  for (int procs : {1, 2, 4}) {
    constexpr int kReaders = 8;
    std::atomic<int> holding{0};
    bool all_held = true;
    RunGuarded(
        [&] {
          gort::RWMutex mu;
          gort::WaitGroup wg;
          wg.Add(kReaders);
          auto held = gort::MakeChan<bool>(kReaders);
          for (int i = 0; i < kReaders; i++) {
            gort::Go([&] {
              mu.RLock();
              holding.fetch_add(1);
              held.Send(
                  GoschedUntil([&] { return holding.load() == kReaders; }));
              mu.RUnlock();
              wg.Done();
            });
          }
          for (int i = 0; i < kReaders; i++) all_held &= held.Recv();
          wg.Wait();
        },
        Procs(procs));
    EXPECT_TRUE(all_held) << "procs=" << procs;
  }
}

// Go's HammerRWMutex: writers see no reader and no other writer; readers see
// no writer.
TEST(RWMutexTest, HammerReadersAndWriters) {
  for (int procs : {1, 2, 4}) {
    constexpr int kGoroutines = 10;
    constexpr int kIterations = 1000;
    std::atomic<int> activity{0};  // readers + 10000 * writers
    std::atomic<int> bad{0};
    RunGuarded(
        [&] {
          gort::RWMutex mu;
          gort::WaitGroup wg;
          wg.Add(kGoroutines);
          for (int g = 0; g < kGoroutines; g++) {
            gort::Go([&, g] {
              for (int i = 0; i < kIterations; i++) {
                if (g % 3 == 0) {
                  if (g == 3 && i % 2 == 0) {
                    while (!mu.TryLock()) gort::Gosched();
                  } else {
                    mu.Lock();
                  }
                  if (activity.fetch_add(10000) + 10000 != 10000) bad++;
                  if (i % 16 == 0) gort::Gosched();
                  if (activity.fetch_sub(10000) - 10000 != 0) bad++;
                  mu.Unlock();
                } else {
                  if (g == 1 && i % 2 == 0) {
                    while (!mu.TryRLock()) gort::Gosched();
                  } else {
                    mu.RLock();
                  }
                  int n = activity.fetch_add(1) + 1;
                  if (n < 1 || n >= 10000) bad++;
                  if (i % 16 == 0) gort::Gosched();
                  activity.fetch_sub(1);
                  mu.RUnlock();
                }
              }
              wg.Done();
            });
          }
          wg.Wait();
        },
        Procs(procs));
    EXPECT_EQ(bad.load(), 0) << "procs=" << procs;
  }
}

// A writer blocked in Lock behind a reader stops new readers: TryRLock fails
// and RLock parks until the writer has had its turn.
TEST(RWMutexTest, WaitingWriterKeepsNewReadersOut) {
  std::vector<int> order;  // guarded by the RWMutex or sequenced below
  bool try_rlock_always_succeeded = true;
  bool late_reader_entered_early = true;
  RunGuarded(
      [&] {
        gort::RWMutex mu;
        gort::WaitGroup wg;
        std::atomic<bool> writer_started{false}, late_started{false};
        std::atomic<bool> late_in{false};
        mu.RLock();
        wg.Add(2);
        gort::Go([&] {
          writer_started = true;
          mu.Lock();
          order.push_back(1);
          mu.Unlock();
          wg.Done();
        });
        EXPECT_TRUE(GoschedUntil([&] { return writer_started.load(); }));
        gort::Sleep(2ms);  // the writer is parked in Lock by now (or soon)
        // TryRLock must fail once the writer has announced itself; it may
        // announce itself only after this goroutine's yield.
        bool any = false;
        const std::int64_t deadline = DeadlineFromNow();
        while (!any && gort::Nanotime() < deadline) {
          if (mu.TryRLock()) {
            mu.RUnlock();
            gort::Sleep(100us);
          } else {
            any = true;
          }
        }
        try_rlock_always_succeeded = !any;
        gort::Go([&] {
          late_started = true;
          mu.RLock();
          late_in = true;
          order.push_back(2);
          mu.RUnlock();
          wg.Done();
        });
        EXPECT_TRUE(GoschedUntil([&] { return late_started.load(); }));
        gort::Sleep(2ms);
        late_reader_entered_early = late_in.load();
        mu.RUnlock();
        wg.Wait();
      },
      Procs(2));
  EXPECT_FALSE(try_rlock_always_succeeded);
  EXPECT_FALSE(late_reader_entered_early);
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(RWMutexTest, TryLockAndTryRLock) {
  std::vector<bool> r;
  RunGuarded(
      [&] {
        gort::RWMutex mu;
        r.push_back(mu.TryLock());   // true
        r.push_back(mu.TryLock());   // false: write-locked
        r.push_back(mu.TryRLock());  // false: write-locked
        mu.Unlock();
        r.push_back(mu.TryRLock());  // true
        r.push_back(mu.TryRLock());  // true: readers share
        r.push_back(mu.TryLock());   // false: read-locked
        mu.RUnlock();
        mu.RUnlock();
        r.push_back(mu.TryLock());  // true
        mu.Unlock();
      },
      Procs(1));
  EXPECT_EQ(r,
            (std::vector<bool>{true, false, false, true, true, false, true}));
}

// The std adaptors: unique_lock and shared_lock over the std names.
TEST(RWMutexTest, StandardLockAdaptors) {
  int value = 0;
  std::atomic<int> readers{0};
  RunGuarded(
      [&] {
        gort::RWMutex mu;
        gort::WaitGroup wg;
        wg.Add(20);
        for (int i = 0; i < 10; i++) {
          gort::Go([&] {
            {
              std::unique_lock<gort::RWMutex> l(mu);
              value++;
            }
            wg.Done();
          });
          gort::Go([&] {
            {
              std::shared_lock<gort::RWMutex> l(mu);
              if (value >= 0) readers.fetch_add(1);
            }
            wg.Done();
          });
        }
        wg.Wait();
        std::unique_lock<gort::RWMutex> l(mu, std::try_to_lock);
        EXPECT_TRUE(l.owns_lock());
        l.unlock();
        std::shared_lock<gort::RWMutex> s(mu, std::try_to_lock);
        EXPECT_TRUE(s.owns_lock());
      },
      Procs(2));
  EXPECT_EQ(value, 10);
  EXPECT_EQ(readers.load(), 10);
}

class RWMutexDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(RWMutexDeathTest, UnlockOfUnlockedIsFatal) {
  EXPECT_EXIT(RunGuarded([] {
                gort::RWMutex mu;
                mu.Unlock();
              }),
              ::testing::ExitedWithCode(2),
              "fatal error: sync: Unlock of unlocked RWMutex");
  EXPECT_EXIT(RunGuarded([] {
                gort::RWMutex mu;
                mu.RUnlock();
              }),
              ::testing::ExitedWithCode(2),
              "fatal error: sync: RUnlock of unlocked RWMutex");
  EXPECT_EXIT(RunGuarded([] {
                gort::RWMutex mu;
                mu.Lock();
                mu.RUnlock();
              }),
              ::testing::ExitedWithCode(2),
              "fatal error: sync: RUnlock of unlocked RWMutex");
}

}  // namespace
