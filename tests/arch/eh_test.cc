// tests/arch/eh_test.cc: the per-goroutine C++ exception state that gogo.cc
// swaps around each switch mirrors the C++ runtime's __cxa_eh_globals, whose
// layout is per ABI: {caughtExceptions, uncaughtExceptions} everywhere, plus
// propagatingExceptions on 32-bit ARM EHABI (armhf), where the unwinder pushes
// the exception being cleaned up there before each destructor that runs during
// unwinding and __cxa_end_cleanup pops it afterwards. A goroutine that parks
// in such a destructor, or in a catch block, and resumes on another thread
// must find its own state there (a missing field: std::terminate).
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>

#include "../test_os.h"
#include "gort/gort.h"

namespace {

using gort_test::Tid;

// Each scenario runs kRounds times; every round resumes the goroutine on
// another thread (RunParkedOnce makes sure of it).
constexpr int kRounds = 40;

struct ParkInDestructor {
  gort::Chan<int> c;
  long* before;
  long* after;
  ~ParkInDestructor() {
    __atomic_store_n(before, Tid(), __ATOMIC_RELEASE);  // main polls it
    c.Recv();  // parks while the exception unwinds through this frame
    *after = Tid();
  }
};

// The object lives in a frame without a handler, so unwinding runs its
// destructor as a cleanup (on ARM EHABI: __cxa_begin_cleanup, the
// destructor, __cxa_end_cleanup).
__attribute__((noinline)) void ThrowThroughParker(gort::Chan<int> c,
                                                  long* before, long* after) {
  ParkInDestructor p{c, before, after};
  throw std::runtime_error("through a parked destructor");
}

// Runs body(c) in a goroutine that parks on c, at GOMAXPROCS 1, and makes it
// resume on another thread: main runs next on the thread the goroutine parked
// on (one P, no syscall in between), queues the wake-up and blocks that
// thread in BlockingSyscall until the body is done, so the P, and with it the
// goroutine, go to another M. Returns whether the goroutine resumed on
// another thread (always, unless the scheduler is broken).
template <class Body>
bool RunParkedOnce(Body body) {
  long before = 0, after = 0;
  gort_test::EventFd finished;
  gort::Options options;
  options.maxprocs = 1;
  gort::Run(
      [&] {
        auto c = gort::MakeChan<int>();
        gort::Go([&] {
          body(c, &before, &after);
          finished.Signal();
        });
        for (int k = 0;
             k < 10'000 && __atomic_load_n(&before, __ATOMIC_ACQUIRE) == 0;
             k++) {
          gort::Gosched();
        }
        gort::Go([&] { c.Send(1); });
        gort::BlockingSyscall([&] { return finished.WaitFor(60'000); });
      },
      options);
  return before != 0 && before != after;
}

TEST(EhStateTest, DestructorParkedDuringUnwindingResumesElsewhere) {
  int caught = 0, moved = 0, rounds = 0;
  for (; rounds < kRounds; rounds++) {
    moved += RunParkedOnce([&](gort::Chan<int> c, long* before, long* after) {
      try {
        ThrowThroughParker(c, before, after);
      } catch (const std::runtime_error& e) {
        if (std::string(e.what()) == "through a parked destructor") caught++;
      }
    });
  }
  EXPECT_EQ(caught, rounds);
  RecordProperty("resumed_on_another_thread", moved);
  EXPECT_EQ(moved, rounds) << "resumed on the thread it parked on";
}

TEST(EhStateTest, CatchBlockParkedResumesElsewhereAndRethrows) {
  int caught = 0, moved = 0, rounds = 0;
  for (; rounds < kRounds; rounds++) {
    moved += RunParkedOnce([&](gort::Chan<int> c, long* before, long* after) {
      try {
        try {
          throw std::runtime_error("parked in catch");
        } catch (const std::runtime_error&) {
          __atomic_store_n(before, Tid(), __ATOMIC_RELEASE);  // main polls it
          c.Recv();
          *after = Tid();
          EXPECT_TRUE(std::current_exception() != nullptr);
          throw;  // needs caughtExceptions to be this goroutine's
        }
      } catch (const std::runtime_error& e) {
        if (std::string(e.what()) == "parked in catch") caught++;
      }
      EXPECT_EQ(std::uncaught_exceptions(), 0);
    });
  }
  EXPECT_EQ(caught, rounds);
  RecordProperty("resumed_on_another_thread", moved);
  EXPECT_EQ(moved, rounds) << "resumed on the thread it parked on";
}

}  // namespace
