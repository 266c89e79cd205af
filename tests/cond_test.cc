// tests/cond_test.cc: Cond, in the spirit of Go's sync/cond_test.go: Signal
// wakes one waiter, in the order they waited; Broadcast wakes all; Wait
// relocks the Mutex; a Signal with no waiter is not remembered; waiting
// parks the goroutine, not its thread.
#include <atomic>
#include <vector>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using gort_test::DeadlineFromNow;
using gort_test::Procs;
using gort_test::RunGuarded;

// Go's TestCondSignal: n goroutines wait; each Signal releases exactly one.
TEST(CondTest, SignalWakesOneAtATime) {
  for (int procs : {1, 2, 4}) {
    constexpr int kN = 5;
    std::vector<int> woken_per_signal;
    RunGuarded(
        [&] {
          gort::Mutex m;
          gort::Cond c(&m);
          auto running = gort::MakeChan<bool>(kN);
          auto awake = gort::MakeChan<bool>(kN);
          for (int i = 0; i < kN; i++) {
            gort::Go([&] {
              m.Lock();
              running.Send(true);
              c.Wait();
              awake.Send(true);
              m.Unlock();
            });
          }
          for (int i = 0; i < kN; i++) running.Recv();
          for (int i = 0; i < kN; i++) {
            // Every waiter holds a ticket: they unlocked m inside Wait.
            m.Lock();
            c.Signal();
            m.Unlock();
            awake.Recv();
            gort::Sleep(1ms);  // time for a wrongly woken second waiter
            woken_per_signal.push_back(1 + static_cast<int>(awake.Len()));
          }
          m.Lock();
          c.Signal();  // nobody waits: a no-op
          m.Unlock();
        },
        Procs(procs));
    EXPECT_EQ(woken_per_signal, std::vector<int>(kN, 1)) << "procs=" << procs;
  }
}

// Go's TestCondSignalGenerations: Signal wakes waiters in the order in which
// they called Wait.
TEST(CondTest, SignalWakesInWaitOrder) {
  constexpr int kN = 20;
  std::vector<int> woken;
  RunGuarded(
      [&] {
        gort::Mutex m;
        gort::Cond c(&m);
        auto awake = gort::MakeChan<int>(0);
        for (int i = 0; i < kN; i++) {
          auto running = gort::MakeChan<bool>(0);
          gort::Go([&, i, running] {
            m.Lock();
            running.Send(true);  // m is released only by c.Wait below
            c.Wait();
            m.Unlock();
            awake.Send(i);
          });
          running.Recv();
          m.Lock();  // waits for the goroutine's Wait to unlock m
          m.Unlock();
        }
        for (int i = 0; i < kN; i++) {
          m.Lock();
          c.Signal();
          m.Unlock();
          woken.push_back(awake.Recv());
        }
      },
      Procs(2));
  std::vector<int> want;
  for (int i = 0; i < kN; i++) want.push_back(i);
  EXPECT_EQ(woken, want);
}

// Go's TestCondBroadcast, with the condition a real program checks.
TEST(CondTest, BroadcastWakesAll) {
  for (int procs : {1, 2, 4}) {
    constexpr int kN = 20;
    int generation = 0;  // guarded by m
    std::atomic<int> woke_at_generation_1{0};
    RunGuarded(
        [&] {
          gort::Mutex m;
          gort::Cond c(&m);
          gort::WaitGroup started, done;
          started.Add(kN);
          done.Add(kN);
          for (int i = 0; i < kN; i++) {
            gort::Go([&] {
              m.Lock();
              started.Done();
              while (generation == 0) c.Wait();
              // Wait relocked m: generation is stable while we hold it.
              if (generation == 1) woke_at_generation_1.fetch_add(1);
              m.Unlock();
              done.Done();
            });
          }
          started.Wait();
          m.Lock();
          generation = 1;
          c.Broadcast();
          m.Unlock();
          done.Wait();
        },
        Procs(procs));
    EXPECT_EQ(woke_at_generation_1.load(), kN) << "procs=" << procs;
  }
}

// A Signal or Broadcast before anyone waits is not remembered: a later Wait
// still parks (until the next Signal).
TEST(CondTest, NotificationWithoutWaitersIsLost) {
  bool returned_early = true;
  RunGuarded(
      [&] {
        gort::Mutex m;
        gort::Cond c(&m);
        c.Signal();
        c.Broadcast();
        std::atomic<bool> returned{false};
        gort::WaitGroup wg;
        wg.Add(1);
        gort::Go([&] {
          m.Lock();
          c.Wait();
          returned = true;
          m.Unlock();
          wg.Done();
        });
        gort::Sleep(5ms);
        returned_early = returned.load();
        const std::int64_t deadline = DeadlineFromNow();
        // Signal until the goroutine, once it waits, is woken.
        while (!returned.load() && gort::Nanotime() < deadline) {
          m.Lock();
          c.Signal();
          m.Unlock();
          gort::Sleep(100us);
        }
        wg.Wait();
      },
      Procs(2));
  EXPECT_FALSE(returned_early);
}

// Go's TestRace-style ping-pong: two goroutines hand a turn back and forth
// through one Cond; at GOMAXPROCS 1 the waiter must have given up the P.
TEST(CondTest, PingPong) {
  constexpr int kRounds = 1000;
  int turns = 0;
  RunGuarded(
      [&] {
        gort::Mutex m;
        gort::Cond c(&m);
        int turn = 0;  // guarded by m
        gort::WaitGroup wg;
        wg.Add(2);
        for (int me = 0; me < 2; me++) {
          gort::Go([&, me] {
            for (int i = 0; i < kRounds; i++) {
              m.Lock();
              while (turn % 2 != me) c.Wait();
              turn++;
              turns++;
              c.Broadcast();
              m.Unlock();
            }
            wg.Done();
          });
        }
        wg.Wait();
      },
      Procs(1));
  EXPECT_EQ(turns, 2 * kRounds);
}

}  // namespace
