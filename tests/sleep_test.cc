// tests/sleep_test.cc: Timer and AfterFunc, in the spirit of Go's
// time/sleep_test.go: Stop and Reset report whether the timer was pending,
// a stopped timer never sends, a fired one always has, AfterFunc runs its
// function in a goroutine of its own even when the handle is dropped, and
// timers survive a GOMAXPROCS change. Only lower bounds on time are
// asserted.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "timer_test_util.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using gort_test::PanicMessage;
using gort_test::Procs;
using gort_test::Ready;
using gort_test::RunGuarded;

TEST(TimerTest, FiresWithTheTimeItFired) {
  std::int64_t start = 0, fired = 0, received = 0;
  RunGuarded([&] {
    start = gort::Nanotime();
    gort::Timer t = gort::NewTimer(2ms);
    fired = t.C().Recv();
    received = gort::Nanotime();
  });
  EXPECT_GE(fired, start + 2'000'000);
  EXPECT_LE(fired, received);
}

TEST(TimerTest, StopAndResetResults) {
  std::vector<bool> r;
  bool sent_after_stop = true;
  RunGuarded([&] {
    gort::Timer t = gort::NewTimer(1h);
    r.push_back(t.Stop());  // true: it was pending
    r.push_back(t.Stop());  // false: already stopped
    gort::Sleep(1ms);
    sent_after_stop = Ready(t.C());
    r.push_back(t.Reset(1ms));  // false: it was stopped
    t.C().Recv();               // fires again
    r.push_back(t.Stop());      // false: it fired
    r.push_back(t.Reset(1h));   // false: it had fired
    r.push_back(t.Reset(1h));   // true: pending
    r.push_back(t.Stop());      // true
  });
  EXPECT_EQ(r,
            (std::vector<bool>{true, false, false, false, false, true, true}));
  EXPECT_FALSE(sent_after_stop);
}

// A pending timer that is Reset fires once, at the new time.
TEST(TimerTest, ResetPendingMovesIt) {
  std::int64_t reset_at = 0, fired = 0;
  bool was_pending = false, second = true;
  RunGuarded([&] {
    gort::Timer t = gort::NewTimer(1h);
    reset_at = gort::Nanotime();
    was_pending = t.Reset(5ms);
    fired = t.C().Recv();
    gort::Sleep(6ms);
    second = Ready(t.C());
  });
  EXPECT_TRUE(was_pending);
  EXPECT_GE(fired, reset_at + 5'000'000);
  EXPECT_FALSE(second);
}

// Go's guarantee behind `if !t.Stop() { <-t.C }`: Stop racing the timer
// either stops it (nothing is ever sent) or finds it fired (a value is or
// will be in C).
TEST(TimerTest, StopRacingFireIsConsistent) {
  for (int procs : {1, 2, 4}) {
    int stopped = 0, fired = 0, sent_after_true = 0;
    RunGuarded(
        [&] {
          std::mt19937 rng(procs);
          for (int i = 0; i < 300; i++) {
            gort::Timer t =
                gort::NewTimer(std::chrono::microseconds(rng() % 200));
            gort::Chan<bool> done = gort::MakeChan<bool>(1);
            gort::Go([&, t, done]() mutable {
              gort::Sleep(std::chrono::microseconds(rng() % 200));
              done.Send(t.Stop());
            });
            if (done.Recv()) {
              stopped++;
              gort::Sleep(300us);  // past its time: it must not send
              if (Ready(t.C())) sent_after_true++;
            } else {
              fired++;
              t.C().Recv();  // must arrive (the watchdog bounds it)
            }
          }
        },
        Procs(procs));
    EXPECT_EQ(sent_after_true, 0) << "procs=" << procs;
    EXPECT_EQ(stopped + fired, 300);
  }
}

// Many timers, half of them stopped: exactly the others fire (deletion from
// the middle of the heaps keeps them ordered).
TEST(TimerTest, StoppingManyTimersLeavesTheRest) {
  for (int procs : {1, 4}) {
    constexpr int kN = 1000;
    int fired_stopped = 0, stop_false = 0;
    RunGuarded(
        [&] {
          std::mt19937 rng(7);
          std::vector<gort::Timer> timers;
          for (int i = 0; i < kN; i++) {
            timers.push_back(
                gort::NewTimer(std::chrono::microseconds(2000 + rng() % 8000)));
          }
          for (int i = 0; i < kN; i += 2) {
            if (!timers[i].Stop()) stop_false++;  // only if 2 ms went by
          }
          for (int i = 1; i < kN; i += 2) timers[i].C().Recv();
          gort::Sleep(12ms);  // every stopped one is past its time
          for (int i = 0; i < kN; i += 2) {
            if (Ready(timers[i].C())) fired_stopped++;
          }
        },
        Procs(procs));
    EXPECT_EQ(fired_stopped, stop_false) << "procs=" << procs;
  }
}

TEST(TimerTest, CopiesShareTheTimer) {
  bool stopped_by_copy = false, original_stop = true;
  RunGuarded([&] {
    gort::Timer t = gort::NewTimer(1h);
    gort::Timer copy = t;
    stopped_by_copy = copy.Stop();
    original_stop = t.Stop();
    EXPECT_TRUE(copy.C() == t.C());
  });
  EXPECT_TRUE(stopped_by_copy);
  EXPECT_FALSE(original_stop);
}

// Timers pending on Ps that GOMAXPROCS retires move to another P and still
// fire or stop.
TEST(TimerTest, SurviveGomaxprocsChange) {
  std::vector<bool> r;
  RunGuarded(
      [&] {
        std::vector<gort::Timer> short_ones, long_ones;
        gort::WaitGroup wg;
        wg.Add(8);
        gort::Mutex mu;
        for (int i = 0; i < 8; i++) {
          gort::Go([&] {  // spread the timers over the Ps
            gort::Timer s = gort::NewTimer(5ms), l = gort::NewTimer(1h);
            mu.Lock();
            short_ones.push_back(s);
            long_ones.push_back(l);
            mu.Unlock();
            wg.Done();
          });
        }
        wg.Wait();
        gort::GOMAXPROCS(1);
        for (auto& t : long_ones) r.push_back(t.Stop());
        for (auto& t : short_ones) t.C().Recv();
        gort::GOMAXPROCS(4);
      },
      Procs(4));
  EXPECT_EQ(r, std::vector<bool>(8, true));
}

TEST(TimerTest, EmptyTimerPanics) {
  std::vector<std::string> m;
  RunGuarded([&] {
    gort::Timer t;
    EXPECT_FALSE(t.C());
    m.push_back(PanicMessage([&] { t.Stop(); }));
    m.push_back(PanicMessage([&] { t.Reset(1ms); }));
  });
  EXPECT_EQ(m, (std::vector<std::string>{
                   "time: Stop called on uninitialized Timer",
                   "time: Reset called on uninitialized Timer"}));
  EXPECT_EQ(PanicMessage([] { gort::NewTimer(1ms); }),
            "gort: NewTimer called outside a goroutine");
}

// ---------------------------------------------------------------------------
// AfterFunc

// f runs in a goroutine of its own: it may block (here on an unbuffered
// send that main takes only later), even at GOMAXPROCS 1.
TEST(AfterFuncTest, RunsInItsOwnGoroutine) {
  int got = 0;
  RunGuarded(
      [&] {
        auto c = gort::MakeChan<int>(0);
        gort::AfterFunc(1ms, [c] {
          gort::Sleep(1ms);
          c.Send(42);
        });  // handle discarded: the function still runs
        got = c.Recv();
      },
      Procs(1));
  EXPECT_EQ(got, 42);
}

// A stopped AfterFunc never runs; Reset makes it run, again and again; its
// function is destroyed once, when nothing refers to it.
TEST(AfterFuncTest, StopResetAndLifetime) {
  std::atomic<int> runs{0};
  std::atomic<int> destroyed{0};
  struct Counted {
    std::atomic<int>* d;
    bool live = true;
    explicit Counted(std::atomic<int>* d) : d(d) {}
    Counted(Counted&& o) noexcept : d(o.d) { o.live = false; }
    ~Counted() {
      if (live) d->fetch_add(1);
    }
  };
  std::vector<bool> r;
  int runs_after_stop = -1;
  RunGuarded([&] {
    auto c = gort::MakeChan<bool>(2);
    gort::Timer t = gort::AfterFunc(1h, [&, c, k = Counted(&destroyed)] {
      runs.fetch_add(1);
      c.Send(true);
    });
    EXPECT_FALSE(t.C());    // AfterFunc timers have no channel
    r.push_back(t.Stop());  // true
    gort::Sleep(2ms);
    runs_after_stop = runs.load();
    r.push_back(t.Reset(1ms));  // false: it was stopped
    c.Recv();
    r.push_back(t.Reset(1ms));  // false: it fired
    c.Recv();
    EXPECT_EQ(destroyed.load(), 0);
  });
  EXPECT_EQ(r, (std::vector<bool>{true, false, false}));
  EXPECT_EQ(runs_after_stop, 0);
  EXPECT_EQ(runs.load(), 2);
  EXPECT_EQ(destroyed.load(), 1);
}

// A pending AfterFunc dropped at the end of Run is freed, not run.
TEST(AfterFuncTest, PendingAtRunEndIsFreed) {
  std::atomic<int> destroyed{0};
  bool ran = false;
  struct Counted {
    std::atomic<int>* d;
    bool live = true;
    explicit Counted(std::atomic<int>* d) : d(d) {}
    Counted(Counted&& o) noexcept : d(o.d) { o.live = false; }
    ~Counted() {
      if (live) d->fetch_add(1);
    }
  };
  RunGuarded([&] {
    gort::AfterFunc(1h, [&, k = Counted(&destroyed)] { ran = true; });
  });
  EXPECT_FALSE(ran);
  EXPECT_EQ(destroyed.load(), 1);
}

}  // namespace
