// Tests of gort::Chan: the semantics that Go's runtime/chan_test.go checks for
// chan T (blocking, FIFO order, close, nil channels, len/cap, many producers
// and consumers), plus what C++ adds: handle copies, move-only and
// non-trivial element types, and panics thrown as gort::Panic.
//
// Rules these tests keep:
//  * No test relies on a sleep for its result. A few sleep briefly to give a
//    broken runtime the chance to do the wrong thing (a receive that returns
//    from an empty channel); the checked outcome holds however the goroutines
//    are scheduled.
//  * State that a goroutine may still reference when Run returns (goroutines
//    blocked forever are abandoned) lives in the test body, outside Run.
//  * A goroutine may park inside a catch block: gogo carries the C++
//    exception runtime's per-thread state with the goroutine to whichever
//    thread resumes it (runtime/gogo.cc; proc_test's
//    RunTest.ParkingInsideCatchBlockKeepsTheException proves it), so these
//    tests need no care there.
//  * SCOPED_TRACE is not used inside goroutines (its stack is thread-local and
//    a goroutine may move between threads); messages carry the context.
//  * A watchdog turns a hang into a named failure.
#include "gort/chan.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gort/runtime.h"
#include "gort/select.h"
#include "gtest/gtest.h"
#include "panic_message.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;

// Capacities 0..kMaxCap are tried wherever the capacity matters.
constexpr int kMaxCap = 10;

// The values that MultiConsumer feeds (Go's list).
constexpr std::array<int, 10> kPrimes = {2, 3, 7, 11, 13, 17, 19, 23, 27, 31};

// Buffer sizes along BufferedPipelineKeepsOrder's stages.
constexpr std::array<int, 4> kPipelineCaps = {16, 0, 1, 5};

class ChanTest : public gort_test::WatchedTest {};

class ChanDeathTest : public ChanTest {};

// Parameterized by GOMAXPROCS.
class ChanProcsTest : public gort_test::ProcsTest {};

INSTANTIATE_TEST_SUITE_P(Procs, ChanProcsTest, testing::Values(1, 2, 4),
                         gort_test::ProcsName);

using gort_test::PanicMessage;

// A payload that counts live instances and notices use after destruction
// (and so double destruction) through a marker that its destructor clears.
class Tracked {
 public:
  static std::atomic<int> live;
  static std::atomic<int> errors;

  Tracked() : Tracked(0) {}
  explicit Tracked(int v) : value_(v) { Born(); }
  Tracked(const Tracked& other) : value_(other.value()) { Born(); }
  Tracked(Tracked&& other) noexcept : value_(other.value()) {
    other.value_ = -1;
    Born();
  }
  Tracked& operator=(const Tracked& other) {
    Check();
    value_ = other.value();
    return *this;
  }
  Tracked& operator=(Tracked&& other) noexcept {
    Check();
    value_ = other.value();
    if (&other != this) other.value_ = -1;
    return *this;
  }
  ~Tracked() {
    Check();
    // Volatile, so that the compiler keeps this store to a dying object.
    *static_cast<volatile std::uint32_t*>(&magic_) = kDead;
    live.fetch_sub(1);
  }
  int value() const {
    Check();
    return value_;
  }

 private:
  static constexpr std::uint32_t kAlive = 0x600d600d;
  static constexpr std::uint32_t kDead = 0xdeaddead;
  void Born() {
    *static_cast<volatile std::uint32_t*>(&magic_) = kAlive;
    live.fetch_add(1);
  }
  void Check() const {
    if (*static_cast<const volatile std::uint32_t*>(&magic_) != kAlive) {
      errors.fetch_add(1);
    }
  }
  int value_;
  std::uint32_t magic_;
};

std::atomic<int> Tracked::live{0};
std::atomic<int> Tracked::errors{0};

// A string long enough to live on the heap, different for every i.
std::string LongString(int i) {
  return std::string(40 + i % 50, static_cast<char>('a' + i % 26)) + "#" +
         std::to_string(i);
}

// A vector whose size and contents depend on i.
std::vector<int> VectorFor(int i) {
  std::vector<int> v(i % 37);
  std::iota(v.begin(), v.end(), i);
  return v;
}

// ---------------------------------------------------------------------------
// Blocking behaviour at every capacity (Go's TestChan, first blocks).

TEST_F(ChanTest, ReceiveFromEmptyChannelBlocks) {
  gort::Run(
      [] {
        for (int cap = 0; cap <= kMaxCap; ++cap) {
          auto c = gort::MakeChan<int>(cap);
          auto got = gort::MakeChan<int>(2);
          std::atomic<int> returned{0};  // Both goroutines are waited for.
          gort::Go([c, got, &returned] {
            int v = c.Recv();
            returned++;
            got.Send(v);
          });
          gort::Go([c, got, &returned] {
            std::optional<int> v = c.RecvOk();
            returned++;
            got.Send(v.value_or(-100));
          });
          gort::Sleep(1ms);  // Room for a broken receive to return.
          EXPECT_EQ(returned.load(), 0) << "cap " << cap;

          // Non-blocking receives find nothing and touch nothing.
          int v = -1;
          bool ok = true;
          EXPECT_EQ(
              gort::Select(gort::RecvCase(c, &v, &ok), gort::DefaultCase()), 1)
              << "cap " << cap;
          EXPECT_EQ(v, -1);
          EXPECT_TRUE(ok);
          EXPECT_EQ(gort::Select(gort::RecvCase(c), gort::DefaultCase()), 1);

          c.Send(5);
          c.Send(6);
          int a = got.Recv();
          int b = got.Recv();
          EXPECT_EQ(std::min(a, b), 5) << "cap " << cap;
          EXPECT_EQ(std::max(a, b), 6) << "cap " << cap;
          EXPECT_EQ(returned.load(), 2);
          EXPECT_EQ(c.Len(), 0u);
        }
      },
      {.maxprocs = 4});
}

TEST_F(ChanTest, SendToFullChannelBlocks) {
  gort::Run(
      [] {
        for (int cap = 0; cap <= kMaxCap; ++cap) {
          auto c = gort::MakeChan<int>(cap);
          for (int i = 0; i < cap; ++i) c.Send(100 + i);
          EXPECT_EQ(c.Len(), static_cast<std::size_t>(cap));
          auto done = gort::MakeChan<int>(1);
          std::atomic<bool> sent{false};  // The sender is waited for.
          gort::Go([c, done, &sent] {
            c.Send(999);
            sent = true;
            done.Send(1);
          });
          gort::Sleep(1ms);  // Room for a broken send to complete.
          EXPECT_FALSE(sent.load()) << "cap " << cap;

          // A non-blocking send finds no room and leaves the buffer alone.
          EXPECT_EQ(gort::Select(gort::SendCase(c, 7), gort::DefaultCase()), 1)
              << "cap " << cap;
          EXPECT_EQ(c.Len(), static_cast<std::size_t>(cap));

          // The oldest value comes out first; the blocked sender's value
          // joins the back of the queue.
          EXPECT_EQ(c.Recv(), cap > 0 ? 100 : 999) << "cap " << cap;
          done.Recv();
          EXPECT_TRUE(sent.load());
          EXPECT_EQ(c.Len(), static_cast<std::size_t>(cap)) << "cap " << cap;
          for (int i = 1; i < cap; ++i) {
            EXPECT_EQ(c.Recv(), 100 + i);
          }
          if (cap > 0) {
            EXPECT_EQ(c.Recv(), 999);
          }
          EXPECT_EQ(c.Len(), 0u);
          EXPECT_EQ(gort::Select(gort::RecvCase(c), gort::DefaultCase()), 1);
        }
      },
      {.maxprocs = 4});
}

// ---------------------------------------------------------------------------
// Close.

TEST_F(ChanTest, ClosedChannelDrainsThenGivesZero) {
  gort::Run([] {
    for (int cap = 0; cap <= kMaxCap; ++cap) {
      auto c = gort::MakeChan<int>(cap);
      for (int i = 0; i < cap; ++i) c.Send(100 + i);
      c.Close();
      // Values sent before close stay, in order.
      EXPECT_EQ(c.Len(), static_cast<std::size_t>(cap));
      EXPECT_EQ(c.Cap(), static_cast<std::size_t>(cap));
      for (int i = 0; i < cap; ++i) {
        if (i % 3 == 0) {
          EXPECT_EQ(c.Recv(), 100 + i) << "cap " << cap;
        } else if (i % 3 == 1) {
          EXPECT_EQ(c.RecvOk(), std::optional<int>(100 + i)) << "cap " << cap;
        } else {
          int v = -1;
          bool ok = false;
          EXPECT_EQ(gort::Select(gort::RecvCase(c, &v, &ok)), 0);
          EXPECT_EQ(v, 100 + i) << "cap " << cap;
          EXPECT_TRUE(ok);
        }
      }
      EXPECT_EQ(c.Len(), 0u);
      // Then the zero value, as often as asked, without blocking.
      for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(c.Recv(), 0) << "cap " << cap;
        EXPECT_EQ(c.RecvOk(), std::nullopt) << "cap " << cap;
        int v = -1;
        bool ok = true;
        EXPECT_EQ(gort::Select(gort::RecvCase(c, &v, &ok), gort::DefaultCase()),
                  0)
            << "cap " << cap;
        EXPECT_EQ(v, 0);
        EXPECT_FALSE(ok);
      }
      EXPECT_EQ(c.Len(), 0u);
      EXPECT_EQ(c.Cap(), static_cast<std::size_t>(cap));
    }
  });
}

TEST_P(ChanProcsTest, CloseWakesEveryBlockedReceiver) {
  static constexpr int kPlain = 3, kOk = 3, kSelect = 3;
  static constexpr int kAll = kPlain + kOk + kSelect;
  gort::Run(
      [] {
        for (int cap = 0; cap <= kMaxCap; cap += 5) {
          auto c = gort::MakeChan<int>(cap);
          auto never = gort::MakeChan<int>();
          auto started = gort::MakeChan<int>(kAll);
          // Each receiver reports 1 for "saw the close correctly", 0 if not.
          auto results = gort::MakeChan<int>(kAll);
          for (int i = 0; i < kPlain; ++i) {
            gort::Go([c, started, results] {
              started.Send(1);
              results.Send(c.Recv() == 0 ? 1 : 0);
            });
          }
          for (int i = 0; i < kOk; ++i) {
            gort::Go([c, started, results] {
              started.Send(1);
              results.Send(c.RecvOk() == std::nullopt ? 1 : 0);
            });
          }
          for (int i = 0; i < kSelect; ++i) {
            gort::Go([c, never, started, results] {
              started.Send(1);
              int v = 42;
              bool ok = true;
              int chosen = gort::Select(gort::RecvCase(never),
                                        gort::RecvCase(c, &v, &ok));
              results.Send(chosen == 1 && v == 0 && !ok ? 1 : 0);
            });
          }
          for (int i = 0; i < kAll; ++i) started.Recv();
          // Most receivers are parked by now; the result is the same if not.
          for (int i = 0; i < 10; ++i) gort::Gosched();
          c.Close();
          int good = 0;
          for (int i = 0; i < kAll; ++i) good += results.Recv();
          EXPECT_EQ(good, kAll) << "cap " << cap;
        }
      },
      Opts());
}

TEST_F(ChanTest, CloseOfClosedChannelPanics) {
  gort::Run([] {
    for (int cap = 0; cap <= kMaxCap; ++cap) {
      auto c = gort::MakeChan<int>(cap);
      for (int i = 0; i < cap; ++i) c.Send(i + 1);
      c.Close();
      EXPECT_EQ(PanicMessage([&] { c.Close(); }), "close of closed channel")
          << "cap " << cap;
      // The failed close changes nothing: the values are still there.
      for (int i = 0; i < cap; ++i) {
        EXPECT_EQ(c.Recv(), i + 1);
      }
      EXPECT_EQ(c.RecvOk(), std::nullopt);
      EXPECT_EQ(PanicMessage([&] { c.Close(); }), "close of closed channel");
    }
  });
}

TEST_F(ChanTest, CloseOfNilChannelPanics) {
  gort::Run([] {
    gort::Chan<int> nil;
    EXPECT_EQ(PanicMessage([&] { nil.Close(); }), "close of nil channel");
    gort::Chan<std::string> nil_string;
    EXPECT_EQ(PanicMessage([&] { nil_string.Close(); }),
              "close of nil channel");
  });
}

TEST_F(ChanTest, SendOnClosedChannelPanics) {
  gort::Run([] {
    for (int cap = 0; cap <= kMaxCap; ++cap) {
      auto c = gort::MakeChan<int>(cap);
      if (cap > 1) c.Send(1);  // Leaves room in the buffer.
      c.Close();
      std::size_t len = c.Len();
      EXPECT_EQ(PanicMessage([&] { c.Send(2); }), "send on closed channel")
          << "cap " << cap;
      // Through Select too, with or without a default case.
      EXPECT_EQ(PanicMessage([&] { gort::Select(gort::SendCase(c, 3)); }),
                "send on closed channel")
          << "cap " << cap;
      EXPECT_EQ(PanicMessage([&] {
                  gort::Select(gort::SendCase(c, 4), gort::DefaultCase());
                }),
                "send on closed channel")
          << "cap " << cap;
      // None of the values got in.
      EXPECT_EQ(c.Len(), len);
      if (cap > 1) {
        EXPECT_EQ(c.Recv(), 1);
      }
      EXPECT_EQ(c.RecvOk(), std::nullopt);
    }
  });
}

TEST_P(ChanProcsTest, BlockedSendersPanicWhenClosed) {
  static constexpr int kPlain = 3, kSelect = 2;
  gort::Run(
      [] {
        for (int cap : {0, 2}) {
          auto c = gort::MakeChan<int>(cap);
          for (int i = 0; i < cap; ++i) c.Send(i + 1);  // Full.
          auto never = gort::MakeChan<int>();
          auto started = gort::MakeChan<int>(kPlain + kSelect);
          auto messages = gort::MakeChan<std::string>(kPlain + kSelect);
          for (int i = 0; i < kPlain; ++i) {
            gort::Go([c, started, messages, i] {
              started.Send(1);
              messages.Send(PanicMessage([&] { c.Send(100 + i); }));
            });
          }
          for (int i = 0; i < kSelect; ++i) {
            gort::Go([c, never, started, messages, i] {
              started.Send(1);
              messages.Send(PanicMessage([&] {
                gort::Select(gort::RecvCase(never), gort::SendCase(c, 200 + i));
              }));
            });
          }
          for (int i = 0; i < kPlain + kSelect; ++i) started.Recv();
          for (int i = 0; i < 10; ++i) gort::Gosched();
          c.Close();
          for (int i = 0; i < kPlain + kSelect; ++i) {
            EXPECT_EQ(messages.Recv(), "send on closed channel")
                << "cap " << cap;
          }
          // Only what was buffered before the close comes out.
          for (int i = 0; i < cap; ++i) {
            EXPECT_EQ(c.Recv(), i + 1);
          }
          EXPECT_EQ(c.RecvOk(), std::nullopt) << "cap " << cap;
        }
      },
      Opts());
}

// ---------------------------------------------------------------------------
// Nil channels.

TEST_F(ChanTest, NilChannelIsNeverReady) {
  gort::Run([] {
    gort::Chan<int> nil;
    EXPECT_FALSE(nil);
    EXPECT_EQ(nil.Len(), 0u);
    EXPECT_EQ(nil.Cap(), 0u);
    int v = -1;
    bool ok = true;
    EXPECT_EQ(gort::Select(gort::RecvCase(nil, &v, &ok), gort::DefaultCase()),
              1);
    EXPECT_EQ(v, -1);
    EXPECT_TRUE(ok);
    EXPECT_EQ(gort::Select(gort::SendCase(nil, 1), gort::DefaultCase()), 1);
    auto ready = gort::MakeChan<int>(1);
    for (int i = 0; i < 200; ++i) {
      ready.Send(i);
      EXPECT_EQ(gort::Select(gort::RecvCase(nil), gort::SendCase(nil, 2),
                             gort::RecvCase(ready, &v), gort::DefaultCase()),
                2);
      EXPECT_EQ(v, i);
    }
  });
}

TEST_F(ChanTest, NilChannelBlocksGoroutinesForever) {
  // Outside Run: the blocked goroutines are abandoned still referencing it.
  std::atomic<int> proceeded{0};
  gort::Run(
      [&proceeded] {
        auto started = gort::MakeChan<int>(4);
        gort::Go([started, &proceeded] {
          gort::Chan<int> nil;
          started.Send(1);
          nil.Recv();
          proceeded++;
        });
        gort::Go([started, &proceeded] {
          gort::Chan<int> nil;
          started.Send(1);
          (void)nil.RecvOk();
          proceeded++;
        });
        gort::Go([started, &proceeded] {
          gort::Chan<std::string> nil;
          started.Send(1);
          nil.Send("never");
          proceeded++;
        });
        gort::Go([started, &proceeded] {
          gort::Chan<int> nil;
          started.Send(1);
          gort::Select(gort::RecvCase(nil), gort::SendCase(nil, 1));
          proceeded++;
        });
        for (int i = 0; i < 4; ++i) started.Recv();
        for (int i = 0; i < 10; ++i) gort::Gosched();
        gort::Sleep(5ms);
        EXPECT_EQ(proceeded.load(), 0);
      },
      {.maxprocs = 2});
  EXPECT_EQ(proceeded.load(), 0);
}

TEST_F(ChanDeathTest, NilReceiveInMainDeadlocks) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(gort::Run([] {
                gort::Chan<int> nil;
                nil.Recv();
              }),
              testing::ExitedWithCode(2),
              "fatal error: all goroutines are asleep - deadlock!");
}

TEST_F(ChanDeathTest, NilSendInMainDeadlocks) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(gort::Run([] {
                gort::Chan<int> nil;
                nil.Send(1);
              }),
              testing::ExitedWithCode(2),
              "fatal error: all goroutines are asleep - deadlock!");
}

TEST_F(ChanDeathTest, EveryGoroutineBlockedDeadlocks) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(gort::Run(
                  [] {
                    auto c = gort::MakeChan<int>();
                    auto d = gort::MakeChan<int>(1);
                    gort::Go([c] { c.Send(1); });  // Main never receives c.
                    gort::Go([d] {
                      d.Send(1);
                      d.Send(2);  // Full.
                    });
                    gort::MakeChan<int>().Recv();
                  },
                  {.maxprocs = 2}),
              testing::ExitedWithCode(2),
              "fatal error: all goroutines are asleep - deadlock!");
}

TEST_F(ChanDeathTest, ExceptionEscapingGoroutineIsFatal) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(gort::Run([] {
                gort::Go([] { throw std::runtime_error("boom in goroutine"); });
                gort::MakeChan<int>().Recv();
              }),
              testing::ExitedWithCode(2), "panic: boom in goroutine");
}

TEST_F(ChanDeathTest, UncaughtChannelPanicInGoroutineIsFatal) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(gort::Run([] {
                auto c = gort::MakeChan<int>(1);
                c.Close();
                gort::Go([c] { c.Send(1); });
                gort::MakeChan<int>().Recv();
              }),
              testing::ExitedWithCode(2), "panic: send on closed channel");
}

// ---------------------------------------------------------------------------
// Len, Cap and the handle.

TEST_F(ChanTest, LenAndCap) {
  gort::Run([] {
    for (int cap = 0; cap <= kMaxCap; ++cap) {
      auto c = gort::MakeChan<int>(cap);
      EXPECT_EQ(c.Len(), 0u);
      EXPECT_EQ(c.Cap(), static_cast<std::size_t>(cap));
      for (int i = 0; i < cap; ++i) {
        c.Send(i);
        EXPECT_EQ(c.Len(), static_cast<std::size_t>(i + 1));
      }
      EXPECT_EQ(c.Cap(), static_cast<std::size_t>(cap));
      for (int i = cap; i > 0; --i) {
        c.Recv();
        EXPECT_EQ(c.Len(), static_cast<std::size_t>(i - 1));
      }
      EXPECT_EQ(c.Cap(), static_cast<std::size_t>(cap));
    }
    // The default capacity is 0.
    EXPECT_EQ(gort::MakeChan<int>().Cap(), 0u);
    EXPECT_EQ(gort::MakeChan<int>(1000).Cap(), 1000u);
  });
}

TEST_F(ChanTest, HandlesCopyCompareAndConvert) {
  gort::Run([] {
    gort::Chan<int> nil1, nil2;
    EXPECT_FALSE(nil1);
    EXPECT_TRUE(nil1 == nil2);

    auto a = gort::MakeChan<int>(2);
    auto b = gort::MakeChan<int>(2);
    EXPECT_TRUE(a);
    EXPECT_FALSE(a == b);
    EXPECT_FALSE(a == nil1);

    // Copies name the same channel.
    gort::Chan<int> copy = a;
    EXPECT_TRUE(copy == a);
    copy.Send(3);
    EXPECT_EQ(a.Len(), 1u);
    EXPECT_EQ(a.Recv(), 3);

    // A move leaves the source nil.
    gort::Chan<int> moved = std::move(copy);
    EXPECT_TRUE(moved == a);
    EXPECT_FALSE(copy);  // NOLINT(bugprone-use-after-move): documented.

    gort::Chan<int> assigned;
    assigned = b;
    EXPECT_TRUE(assigned == b);
    assigned = a;
    EXPECT_TRUE(assigned == a);
    EXPECT_FALSE(assigned == b);
    gort::Chan<int>& alias = assigned;
    assigned = alias;  // Self-assignment keeps the channel.
    EXPECT_TRUE(assigned == a);
    assigned = gort::Chan<int>();
    EXPECT_FALSE(assigned);
    gort::Chan<int> move_assigned;
    move_assigned = std::move(moved);
    EXPECT_TRUE(move_assigned == a);
    EXPECT_FALSE(moved);  // NOLINT(bugprone-use-after-move): documented.

    gort::Chan<int> x = a, y = b;
    x.swap(y);
    EXPECT_TRUE(x == b);
    EXPECT_TRUE(y == a);

    // The channel outlives the handle that made it.
    gort::Chan<int> survivor;
    {
      auto temp = gort::MakeChan<int>(2);
      temp.Send(7);
      survivor = temp;
    }
    EXPECT_EQ(survivor.Recv(), 7);

    // A goroutine can hold the only handle to a channel.
    auto out = gort::MakeChan<int>();
    {
      auto only = gort::MakeChan<int>(1);
      only.Send(11);
      gort::Go([only = std::move(only), out] { out.Send(only.Recv() + 1); });
    }
    EXPECT_EQ(out.Recv(), 12);
  });
}

// ---------------------------------------------------------------------------
// Order and conservation.

TEST_P(ChanProcsTest, SingleProducerConsumerIsFifo) {
  static constexpr int kValues = 200;
  gort::Run(
      [] {
        for (int cap = 0; cap <= kMaxCap; ++cap) {
          auto c = gort::MakeChan<int>(cap);
          gort::Go([c] {
            for (int i = 0; i < kValues; ++i) c.Send(i);
          });
          int wrong = 0;
          for (int i = 0; i < kValues; ++i) {
            if (c.Recv() != i) ++wrong;
          }
          EXPECT_EQ(wrong, 0) << "cap " << cap;

          // Same with the two-result receive and a closing producer.
          gort::Go([c] {
            for (int i = 0; i < kValues; ++i) c.Send(i);
            c.Close();
          });
          int next = 0;
          wrong = 0;
          while (std::optional<int> v = c.RecvOk()) {
            if (*v != next) ++wrong;
            ++next;
          }
          EXPECT_EQ(wrong, 0) << "cap " << cap;
          EXPECT_EQ(next, kValues) << "cap " << cap;
        }
      },
      Opts());
}

// Several producers and consumers at every capacity: every value is received
// exactly once, and each consumer sees each producer's values in the order
// they were sent (the channel is one FIFO queue).
TEST_P(ChanProcsTest, ManyProducersAndConsumersDeliverEachValueOnce) {
  static constexpr int kProducers = 4, kConsumers = 4, kPerProducer = 1000;
  static constexpr int kTotal = kProducers * kPerProducer;
  static_assert(kTotal % kConsumers == 0);
  gort::Run(
      [] {
        for (int cap = 0; cap <= kMaxCap; ++cap) {
          auto c = gort::MakeChan<int>(cap);
          auto results = gort::MakeChan<std::vector<int>>(kConsumers);
          for (int p = 0; p < kProducers; ++p) {
            gort::Go([c, p] {
              for (int i = 0; i < kPerProducer; ++i) {
                c.Send(p * kPerProducer + i);
              }
            });
          }
          for (int k = 0; k < kConsumers; ++k) {
            gort::Go([c, results] {
              std::vector<int> got;
              for (int i = 0; i < kTotal / kConsumers; ++i) {
                got.push_back(c.Recv());
              }
              results.Send(std::move(got));
            });
          }
          std::vector<int> all;
          int out_of_order = 0;
          for (int k = 0; k < kConsumers; ++k) {
            std::vector<int> got = results.Recv();
            std::array<int, kProducers> last;
            last.fill(-1);
            for (int v : got) {
              int p = v / kPerProducer;
              if (p < 0 || p >= kProducers) continue;  // Caught below.
              if (v <= last[p]) ++out_of_order;
              last[p] = v;
            }
            all.insert(all.end(), got.begin(), got.end());
          }
          EXPECT_EQ(out_of_order, 0) << "cap " << cap;
          std::sort(all.begin(), all.end());
          std::vector<int> want(kTotal);
          std::iota(want.begin(), want.end(), 0);
          EXPECT_EQ(all, want) << "cap " << cap;
          EXPECT_EQ(c.Len(), 0u);
        }
      },
      Opts());
}

// Go's TestMultiConsumer: a feeder, many workers ranging over a queue, and a
// closer; the count and the sum are conserved.
TEST_P(ChanProcsTest, MultiConsumer) {
  static constexpr int kWorkers = 23;
  static constexpr int kIters = 50000;
  std::int64_t expect = 0;
  for (int i = 0; i < kIters; ++i) expect += kPrimes[i % kPrimes.size()];
  gort::Run(
      [expect] {
        auto q = gort::MakeChan<int>(kWorkers * 3);
        auto r = gort::MakeChan<int>(kWorkers * 3);
        auto finished = gort::MakeChan<int>(kWorkers);
        for (int w = 0; w < kWorkers; ++w) {
          gort::Go([q, r, finished, w] {
            while (std::optional<int> v = q.RecvOk()) {
              // Disturb the order in which the workers take values.
              if (kPrimes[w % kPrimes.size()] == *v) gort::Gosched();
              r.Send(*v);
            }
            finished.Send(1);
          });
        }
        gort::Go([q, r, finished] {
          for (int i = 0; i < kIters; ++i) q.Send(kPrimes[i % kPrimes.size()]);
          q.Close();
          for (int w = 0; w < kWorkers; ++w) finished.Recv();
          r.Close();
        });
        int n = 0;
        std::int64_t sum = 0;
        while (std::optional<int> v = r.RecvOk()) {
          ++n;
          sum += *v;
        }
        EXPECT_EQ(n, kIters);
        EXPECT_EQ(sum, expect);
      },
      Opts());
}

// ---------------------------------------------------------------------------
// Ping-pong and pipelines (the loops of Go's channel benchmarks, as
// correctness tests).

TEST_P(ChanProcsTest, ChanToChanPing) {
  static constexpr int kRounds = 2000;
  gort::Run(
      [] {
        auto ping = gort::MakeChan<int>();
        auto pong = gort::MakeChan<int>();
        gort::Go([ping, pong] {
          for (int i = 0; i < kRounds; ++i) pong.Send(ping.Recv() + 1);
        });
        int wrong = 0;
        for (int i = 0; i < kRounds; ++i) {
          ping.Send(2 * i);
          if (pong.Recv() != 2 * i + 1) ++wrong;
        }
        EXPECT_EQ(wrong, 0);
      },
      Opts());
}

// Two goroutines take turns on one unbuffered channel, one starting with a
// receive and the other with a send (Go's ChanSync loop).
TEST_P(ChanProcsTest, ChanSyncAlternation) {
  static constexpr int kRounds = 1000;
  gort::Run(
      [] {
        auto c = gort::MakeChan<int>();
        auto done = gort::MakeChan<int>(2);
        for (int role = 0; role < 2; ++role) {
          gort::Go([c, done, role] {
            int bad = 0;
            for (int i = 0; i < kRounds; ++i) {
              if (role == 0) {
                if (c.Recv() != 2 * i) ++bad;
                c.Send(2 * i + 1);
              } else {
                c.Send(2 * i);
                if (c.Recv() != 2 * i + 1) ++bad;
              }
            }
            done.Send(bad);
          });
        }
        EXPECT_EQ(done.Recv(), 0);
        EXPECT_EQ(done.Recv(), 0);
      },
      Opts());
}

TEST_P(ChanProcsTest, BufferedPipelineKeepsOrder) {
  static constexpr int kStages = 8;
  static constexpr int kValues = 3000;
  gort::Run(
      [] {
        auto source = gort::MakeChan<int>(kPipelineCaps[0]);
        gort::Chan<int> in = source;
        for (int s = 0; s < kStages; ++s) {
          auto out = gort::MakeChan<int>(
              kPipelineCaps[(s + 1) % kPipelineCaps.size()]);
          gort::Go([in, out] {
            while (std::optional<int> v = in.RecvOk()) out.Send(*v + 1);
            out.Close();
          });
          in = out;
        }
        gort::Go([source] {
          for (int i = 0; i < kValues; ++i) source.Send(i);
          source.Close();
        });
        int n = 0, wrong = 0;
        while (std::optional<int> v = in.RecvOk()) {
          if (*v != n + kStages) ++wrong;
          ++n;
        }
        EXPECT_EQ(n, kValues);
        EXPECT_EQ(wrong, 0);
      },
      Opts());
}

// ---------------------------------------------------------------------------
// Element types.

TEST_P(ChanProcsTest, MoveOnlyPayloads) {
  static constexpr int kValues = 150;
  using Ptr = std::unique_ptr<int>;
  gort::Run(
      [] {
        for (int cap : {0, 1, 5}) {
          auto c = gort::MakeChan<Ptr>(cap);
          gort::Go([c] {
            for (int i = 0; i < kValues; ++i) {
              if (i % 2 == 0) {
                c.Send(std::make_unique<int>(i));
              } else {
                gort::Select(gort::SendCase(c, std::make_unique<int>(i)));
              }
            }
            c.Close();
          });
          int wrong = 0;
          for (int i = 0; i < kValues; ++i) {
            Ptr p;
            if (i % 3 == 0) {
              p = c.Recv();
            } else if (i % 3 == 1) {
              std::optional<Ptr> o = c.RecvOk();
              if (o) p = std::move(*o);
            } else {
              bool ok = false;
              EXPECT_EQ(gort::Select(gort::RecvCase(c, &p, &ok)), 0);
              EXPECT_TRUE(ok);
            }
            if (p == nullptr || *p != i) ++wrong;
          }
          EXPECT_EQ(wrong, 0) << "cap " << cap;
          // Closed and drained: null, nullopt, and a select that resets out.
          EXPECT_EQ(c.Recv(), nullptr);
          EXPECT_EQ(c.RecvOk(), std::nullopt);
          Ptr p = std::make_unique<int>(-1);
          bool ok = true;
          EXPECT_EQ(gort::Select(gort::RecvCase(c, &p, &ok)), 0);
          EXPECT_EQ(p, nullptr);
          EXPECT_FALSE(ok);
        }
        // A move-only value in a buffer that nobody receives is freed with
        // the channel (checked for leaks by the Tracked test below; here it
        // must at least not crash).
        auto left = gort::MakeChan<Ptr>(2);
        left.Send(std::make_unique<int>(1));
      },
      Opts());
}

TEST_P(ChanProcsTest, StringAndVectorPayloadsArriveIntact) {
  static constexpr int kValues = 300;
  gort::Run(
      [] {
        for (int cap : {0, 1, 7}) {
          auto strings = gort::MakeChan<std::string>(cap);
          auto vectors = gort::MakeChan<std::vector<int>>(cap);
          gort::Go([strings] {
            for (int i = 0; i < kValues; ++i) strings.Send(LongString(i));
            strings.Close();
          });
          gort::Go([vectors] {
            for (int i = 0; i < kValues; ++i) {
              if (i % 2 == 0) {
                vectors.Send(VectorFor(i));
              } else {
                gort::Select(gort::SendCase(vectors, VectorFor(i)));
              }
            }
            vectors.Close();
          });
          int bad_strings = 0, bad_vectors = 0;
          for (int i = 0; i < kValues; ++i) {
            if (strings.Recv() != LongString(i)) ++bad_strings;
            std::vector<int> v;
            bool ok = false;
            gort::Select(gort::RecvCase(vectors, &v, &ok));
            if (!ok || v != VectorFor(i)) ++bad_vectors;
          }
          EXPECT_EQ(bad_strings, 0) << "cap " << cap;
          EXPECT_EQ(bad_vectors, 0) << "cap " << cap;
          EXPECT_EQ(strings.Recv(), "");
          EXPECT_EQ(vectors.RecvOk(), std::nullopt);
        }
        // Select's send value type comes from the channel.
        auto s = gort::MakeChan<std::string>(1);
        EXPECT_EQ(gort::Select(gort::SendCase(s, "literal")), 0);
        EXPECT_EQ(s.Recv(), "literal");
      },
      Opts());
}

TEST_P(ChanProcsTest, PayloadsAreNeitherLeakedNorDestroyedTwice) {
  static constexpr int kValues = 200;
  Tracked::live = 0;
  Tracked::errors = 0;
  gort::Run(
      [] {
        for (int cap : {0, 1, 4}) {
          auto c = gort::MakeChan<Tracked>(cap);
          gort::Go([c] {
            for (int i = 0; i < kValues; ++i) {
              if (i % 2 == 0) {
                c.Send(Tracked(i));
              } else {
                gort::Select(gort::SendCase(c, Tracked(i)));
              }
            }
            c.Close();
          });
          int wrong = 0;
          for (int i = 0; i < kValues; ++i) {
            if (i % 3 == 0) {
              if (c.Recv().value() != i) ++wrong;
            } else if (i % 3 == 1) {
              std::optional<Tracked> t = c.RecvOk();
              if (!t || t->value() != i) ++wrong;
            } else {
              Tracked t;
              bool ok = false;
              gort::Select(gort::RecvCase(c, &t, &ok));
              if (!ok || t.value() != i) ++wrong;
            }
          }
          EXPECT_EQ(wrong, 0) << "cap " << cap;
          EXPECT_EQ(c.Recv().value(), 0);
        }

        const int before = Tracked::live.load();
        {
          // A send case that is not chosen drops its value exactly once.
          auto full = gort::MakeChan<Tracked>(1);
          full.Send(Tracked(1));
          auto nil = gort::Chan<Tracked>();
          EXPECT_EQ(gort::Select(gort::SendCase(full, Tracked(2)),
                                 gort::SendCase(nil, Tracked(3)),
                                 gort::DefaultCase()),
                    2);
          EXPECT_EQ(Tracked::live.load(), before + 1);  // Only the buffered.
          EXPECT_EQ(full.Recv().value(), 1);
          EXPECT_EQ(Tracked::live.load(), before);

          // Values left in a buffer are destroyed with the last handle.
          auto left = gort::MakeChan<Tracked>(5);
          for (int i = 0; i < 3; ++i) left.Send(Tracked(i));
          auto closed = gort::MakeChan<Tracked>(3);
          for (int i = 0; i < 3; ++i) closed.Send(Tracked(i));
          closed.Close();
          EXPECT_EQ(closed.Recv().value(), 0);
          EXPECT_EQ(Tracked::live.load(), before + 5);
        }
        EXPECT_EQ(Tracked::live.load(), before)
            << "values buffered in a dropped channel were not destroyed";
      },
      Opts());
  EXPECT_EQ(Tracked::errors.load(), 0) << "a Tracked was used after its end";
  EXPECT_EQ(Tracked::live.load(), 0);
}

// A plain send or receive that parks holds no reference to its channel
// (runtime/chan.h's hchan). The last handle dropped while a sender waits on
// a full buffer orphans the channel: it keeps its buffered value until Run
// abandons the sender, then goes with it. At GOMAXPROCS 1 the sender has
// parked by the time main's Gosched returns (it runs from runnext first),
// unless sysmon flagged it: it runs on main's time slice, and a flagged
// goroutine yields at its Send instead of parking there (on a loaded host
// a sanitizer build's slice can be 10 ms old by then). A Run in which
// sysmon flagged a goroutine does not count.
TEST_F(ChanTest, LastHandleDroppedWhileASenderWaitsOrphansTheChannel) {
  int counted = 0;
  for (int run = 0; run < 20 && counted < 1; run++) {
    Tracked::live = 0;
    Tracked::errors = 0;
    std::atomic<int> sent{0};
    std::int64_t flagged = -1;
    int liveAfterReset = -1;
    gort::Run(
        [&sent, &flagged, &liveAfterReset] {
          std::int64_t before = gort::ReadStats().preempt_requests;
          auto owner =
              std::make_unique<gort::Chan<Tracked>>(gort::MakeChan<Tracked>(1));
          owner->Send(Tracked(1));
          gort::Chan<Tracked>* ch = owner.get();
          gort::Go([ch, &sent] {
            sent++;
            ch->Send(Tracked(2));  // parks: the buffer is full
            sent++;
          });
          gort::Gosched();
          owner.reset();  // the last handle; the sender still waits on it
          liveAfterReset = Tracked::live.load();
          flagged = gort::ReadStats().preempt_requests - before;
        },
        gort_test::Procs(1));
    if (flagged != 0) continue;
    counted++;
    EXPECT_EQ(sent.load(), 1) << "the sender did not reach its Send";
    EXPECT_EQ(liveAfterReset, 2)
        << "the channel went with its last handle, a sender parked on it";
    EXPECT_EQ(Tracked::live.load(), 0)
        << "the orphaned channel's buffered value outlived the Run";
    EXPECT_EQ(Tracked::errors.load(), 0) << "a Tracked was used after its end";
  }
  EXPECT_EQ(counted, 1) << "sysmon flagged a goroutine in every Run";
}

// A receiver readied by a send and never run before main returns: the
// sender's handle was the last, so the channel is freed at once, and Run's
// end must not reach it through the receiver's sudog (sanitizer presets
// catch a use after free there; the next Run must be clean). A Run in which
// sysmon flagged a goroutine does not count: flagged, main yields at its
// Send and the receiver runs, which is preemption doing its job (a
// sanitizer build on a loaded host, main's thread kept off its CPU for
// 10 ms, sees that now and then), not the case under test.
TEST_F(ChanTest, ReceiverReadiedButNeverRunOutlivesItsFreedChannel) {
  int counted = 0;
  for (int run = 0; run < 20 && counted < 2; run++) {
    std::atomic<int> got{0};
    std::int64_t flagged = -1;
    gort::Run(
        [&got, &flagged] {
          std::int64_t before = gort::ReadStats().preempt_requests;
          auto c = std::make_unique<gort::Chan<int>>(gort::MakeChan<int>());
          gort::Chan<int>* ch = c.get();
          gort::Go([ch, &got] { got += ch->Recv(); });
          gort::Gosched();  // the receiver parks
          c->Send(7);       // readies it (runnext); main keeps the P
          c.reset();        // the last handle: freed, no waiter left
          flagged = gort::ReadStats().preempt_requests - before;
        },
        gort_test::Procs(1));
    if (flagged != 0) continue;
    counted++;
    EXPECT_EQ(got.load(), 0) << "the receiver ran before main returned";
  }
  EXPECT_EQ(counted, 2) << "sysmon flagged a goroutine in every Run";
}

TEST_F(ChanTest, LargeAndEmptyPayloads) {
  struct Big {
    std::array<std::uint64_t, 128> words;
  };
  struct Empty {};
  auto make_big = [](std::uint64_t seed) {
    Big b;
    for (std::size_t k = 0; k < b.words.size(); ++k) {
      b.words[k] = seed * 1000003u + k;
    }
    return b;
  };
  gort::Run(
      [make_big] {
        for (int cap : {0, 3}) {
          auto big = gort::MakeChan<Big>(cap);
          gort::Go([big, make_big] {
            for (std::uint64_t i = 0; i < 100; ++i) big.Send(make_big(i));
          });
          int wrong = 0;
          for (std::uint64_t i = 0; i < 100; ++i) {
            Big b = big.Recv();
            if (b.words != make_big(i).words) ++wrong;
          }
          EXPECT_EQ(wrong, 0) << "cap " << cap;

          auto signal = gort::MakeChan<Empty>(cap);
          auto done = gort::MakeChan<int>();
          gort::Go([signal, done] {
            int n = 0;
            while (signal.RecvOk()) ++n;
            done.Send(n);
          });
          for (int i = 0; i < 50; ++i) signal.Send(Empty{});
          signal.Close();
          EXPECT_EQ(done.Recv(), 50) << "cap " << cap;
        }
        auto counted = gort::MakeChan<Empty>(4);
        counted.Send({});
        counted.Send({});
        EXPECT_EQ(counted.Len(), 2u);
      },
      {.maxprocs = 2});
}

// for v := range ch: every value in order, ending once closed and drained,
// with a move-only element type; a break leaves the rest in the channel.
TEST_F(ChanTest, RangeReceivesUntilClosedAndDrained) {
  gort::Run([] {
    auto c = gort::MakeChan<std::unique_ptr<int>>();
    gort::Go([=] {
      for (int i = 0; i < 100; i++) c.Send(std::make_unique<int>(i));
      c.Close();
    });
    int want = 0;
    for (auto v : c) {
      ASSERT_NE(v, nullptr);
      EXPECT_EQ(*v, want);
      want++;
    }
    EXPECT_EQ(want, 100);
    // A closed, drained channel: the loop body never runs.
    for (auto v : c) ADD_FAILURE() << "received " << v.get();

    auto b = gort::MakeChan<int>(10);
    for (int i = 0; i < 5; i++) b.Send(i);
    b.Close();
    int seen = 0;
    for (int v : b) {
      if (v == 2) break;
      seen++;
    }
    EXPECT_EQ(seen, 2);
    EXPECT_EQ(b.Len(), 2u);  // 3 and 4 are still there
    std::vector<int> rest;
    for (int v : b) rest.push_back(v);
    EXPECT_EQ(rest, (std::vector<int>{3, 4}));
  });
}

}  // namespace
