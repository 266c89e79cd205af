// Tests of the poller's internals (runtime/netpoll.cc, Go's netpoll.go
// beside runtime/netpoll_test-like checks): pollDesc reuse and its stale
// wake-up guard, deadline timers and their pool, netpollBreak, the waiter
// count, and the execution trace's netpoll events.
#include "netpoll.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "os/netpoll_os.h"
#include "os/os.h"
#include "proc.h"
#include "trace_file.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using namespace gort::runtime;
using Clock = std::chrono::steady_clock;

class NetpollTest : public testing::Test {
 private:
  gort_test::TestWatchdog watchdog_;
};

gort::Options Procs(int n) { return gort::Options{.maxprocs = n}; }

// Opening and closing descriptors reuses pollDescs from the cache: the
// cache does not grow, and each reuse bumps fdseq and the timer seqs, so an
// event or timer for the old descriptor is recognised as stale.
TEST_F(NetpollTest, PollDescReuseBumpsSeq) {
  gort::Run([] {
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int err = 0;
    pollDesc* pd = pollOpen(efd, &err);
    ASSERT_NE(pd, nullptr) << err;
    std::int32_t size = pollcacheSize();
    std::uint32_t seq = pd->fdseq.load();
    pollUnblock(pd);
    pollClose(pd);
    EXPECT_NE(pd->fdseq.load(), seq) << "close must invalidate old events";
    for (int i = 0; i < 10 * 256; i++) {
      pollDesc* q = pollOpen(efd, &err);
      ASSERT_NE(q, nullptr);
      pollUnblock(q);
      pollClose(q);
    }
    EXPECT_EQ(pollcacheSize(), size) << "pollDescs are reused, not allocated";
    pollDesc* again = pollOpen(efd, &err);
    ASSERT_NE(again, nullptr);
    pollUnblock(again);
    pollClose(again);
    close(efd);
  });
}

// An event fetched for a descriptor that was closed and whose pollDesc was
// reused must not wake the new owner (Go's fdseq).
TEST_F(NetpollTest, StaleEventIgnored) {
  gort::Run([] {
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int err = 0;
    pollDesc* pd = pollOpen(efd, &err);
    ASSERT_NE(pd, nullptr);
    std::uint64_t one = 1;
    ASSERT_EQ(write(efd, &one, sizeof one), 8);
    // Readiness arrives; consume the readiness left in rg.
    G* list = netpoll(0);
    EXPECT_EQ(list, nullptr);  // nobody waited: pdReady is left instead
    EXPECT_EQ(pd->rg.load(), pdReady);
    EXPECT_EQ(pollReset(pd, gort::os::kPollRead), pollNoError);
    EXPECT_EQ(pd->rg.load(), 0u);
    // netpollready on a pd with no waiter leaves pdReady; netpollblock then
    // returns at once without parking.
    G* l2 = nullptr;
    netpollready(&l2, pd, gort::os::kPollRead);
    EXPECT_EQ(l2, nullptr);
    EXPECT_TRUE(netpollblock(pd, gort::os::kPollRead, false));
    pollUnblock(pd);
    pollClose(pd);
    close(efd);
  });
}

// A deadline fires through the P's timers and wakes the parked goroutine
// with pollErrTimeout; moving it and re-arming reuses pooled timers.
TEST_F(NetpollTest, DeadlineTimerPool) {
  gort::Run(
      [] {
        int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        int err = 0;
        pollDesc* pd = pollOpen(efd, &err);
        ASSERT_NE(pd, nullptr);
        for (int i = 0; i < 3; i++) {  // warm the pool
          pollSetDeadline(pd, gort::os::nanotime() + 1'000'000,
                          gort::os::kPollRead);
          EXPECT_EQ(pollWait(pd, gort::os::kPollRead), pollErrTimeout);
        }
        std::int32_t allocated = deadlineTimersAllocated();
        for (int i = 0; i < 50; i++) {
          std::int64_t t0 = gort::os::nanotime();
          pollSetDeadline(pd, t0 + 200'000, gort::os::kPollRead);
          EXPECT_EQ(pollWait(pd, gort::os::kPollRead), pollErrTimeout);
          EXPECT_GE(gort::os::nanotime() - t0, 200'000);
        }
        EXPECT_EQ(deadlineTimersAllocated(), allocated)
            << "a steady deadline allocates nothing";
        EXPECT_EQ(netpollWaitersCount(), 0);
        pollSetDeadline(pd, 0, gort::os::kPollRead);
        EXPECT_EQ(pollReset(pd, gort::os::kPollRead), pollNoError);
        pollUnblock(pd);
        EXPECT_EQ(pollReset(pd, gort::os::kPollRead), pollErrClosing);
        pollClose(pd);
        close(efd);
      },
      Procs(1));
}

// netpollBreak wakes a blocking netpoll at once; several breaks cost one
// wake-up, and a poll with no timeout returns after the break.
TEST_F(NetpollTest, BreakWakesBlockingPoll) {
  gort::Run([] {
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int err = 0;
    pollDesc* pd = pollOpen(efd, &err);  // initialises the poller
    ASSERT_NE(pd, nullptr);
    ASSERT_TRUE(netpollinited());
    netpollBreak();
    netpollBreak();
    std::int64_t t0 = gort::os::nanotime();
    // The only M that could poll holds the P here (GOMAXPROCS 1), so the
    // pending break is ours: a poll without timeout returns.
    EXPECT_EQ(netpoll(-1), nullptr);
    EXPECT_LT(gort::os::nanotime() - t0, 10'000'000'000);
    pollUnblock(pd);
    pollClose(pd);
    close(efd);
  }, Procs(1));
}

// Goroutines parked on the poller are counted while they wait and not
// after; the count drives findrunnable's blocking poll.
TEST_F(NetpollTest, WaitersCounted) {
  gort::Run(
      [] {
        gort::poll::FD ev(eventfd(0, EFD_CLOEXEC));
        gort::Chan<int> done = gort::MakeChan<int>(4);
        for (int i = 0; i < 4; i++) {
          gort::Go([&ev, done]() mutable {
            std::uint64_t v;
            ev.Read(&v, sizeof v);
            done.Send(1);
          });
        }
        for (int i = 0; i < 20; i++) gort::Gosched();
        // One reader holds the read lock in the poller; three wait on it.
        EXPECT_EQ(netpollWaitersCount(), 1);
        for (int i = 0; i < 4; i++) {
          std::uint64_t one = 1;
          ev.Write(&one, sizeof one);
          done.Recv();
        }
        EXPECT_EQ(netpollWaitersCount(), 0);
      },
      Procs(1));
}

// The poller is per Run: closed at its end, created again by the next.
TEST_F(NetpollTest, PollerPerRun) {
  for (int i = 0; i < 3; i++) {
    gort::Run([] {
      EXPECT_FALSE(netpollinited());
      int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
      gort::poll::FD f(efd);
      EXPECT_TRUE(netpollinited());
    });
    EXPECT_FALSE(netpollinited());
  }
}

// The execution trace records the M's blocking polls, the goroutines a
// poll readied, and the goroutine's park as "IO wait"; gort-trace's summary
// counts them.
TEST_F(NetpollTest, TraceCountsNetpoll) {
  std::string path = "/tmp/gort_netpoll_trace_" + std::to_string(getpid()) +
                     ".json";
  gort::Run(
      [&] {
        ASSERT_TRUE(gort::StartTrace(path));
        gort::poll::FD ev(eventfd(0, EFD_CLOEXEC));
        gort::Chan<int> done = gort::MakeChan<int>(1);
        gort::Go([&ev, done]() mutable {
          std::uint64_t v;
          ev.Read(&v, sizeof v);
          done.Send(1);
        });
        gort::Gosched();               // the reader parks in the poller
        // The idle M waits in netpoll until this timer: long enough that
        // its findrunnable reaches the poll first even under qemu.
        gort::Sleep(50ms);
        std::uint64_t one = 1;
        ev.Write(&one, sizeof one);
        done.Recv();                   // a poll readies the reader
        ASSERT_TRUE(gort::StopTrace());
      },
      Procs(1));
  gort::trace::Trace t;
  std::string err;
  ASSERT_TRUE(gort::trace::LoadTrace(path, &t, &err)) << err;
  std::remove(path.c_str());
  gort::trace::Summary s = gort::trace::Summarize(t);
  EXPECT_GE(s.netpoll_blocks, 1);
  EXPECT_GE(s.netpoll_ready, 1);
  EXPECT_GE(s.blocked["IO wait"].count, 1);
  EXPECT_NE(gort::trace::FormatSummary(s).find("netpoll: "), std::string::npos);
}

// Where the kernel lacks epoll_pwait2 (or $GORT_NETPOLL_TIMERFD=1 says so)
// high-resolution waits go through a timerfd in the epoll set; timers still
// fire through it.
TEST_F(NetpollTest, TimerfdFallback) {
  setenv("GORT_NETPOLL_TIMERFD", "1", 1);
  gort::Run(
      [] {
        gort::poll::FD ev(eventfd(0, EFD_CLOEXEC));
        EXPECT_STREQ(gort::os::netpollHighResMethod(), "timerfd");
        gort::Go([&ev] {
          std::uint64_t v;
          try {
            ev.Read(&v, sizeof v);
          } catch (const gort::net::Error&) {
          }
        });
        gort::Gosched();
        for (int i = 0; i < 50; i++) {
          auto t0 = Clock::now();
          gort::Sleep(20us);
          EXPECT_GE(Clock::now() - t0, 20us);
        }
        ev.Close();
      },
      gort::Options{.maxprocs = 1, .usleep = gort::UsleepMode::kHighRes});
  unsetenv("GORT_NETPOLL_TIMERFD");
}

}  // namespace
