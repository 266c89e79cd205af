// tests/func_test.cc: gort::internal::Func, the move-only goroutine body
// type behind Run and Go (gort/internal/func.h): it calls what it holds as
// an rvalue, owns it (destroys it exactly once, including when moved), keeps
// small callables inline and larger or over-aligned ones on the heap.
#include "gort/internal/func.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "watchdog.h"

namespace {

using gort::internal::Func;
using gort_test::RunGuarded;

// Counts live copies of itself in *live.
struct Counted {
  int* live;
  explicit Counted(int* l) : live(l) { ++*live; }
  Counted(Counted&& o) noexcept : live(o.live) { ++*live; }
  Counted(const Counted& o) : live(o.live) { ++*live; }
  ~Counted() { --*live; }
};

TEST(FuncTest, EmptyAndNull) {
  Func f;
  EXPECT_FALSE(f);
  Func g(nullptr);
  EXPECT_FALSE(g);
  g = [] {};
  EXPECT_TRUE(g);
  g = nullptr;
  EXPECT_FALSE(g);
}

TEST(FuncTest, CallsMoveOnlyCallableAsRvalue) {
  auto p = std::make_unique<int>(41);
  int got = 0;
  bool rvalue = false;
  struct F {
    std::unique_ptr<int> p;
    int* got;
    bool* rvalue;
    void operator()() && {
      *got = *p + 1;
      *rvalue = true;
    }
  };
  Func f(F{std::move(p), &got, &rvalue});
  std::move(f)();
  EXPECT_EQ(got, 42);
  EXPECT_TRUE(rvalue);
}

TEST(FuncTest, SmallCallableIsInlineLargeOrOverAlignedIsNot) {
  struct Small {
    void* a;
    void* b;
    void operator()() {}
  };
  struct Large {
    char bytes[8 * sizeof(void*)];
    void operator()() {}
  };
  struct alignas(64) Aligned {
    char c;
    void operator()() {}
  };
  struct ThrowingMove {
    ThrowingMove() = default;
    ThrowingMove(ThrowingMove&&) {}
    void operator()() {}
  };
  EXPECT_TRUE(Func::kStoredInline<Small>);
  EXPECT_FALSE(Func::kStoredInline<Large>);
  EXPECT_FALSE(Func::kStoredInline<Aligned>);
  EXPECT_FALSE(Func::kStoredInline<ThrowingMove>);
  // Over-aligned callables still get their alignment (from the heap).
  bool aligned = false;
  struct alignas(64) Check {
    bool* out;
    void operator()() {
      *out = reinterpret_cast<std::uintptr_t>(this) % 64 == 0;
    }
  };
  Func f(Check{&aligned});
  Func g(std::move(f));
  std::move(g)();
  EXPECT_TRUE(aligned);
}

TEST(FuncTest, DestroysCapturesExactlyOnceInlineAndOnHeap) {
  int live = 0;
  {
    Func small([c = Counted(&live)] {});
    EXPECT_EQ(live, 1);
    Func moved(std::move(small));
    EXPECT_EQ(live, 1);
    EXPECT_FALSE(small);  // NOLINT: moved-from is empty by contract
    Func assigned;
    assigned = std::move(moved);
    EXPECT_EQ(live, 1);
    std::move(assigned)();  // calling does not destroy
    EXPECT_EQ(live, 1);
    assigned = nullptr;
    EXPECT_EQ(live, 0);
  }
  {
    std::string big(100, 'x');
    Func large([c = Counted(&live), big, pad = std::string(100, 'y')] {});
    EXPECT_EQ(live, 1);
    Func moved(std::move(large));
    Func other([c = Counted(&live)] {});
    EXPECT_EQ(live, 2);
    other = std::move(moved);  // destroys other's callable, takes moved's
    EXPECT_EQ(live, 1);
  }
  EXPECT_EQ(live, 0);
}

// Calls wg->Done() when the last owner goes away (moved-from: nothing).
struct DoneOnDestroy {
  gort::WaitGroup* wg;
  explicit DoneOnDestroy(gort::WaitGroup* w) : wg(w) {}
  DoneOnDestroy(DoneOnDestroy&& o) noexcept
      : wg(std::exchange(o.wg, nullptr)) {}
  ~DoneOnDestroy() {
    if (wg != nullptr) wg->Done();
  }
};

// Go accepts move-only lambdas, inline and on the heap, and destroys their
// captures once each goroutine has run (Wait returns only after both
// destructors; a second destruction would panic on a negative counter).
TEST(FuncTest, GoRunsMoveOnlyLambdasAndDestroysTheirCaptures) {
  int sum = 0;
  RunGuarded([&] {
    gort::WaitGroup destroyed;
    destroyed.Add(2);
    auto done = gort::MakeChan<int>();
    auto p = std::make_unique<int>(1);
    gort::Go([done, p = std::move(p), d = DoneOnDestroy(&destroyed)] {
      done.Send(*p);
    });
    auto q = std::make_unique<int>(2);
    gort::Go([done, q = std::move(q), d = DoneOnDestroy(&destroyed),
              pad = std::string(200, 'z')] {
      done.Send(*q + static_cast<int>(pad.size()) - 200);
    });
    sum = done.Recv() + done.Recv();
    destroyed.Wait();
  });
  EXPECT_EQ(sum, 3);
}

}  // namespace
