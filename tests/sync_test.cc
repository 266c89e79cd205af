// tests/sync_test.cc: tests of WaitGroup and Mutex, in the spirit of Go's
// sync/waitgroup_test.go and sync/mutex_test.go: counting, reuse, misuse,
// mutual exclusion under contention at several GOMAXPROCS, TryLock, unlock
// by another goroutine, fairness (TestMutexFairness: starvation mode), and
// that a goroutine waiting on either parks rather than holding its thread.
//
// As in proc_test.cc: waits that a broken runtime could make endless are
// bounded (kDeadline or an iteration count) or left to RunGuarded's
// watchdog; no timing is asserted.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "panic_message.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using gort_test::DeadlineFromNow;
using gort_test::kDeadline;
using gort_test::Procs;
using gort_test::RunGuarded;

constexpr char kNegativeCounter[] = "sync: negative WaitGroup counter";

// Yields until cond() holds or kDeadline passes; returns cond().
template <class Cond>
bool GoschedUntil(Cond cond) {
  const std::int64_t deadline = DeadlineFromNow();
  while (!cond() && gort::Nanotime() < deadline) gort::Gosched();
  return cond();
}

class ThreadsafeDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// ---------------------------------------------------------------------------
// WaitGroup

class WaitGroupTest : public ::testing::TestWithParam<int> {};

// n goroutines report on wg1 and then wait on wg2, which main releases one
// Done at a time: none may pass wg2 before the last Done.
TEST_P(WaitGroupTest, WaitReleasesOnlyAtZero) {
  constexpr int kN = 16;
  std::vector<int> exited_before_done;
  std::atomic<int> exited{0};
  RunGuarded(
      [&] {
        gort::WaitGroup wg1, wg2, wg3;
        wg1.Add(kN);
        wg2.Add(kN);
        wg3.Add(kN);
        for (int i = 0; i < kN; i++) {
          gort::Go([&] {
            wg1.Done();
            wg2.Wait();
            exited.fetch_add(1);
            wg3.Done();
          });
        }
        wg1.Wait();
        for (int i = 0; i < kN; i++) {
          gort::Gosched();  // A chance to slip past wg2 if it were broken.
          exited_before_done.push_back(exited.load());
          wg2.Done();
        }
        wg3.Wait();
      },
      Procs(GetParam()));
  EXPECT_EQ(exited_before_done, std::vector<int>(kN, 0));
  EXPECT_EQ(exited.load(), kN);
}

TEST_P(WaitGroupTest, ReusedAcrossRounds) {
  constexpr int kRounds = 50;
  std::vector<int> per_round;
  RunGuarded(
      [&] {
        gort::WaitGroup wg;
        for (int round = 0; round < kRounds; round++) {
          const int n = 1 + round % 7;
          std::atomic<int> done{0};
          wg.Add(n);
          for (int i = 0; i < n; i++) {
            gort::Go([&, i] {
              if (i % 2 == 0) gort::Gosched();
              done.fetch_add(1);
              wg.Done();
            });
          }
          wg.Wait();
          per_round.push_back(done.load() - n);
        }
      },
      Procs(GetParam()));
  EXPECT_EQ(per_round, std::vector<int>(kRounds, 0));
}

// Go's TestWaitGroupRace: Add and Done race with Wait, many times.
TEST_P(WaitGroupTest, AddDoneRaceWithWait) {
  constexpr int kRounds = 2000;
  int bad_rounds = 0;
  RunGuarded(
      [&] {
        for (int round = 0; round < kRounds; round++) {
          gort::WaitGroup wg;
          std::atomic<int> n{0};
          wg.Add(1);
          gort::Go([&] {
            n.fetch_add(1);
            wg.Done();
          });
          wg.Add(1);
          gort::Go([&] {
            n.fetch_add(1);
            wg.Done();
          });
          wg.Wait();
          if (n.load() != 2) bad_rounds++;
        }
      },
      Procs(GetParam()));
  EXPECT_EQ(bad_rounds, 0);
}

TEST_P(WaitGroupTest, ManyWaitersAllReleased) {
  constexpr int kWaiters = 20;
  std::atomic<int> waiting{0};
  std::atomic<int> released{0};
  int released_early = -1;
  RunGuarded(
      [&] {
        gort::WaitGroup wg, all_released;
        wg.Add(1);
        all_released.Add(kWaiters);
        for (int i = 0; i < kWaiters; i++) {
          gort::Go([&] {
            waiting.fetch_add(1);
            wg.Wait();
            released.fetch_add(1);
            all_released.Done();
          });
        }
        EXPECT_TRUE(GoschedUntil([&] { return waiting.load() == kWaiters; }));
        released_early = released.load();
        wg.Done();
        all_released.Wait();
      },
      Procs(GetParam()));
  EXPECT_EQ(released_early, 0);
  EXPECT_EQ(released.load(), kWaiters);
}

INSTANTIATE_TEST_SUITE_P(Maxprocs, WaitGroupTest, ::testing::Values(1, 2, 4));

TEST(WaitGroupBasicsTest, WaitWithZeroCounterReturnsAtOnce) {
  // At GOMAXPROCS 1 with no other goroutine, a Wait that parked would be a
  // deadlock, which ends the process.
  int returned = 0;
  RunGuarded(
      [&] {
        gort::WaitGroup wg;
        wg.Wait();
        returned++;
        wg.Add(3);
        wg.Add(-3);
        wg.Wait();
        returned++;
        wg.Add(2);
        wg.Done();
        wg.Done();
        wg.Wait();
        wg.Wait();
        returned++;
      },
      Procs(1));
  EXPECT_EQ(returned, 3);
}

using gort_test::PanicMessage;

TEST(WaitGroupBasicsTest, NegativeCounterPanics) {
  std::vector<std::string> messages;
  std::vector<std::string> from_goroutine;
  RunGuarded(
      [&] {
        {
          gort::WaitGroup wg;
          messages.push_back(PanicMessage([&] { wg.Add(-1); }));
        }
        {
          gort::WaitGroup wg;
          messages.push_back(PanicMessage([&] { wg.Done(); }));
        }
        {
          gort::WaitGroup wg;
          wg.Add(1);
          messages.push_back(PanicMessage([&] { wg.Add(-2); }));
        }
        {
          gort::WaitGroup wg;
          wg.Add(2);
          wg.Done();
          wg.Done();
          messages.push_back(PanicMessage([&] { wg.Done(); }));
        }
        gort::WaitGroup done;
        done.Add(1);
        gort::Go([&] {
          gort::WaitGroup wg;
          from_goroutine.push_back(PanicMessage([&] { wg.Done(); }));
          // The goroutine carries on after catching the panic.
          gort::Gosched();
          from_goroutine.push_back("still running");
          done.Done();
        });
        done.Wait();
      },
      Procs(2));
  EXPECT_EQ(messages, std::vector<std::string>(4, kNegativeCounter));
  EXPECT_EQ(from_goroutine,
            (std::vector<std::string>{kNegativeCounter, "still running"}));
}

TEST(WaitGroupBasicsTest, WaitParksGoroutineNotThread) {
  // At GOMAXPROCS 1, main waits while the goroutine that will call Done
  // still has to run, yield and sleep: it can only do so on the P that
  // main's Wait must have given up.
  for (bool sleep : {false, true}) {
    bool ran_after_wait = false;
    std::atomic<int> steps{0};
    RunGuarded(
        [&] {
          gort::WaitGroup wg;
          wg.Add(1);
          gort::Go([&] {
            steps.fetch_add(1);
            gort::Gosched();
            steps.fetch_add(1);
            if (sleep) gort::Sleep(1ms);
            steps.fetch_add(1);
            wg.Done();
          });
          wg.Wait();
          ran_after_wait = steps.load() == 3;
        },
        Procs(1));
    EXPECT_TRUE(ran_after_wait) << "sleep=" << sleep;
  }
}

TEST(WaitGroupBasicsTest, GoroutineWaitsWhileAnotherCallsDone) {
  // Neither the waiter nor the one calling Done is main.
  std::vector<int> order;
  RunGuarded(
      [&] {
        gort::WaitGroup wg, both;
        wg.Add(1);
        both.Add(2);
        gort::Go([&] {
          wg.Wait();
          order.push_back(2);
          both.Done();
        });
        gort::Go([&] {
          gort::Sleep(1ms);
          order.push_back(1);
          wg.Done();
          both.Done();
        });
        both.Wait();
      },
      Procs(1));
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

using WaitGroupDeathTest = ThreadsafeDeathTest;

TEST_F(WaitGroupDeathTest, UncaughtNegativeCounterPanicEndsProgram) {
  EXPECT_EXIT(RunGuarded(
                  [] {
                    gort::WaitGroup wg;
                    gort::Go([&] { wg.Done(); });
                    const std::int64_t deadline = DeadlineFromNow();
                    while (gort::Nanotime() < deadline) gort::Sleep(1ms);
                  },
                  Procs(2)),
              ::testing::ExitedWithCode(2),
              "panic: sync: negative WaitGroup counter\\s+goroutine \\S+ "
              "\\[running\\]:");
}

// ---------------------------------------------------------------------------
// Mutex

class MutexTest : public ::testing::TestWithParam<int> {};

// kGoroutines goroutines each take the lock kIterations times (some with
// TryLock), increment a plain counter and sometimes yield while holding it,
// so that others queue up and park.
TEST_P(MutexTest, MutualExclusionUnderContention) {
  constexpr int kGoroutines = 8;
  constexpr int kIterations = 2000;
  int counter = 0;  // guarded by mu
  std::atomic<bool> inside{false};
  std::atomic<int> overlaps{0};
  RunGuarded(
      [&] {
        gort::Mutex mu;
        gort::WaitGroup wg;
        wg.Add(kGoroutines);
        for (int g = 0; g < kGoroutines; g++) {
          gort::Go([&, g] {
            for (int i = 0; i < kIterations; i++) {
              if (g % 2 == 1 && i % 3 == 0) {
                while (!mu.TryLock()) gort::Gosched();
              } else {
                mu.Lock();
              }
              if (inside.exchange(true)) overlaps.fetch_add(1);
              counter++;
              if (i % 64 == 0) gort::Gosched();
              inside.store(false);
              mu.Unlock();
            }
            wg.Done();
          });
        }
        wg.Wait();
      },
      Procs(GetParam()));
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(counter, kGoroutines * kIterations);
}

TEST_P(MutexTest, ManyWaitersAllAcquireInTurn) {
  constexpr int kWaiters = 50;
  std::atomic<int> started{0};
  int acquired = 0;  // guarded by mu
  int acquired_while_held = -1;
  RunGuarded(
      [&] {
        gort::Mutex mu;
        gort::WaitGroup wg;
        mu.Lock();
        wg.Add(kWaiters);
        for (int i = 0; i < kWaiters; i++) {
          gort::Go([&] {
            started.fetch_add(1);
            mu.Lock();
            acquired++;
            mu.Unlock();
            wg.Done();
          });
        }
        EXPECT_TRUE(GoschedUntil([&] { return started.load() == kWaiters; }));
        gort::Sleep(1ms);  // More time in which nobody may get the lock.
        acquired_while_held = acquired;
        mu.Unlock();
        wg.Wait();
      },
      Procs(GetParam()));
  EXPECT_EQ(acquired_while_held, 0);
  EXPECT_EQ(acquired, kWaiters);
}

INSTANTIATE_TEST_SUITE_P(Maxprocs, MutexTest, ::testing::Values(1, 2, 4));

TEST(MutexBasicsTest, TryLock) {
  std::vector<bool> results;
  bool from_other = true;
  RunGuarded(
      [&] {
        gort::Mutex mu;
        results.push_back(mu.TryLock());  // true: it was free
        results.push_back(mu.TryLock());  // false: held
        gort::WaitGroup wg;
        wg.Add(1);
        gort::Go([&] {
          from_other = mu.TryLock();  // false: held by main
          wg.Done();
        });
        wg.Wait();
        mu.Unlock();
        results.push_back(mu.TryLock());  // true again
        mu.Unlock();
        mu.Lock();
        results.push_back(mu.TryLock());  // false: held through Lock
        mu.Unlock();
      },
      Procs(2));
  EXPECT_EQ(results, (std::vector<bool>{true, false, true, false}));
  EXPECT_FALSE(from_other);
}

TEST(MutexBasicsTest, UnlockByAnotherGoroutine) {
  std::vector<int> order;
  RunGuarded(
      [&] {
        gort::Mutex mu;
        mu.Lock();
        gort::Go([&] {
          order.push_back(1);
          mu.Unlock();
        });
        mu.Lock();  // Parks until the goroutine unlocks.
        order.push_back(2);
        mu.Unlock();
      },
      Procs(1));
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(MutexBasicsTest, WaiterWokenByUnlockFromThirdGoroutine) {
  std::atomic<int> waiter_state{0};  // 1: about to Lock, 2: has the lock
  int state_before_unlock = -1;
  RunGuarded(
      [&] {
        gort::Mutex mu;
        gort::WaitGroup done;
        mu.Lock();
        done.Add(2);
        gort::Go([&] {
          waiter_state.store(1);
          mu.Lock();
          waiter_state.store(2);
          mu.Unlock();
          done.Done();
        });
        EXPECT_TRUE(GoschedUntil([&] { return waiter_state.load() == 1; }));
        gort::Sleep(1ms);
        state_before_unlock = waiter_state.load();
        gort::Go([&] {
          mu.Unlock();
          done.Done();
        });
        done.Wait();
      },
      Procs(2));
  EXPECT_EQ(state_before_unlock, 1);
  EXPECT_EQ(waiter_state.load(), 2);
}

// Go's TestMutexFairness, its mechanism checked rather than its time: one
// goroutine re-locks with a 100 us critical section, the other (main) takes
// the lock 10 times. A waiter that waited past 1 ms switches the mutex to
// starvation mode and is handed the lock, so each of main's Locks outlasts
// a bounded number of the re-locker's sections. Without starvation mode,
// at GOMAXPROCS 1 the re-locker takes the lock back before the woken waiter
// runs, again and again.
TEST(MutexFairnessTest, SecondGoroutineGetsItsTurnsWhileTheFirstRelocks) {
  constexpr int kTurns = 10;
  // About 10: main, woken by each Unlock, sees after at most 11 sections of
  // at least 100 us that it waited past 1 ms; 9 here. 5000 without.
  constexpr std::int64_t kMaxSectionsPerTurn = 30;
  constexpr std::int64_t kGiveUp = 5000;  // the re-locker stops: no hang
  std::atomic<std::int64_t> sections{0};  // the re-locker's, so far
  std::int64_t worst = 0;
  int turns = 0;
  RunGuarded(
      [&] {
        gort::Mutex mu;
        std::atomic<bool> stop{false};
        gort::WaitGroup wg;
        wg.Add(1);
        gort::Go([&] {
          for (bool more = true; more && !stop.load();) {
            mu.Lock();
            gort::Sleep(100us);
            more = sections.fetch_add(1) + 1 < kGiveUp;
            mu.Unlock();
          }
          wg.Done();
        });
        for (int i = 0; i < kTurns; i++) {
          gort::Sleep(100us);
          std::int64_t before = sections.load();
          mu.Lock();
          worst = std::max(worst, sections.load() - before);
          turns++;
          mu.Unlock();
        }
        stop.store(true);
        wg.Wait();
      },
      Procs(1));
  EXPECT_EQ(turns, kTurns);
  EXPECT_LE(worst, kMaxSectionsPerTurn)
      << "sections in all: " << sections.load();
}

TEST(MutexBasicsTest, LockParksGoroutineNotThread) {
  // At GOMAXPROCS 1 main holds the lock while a goroutine blocks in Lock;
  // main can only keep running (and eventually unlock) if that Lock parked
  // the goroutine and gave the P back.
  std::vector<int> steps;
  RunGuarded(
      [&] {
        gort::Mutex mu;
        gort::WaitGroup wg;
        std::atomic<bool> trying{false};
        mu.Lock();
        wg.Add(1);
        gort::Go([&] {
          trying.store(true);
          mu.Lock();
          steps.push_back(3);
          mu.Unlock();
          wg.Done();
        });
        EXPECT_TRUE(GoschedUntil([&] { return trying.load(); }));
        steps.push_back(1);
        gort::Gosched();
        gort::Sleep(1ms);
        steps.push_back(2);
        mu.Unlock();
        wg.Wait();
      },
      Procs(1));
  EXPECT_EQ(steps, (std::vector<int>{1, 2, 3}));
}

using MutexDeathTest = ThreadsafeDeathTest;

constexpr char kUnlockOfUnlocked[] =
    "fatal error: sync: unlock of unlocked mutex";

TEST_F(MutexDeathTest, UnlockOfNeverLockedMutexIsFatal) {
  EXPECT_EXIT(RunGuarded(
                  [] {
                    gort::Mutex mu;
                    mu.Unlock();
                  },
                  Procs(1)),
              ::testing::ExitedWithCode(2), kUnlockOfUnlocked);
}

TEST_F(MutexDeathTest, SecondUnlockIsFatalAndCannotBeCaught) {
  EXPECT_EXIT(RunGuarded(
                  [] {
                    gort::Mutex mu;
                    mu.Lock();
                    mu.Unlock();
                    try {
                      mu.Unlock();
                    } catch (...) {
                    }
                  },
                  Procs(2)),
              ::testing::ExitedWithCode(2), kUnlockOfUnlocked);
}

TEST_F(MutexDeathTest, UnlockOfUnlockedMutexInGoroutineIsFatal) {
  EXPECT_EXIT(RunGuarded(
                  [] {
                    gort::Mutex mu;
                    gort::WaitGroup wg;
                    wg.Add(1);
                    gort::Go([&] {
                      mu.Unlock();
                      wg.Done();
                    });
                    wg.Wait();
                  },
                  Procs(2)),
              ::testing::ExitedWithCode(2), kUnlockOfUnlocked);
}

TEST_F(MutexDeathTest, LockingAHeldMutexWithNobodyToUnlockDeadlocks) {
  // Lock parks the goroutine, so the runtime sees that nothing can run.
  EXPECT_EXIT(RunGuarded(
                  [] {
                    gort::Mutex mu;
                    mu.Lock();
                    mu.Lock();
                  },
                  Procs(2)),
              ::testing::ExitedWithCode(2),
              "fatal error: all goroutines are asleep - deadlock!");
}

}  // namespace
