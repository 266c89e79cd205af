// Tests of gort::After (Go's time.After) and of timers used with channels
// and Select.
//
// Only lower bounds on time are asserted (a timer never fires early); no
// test requires a timer to fire within some time, except for the generous
// deadlines that turn a timer that never fires into a failure instead of a
// hang. Values are compared on gort::Nanotime, and elapsed times also on
// std::chrono::steady_clock.
#include "gort/time.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gort/chan.h"
#include "gort/runtime.h"
#include "gort/select.h"
#include "gtest/gtest.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using std::chrono::nanoseconds;

class TimeTest : public gort_test::WatchedTest {};

// Parameterized by GOMAXPROCS.
class TimeProcsTest : public gort_test::ProcsTest {};

INSTANTIATE_TEST_SUITE_P(Procs, TimeProcsTest, testing::Values(1, 2, 4),
                         gort_test::ProcsName);

// Nanoseconds in d, as Nanotime counts them.
std::int64_t Ns(nanoseconds d) { return d.count(); }

// How long a test waits for something that must happen before it calls the
// runtime broken. Far beyond any scheduling delay; only reached on failure.
constexpr nanoseconds kPatience = 20s;

TEST_P(TimeProcsTest, AfterNeverFiresEarly) {
  gort::Run(
      [] {
        for (nanoseconds d :
             {nanoseconds(0), nanoseconds(1us), nanoseconds(1ms),
              nanoseconds(5ms), nanoseconds(20ms)}) {
          const auto wall_start = std::chrono::steady_clock::now();
          const std::int64_t start = gort::Nanotime();
          gort::Chan<std::int64_t> c = gort::After(d);
          EXPECT_TRUE(c);
          EXPECT_EQ(c.Cap(), 1u);
          std::optional<std::int64_t> fired = c.RecvOk();
          const std::int64_t end = gort::Nanotime();
          const auto wall_end = std::chrono::steady_clock::now();
          ASSERT_TRUE(fired.has_value()) << "After's channel was closed";
          // The value is the time it fired: not before start + d, and not
          // after we received it.
          EXPECT_GE(*fired, start + Ns(d)) << "d = " << Ns(d) << " ns";
          EXPECT_LE(*fired, end) << "d = " << Ns(d) << " ns";
          EXPECT_GE(end - start, Ns(d));
          EXPECT_GE(wall_end - wall_start, d);
          // Exactly one value: nothing more is waiting.
          EXPECT_EQ(c.Len(), 0u);
          EXPECT_EQ(gort::Select(gort::RecvCase(c), gort::DefaultCase()), 1);
        }
      },
      Opts());
}

TEST_F(TimeTest, AfterWithNegativeDurationFires) {
  gort::Run([] {
    const std::int64_t start = gort::Nanotime();
    std::int64_t fired = gort::After(-5ms).Recv();
    EXPECT_GE(fired, start);
    EXPECT_LE(fired, gort::Nanotime());
  });
}

// The timer sends into its buffer with nobody receiving; the value waits
// there (Len() == 1) until someone takes it.
TEST_P(TimeProcsTest, AfterFiresWithNobodyReceiving) {
  static constexpr nanoseconds kD = 5ms;
  gort::Run(
      [] {
        const std::int64_t start = gort::Nanotime();
        gort::Chan<std::int64_t> c = gort::After(kD);
        gort::Sleep(kD + 10ms);
        // Wait for the value without receiving it.
        const std::int64_t give_up = gort::Nanotime() + Ns(kPatience);
        while (c.Len() == 0 && gort::Nanotime() < give_up) gort::Sleep(1ms);
        ASSERT_EQ(c.Len(), 1u) << "the timer never fired";
        EXPECT_EQ(c.Cap(), 1u);
        const std::int64_t seen = gort::Nanotime();
        std::int64_t fired = c.Recv();
        EXPECT_GE(fired, start + Ns(kD));
        EXPECT_LE(fired, seen);
        EXPECT_EQ(c.Len(), 0u);
        EXPECT_EQ(gort::Select(gort::RecvCase(c), gort::DefaultCase()), 1);
      },
      Opts());
}

TEST_F(TimeTest, AfterWithLongDurationHasNotFired) {
  gort::Run([] {
    gort::Chan<std::int64_t> c = gort::After(std::chrono::hours(1));
    gort::Sleep(2ms);
    EXPECT_EQ(c.Len(), 0u);
    EXPECT_EQ(gort::Select(gort::RecvCase(c), gort::DefaultCase()), 1);
  });
}

// The timer heap yields the earliest timer first: with timers an hour away
// pending on the same P, short sleeps still end. The wait for them is
// bounded on the clock, not on a timer, so a heap that keeps the latest
// timer on top fails here by name instead of hanging.
TEST_P(TimeProcsTest, ShortTimersFireWhileLongOnesArePending) {
  int woke = 0;
  gort::Run(
      [&] {
        std::vector<gort::Chan<std::int64_t>> pending;
        for (int i = 0; i < 4; i++) {
          pending.push_back(gort::After(std::chrono::hours(1 + i)));
        }
        constexpr int kSleepers = 8;
        auto done = gort::MakeChan<int>(kSleepers);
        for (int i = 0; i < kSleepers; i++) {
          gort::Go([done, i] {
            gort::Sleep(std::chrono::milliseconds(1 + i));
            done.Send(i);
          });
        }
        const std::int64_t deadline = gort_test::DeadlineFromNow();
        while (woke < kSleepers && gort::Nanotime() < deadline) {
          int v = 0;
          if (gort::Select(gort::RecvCase(done, &v), gort::DefaultCase()) ==
              0) {
            ++woke;
          } else {
            gort::Gosched();
          }
        }
        for (auto& c : pending) EXPECT_EQ(c.Len(), 0u);
      },
      Opts());
  EXPECT_EQ(woke, 8) << "sleepers still asleep while later timers pend";
}

// Timer channels dropped before or after they fire cause no trouble, and
// timers made afterwards still work.
TEST_P(TimeProcsTest, DroppedTimerChannelsAreHarmless) {
  gort::Run(
      [] {
        for (int i = 0; i < 200; ++i) gort::After(nanoseconds(i * 10000));
        gort::Sleep(5ms);
        for (int i = 0; i < 50; ++i) {
          const std::int64_t start = gort::Nanotime();
          EXPECT_GE(gort::After(100us).Recv(), start + Ns(100us));
        }
      },
      Opts());
}

// Many goroutines wait on their own timers at once.
TEST_P(TimeProcsTest, ManyAftersInParallel) {
  static constexpr int kGoroutines = 200;
  gort::Run(
      [] {
        // Each goroutine reports 1 if its timer respected its lower bound.
        auto results = gort::MakeChan<int>(kGoroutines);
        const auto wall_start = std::chrono::steady_clock::now();
        for (int i = 0; i < kGoroutines; ++i) {
          gort::Go([results, i] {
            const nanoseconds d = std::chrono::microseconds(100 * (i % 50));
            const std::int64_t start = gort::Nanotime();
            std::int64_t fired = gort::After(d).Recv();
            const std::int64_t end = gort::Nanotime();
            results.Send(fired >= start + Ns(d) && fired <= end ? 1 : 0);
          });
        }
        int good = 0;
        for (int i = 0; i < kGoroutines; ++i) good += results.Recv();
        EXPECT_EQ(good, kGoroutines);
        EXPECT_GE(std::chrono::steady_clock::now() - wall_start, 4900us);
      },
      Opts());
}

// One goroutine holds many pending timers and receives them in an order
// unrelated to their durations.
TEST_P(TimeProcsTest, ManyPendingTimersInOneGoroutine) {
  static constexpr int kTimers = 60;
  gort::Run(
      [] {
        std::vector<gort::Chan<std::int64_t>> timers;
        std::vector<std::int64_t> deadline;
        for (int i = 0; i < kTimers; ++i) {
          const nanoseconds d = std::chrono::microseconds(((i * 37) % 60) * 50);
          deadline.push_back(gort::Nanotime() + Ns(d));
          timers.push_back(gort::After(d));
        }
        int early = 0;
        for (int i = kTimers - 1; i >= 0; --i) {
          if (timers[i].Recv() < deadline[i]) ++early;
        }
        EXPECT_EQ(early, 0);
      },
      Opts());
}

// ---------------------------------------------------------------------------
// Timeouts with Select.

TEST_P(TimeProcsTest, SelectTimesOutWhenNoValueArrives) {
  static constexpr nanoseconds kTimeout = 10ms;
  gort::Run(
      [] {
        auto never = gort::MakeChan<int>();
        const std::int64_t start = gort::Nanotime();
        int v = -1;
        bool ok = true;
        std::int64_t fired = 0;
        int chosen =
            gort::Select(gort::RecvCase(never, &v, &ok),
                         gort::RecvCase(gort::After(kTimeout), &fired));
        EXPECT_EQ(chosen, 1);
        EXPECT_GE(fired, start + Ns(kTimeout));
        EXPECT_GE(gort::Nanotime() - start, Ns(kTimeout));
        EXPECT_EQ(v, -1);
        EXPECT_TRUE(ok);

        // A send that nobody takes times out too.
        auto unbuffered = gort::MakeChan<int>();
        EXPECT_EQ(gort::Select(gort::SendCase(unbuffered, 1),
                               gort::RecvCase(gort::After(kTimeout))),
                  1);
        EXPECT_EQ(unbuffered.Len(), 0u);
      },
      Opts());
}

TEST_P(TimeProcsTest, ValueBeforeTimeoutIsChosen) {
  gort::Run(
      [] {
        const auto kLong = std::chrono::hours(1);
        // Already there.
        auto c = gort::MakeChan<int>(1);
        c.Send(5);
        int v = -1;
        std::int64_t fired = -1;
        EXPECT_EQ(gort::Select(gort::RecvCase(gort::After(kLong), &fired),
                               gort::RecvCase(c, &v)),
                  1);
        EXPECT_EQ(v, 5);
        EXPECT_EQ(fired, -1);

        // Arrives from another goroutine while the select waits.
        for (int i = 0; i < 50; ++i) {
          auto u = gort::MakeChan<int>();
          gort::Go([u, i] { u.Send(i); });
          v = -1;
          EXPECT_EQ(gort::Select(gort::RecvCase(u, &v),
                                 gort::RecvCase(gort::After(kLong), &fired)),
                    0);
          EXPECT_EQ(v, i);
          EXPECT_EQ(fired, -1);
        }

        // A receiver arrives for a send while the select waits.
        auto w = gort::MakeChan<int>();
        auto got = gort::MakeChan<int>(1);
        gort::Go([w, got] { got.Send(w.Recv()); });
        EXPECT_EQ(gort::Select(gort::RecvCase(gort::After(kLong)),
                               gort::SendCase(w, 77)),
                  1);
        EXPECT_EQ(got.Recv(), 77);
      },
      Opts());
}

// Many goroutines wait in selects whose only ready case will be a timer.
TEST_P(TimeProcsTest, ManyConcurrentTimeouts) {
  static constexpr int kGoroutines = 50;
  gort::Run(
      [] {
        auto never = gort::MakeChan<int>();
        auto results = gort::MakeChan<int>(kGoroutines);
        for (int i = 0; i < kGoroutines; ++i) {
          gort::Go([never, results, i] {
            const nanoseconds d = std::chrono::microseconds(200 * (i % 10));
            const std::int64_t start = gort::Nanotime();
            std::int64_t fired = 0;
            int chosen = gort::Select(gort::RecvCase(never),
                                      gort::RecvCase(gort::After(d), &fired));
            results.Send(chosen == 1 && fired >= start + Ns(d) ? 1 : 0);
          });
        }
        int good = 0;
        for (int i = 0; i < kGoroutines; ++i) good += results.Recv();
        EXPECT_EQ(good, kGoroutines);
      },
      Opts());
}

// A timer fires while every P is kept busy by goroutines that yield but
// never sleep: due timers must be run from the scheduler, not only by idle
// Ms. The spinners give up after kPatience, which fails the test instead of
// hanging it.
TEST_P(TimeProcsTest, TimerFiresWhileProcessorsAreBusy) {
  gort::Run(
      [] {
        std::atomic<bool> stop{false};
        std::atomic<int> gave_up{0};
        const int spinners = gort::GOMAXPROCS(0) + 1;
        auto exited = gort::MakeChan<int>(spinners);
        for (int i = 0; i < spinners; ++i) {
          gort::Go([&stop, &gave_up, exited] {
            const std::int64_t give_up = gort::Nanotime() + Ns(kPatience);
            while (!stop.load()) {
              if (gort::Nanotime() > give_up) {
                gave_up++;
                break;
              }
              gort::Gosched();
            }
            exited.Send(1);
          });
        }
        const std::int64_t start = gort::Nanotime();
        std::int64_t fired = gort::After(2ms).Recv();
        EXPECT_GE(fired, start + Ns(2ms));
        stop = true;
        for (int i = 0; i < spinners; ++i) exited.Recv();
        EXPECT_EQ(gave_up.load(), 0)
            << "the timer fired only once the Ps went idle";
      },
      Opts());
}

// ---------------------------------------------------------------------------
// Sleep, which shares the timer machinery.

TEST_P(TimeProcsTest, SleepNeverReturnsEarly) {
  gort::Run(
      [] {
        for (nanoseconds d :
             {nanoseconds(0), nanoseconds(-1ms), nanoseconds(50us),
              nanoseconds(2ms), nanoseconds(10ms)}) {
          const auto wall_start = std::chrono::steady_clock::now();
          const std::int64_t start = gort::Nanotime();
          gort::Sleep(d);
          EXPECT_GE(gort::Nanotime() - start, Ns(d));
          EXPECT_GE(std::chrono::steady_clock::now() - wall_start, d);
        }
      },
      Opts());
}

}  // namespace
