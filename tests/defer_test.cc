// Tests of gort::Defer (Go's defer statement, runtime/defer_test.go's
// subject) and WaitGroup::Go: a deferred call runs at scope end, in reverse
// order, on an exception, and not when Run's end unwinds a goroutine main
// left behind (Go's exit runs no defers), which is what lets a goroutine
// started by WaitGroup::Go be abandoned without a "negative WaitGroup
// counter".
#include "gort/defer.h"

#include <atomic>
#include <stdexcept>
#include <string>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "watchdog.h"

namespace {

class DeferTest : public testing::Test {
 private:
  gort_test::TestWatchdog watchdog_;
};

TEST_F(DeferTest, RunsAtScopeEndInReverseOrder) {
  std::string order;
  {
    gort::Defer a([&] { order += "a"; });
    gort::Defer b([&] { order += "b"; });
    order += "body,";
  }
  EXPECT_EQ(order, "body,ba");
}

TEST_F(DeferTest, RunsWhenAnExceptionLeavesTheScope) {
  int runs = 0;
  try {
    gort::Defer d([&] { runs++; });
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(runs, 1);
  gort::Run([&] {
    try {
      gort::Defer d([&] { runs++; });
      throw std::runtime_error("boom");
    } catch (const std::runtime_error&) {
    }
  });
  EXPECT_EQ(runs, 2);
}

TEST_F(DeferTest, CancelDropsTheCall) {
  int runs = 0;
  {
    gort::Defer d([&] { runs++; });
    d.Cancel();
  }
  EXPECT_EQ(runs, 0);
}

// A destructor in the same frame, to show the frame did unwind.
struct Counted {
  std::atomic<int>* n;
  ~Counted() { n->fetch_add(1); }
};

TEST_F(DeferTest, NotRunWhenRunsEndUnwindsAnAbandonedGoroutine) {
  std::atomic<int> deferred{0};
  std::atomic<int> destroyed{0};
  gort::Run(
      [&] {
        auto never = gort::MakeChan<int>();
        auto started = gort::MakeChan<int>(1);
        gort::Go([&, never, started] {
          Counted c{&destroyed};
          gort::Defer d([&] { deferred.fetch_add(1); });
          started.Send(1);
          never.Recv();
        });
        started.Recv();
      },
      gort::Options{.maxprocs = 1});
  EXPECT_EQ(destroyed.load(), 1);
  EXPECT_EQ(deferred.load(), 0);
}

TEST_F(DeferTest, WaitGroupGoWaitsForEveryFunction) {
  std::atomic<int> ran{0};
  gort::Run([&] {
    gort::WaitGroup wg;
    for (int i = 0; i < 50; i++) {
      wg.Go([&] {
        gort::Gosched();
        ran.fetch_add(1);
      });
    }
    wg.Wait();
    EXPECT_EQ(ran.load(), 50);
  });
}

TEST_F(DeferTest, ADeferredCallMayThrow) {
  gort::Run([&] {
    gort::WaitGroup wg;
    std::atomic<bool> caught{false};
    wg.Go([&] {
      try {
        gort::Defer inner([] { throw std::runtime_error("from a defer"); });
      } catch (const std::runtime_error&) {
        caught = true;
      }
    });
    wg.Wait();
    EXPECT_TRUE(caught.load());
  });
}

TEST_F(DeferTest, WaitGroupGoAbandonedAtRunsEndCallsNoDone) {
  // main returns without Wait while the goroutine is blocked: Run's end must
  // not call Done (Go's exit does not), so the counter is still one.
  gort::WaitGroup wg;
  gort::Run(
      [&] {
        auto never = gort::MakeChan<int>();
        auto started = gort::MakeChan<int>(1);
        wg.Go([=] {
          started.Send(1);
          never.Recv();
        });
        started.Recv();
      },
      gort::Options{.maxprocs = 1});
  EXPECT_NO_THROW(wg.Done());  // one to zero, not negative
}

}  // namespace
