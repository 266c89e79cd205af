// tests/arch/eh_test.cc: the per-goroutine C++ exception state that gogo.cc
// swaps around each switch mirrors the C++ runtime's __cxa_eh_globals, whose
// layout is per ABI: {caughtExceptions, uncaughtExceptions} everywhere, plus
// propagatingExceptions on 32-bit ARM EHABI (armhf), where the unwinder pushes
// the exception being cleaned up there before each destructor that runs during
// unwinding and __cxa_end_cleanup pops it afterwards. A goroutine that parks
// in such a destructor, or in a catch block, and resumes on another thread
// must find its own state there (a missing field: std::terminate).
#include <atomic>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "gort/gort.h"
#include "../test_os.h"

namespace {

using gort_test::Tid;

// Each scenario runs at least kRounds times, and on until the goroutine has
// resumed on another thread kMoves times (at most kMaxRounds). Whether a
// round migrates is up to the scheduler; measured here, about one round in
// ten does even on a loaded machine, so 2000 rounds without kMoves
// migrations would take a broken scheduler (0.9^2000 is about 1e-92).
constexpr int kRounds = 40;
constexpr int kMoves = 3;
constexpr int kMaxRounds = 2000;

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

// Runs body(c) in a goroutine that will park on c, while main hands the wake-up
// to a fresh goroutine so that another M tends to resume it. Returns whether
// the goroutine resumed on another thread.
template <class Body>
bool RunParkedOnce(Body body) {
  long before = 0, after = 0;
  gort::Options options;
  options.maxprocs = 2;
  gort::Run(
      [&] {
        auto c = gort::MakeChan<int>();
        auto done = gort::MakeChan<int>();
        gort::Go([&] {
          body(c, &before, &after);
          done.Send(1);
        });
        for (int k = 0; k < 10'000 && __atomic_load_n(&before, __ATOMIC_ACQUIRE) == 0;
             k++) {
          gort::Gosched();
        }
        gort::Go([&] { c.Send(1); });
        done.Recv();
      },
      options);
  return before != after;
}

TEST(EhStateTest, DestructorParkedDuringUnwindingResumesElsewhere) {
  int caught = 0, moved = 0, rounds = 0;
  for (; rounds < kRounds || (moved < kMoves && rounds < kMaxRounds);
       rounds++) {
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
  EXPECT_GE(moved, kMoves) << "rarely resumed on another thread in " << rounds
                           << " rounds: too little checked";
}

TEST(EhStateTest, CatchBlockParkedResumesElsewhereAndRethrows) {
  int caught = 0, moved = 0, rounds = 0;
  for (; rounds < kRounds || (moved < kMoves && rounds < kMaxRounds);
       rounds++) {
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
  EXPECT_GE(moved, kMoves) << "rarely resumed on another thread in " << rounds
                           << " rounds: too little checked";
}

}  // namespace
