// Tests of gort::ErrGroup (golang.org/x/sync/errgroup's errgroup_test.go
// subjects): Wait waits for every function and rethrows the first
// exception, WithContext's Context is canceled on the first failure and by
// Wait, SetLimit bounds the active goroutines, TryGo refuses at the limit.
#include "gort/errgroup.h"

#include <atomic>
#include <stdexcept>
#include <string>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "panic_message.h"
#include "watchdog.h"

namespace {

class ErrGroupTest : public testing::Test {
 private:
  gort_test::TestWatchdog watchdog_;
};

// The message of the std::runtime_error g.Wait() throws, or "none".
std::string WaitError(gort::ErrGroup& g) {
  try {
    g.Wait();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "none";
}

TEST_F(ErrGroupTest, WaitWaitsForEveryFunction) {
  gort::Run([] {
    gort::ErrGroup g;
    std::atomic<int> ran{0};
    for (int i = 0; i < 20; i++) {
      g.Go([&] {
        gort::Gosched();
        ran.fetch_add(1);
      });
    }
    EXPECT_EQ(WaitError(g), "none");
    EXPECT_EQ(ran.load(), 20);
  });
}

TEST_F(ErrGroupTest, WaitRethrowsTheFirstExceptionAfterAllReturn) {
  gort::Run([] {
    auto [g, ctx] = gort::ErrGroup::WithContext(gort::Background());
    std::atomic<int> finished{0};
    for (int i = 0; i < 5; i++) {
      g->Go([&, ctx = ctx] {
        // Each waits for the failure's cancellation, then fails too.
        gort::Select(gort::RecvCase(ctx.Done()));
        finished.fetch_add(1);
        throw std::runtime_error("later");
      });
    }
    g->Go([] { throw std::runtime_error("first"); });
    EXPECT_EQ(WaitError(*g), "first");
    EXPECT_EQ(finished.load(), 5);
    EXPECT_EQ(ctx.Err(), gort::ContextError::kCanceled);
  });
}

TEST_F(ErrGroupTest, WaitCancelsTheContextOnSuccess) {
  gort::Run([] {
    auto [g, ctx] = gort::ErrGroup::WithContext(gort::Background());
    g->Go([] {});
    EXPECT_EQ(ctx.Err(), gort::ContextError::kNone);
    g->Wait();
    EXPECT_EQ(ctx.Err(), gort::ContextError::kCanceled);
  });
}

TEST_F(ErrGroupTest, SetLimitBoundsActiveGoroutinesAndTryGoRefuses) {
  gort::Run([] {
    gort::ErrGroup g;
    g.SetLimit(2);
    auto release = gort::MakeChan<int>();
    std::atomic<int> active{0};
    std::atomic<int> most{0};
    auto Work = [&, release] {
      int a = active.fetch_add(1) + 1;
      int m = most.load();
      while (a > m && !most.compare_exchange_weak(m, a)) {
      }
      release.Recv();
      active.fetch_sub(1);
    };
    EXPECT_TRUE(g.TryGo(Work));
    EXPECT_TRUE(g.TryGo(Work));
    EXPECT_FALSE(g.TryGo(Work));  // two are active
    EXPECT_NE(gort_test::PanicMessage([&] { g.SetLimit(5); }), "no panic");
    // Go blocks for room: a goroutine releases the workers one by one.
    gort::Go([=] {
      for (int i = 0; i < 6; i++) release.Send(i);
    });
    for (int i = 0; i < 4; i++) g.Go(Work);
    EXPECT_EQ(WaitError(g), "none");
    EXPECT_LE(most.load(), 2);
    EXPECT_EQ(active.load(), 0);
    g.SetLimit(-1);  // nothing active: allowed
    EXPECT_TRUE(g.TryGo([] {}));
    g.Wait();
  });
}

}  // namespace
