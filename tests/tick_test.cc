// tests/tick_test.cc: Ticker, in the spirit of Go's time/tick_test.go: ticks
// come at least a period apart in their schedule, a slow receiver misses
// ticks instead of queueing them, Stop ends them, Reset changes the period,
// and non-positive periods panic. Only lower bounds on time are asserted.
#include <chrono>
#include <cstdint>
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

// Tick k is due at start + k*d or later, and the values increase.
TEST(TickerTest, TicksFollowThePeriod) {
  for (int procs : {1, 2}) {
    constexpr auto kD = 2ms;
    std::int64_t start = 0;
    std::vector<std::int64_t> ticks;
    RunGuarded(
        [&] {
          start = gort::Nanotime();
          gort::Ticker t = gort::NewTicker(kD);
          for (int i = 0; i < 5; i++) ticks.push_back(t.C().Recv());
          t.Stop();
        },
        Procs(procs));
    ASSERT_EQ(ticks.size(), 5u);
    EXPECT_GE(ticks[0], start + std::chrono::nanoseconds(kD).count());
    for (int i = 1; i < 5; i++) EXPECT_GT(ticks[i], ticks[i - 1]) << i;
  }
}

// A receiver that sleeps through many periods finds one tick buffered, not
// a queue of them (Go's sendTime never blocks and skips missed ticks).
TEST(TickerTest, SlowReceiverMissesTicks) {
  constexpr auto kD = 40ms;
  bool second_ready = false;
  bool checked = false;
  RunGuarded([&] {
    gort::Ticker t = gort::NewTicker(kD);
    gort::Sleep(5 * kD);
    std::int64_t before = gort::Nanotime();
    t.C().Recv();  // the tick buffered while we slept
    second_ready = Ready(t.C());
    // A second tick could only be a new one if a period passed meanwhile.
    checked = gort::Nanotime() - before < std::chrono::nanoseconds(kD).count();
    t.Stop();
  });
  if (checked) {
    EXPECT_FALSE(second_ready);
  }
}

TEST(TickerTest, StopEndsTicks) {
  bool ticked_after = true;
  RunGuarded([&] {
    gort::Ticker t = gort::NewTicker(1ms);
    t.C().Recv();
    t.Stop();
    // A tick that was being sent when Stop ran may still land (Go 1.19):
    // drain twice, a while apart; a running ticker would refill C().
    gort::Sleep(2ms);
    Ready(t.C());
    gort::Sleep(10ms);
    Ready(t.C());
    gort::Sleep(10ms);
    ticked_after = Ready(t.C());
    t.Stop();  // a second Stop is harmless
  });
  EXPECT_FALSE(ticked_after);
}

TEST(TickerTest, ResetChangesThePeriod) {
  std::int64_t reset_at = 0, tick = 0;
  RunGuarded([&] {
    gort::Ticker t = gort::NewTicker(1h);
    reset_at = gort::Nanotime();
    t.Reset(3ms);
    tick = t.C().Recv();
    t.C().Recv();  // and it goes on ticking
    t.Stop();
    t.Reset(1ms);  // a stopped ticker restarts
    t.C().Recv();
    t.Stop();
  });
  EXPECT_GE(tick, reset_at + 3'000'000);
}

// As in Go 1.19, a ticker nobody holds goes on ticking until Stop (here a
// copy of its channel sees the ticks).
TEST(TickerTest, DroppedHandleKeepsTicking) {
  int got = 0;
  RunGuarded([&] {
    gort::Chan<std::int64_t> c;
    gort::Ticker keep;
    {
      gort::Ticker t = gort::NewTicker(1ms);
      c = t.C();
      keep = t;
    }
    for (int i = 0; i < 3; i++) {
      c.Recv();
      got++;
    }
    keep.Stop();
  });
  EXPECT_EQ(got, 3);
}

TEST(TickerTest, Panics) {
  std::vector<std::string> m;
  RunGuarded([&] {
    m.push_back(PanicMessage([] { gort::NewTicker(0ns); }));
    m.push_back(PanicMessage([] { gort::NewTicker(-1ms); }));
    gort::Ticker t = gort::NewTicker(1h);
    m.push_back(PanicMessage([&] { t.Reset(0ns); }));
    t.Stop();
    gort::Ticker empty;
    empty.Stop();  // no-op
    m.push_back(PanicMessage([&] { empty.Reset(1ms); }));
  });
  EXPECT_EQ(m, (std::vector<std::string>{
                   "non-positive interval for NewTicker",
                   "non-positive interval for NewTicker",
                   "non-positive interval for Ticker.Reset",
                   "time: Reset called on uninitialized Ticker"}));
}

// Done with a Ticker in Select, the usual Go loop.
TEST(TickerTest, InSelectLoop) {
  int ticks = 0;
  RunGuarded(
      [&] {
        gort::Ticker t = gort::NewTicker(1ms);
        auto quit = gort::MakeChan<bool>(0);
        gort::Go([quit] {
          gort::Sleep(10ms);
          quit.Close();
        });
        for (;;) {
          if (gort::Select(gort::RecvCase(t.C()), gort::RecvCase(quit)) == 1) {
            break;
          }
          ticks++;
        }
        t.Stop();
      },
      Procs(2));
  EXPECT_GE(ticks, 1);
}

}  // namespace
