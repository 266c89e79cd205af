// tests/syscall_test.cc: gort::Syscall and BlockingSyscall and what sysmon
// does around them, in the spirit of the syscall and preemption parts of
// Go's runtime/proc_test.go: entersyscall/exitsyscall, handoffp, retake
// (including its race with a returning syscall), and preemption requests.
//
// Conventions as in proc_test.cc: bounded waits (kDeadline), RunGuarded's
// watchdog for the rest, timings only as lower bounds.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "test_os.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using gort_test::DeadlineFromNow;
using gort_test::EventFd;
using gort_test::kDeadline;
using gort_test::Procs;
using gort_test::RunGuarded;
using gort_test::Scaled;
using gort_test::SpinFor;

// How long a goroutine blocks in a syscall at most (poll's timeout, ms).
constexpr int kSyscallTimeoutMs = 10'000;

// ---------------------------------------------------------------------------
// Syscalls

struct SyscallError : std::runtime_error {
  explicit SyscallError(const std::string& what, int code)
      : std::runtime_error(what), code(code) {}
  int code;
};

struct NoDefault {
  explicit NoDefault(int v) : value(v) {}
  int value;
};

TEST(SyscallTest, ReturnsTheFunctionsValue) {
  RunGuarded(
      [&] {
        EXPECT_EQ(gort::Syscall([] { return 42; }), 42);
        EXPECT_EQ(gort::BlockingSyscall([] { return std::string("hello"); }),
                  "hello");
        EXPECT_EQ(gort::Syscall([] { return gort_test::Pid(); }),
                  gort_test::Pid());
        std::unique_ptr<int> p =
            gort::Syscall([] { return std::make_unique<int>(5); });
        ASSERT_NE(p, nullptr);
        EXPECT_EQ(*p, 5);
        EXPECT_EQ(gort::BlockingSyscall([] { return NoDefault(9); }).value, 9);
        int side = 0;
        gort::Syscall([&] { side = 1; });
        EXPECT_EQ(side, 1);
        gort::BlockingSyscall([&] { side = 2; });
        EXPECT_EQ(side, 2);
        // And from goroutines other than main.
        std::atomic<int> sum{0};
        gort::WaitGroup wg;
        wg.Add(8);
        for (int i = 0; i < 8; i++) {
          gort::Go([&, i] {
            sum.fetch_add(i % 2 == 0
                              ? gort::Syscall([i] { return i; })
                              : gort::BlockingSyscall([i] { return i; }));
            wg.Done();
          });
        }
        wg.Wait();
        EXPECT_EQ(sum.load(), 0 + 1 + 2 + 3 + 4 + 5 + 6 + 7);
      },
      Procs(2));
}

TEST(SyscallTest, PropagatesExceptionsAndGoroutineKeepsWorking) {
  std::atomic<int> caught{0};
  std::atomic<bool> finished{false};
  RunGuarded(
      [&] {
        gort::WaitGroup wg;
        wg.Add(1);
        gort::Go([&] {
          try {
            gort::Syscall(
                []() -> int { throw SyscallError("read failed", 5); });
            ADD_FAILURE() << "Syscall did not throw";
          } catch (const SyscallError& e) {
            EXPECT_STREQ(e.what(), "read failed");
            EXPECT_EQ(e.code, 5);
            caught.fetch_add(1);
          }
          try {
            gort::BlockingSyscall(
                [] { throw SyscallError("write failed", 6); });
            ADD_FAILURE() << "BlockingSyscall did not throw";
          } catch (const SyscallError& e) {
            EXPECT_STREQ(e.what(), "write failed");
            EXPECT_EQ(e.code, 6);
            caught.fetch_add(1);
          }
          EXPECT_THROW(gort::Syscall([] { throw 17; }), int);
          // The goroutine is still a working goroutine.
          gort::Gosched();
          gort::Sleep(1ms);
          EXPECT_EQ(gort::Syscall([] { return 3; }), 3);
          gort::WaitGroup inner;
          inner.Add(1);
          gort::Go([&] { inner.Done(); });
          inner.Wait();
          finished.store(true);
          wg.Done();
        });
        wg.Wait();
      },
      Procs(2));
  EXPECT_EQ(caught.load(), 2);
  EXPECT_TRUE(finished.load());
}

// At GOMAXPROCS 1, goroutine A blocks in a syscall (poll on an eventfd,
// timing out after kSyscallTimeoutMs); main can only run again if A's P is
// taken from it (by sysmon for Syscall, at once for BlockingSyscall). Main
// then signals the eventfd, which releases A.
struct BlockedSyscallResult {
  bool main_ran_during_syscall = false;
  bool released_by_signal = false;
  bool exception_caught = false;
  bool worked_after = false;
  gort::Stats stats;
};

BlockedSyscallResult RunBlockedSyscall(bool blocking, bool throw_after) {
  EventFd efd;
  EXPECT_TRUE(efd.ok());
  BlockedSyscallResult result;
  std::atomic<bool> entered{false};
  std::atomic<bool> in_syscall{false};
  RunGuarded(
      [&] {
        gort::WaitGroup wg;
        wg.Add(1);
        gort::Go([&] {
          auto call = [&] {
            bool signalled = efd.WaitFor(kSyscallTimeoutMs);
            in_syscall.store(false);
            if (throw_after) throw SyscallError("after blocking", 1);
            return signalled;
          };
          entered.store(true);
          in_syscall.store(true);
          try {
            result.released_by_signal =
                blocking ? gort::BlockingSyscall(call) : gort::Syscall(call);
          } catch (const SyscallError&) {
            result.exception_caught = true;
          }
          in_syscall.store(false);
          gort::Gosched();
          // Of the same kind: a Syscall here could itself be retaken.
          auto one = [] { return 1; };
          result.worked_after =
              (blocking ? gort::BlockingSyscall(one) : gort::Syscall(one)) == 1;
          wg.Done();
        });
        const std::int64_t deadline = DeadlineFromNow();
        while (!entered.load() && gort::Nanotime() < deadline) {
          gort::Gosched();
        }
        result.main_ran_during_syscall = in_syscall.load();
        EXPECT_TRUE(efd.Signal());
        wg.Wait();
        result.stats = gort::ReadStats();
      },
      Procs(1));
  return result;
}

TEST(SyscallTest, SysmonRetakesPFromGoroutineBlockedInSyscall) {
  BlockedSyscallResult r = RunBlockedSyscall(/*blocking=*/false, false);
  EXPECT_TRUE(r.main_ran_during_syscall)
      << "main did not run while the other goroutine was in a syscall";
  EXPECT_TRUE(r.released_by_signal);
  EXPECT_TRUE(r.worked_after);
  EXPECT_GT(r.stats.handoffs, 0);
  EXPECT_GE(r.stats.threads, 2);
}

// A syscall that returns just after sysmon has taken its P, before handoffp
// has put the P anywhere, must not look like a deadlock (Go's incidlelocked
// in retake): short sleeps in Syscall at GOMAXPROCS 1 make sysmon retake
// again and again while each call returns.
TEST(SyscallTest, ReturnRacingRetakeIsNotADeadlock) {
  std::int64_t handoffs = 0;
  RunGuarded(
      [&] {
        const std::int64_t deadline = DeadlineFromNow();
        for (int i = 0; i < Scaled(20000) && gort::Nanotime() < deadline; ++i) {
          gort::Syscall([] { gort_test::SleepInKernelUs(30); });
        }
        handoffs = gort::ReadStats().handoffs;
      },
      Procs(1));
  EXPECT_GT(handoffs, 0) << "sysmon never retook the P: the race was not run";
}

TEST(SyscallTest, BlockingSyscallHandsOffPAtOnce) {
  BlockedSyscallResult r = RunBlockedSyscall(/*blocking=*/true, false);
  EXPECT_TRUE(r.main_ran_during_syscall)
      << "main did not run while the other goroutine was in a syscall";
  EXPECT_TRUE(r.released_by_signal);
  EXPECT_TRUE(r.worked_after);
  // The P was handed off by entersyscallblock, not retaken by sysmon.
  EXPECT_EQ(r.stats.handoffs, 0);
  EXPECT_GE(r.stats.threads, 2);
}

TEST(SyscallTest, ExceptionAfterHandoffPropagates) {
  for (bool blocking : {false, true}) {
    BlockedSyscallResult r = RunBlockedSyscall(blocking, /*throw_after=*/true);
    EXPECT_TRUE(r.main_ran_during_syscall) << "blocking=" << blocking;
    EXPECT_TRUE(r.exception_caught) << "blocking=" << blocking;
    EXPECT_TRUE(r.worked_after) << "blocking=" << blocking;
  }
}

// kN goroutines block in syscalls at once at GOMAXPROCS 1.
void ExpectManyBlockedSyscalls(bool blocking) {
  constexpr int kN = 6;
  std::vector<std::unique_ptr<EventFd>> fds;
  for (int i = 0; i < kN; i++) {
    fds.push_back(std::make_unique<EventFd>());
    ASSERT_TRUE(fds.back()->ok());
  }
  std::atomic<int> entered{0};
  std::atomic<int> signalled{0};
  int entered_seen = 0;
  gort::Stats stats;
  RunGuarded(
      [&] {
        gort::WaitGroup wg;
        wg.Add(kN);
        for (int i = 0; i < kN; i++) {
          gort::Go([&, i] {
            entered.fetch_add(1);
            auto call = [&] { return fds[i]->WaitFor(kSyscallTimeoutMs); };
            if (blocking ? gort::BlockingSyscall(call) : gort::Syscall(call)) {
              signalled.fetch_add(1);
            }
            wg.Done();
          });
        }
        const std::int64_t deadline = DeadlineFromNow();
        while (entered.load() < kN && gort::Nanotime() < deadline) {
          gort::Gosched();
        }
        entered_seen = entered.load();
        for (auto& fd : fds) EXPECT_TRUE(fd->Signal());
        wg.Wait();
        stats = gort::ReadStats();
      },
      Procs(1));
  EXPECT_EQ(entered_seen, kN);
  EXPECT_EQ(signalled.load(), kN);
  // Each blocked goroutine holds a thread, and one more runs main.
  EXPECT_GE(stats.threads, kN + 1);
  if (!blocking) {
    EXPECT_GE(stats.handoffs, kN);
  }
}

TEST(SyscallTest, ManyGoroutinesBlockedInSyscall) {
  ExpectManyBlockedSyscalls(/*blocking=*/false);
}

TEST(SyscallTest, ManyGoroutinesBlockedInBlockingSyscall) {
  ExpectManyBlockedSyscalls(/*blocking=*/true);
}

// GOMAXPROCS stops the world; a P whose goroutine is blocked in a syscall
// must not hold that up, and the goroutine must find a P on its way out
// even if its own was destroyed meanwhile.
TEST(SyscallTest, GomaxprocsChangesWhileGoroutineBlockedInSyscall) {
  for (int target : {4, 1}) {
    for (bool blocking : {false, true}) {
      EventFd efd;
      ASSERT_TRUE(efd.ok());
      std::atomic<bool> entered{false};
      bool signalled = false;
      bool worked_after = false;
      int previous = 0;
      RunGuarded(
          [&] {
            gort::WaitGroup wg;
            wg.Add(1);
            gort::Go([&] {
              auto call = [&] { return efd.WaitFor(kSyscallTimeoutMs); };
              entered.store(true);
              signalled =
                  blocking ? gort::BlockingSyscall(call) : gort::Syscall(call);
              gort::Gosched();
              worked_after = gort::Syscall([] { return 1; }) == 1;
              wg.Done();
            });
            const std::int64_t deadline = DeadlineFromNow();
            while (!entered.load() && gort::Nanotime() < deadline) {
              gort::Gosched();
            }
            // Had this waited for the syscall, the poll would time out and
            // report no signal.
            previous = gort::GOMAXPROCS(target);
            EXPECT_TRUE(efd.Signal());
            wg.Wait();
          },
          Procs(2));
      EXPECT_EQ(previous, 2);
      EXPECT_TRUE(signalled) << "GOMAXPROCS(" << target << ") waited for a "
                             << (blocking ? "BlockingSyscall" : "Syscall");
      EXPECT_TRUE(worked_after);
    }
  }
}

// Run returns when main does, even while a goroutine is still blocked in a
// syscall; that goroutine's thread is abandoned, and the next Run works.
TEST(SyscallTest, RunReturnsWhileGoroutineBlockedInSyscall) {
  for (bool blocking : {false, true}) {
    // The abandoned thread uses these after Run returns: never freed.
    static auto* fds = new std::vector<std::unique_ptr<EventFd>>;
    static auto* results = new std::vector<std::unique_ptr<std::atomic<int>>>;
    fds->push_back(std::make_unique<EventFd>());
    results->push_back(std::make_unique<std::atomic<int>>(-1));
    EventFd* efd = fds->back().get();
    std::atomic<int>* result = results->back().get();
    ASSERT_TRUE(efd->ok());
    RunGuarded(
        [&] {
          std::atomic<bool> entered{false};
          gort::Go([&entered, efd, result, blocking] {
            auto call = [efd, result] {
              // 1 if signalled, which happens only after Run has returned.
              result->store(efd->WaitFor(kSyscallTimeoutMs) ? 1 : 0);
              return 0;
            };
            entered.store(true);
            if (blocking) {
              gort::BlockingSyscall(call);
            } else {
              gort::Syscall(call);
            }
          });
          const std::int64_t deadline = DeadlineFromNow();
          while (!entered.load() && gort::Nanotime() < deadline) {
            gort::Gosched();
          }
          EXPECT_TRUE(entered.load());
        },
        Procs(1));
    EXPECT_TRUE(efd->Signal());
    // The abandoned syscall now returns (and its thread parks for good).
    const auto deadline = std::chrono::steady_clock::now() + kDeadline;
    while (result->load() < 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    EXPECT_EQ(result->load(), 1) << "Run waited for a goroutine blocked in a "
                                 << (blocking ? "BlockingSyscall" : "Syscall");
    // The next Run starts without the abandoned goroutine, and works.
    int goroutines_at_start = 0;
    int ran_after = 0;
    RunGuarded(
        [&] {
          goroutines_at_start = gort::NumGoroutine();
          std::atomic<int> ran{0};
          gort::WaitGroup wg;
          wg.Add(4);
          for (int i = 0; i < 4; i++) {
            gort::Go([&] {
              gort::Syscall([] { return 0; });
              ran.fetch_add(1);
              wg.Done();
            });
          }
          wg.Wait();
          ran_after = ran.load();
        },
        Procs(2));
    EXPECT_EQ(goroutines_at_start, 1);
    EXPECT_EQ(ran_after, 4);
  }
}

// ---------------------------------------------------------------------------
// Preemption requests

TEST(PreemptTest, SysmonFlagsLongRunningGoroutine) {
  std::int64_t before = 0;
  std::int64_t after = 0;
  RunGuarded(
      [&] {
        before = gort::ReadStats().preempt_requests;
        gort::WaitGroup wg;
        wg.Add(1);
        gort::Go([&] {
          // Runs on the CPU for at least 50 ms without a yield point, and
          // on until sysmon has flagged it (or kDeadline passes).
          const auto start = std::chrono::steady_clock::now();
          for (;;) {
            SpinFor(1ms);
            const auto ran = std::chrono::steady_clock::now() - start;
            if (ran > kDeadline) break;
            if (ran >= 50ms && gort::ReadStats().preempt_requests > before) {
              break;
            }
          }
          after = gort::ReadStats().preempt_requests;
          gort::Gosched();
          wg.Done();
        });
        wg.Wait();
      },
      Procs(1));
  EXPECT_GT(after, before);
}

TEST(PreemptTest, FlaggedGoroutineYieldsAtSyscall) {
  // At GOMAXPROCS 1 main hogs the P until sysmon flags it; the flag is
  // honoured on the way out of the next syscall, so the waiting goroutine
  // runs before main goes on. The waiting goroutine is started from a
  // thread outside the runtime, so it waits in the global queue, where main
  // yielding lines up behind it: started from main it would wait in
  // runnext, and the one-run-in-61 look at the global queue first
  // (findRunnable's fairness) would now and then run main again first.
  bool flagged = false;
  bool other_ran_before_syscall = true;
  bool other_ran_after_syscall = false;
  RunGuarded(
      [&] {
        std::atomic<bool> other_ran{false};
        const std::int64_t before = gort::ReadStats().preempt_requests;
        std::thread([&] { gort::Go([&] { other_ran.store(true); }); }).join();
        const auto deadline = std::chrono::steady_clock::now() + kDeadline;
        while (gort::ReadStats().preempt_requests == before &&
               std::chrono::steady_clock::now() < deadline) {
          SpinFor(1ms);
        }
        flagged = gort::ReadStats().preempt_requests > before;
        other_ran_before_syscall = other_ran.load();
        gort::Syscall([] { return 0; });
        other_ran_after_syscall = other_ran.load();
      },
      Procs(1));
  ASSERT_TRUE(flagged);
  EXPECT_FALSE(other_ran_before_syscall);
  EXPECT_TRUE(other_ran_after_syscall);
}

}  // namespace
