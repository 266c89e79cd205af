// Tests of the poller's internals (runtime/netpoll.cc, Go's netpoll.go
// beside runtime/netpoll_test-like checks): pollDesc reuse and its stale
// wake-up guard, deadline timers and their pool, netpollBreak, the waiter
// count, and the execution trace's netpoll events.
#include "netpoll.h"

#include "test_os.h"  // first: Winsock before anything includes windows.h

#if !defined(_WIN32)
#include <sys/eventfd.h>
#include <unistd.h>
#endif

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "os/net_os.h"
#include "os/netpoll_os.h"
#include "os/os.h"
#include "proc.h"
#include "runnext.h"
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

// A descriptor the poller takes: an eventfd on Linux, a fresh (unconnected)
// socket on Windows, where a socket joins the completion port only once.
std::intptr_t NewPollable() {
#if defined(_WIN32)
  WSADATA d;
  WSAStartup(MAKEWORD(2, 2), &d);
  return static_cast<std::intptr_t>(WSASocketW(
      AF_INET, SOCK_STREAM, IPPROTO_TCP, nullptr, 0, WSA_FLAG_OVERLAPPED));
#else
  return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
#endif
}

void ClosePollable(std::intptr_t fd) { gort_test::SocketClose(fd); }

// A connected pair for poll::FD: [0] read, [1] written (socketpair on
// Linux, loopback TCP on Windows).
struct FDPair {
  gort::poll::FD r;
  gort::poll::FD w;
  FDPair() : FDPair(Raw()) {}

 private:
  struct Raw {
    std::intptr_t sv[2] = {-1, -1};
    Raw() { gort_test::SocketPair(sv); }
  };
  explicit FDPair(Raw p) : r(p.sv[0]), w(p.sv[1]) {}
};

// Opening and closing descriptors reuses pollDescs from the cache: the
// cache does not grow, and each reuse bumps fdseq and the timer seqs, so an
// event or timer for the old descriptor is recognised as stale.
TEST_F(NetpollTest, PollDescReuseBumpsSeq) {
  gort::Run([] {
    std::intptr_t efd = NewPollable();
    int err = 0;
    pollDesc* pd = pollOpen(efd, &err);
    ASSERT_NE(pd, nullptr) << err;
    std::int32_t size = pollcacheSize();
    std::uint32_t seq = pd->fdseq.load();
    pollUnblock(pd);
    pollClose(pd);
    ClosePollable(efd);
    EXPECT_NE(pd->fdseq.load(), seq) << "close must invalidate old events";
    for (int i = 0; i < 10 * 256 / (gort_test::UnderWine() ? 4 : 1); i++) {
      std::intptr_t fd = NewPollable();
      pollDesc* q = pollOpen(fd, &err);
      ASSERT_NE(q, nullptr);
      pollUnblock(q);
      pollClose(q);
      ClosePollable(fd);
    }
    EXPECT_EQ(pollcacheSize(), size) << "pollDescs are reused, not allocated";
    efd = NewPollable();
    pollDesc* again = pollOpen(efd, &err);
    ASSERT_NE(again, nullptr);
    pollUnblock(again);
    pollClose(again);
    ClosePollable(efd);
  });
}

// An event fetched for a descriptor that was closed and whose pollDesc was
// reused must not wake the new owner (Go's fdseq).
TEST_F(NetpollTest, StaleEventIgnored) {
  gort::Run([] {
#if defined(_WIN32)
    // Windows reports completions: start a one-byte receive, and let the
    // peer's byte complete it.
    std::intptr_t sv[2];
    ASSERT_TRUE(gort_test::SocketPair(sv));
    std::intptr_t efd = sv[0];
    int err = 0;
    pollDesc* pd = pollOpen(efd, &err);
    ASSERT_NE(pd, nullptr) << err;
    gort::os::IoOp* op =
        gort::os::ioOpNew(efd, pollKey(pd), gort::os::kPollRead);
    char byte = 0;
    ASSERT_EQ(gort::os::ioRecv(op, &byte, 1), gort::os::kErrPending);
    ASSERT_TRUE(gort_test::SocketWrite(sv[1], "k", 1));
    G* list = nullptr;
    for (int i = 0; i < 1000 && !pdIsReady(pd->rg.load()); i++) {
      std::int32_t delta = 0;
      list = netpoll(1'000'000, &delta);
      if (list != nullptr) break;
    }
    EXPECT_EQ(list, nullptr);  // nobody waited: the news is left instead
    // A completion says nothing of what is left queued, so its news is
    // never clean (a drained read may not skip the next one on Windows).
    EXPECT_EQ(pd->rg.load(), pdReadyUnclean);
    std::size_t got = 0;
    EXPECT_EQ(gort::os::ioResult(op, &got, nullptr), 0);
    EXPECT_EQ(got, 1u);
    EXPECT_EQ(byte, 'k');
    gort::os::ioOpFree(op);
    gort_test::SocketClose(sv[1]);
#else
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int err = 0;
    pollDesc* pd = pollOpen(efd, &err);
    ASSERT_NE(pd, nullptr);
    std::uint64_t one = 1;
    ASSERT_EQ(write(efd, &one, sizeof one), 8);
    // Readiness arrives; consume the readiness left in rg.
    std::int32_t delta = 0;
    G* list = netpoll(0, &delta);
    EXPECT_EQ(list, nullptr);  // nobody waited: pdReady is left instead
    EXPECT_EQ(delta, 0);
    EXPECT_EQ(pd->rg.load(), pdReady);
#endif
    EXPECT_EQ(pollReset(pd, gort::os::kPollRead), pollNoError);
    EXPECT_EQ(pd->rg.load(), 0u);
    // netpollready on a pd with no waiter leaves pdReady; netpollblock then
    // returns at once without parking.
    G* l2 = nullptr;
    EXPECT_EQ(netpollready(&l2, pd, gort::os::kPollRead), 0);
    EXPECT_EQ(l2, nullptr);
    EXPECT_TRUE(netpollblock(pd, gort::os::kPollRead, false));
    pollUnblock(pd);
    pollClose(pd);
    ClosePollable(efd);
  });
}

// A deadline fires through the P's timers and wakes the parked goroutine
// with pollErrTimeout; moving it and re-arming reuses pooled timers.
TEST_F(NetpollTest, DeadlineTimerPool) {
  gort::Run(
      [] {
        std::intptr_t efd = NewPollable();
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
        ClosePollable(efd);
      },
      Procs(1));
}

// The number of timers in the current P's heap.
std::size_t HeapTimers() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  P* pp = getg()->m->p;
  lock(&pp->timersLock);
  std::size_t n = pp->timers.size();
  unlock(&pp->timersLock);
  return n;
}

// Clearing a deadline, moving it earlier or closing the descriptor deletes
// the armed timer from the heap (Go's deltimer) instead of leaving it there
// until its time: 200 000 set-then-clear cycles of a 1-hour deadline leave
// the heap as it was and take no new deadline timer.
TEST_F(NetpollTest, ClearedDeadlinesLeaveTheHeap) {
  gort::Run(
      [] {
        std::intptr_t efd = NewPollable();
        int err = 0;
        pollDesc* pd = pollOpen(efd, &err);
        ASSERT_NE(pd, nullptr);
        constexpr std::int64_t kHour = 3'600'000'000'000;
        std::size_t before = HeapTimers();
        std::int32_t allocated = deadlineTimersAllocated();
        for (int i = 0; i < 200'000; i++) {
          pollSetDeadline(pd, gort::os::nanotime() + kHour,
                          gort::os::kPollRead | gort::os::kPollWrite);
          pollSetDeadline(pd, 0, gort::os::kPollRead | gort::os::kPollWrite);
        }
        EXPECT_EQ(HeapTimers(), before);
        EXPECT_LE(deadlineTimersAllocated(), allocated + 2);
        for (int i = 0; i < 1000; i++) {  // each one earlier than the last
          pollSetDeadline(pd, gort::os::nanotime() + kHour - i,
                          gort::os::kPollRead);
        }
        EXPECT_EQ(HeapTimers(), before + 1);
        pollUnblock(pd);
        EXPECT_EQ(HeapTimers(), before);
        pollClose(pd);
        ClosePollable(efd);
      },
      Procs(1));
}

// netpollBreak wakes a blocking netpoll at once; several breaks cost one
// wake-up, and a poll with no timeout returns after the break.
// A deadline cleared while an M sleeps in netpoll until exactly its time
// wakes that M (the M is seen asleep for the deadline first): left asleep,
// it would count as a running M and keep checkdead from reporting the
// deadlock that follows, for an hour.
TEST(NetpollDeathTest, ClearedDeadlineWakesThePollerSleepingForIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(gort::Run(
                  [] {
                    std::intptr_t efd = NewPollable();
                    int err = 0;
                    pollDesc* pd = pollOpen(efd, &err);
                    if (pd == nullptr) std::exit(3);
                    constexpr std::int64_t kHour = 3'600'000'000'000;
                    std::int64_t when = gort::os::nanotime() + kHour;
                    pollSetDeadline(pd, when, gort::os::kPollRead);
                    const std::int64_t deadline = gort_test::DeadlineFromNow();
                    while (netpollSleepUntil() != when) {
                      if (gort::Nanotime() > deadline) std::exit(4);
                      gort::Gosched();
                    }
                    pollSetDeadline(pd, 0, gort::os::kPollRead);
                    gort::Chan<int> nil;
                    nil.Recv();
                  },
                  Procs(2)),
              testing::ExitedWithCode(2),
              "fatal error: all goroutines are asleep - deadlock!");
}

TEST_F(NetpollTest, BreakWakesBlockingPoll) {
  gort::Run(
      [] {
        std::intptr_t efd = NewPollable();
        int err = 0;
        pollDesc* pd = pollOpen(efd, &err);  // initialises the poller
        ASSERT_NE(pd, nullptr);
        ASSERT_TRUE(netpollinited());
        netpollBreak();
        netpollBreak();
        std::int64_t t0 = gort::os::nanotime();
        // The only M that could poll holds the P here (GOMAXPROCS 1), so the
        // pending break is ours: a poll without timeout returns.
        std::int32_t delta = 0;
        EXPECT_EQ(netpoll(-1, &delta), nullptr);
        EXPECT_LT(gort::os::nanotime() - t0, 10'000'000'000);
        pollUnblock(pd);
        pollClose(pd);
        ClosePollable(efd);
      },
      Procs(1));
}

// Goroutines parked on the poller are counted while they wait and not
// after; the count drives findrunnable's blocking poll.
TEST_F(NetpollTest, WaitersCounted) {
  gort::Run(
      [] {
        FDPair ev;
        gort::Chan<int> done = gort::MakeChan<int>(4);
        for (int i = 0; i < 4; i++) {
          gort::Go([&ev, done]() mutable {
            std::uint64_t v;
            ev.r.Read(&v, sizeof v);
            done.Send(1);
          });
        }
        for (int i = 0; i < 20; i++) gort::Gosched();
        // One reader holds the read lock in the poller; three wait on it.
        EXPECT_EQ(netpollWaitersCount(), 1);
        for (int i = 0; i < 4; i++) {
          std::uint64_t one = 1;
          ev.w.Write(&one, sizeof one);
          done.Recv();
        }
        EXPECT_EQ(netpollWaitersCount(), 0);
      },
      Procs(1));
}

// A goroutine netpoll readies stays counted as a waiter until whoever
// polled has made it runnable (Go 1.21's netpollAdjustWaiters). Counted
// off at once, a P-less M could see no waiters while sysmon still held the
// goroutine in its list, stop instead of polling, and checkdead would call
// the program deadlocked (seen under qemu as a rare "all goroutines are
// asleep" in EchoUnix).
TEST_F(NetpollTest, ReadiedGoroutineCountedUntilInjected) {
  gort::Run(
      [] {
        std::intptr_t efd = NewPollable();
        int err = 0;
        pollDesc* pd = pollOpen(efd, &err);
        ASSERT_NE(pd, nullptr);
        gort::Chan<int> done = gort::MakeChan<int>(1);
        gort::Go([pd, done]() mutable {
          done.Send(pollWait(pd, gort::os::kPollRead));
        });
        while (netpollWaitersCount() == 0) gort::Gosched();
        // What netpoll does for a readiness event, without the OS.
        G* list = nullptr;
        std::int32_t delta = netpollready(&list, pd, gort::os::kPollRead);
        ASSERT_NE(list, nullptr);
        EXPECT_EQ(delta, -1);
        EXPECT_EQ(netpollWaitersCount(), 1) << "counted off before injected";
        injectglist(list);
        netpollAdjustWaiters(delta);
        EXPECT_EQ(netpollWaitersCount(), 0);
        EXPECT_EQ(done.Recv(), pollNoError);
        pollUnblock(pd);
        pollClose(pd);
        ClosePollable(efd);
      },
      Procs(1));
}

// gort's pdReadyUnclean: a read event that reported a hang-up or an error
// marks rg's news until a netpollblock takes it, whatever clean news comes
// before or after, so a reader knows whether it may trust a drained read
// (poll_fd.cc's fdRead); the write side never carries the mark.
TEST_F(NetpollTest, UncleanNewsStaysMarkedUntilTaken) {
  gort::Run([] {
    std::intptr_t efd = NewPollable();
    int err = 0;
    pollDesc* pd = pollOpen(efd, &err);
    ASSERT_NE(pd, nullptr);
    const std::int32_t r = gort::os::kPollRead;
    G* list = nullptr;
    bool clean = false;
    EXPECT_EQ(netpollready(&list, pd, r, false), 0);
    EXPECT_EQ(pd->rg.load(), pdReady);
    EXPECT_TRUE(netpollblock(pd, r, false, &clean));
    EXPECT_TRUE(clean);
    netpollready(&list, pd, r, false);  // data
    netpollready(&list, pd, r, true);   // then a reset
    netpollready(&list, pd, r, false);  // then data again
    EXPECT_EQ(pd->rg.load(), pdReadyUnclean);
    EXPECT_TRUE(netpollblock(pd, r, false, &clean));
    EXPECT_FALSE(clean);
    EXPECT_EQ(pd->rg.load(), 0u);
    netpollready(&list, pd, gort::os::kPollWrite, true);
    EXPECT_EQ(pd->wg.load(), pdReady);
    EXPECT_EQ(list, nullptr);
    pollUnblock(pd);
    pollClose(pd);
    ClosePollable(efd);
  });
}

// A parked reader woken by an unclean event learns it (pollWaitRead's
// *clean), and one woken by a clean event learns that.
TEST_F(NetpollTest, ParkedReaderLearnsWhetherItsNewsWasClean) {
  for (bool unclean : {false, true}) {
    gort::Run(
        [unclean] {
          std::intptr_t efd = NewPollable();
          int err = 0;
          pollDesc* pd = pollOpen(efd, &err);
          ASSERT_NE(pd, nullptr);
          gort::Chan<int> done = gort::MakeChan<int>(1);
          gort::Go([pd, done]() mutable {
            bool clean = false;
            int res = pollWaitRead(pd, &clean);
            done.Send(res == pollNoError ? clean : -1);
          });
          while (netpollWaitersCount() == 0) gort::Gosched();
          G* list = nullptr;
          std::int32_t delta =
              netpollready(&list, pd, gort::os::kPollRead, unclean);
          ASSERT_NE(list, nullptr);
          injectglist(list);
          netpollAdjustWaiters(delta);
          EXPECT_EQ(done.Recv(), unclean ? 0 : 1);
          pollUnblock(pd);
          pollClose(pd);
          ClosePollable(efd);
        },
        Procs(1));
  }
}

// The poller is per Run: closed at its end, created again by the next.
TEST_F(NetpollTest, PollerPerRun) {
  for (int i = 0; i < 3; i++) {
    gort::Run([] {
      EXPECT_FALSE(netpollinited());
      gort::poll::FD f(NewPollable());
      EXPECT_TRUE(netpollinited());
    });
    EXPECT_FALSE(netpollinited());
  }
}

// The execution trace records the M's blocking polls, the goroutines a
// poll readied, and the goroutine's park as "IO wait"; gort-trace's summary
// counts them.
TEST_F(NetpollTest, TraceCountsNetpoll) {
  std::string path =
      (std::filesystem::temp_directory_path() /
       ("gort_netpoll_trace_" + std::to_string(gort_test::Pid()) + ".json"))
          .string();
  gort::Run(
      [&] {
        ASSERT_TRUE(gort::StartTrace(path, gort::TraceFormat::kChromeJSON));
        FDPair ev;
        gort::Chan<int> done = gort::MakeChan<int>(1);
        gort::Go([&ev, done]() mutable {
          std::uint64_t v;
          ev.r.Read(&v, sizeof v);
          done.Send(1);
        });
        gort_test::LetRunnextRun();  // the reader parks in the poller
        // The idle M waits in netpoll until this timer: long enough that
        // its findrunnable reaches the poll first even under qemu.
        gort::Sleep(50ms);
        std::uint64_t one = 1;
        ev.w.Write(&one, sizeof one);
        done.Recv();  // a poll readies the reader
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

// Parks a goroutine reading r (a handle with Read, which Close wakes), so
// that the idle M waits for timers in the poller, then checks that 50
// Sleep(d) each last at least d.
template <typename Reader>
void SleepsWhileAReaderParks(Reader& r, std::chrono::microseconds d) {
  gort::Go([&r] {
    std::uint64_t v;
    try {
      r.Read(&v, sizeof v);
    } catch (const gort::net::Error&) {
    }
  });
  gort_test::LetRunnextRun();
  for (int i = 0; i < 50; i++) {
    auto t0 = Clock::now();
    gort::Sleep(d);
    EXPECT_GE(Clock::now() - t0, d);
  }
  r.Close();
}

// Where the kernel lacks epoll_pwait2 (or $GORT_NETPOLL_TIMERFD=1 says so)
// high-resolution waits go through a timerfd in the epoll set; timers still
// fire through it.
TEST_F(NetpollTest, TimerfdFallback) {
#if defined(_WIN32)
  GTEST_SKIP() << "Linux only: Windows has no timerfd (see "
                  "HighResWaitsOnWindows)";
#else
  setenv("GORT_NETPOLL_TIMERFD", "1", 1);
  gort::Run(
      [] {
        gort::poll::FD ev(eventfd(0, EFD_CLOEXEC));
        EXPECT_STREQ(gort::os::netpollHighResMethod(), "timerfd");
        SleepsWhileAReaderParks(ev, 20us);
      },
      gort::Options{.maxprocs = 1, .usleep = gort::UsleepMode::kHighRes});
  unsetenv("GORT_NETPOLL_TIMERFD");
#endif
}

// On Windows, a timed wait in high-resolution mode goes through a
// high-resolution waitable timer's wait completion packet when ntdll has
// the entry points (Go 1.23), else rounds up to milliseconds; timers fire
// through either while a goroutine waits on a socket.
TEST_F(NetpollTest, HighResWaitsOnWindows) {
#if !defined(_WIN32)
  GTEST_SKIP() << "Windows only (Linux: TimerfdFallback)";
#else
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  bool have = ntdll != nullptr &&
              GetProcAddress(ntdll, "NtCreateWaitCompletionPacket") &&
              GetProcAddress(ntdll, "NtAssociateWaitCompletionPacket") &&
              GetProcAddress(ntdll, "NtCancelWaitCompletionPacket");
  gort::Run(
      [have] {
        gort::net::Listener ln = gort::net::Listen("tcp", "127.0.0.1:0");
        gort::net::Conn peer = gort::net::Dial("tcp", ln.Addr());
        gort::net::Conn c = ln.Accept();
        // Wine 8 lacks the entry points; Windows 10 1803 and later have
        // them and the high-resolution timer.
        EXPECT_STREQ(gort::ReadStats().netpoll_highres,
                     have ? "wait completion packet" : "none");
        SleepsWhileAReaderParks(c, 100us);
      },
      gort::Options{.maxprocs = 1, .usleep = gort::UsleepMode::kHighRes});
#endif
}

// epoll_wait's timeout for a low-resolution wait is Go's: at least 1 ms for
// any positive delay, whole milliseconds below 1e15 ns, and a cap of 1e9 ms
// (about 11.5 days) only from 1e15 ns on.
TEST_F(NetpollTest, WaitMsAsGo) {
#if !defined(__linux__)
  GTEST_SKIP() << "Linux only: epoll_wait's timeout";
#else
  EXPECT_EQ(gort::os::netpollWaitMs(-1), -1);
  EXPECT_EQ(gort::os::netpollWaitMs(0), 0);
  EXPECT_EQ(gort::os::netpollWaitMs(1), 1);
  EXPECT_EQ(gort::os::netpollWaitMs(2'500'000), 2);
  EXPECT_EQ(gort::os::netpollWaitMs(2'000'000'000'000), 2'000'000);
  EXPECT_EQ(gort::os::netpollWaitMs(999'999'999'999'999), 999'999'999);
  EXPECT_EQ(gort::os::netpollWaitMs(1'000'000'000'000'000), 1'000'000'000);
#endif
}

// With the poller in use and low-resolution timers, the idle M waits for
// the next timer in epoll_wait, whose timeout is whole milliseconds, and
// nobody else runs the timer: Sleep(100us) lasts at least 1 ms, as in Go
// (about 1.09 ms). A sysmon that starts an M for overdue timers (Go does
// only on NetBSD before 9.2) ends it after about 0.2 ms instead.
TEST_F(NetpollTest, LowResSleepWaitsForThePoller) {
#if !defined(__linux__)
  GTEST_SKIP() << "Linux only: epoll_wait's millisecond timeout";
#else
  gort::Run(
      [] {
        gort::poll::FD ev(eventfd(0, EFD_CLOEXEC));
        gort::Go([&ev] {
          std::uint64_t v;
          try {
            ev.Read(&v, sizeof v);
          } catch (const gort::net::Error&) {
          }
        });
        gort::Gosched();
        // Most, not all: under qemu-user (linux/386) one sleep in 20 was
        // seen to end after 0.76 ms, cause not yet known; with a sysmon that
        // runs timers, every sleep ends after about 0.2 ms.
        int whole = 0;
        std::string took;
        for (int i = 0; i < 20; i++) {
          auto t0 = Clock::now();
          gort::Sleep(100us);
          auto d = Clock::now() - t0;
          if (d >= 1ms) whole++;
          took += ' ';
          took += std::to_string(d.count() / 1000);
          took += "us";
        }
        EXPECT_GE(whole, 15) << "sleeps took" << took;
        ev.Close();
      },
      gort::Options{.maxprocs = 1, .usleep = gort::UsleepMode::kLowRes});
#endif
}

}  // namespace
