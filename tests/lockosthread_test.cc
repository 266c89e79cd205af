// tests/lockosthread_test.cc: LockOSThread / UnlockOSThread (Go's
// proc_test.go TestLockOSThread*, and
// runtime/testdata/testprog/lockosthread.go).
//
// Each test asserts what an M that is not really wired would break: the
// goroutine's thread id stays put across every kind of switch (Gosched,
// channel blocks, Sleep, a syscall long enough that sysmon retakes the P),
// no other goroutine ever runs on the wired thread, the nesting count is
// honoured, a goroutine ending while wired ends its thread, and Run still
// ends when a wired goroutine is left blocked.
#if !defined(_WIN32)
#include <sys/stat.h>
#endif

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "test_os.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using gort_test::Procs;
using gort_test::RunGuarded;
using gort_test::Tid;

// Busy goroutines that keep every P wanting work and record, while *watch
// is set, any run on thread *forbidden.
struct Workers {
  std::atomic<bool> stop{false};
  std::atomic<bool> watch{false};
  std::atomic<long> forbidden{-1};
  std::atomic<int> violations{0};
  std::atomic<int> samples{0};
  gort::WaitGroup wg;

  void Start(int n) {
    for (int i = 0; i < n; i++) {
      wg.Add(1);
      gort::Go([this] {
        while (!stop.load()) {
          if (watch.load()) {
            samples.fetch_add(1);
            if (Tid() == forbidden.load()) violations.fetch_add(1);
          }
          gort::Gosched();
        }
        wg.Done();
      });
    }
  }
  void Stop() {
    stop.store(true);
    wg.Wait();
  }
};

// One round of every kind of switch a goroutine makes.
void SwitchEveryWay(const gort::Chan<int>& c, int i) {
  gort::Gosched();
  gort::Go([c, i] { c.Send(i); });
  EXPECT_EQ(c.Recv(), i);
  gort::Sleep(50us);
}

TEST(LockOSThreadTest, ThreadStaysAcrossSwitchesAndIsNotShared) {
  RunGuarded(
      [] {
        Workers w;
        w.Start(8);
        auto c = gort::MakeChan<int>();
        gort::LockOSThread();
        long tid = Tid();
        w.forbidden.store(tid);
        w.watch.store(true);
        for (int i = 0; i < 200; i++) {
          SwitchEveryWay(c, i);
          ASSERT_EQ(Tid(), tid) << "moved at round " << i;
        }
        w.watch.store(false);
        gort::UnlockOSThread();
        w.Stop();
        EXPECT_EQ(w.violations.load(), 0)
            << "other goroutines ran on the locked thread";
        EXPECT_GT(w.samples.load(), 0);
      },
      Procs(3));
}

TEST(LockOSThreadTest, MainLockedWithOneProcStillRunsOthers) {
  // GOMAXPROCS=1: every block of main hands the only P to another M
  // (stoplockedm) and each wake-up hands it back (startlockedm).
  int sum = 0;
  RunGuarded(
      [&] {
        gort::LockOSThread();
        long tid = Tid();
        auto c = gort::MakeChan<int>();
        std::atomic<int> onLocked{0};
        for (int i = 1; i <= 100; i++) {
          gort::Go([c, i, tid, &onLocked] {
            if (Tid() == tid) onLocked.fetch_add(1);
            c.Send(i);
          });
        }
        for (int i = 0; i < 100; i++) {
          sum += c.Recv();
          ASSERT_EQ(Tid(), tid);
        }
        EXPECT_EQ(onLocked.load(), 0);
      },
      Procs(1));
  EXPECT_EQ(sum, 5050);
}

TEST(LockOSThreadTest, NestedLocksNeedAsManyUnlocks) {
  RunGuarded(
      [] {
        Workers w;
        w.Start(4);
        auto c = gort::MakeChan<int>();
        gort::UnlockOSThread();  // none held: a no-op
        gort::LockOSThread();
        gort::LockOSThread();
        gort::UnlockOSThread();  // one still held
        long tid = Tid();
        w.forbidden.store(tid);
        w.watch.store(true);
        for (int i = 0; i < 100; i++) {
          SwitchEveryWay(c, i);
          ASSERT_EQ(Tid(), tid) << "unwired after one of two unlocks";
        }
        w.watch.store(false);
        gort::UnlockOSThread();
        gort::UnlockOSThread();  // extra: a no-op
        w.Stop();
        EXPECT_EQ(w.violations.load(), 0);
      },
      Procs(2));
}

TEST(LockOSThreadTest, BlockingSyscallKeepsTheThread) {
  // A syscall long enough for sysmon to retake the P: on return the M has
  // no P and must wait for its goroutine alone (exitsyscall0's locked case).
  RunGuarded(
      [] {
        Workers w;
        w.Start(4);
        gort::LockOSThread();
        long tid = Tid();
        w.forbidden.store(tid);
        w.watch.store(true);
        for (int i = 0; i < 5; i++) {
          gort::Syscall([] { return gort_test::SleepInKernel(30); });
          ASSERT_EQ(Tid(), tid);
          gort::BlockingSyscall([] { return gort_test::SleepInKernel(5); });
          ASSERT_EQ(Tid(), tid);
        }
        w.watch.store(false);
        gort::UnlockOSThread();
        w.Stop();
        EXPECT_EQ(w.violations.load(), 0);
      },
      Procs(2));
}

TEST(LockOSThreadTest, YieldingGoroutineHandsAWiredOneToItsThread) {
  // One P: a goroutine wired to its thread comes back from a syscall long
  // enough for sysmon to retake the P, finds the P running a goroutine that
  // keeps yielding, and waits on the global queue. That goroutine's next
  // Gosched takes it off the queue itself (gosched_m's single lock hold)
  // and must hand it to its own thread, not run it.
  RunGuarded(
      [] {
        Workers w;
        w.Start(1);
        gort::LockOSThread();
        long tid = Tid();
        for (int i = 0; i < 5; i++) {
          gort::Syscall([] { return gort_test::SleepInKernel(30); });
          ASSERT_EQ(Tid(), tid) << "moved at round " << i;
        }
        gort::UnlockOSThread();
        w.Stop();
      },
      Procs(1));
}

#if defined(_WIN32)
// A handle that is signalled when thread tid ends.
HANDLE OpenThreadForExit(long tid) {
  return OpenThread(SYNCHRONIZE, FALSE, static_cast<DWORD>(tid));
}
bool ThreadEnded(HANDLE h) {
  return WaitForSingleObject(h, 0) == WAIT_OBJECT_0;
}
#else
int OpenThreadForExit(long tid) { return static_cast<int>(tid); }
bool ThreadEnded(int tid) {
  struct stat st;
  std::string path = "/proc/self/task/" + std::to_string(tid);
  return stat(path.c_str(), &st) != 0;
}
#endif

TEST(LockOSThreadTest, ExitWhileLockedEndsTheThread) {
  bool ended = false;
  int after = 0;
  RunGuarded(
      [&] {
        auto done = gort::MakeChan<long>(1);
        gort::Go([done] {
          gort::LockOSThread();
          done.Send(Tid());
          // Returns still locked: the thread must go with it.
        });
        long tid = done.Recv();
        auto handle = OpenThreadForExit(tid);
        const std::int64_t deadline = gort::Nanotime() + 10'000'000'000;
        while (!(ended = ThreadEnded(handle)) && gort::Nanotime() < deadline) {
          gort::Sleep(1ms);
        }
#if defined(_WIN32)
        CloseHandle(handle);
#endif
        // The runtime goes on without that M.
        auto c = gort::MakeChan<int>();
        for (int i = 1; i <= 10; i++) gort::Go([c, i] { c.Send(i); });
        for (int i = 0; i < 10; i++) after += c.Recv();
      },
      Procs(2));
  EXPECT_TRUE(ended) << "the locked goroutine's thread outlived it";
  EXPECT_EQ(after, 55);
}

TEST(LockOSThreadTest, UnlockedExitKeepsTheThread) {
  // The counterpart: unlocked before returning, the M goes back to the pool.
  bool ended = true;
  RunGuarded(
      [&] {
        auto done = gort::MakeChan<long>(1);
        gort::Go([done] {
          gort::LockOSThread();
          gort::UnlockOSThread();
          done.Send(Tid());
        });
        long tid = done.Recv();
        auto handle = OpenThreadForExit(tid);
        gort::Sleep(20ms);  // lower bound only: the thread must still exist
        ended = ThreadEnded(handle);
#if defined(_WIN32)
        CloseHandle(handle);
#endif
      },
      Procs(2));
  EXPECT_FALSE(ended);
}

TEST(LockOSThreadTest, RunEndsWithALockedGoroutineBlocked) {
  // Its M sleeps in stoplockedm; Run's end must wake it to exit.
  for (int round = 0; round < 3; round++) {
    RunGuarded(
        [] {
          auto ready = gort::MakeChan<int>();
          gort::Go([ready] {
            gort::LockOSThread();
            ready.Send(1);
            gort::MakeChan<int>().Recv();  // forever
          });
          ready.Recv();
          gort::Sleep(1ms);
        },
        Procs(2));
  }
}

TEST(LockOSThreadTest, OutsideRunThrowsPanic) {
  EXPECT_THROW(gort::LockOSThread(), gort::Panic);
  EXPECT_THROW(gort::UnlockOSThread(), gort::Panic);
}

}  // namespace
