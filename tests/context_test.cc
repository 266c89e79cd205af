// tests/context_test.cc: Context, in the spirit of Go's
// context/context_test.go: cancel closes Done and sets Err, parents cancel
// children (not the other way round), deadlines fire with
// kDeadlineExceeded and a child's deadline is never later than its
// parent's, Done works in Select, CancelFunc is idempotent. Only lower
// bounds on time are asserted.
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using gort::ContextError;
using gort_test::Procs;
using gort_test::RunGuarded;

// True if ctx's Done channel is closed now.
bool IsDone(const gort::Context& ctx) {
  return gort::Select(gort::RecvCase(ctx.Done()), gort::DefaultCase()) == 0;
}

TEST(ContextTest, BackgroundIsNeverDone) {
  RunGuarded([] {
    gort::Context bg = gort::Background();
    EXPECT_FALSE(bg.Done());  // a nil channel
    EXPECT_EQ(bg.Err(), ContextError::kNone);
    EXPECT_FALSE(bg.Deadline().has_value());
    EXPECT_FALSE(IsDone(bg));
    EXPECT_EQ(gort::Context().Err(), ContextError::kNone);
  });
}

// Go's TestWithCancel: cancel closes Done, sets Err, and is idempotent.
TEST(ContextTest, CancelClosesDone) {
  RunGuarded([] {
    auto [ctx, cancel] = gort::WithCancel(gort::Background());
    EXPECT_FALSE(IsDone(ctx));
    EXPECT_EQ(ctx.Err(), ContextError::kNone);
    EXPECT_FALSE(ctx.Deadline().has_value());
    gort::Context copy = ctx;
    cancel();
    EXPECT_TRUE(IsDone(ctx));
    EXPECT_TRUE(IsDone(copy));
    EXPECT_EQ(copy.Err(), ContextError::kCanceled);
    cancel();  // idempotent
    EXPECT_EQ(ctx.Err(), ContextError::kCanceled);
    EXPECT_STREQ(gort::ContextErrorString(ctx.Err()), "context canceled");
  });
}

// A goroutine blocked on Done wakes when another cancels (Select on Done
// and on a work channel, as Go code does).
TEST(ContextTest, DoneWakesGoroutinesInSelect) {
  for (int procs : {1, 2, 4}) {
    constexpr int kWorkers = 10;
    std::vector<ContextError> seen(kWorkers, ContextError::kNone);
    RunGuarded(
        [&] {
          auto [ctx, cancel] = gort::WithCancel(gort::Background());
          auto work = gort::MakeChan<int>(0);
          gort::WaitGroup wg;
          wg.Add(kWorkers);
          for (int i = 0; i < kWorkers; i++) {
            gort::Go([&, i, ctx = ctx] {
              for (;;) {
                int v = 0;
                if (gort::Select(gort::RecvCase(ctx.Done()),
                                 gort::RecvCase(work, &v)) == 0) {
                  seen[i] = ctx.Err();
                  break;
                }
              }
              wg.Done();
            });
          }
          for (int i = 0; i < 100; i++) work.Send(i);
          cancel();
          wg.Wait();
        },
        Procs(procs));
    EXPECT_EQ(seen,
              std::vector<ContextError>(kWorkers, ContextError::kCanceled))
        << "procs=" << procs;
  }
}

// Go's TestParentFinishesChild and TestChildFinishesFirst.
TEST(ContextTest, ParentCancelsChildrenNotTheReverse) {
  RunGuarded([] {
    auto [parent, cancel_parent] = gort::WithCancel(gort::Background());
    auto [child, cancel_child] = gort::WithCancel(parent);
    auto [grandchild, cancel_gc] = gort::WithCancel(child);
    auto [sibling, cancel_sibling] = gort::WithCancel(parent);
    cancel_sibling();
    EXPECT_TRUE(IsDone(sibling));
    EXPECT_FALSE(IsDone(parent));  // a child does not cancel its parent
    EXPECT_FALSE(IsDone(child));
    cancel_parent();
    EXPECT_EQ(child.Err(), ContextError::kCanceled);
    EXPECT_EQ(grandchild.Err(), ContextError::kCanceled);
    EXPECT_TRUE(IsDone(grandchild));
    // A child of a canceled parent is born canceled.
    auto [late, cancel_late] = gort::WithCancel(child);
    EXPECT_TRUE(IsDone(late));
    EXPECT_EQ(late.Err(), ContextError::kCanceled);
    cancel_child();
    cancel_gc();
    cancel_late();
  });
}

// Go's TestDeadline / TestTimeout: Done closes by itself, with
// kDeadlineExceeded, not before the deadline; children follow.
TEST(ContextTest, TimeoutFires) {
  std::int64_t start = 0, done_at = 0;
  ContextError err = ContextError::kNone, child_err = ContextError::kNone;
  RunGuarded([&] {
    start = gort::Nanotime();
    auto [ctx, cancel] = gort::WithTimeout(gort::Background(), 5ms);
    auto [child, cancel_child] = gort::WithCancel(ctx);
    ctx.Done().Recv();
    done_at = gort::Nanotime();
    err = ctx.Err();
    child.Done().Recv();
    child_err = child.Err();
    cancel();  // after the deadline: no change
    EXPECT_EQ(ctx.Err(), ContextError::kDeadlineExceeded);
    cancel_child();
  });
  EXPECT_GE(done_at, start + 5'000'000);
  EXPECT_EQ(err, ContextError::kDeadlineExceeded);
  EXPECT_EQ(child_err, ContextError::kDeadlineExceeded);
}

// Go's TestCanceledTimeout: cancel before the deadline wins.
TEST(ContextTest, CancelBeforeDeadline) {
  RunGuarded([] {
    auto [ctx, cancel] = gort::WithTimeout(gort::Background(), 1h);
    EXPECT_TRUE(ctx.Deadline().has_value());
    cancel();
    EXPECT_EQ(ctx.Err(), ContextError::kCanceled);
  });
}

// A child's deadline is never later than its parent's; an earlier one is
// kept; a passed one is exceeded at once.
TEST(ContextTest, DeadlinesNest) {
  RunGuarded([] {
    auto now = std::chrono::steady_clock::now();
    auto [parent, cancel_parent] =
        gort::WithDeadline(gort::Background(), now + 1h);
    auto [later, cancel_later] = gort::WithDeadline(parent, now + 2h);
    auto [sooner, cancel_sooner] = gort::WithTimeout(parent, 30min);
    auto [plain, cancel_plain] = gort::WithCancel(parent);
    ASSERT_TRUE(later.Deadline().has_value());
    EXPECT_EQ(*later.Deadline(), now + 1h);
    EXPECT_EQ(*plain.Deadline(), now + 1h);
    EXPECT_LT(*sooner.Deadline(), now + 1h);
    auto [past, cancel_past] = gort::WithDeadline(parent, now - 1s);
    EXPECT_TRUE(IsDone(past));
    EXPECT_EQ(past.Err(), ContextError::kDeadlineExceeded);
    EXPECT_STREQ(gort::ContextErrorString(past.Err()),
                 "context deadline exceeded");
    // Canceling the parent cancels every child, whatever its deadline.
    cancel_parent();
    EXPECT_EQ(later.Err(), ContextError::kCanceled);
    EXPECT_EQ(sooner.Err(), ContextError::kCanceled);
    cancel_later();
    cancel_sooner();
    cancel_plain();
    cancel_past();
  });
}

// A parent with a short timeout cancels a child that asked for a longer one
// with kDeadlineExceeded, as the child's own deadline is the parent's.
TEST(ContextTest, ParentDeadlineReachesChild) {
  ContextError err = ContextError::kNone;
  RunGuarded([&] {
    auto [parent, cancel_parent] = gort::WithTimeout(gort::Background(), 2ms);
    auto [child, cancel_child] = gort::WithTimeout(parent, 1h);
    child.Done().Recv();
    err = child.Err();
    cancel_child();
    cancel_parent();
  });
  EXPECT_EQ(err, ContextError::kDeadlineExceeded);
}

// Many contexts made and dropped without being canceled or timing out, and
// some never canceled at all: nothing leaks (the sanitizer presets check)
// and Run still ends.
TEST(ContextTest, DroppedContextsAreFreed) {
  RunGuarded([] {
    auto [root, cancel_root] = gort::WithCancel(gort::Background());
    for (int i = 0; i < 100; i++) {
      auto [c, cancel] = gort::WithTimeout(root, 1h);
      auto [d, cancel_d] = gort::WithCancel(c);
      if (i % 2 == 0) cancel();
    }
    gort::WithTimeout(gort::Background(), 1h);  // never canceled
    cancel_root();
  });
}

// context.AfterFunc: f runs once the context is canceled; stop before that
// keeps it from running, and stop after it returns false.
TEST(ContextTest, AfterFuncRunsOnCancelAndStops) {
  RunGuarded(
      [] {
        auto [ctx, cancel] = gort::WithCancel(gort::Background());
        gort::Chan<int> ran = gort::MakeChan<int>(2);
        std::atomic<int> stopped_runs{0};
        auto stop_early = gort::AfterFunc(ctx, [&] { stopped_runs++; });
        auto stop = gort::AfterFunc(ctx, [ran] { ran.Send(1); });
        EXPECT_TRUE(stop_early());
        EXPECT_FALSE(stop_early());  // already stopped
        cancel();
        EXPECT_EQ(ran.Recv(), 1);
        EXPECT_FALSE(stop());  // f has run
        // A third AfterFunc after the cancel runs at once; by the time it has,
        // the stopped one has had every chance to run (it never may).
        auto stop3 = gort::AfterFunc(ctx, [ran] { ran.Send(3); });
        EXPECT_EQ(ran.Recv(), 3);
        EXPECT_EQ(stopped_runs.load(), 0);
        EXPECT_FALSE(gort::AfterFunc(gort::Background(), [] {})());
      },
      Procs(1));
}

}  // namespace
