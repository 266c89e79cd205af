// Tests of gort::Select: Go's select statement semantics (choice among ready
// cases, default, blocking, nil and closed channels, the same channel in
// several cases, uniform random choice) and the select tests of Go's
// runtime/chan_test.go (self-select, stress, non-blocking races).
//
// Rules these tests keep:
//  * No result depends on timing. Statistical checks use bounds whose failure
//    probability is at most one in a million (Go's fairness bound, see
//    ExpectFairShare) or astronomically small (see each test).
//  * State that a goroutine may still reference when Run returns lives in the
//    test body, outside Run.
//  * SCOPED_TRACE is not used inside goroutines (its stack is thread-local
//    and a goroutine may move between threads). Parking inside a catch block
//    is fine: the exception state moves with the goroutine (runtime/gogo.cc;
//    proc_test's RunTest.ParkingInsideCatchBlockKeepsTheException).
//  * A watchdog turns a hang into a named failure.
#include "gort/select.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
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

#include "gort/chan.h"
#include "gort/runtime.h"
#include "gort/time.h"
#include "gtest/gtest.h"
#include "panic_message.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;

class SelectTest : public gort_test::WatchedTest {};

class SelectDeathTest : public SelectTest {};

// Parameterized by GOMAXPROCS.
class SelectProcsTest : public gort_test::ProcsTest {};

INSTANTIATE_TEST_SUITE_P(Procs, SelectProcsTest, testing::Values(1, 2, 4),
                         gort_test::ProcsName);

using gort_test::PanicMessage;

// ---------------------------------------------------------------------------
// Choosing a case.

TEST_F(SelectTest, ReceiveCaseRunsWhenReady) {
  gort::Run([] {
    auto a = gort::MakeChan<int>(1);
    auto b = gort::MakeChan<int>(1);
    b.Send(7);
    int va = -1, vb = -1;
    bool oka = true, okb = false;
    EXPECT_EQ(gort::Select(gort::RecvCase(a, &va, &oka),
                           gort::RecvCase(b, &vb, &okb)),
              1);
    EXPECT_EQ(vb, 7);
    EXPECT_TRUE(okb);
    EXPECT_EQ(va, -1);  // Untouched.
    EXPECT_TRUE(oka);   // Untouched.
    EXPECT_EQ(b.Len(), 0u);
    // A receive case may omit out and ok.
    a.Send(8);
    EXPECT_EQ(gort::Select(gort::RecvCase(b), gort::RecvCase(a)), 1);
    EXPECT_EQ(a.Len(), 0u);
  });
}

TEST_F(SelectTest, SendCaseRunsWhenThereIsRoom) {
  gort::Run([] {
    auto full = gort::MakeChan<int>(1);
    full.Send(1);
    auto room = gort::MakeChan<int>(1);
    EXPECT_EQ(gort::Select(gort::SendCase(full, 2), gort::SendCase(room, 3)),
              1);
    EXPECT_EQ(room.Recv(), 3);
    EXPECT_EQ(full.Len(), 1u);
    EXPECT_EQ(full.Recv(), 1);
    // Mixed: the only ready case is a send.
    auto empty = gort::MakeChan<int>(1);
    int v = -1;
    EXPECT_EQ(gort::Select(gort::RecvCase(empty, &v), gort::SendCase(room, 4)),
              1);
    EXPECT_EQ(v, -1);
    EXPECT_EQ(room.Recv(), 4);
  });
}

TEST_F(SelectTest, DefaultRunsOnlyWhenNothingIsReady) {
  gort::Run([] {
    auto a = gort::MakeChan<int>(1);
    auto b = gort::MakeChan<int>();
    int v = -1;
    bool ok = true;
    // The result is the argument index, wherever the default stands.
    EXPECT_EQ(gort::Select(gort::RecvCase(a, &v, &ok), gort::DefaultCase()), 1);
    EXPECT_EQ(gort::Select(gort::DefaultCase(), gort::RecvCase(a, &v, &ok)), 0);
    EXPECT_EQ(gort::Select(gort::RecvCase(a, &v, &ok), gort::DefaultCase(),
                           gort::SendCase(b, 5)),
              1);
    EXPECT_EQ(v, -1);
    EXPECT_TRUE(ok);
    EXPECT_EQ(gort::Select(gort::DefaultCase()), 0);
    // Once a case is ready it wins over the default, in any position.
    for (int i = 0; i < 50; ++i) {
      a.Send(i);
      EXPECT_EQ(gort::Select(gort::DefaultCase(), gort::SendCase(b, 5),
                             gort::RecvCase(a, &v, &ok)),
                2);
      EXPECT_EQ(v, i);
      EXPECT_TRUE(ok);
    }
    EXPECT_EQ(gort::Select(gort::SendCase(a, 9), gort::DefaultCase()), 0);
    EXPECT_EQ(a.Recv(), 9);
  });
}

TEST_P(SelectProcsTest, BlockedSelectWakesForTheCaseThatBecomesReady) {
  gort::Run(
      [] {
        for (int round = 0; round < 100; ++round) {
          auto a = gort::MakeChan<int>();
          auto b = gort::MakeChan<int>(round % 2);
          auto c = gort::MakeChan<int>();
          const int which = round % 3;
          gort::Go([a, b, c, which, round] {
            if (which == 0) a.Send(round);
            if (which == 1) b.Send(round);
            if (which == 2) {
              EXPECT_EQ(c.Recv(), -round);
            }
          });
          int va = -1, vb = -1;
          int chosen =
              gort::Select(gort::RecvCase(a, &va), gort::RecvCase(b, &vb),
                           gort::SendCase(c, -round));
          EXPECT_EQ(chosen, which) << "round " << round;
          if (which == 0) {
            EXPECT_EQ(va, round);
          } else if (which == 1) {
            EXPECT_EQ(vb, round);
          }
          if (which != 0) {
            EXPECT_EQ(va, -1);
          }
          if (which != 1) {
            EXPECT_EQ(vb, -1);
          }
        }
      },
      Opts());
}

TEST_F(SelectTest, ReceiveFromClosedChannel) {
  gort::Run([] {
    auto closed = gort::MakeChan<int>();
    closed.Close();
    int v = 42;
    bool ok = true;
    EXPECT_EQ(gort::Select(gort::RecvCase(closed, &v, &ok)), 0);
    EXPECT_EQ(v, 0);
    EXPECT_FALSE(ok);

    // With values still buffered, those come first, with ok set.
    auto buffered = gort::MakeChan<std::string>(2);
    buffered.Send("one");
    buffered.Close();
    std::string s = "sentinel";
    ok = false;
    EXPECT_EQ(
        gort::Select(gort::RecvCase(buffered, &s, &ok), gort::DefaultCase()),
        0);
    EXPECT_EQ(s, "one");
    EXPECT_TRUE(ok);
    EXPECT_EQ(
        gort::Select(gort::RecvCase(buffered, &s, &ok), gort::DefaultCase()),
        0);
    EXPECT_EQ(s, "");
    EXPECT_FALSE(ok);

    // A closed channel is always ready: it beats the default every time.
    for (int i = 0; i < 100; ++i) {
      EXPECT_EQ(gort::Select(gort::DefaultCase(), gort::RecvCase(closed)), 1);
    }
  });
}

TEST_P(SelectProcsTest, CloseWakesBlockedSelect) {
  gort::Run(
      [] {
        for (int round = 0; round < 50; ++round) {
          auto a = gort::MakeChan<std::string>();
          auto b = gort::MakeChan<std::string>(round % 3);
          auto result = gort::MakeChan<int>(1);
          gort::Go([a, b, result] {
            std::string va = "a", vb = "b";
            bool oka = true, okb = true;
            int chosen = gort::Select(gort::RecvCase(a, &va, &oka),
                                      gort::RecvCase(b, &vb, &okb));
            // Only b closed: case 1 ran, a's outputs are untouched.
            result.Send(
                chosen == 1 && vb.empty() && !okb && va == "a" && oka ? 1 : 0);
          });
          if (round % 2 == 0) gort::Gosched();
          b.Close();
          EXPECT_EQ(result.Recv(), 1) << "round " << round;
        }
      },
      Opts());
}

TEST_F(SelectTest, CasesThatDoNotRunLeaveOutputsUntouched) {
  gort::Run([] {
    for (bool preset : {false, true}) {
      for (int i = 0; i < 100; ++i) {
        // Both receive cases are ready; exactly one runs.
        auto a = gort::MakeChan<std::string>(1);
        auto b = gort::MakeChan<std::string>(1);
        auto full = gort::MakeChan<std::string>(1);
        full.Send("full");
        a.Send("from a");
        b.Send("from b");
        std::string va = "untouched a", vb = "untouched b";
        bool oka = preset, okb = preset;
        int chosen = gort::Select(gort::RecvCase(a, &va, &oka),
                                  gort::SendCase(full, "never"),
                                  gort::RecvCase(b, &vb, &okb));
        ASSERT_TRUE(chosen == 0 || chosen == 2) << chosen;
        if (chosen == 0) {
          EXPECT_EQ(va, "from a");
          EXPECT_TRUE(oka);
          EXPECT_EQ(vb, "untouched b");
          EXPECT_EQ(okb, preset);
          EXPECT_EQ(b.Len(), 1u);  // b's value was not taken.
        } else {
          EXPECT_EQ(vb, "from b");
          EXPECT_TRUE(okb);
          EXPECT_EQ(va, "untouched a");
          EXPECT_EQ(oka, preset);
          EXPECT_EQ(a.Len(), 1u);
        }
        EXPECT_EQ(full.Recv(), "full");

        // A send runs: every receive output is untouched.
        auto room = gort::MakeChan<std::string>(1);
        auto empty = gort::MakeChan<std::string>();
        auto nil = gort::Chan<std::string>();
        va = "untouched a";
        oka = preset;
        EXPECT_EQ(gort::Select(gort::RecvCase(empty, &va, &oka),
                               gort::RecvCase(nil, &vb, &okb),
                               gort::SendCase(room, "sent")),
                  2);
        EXPECT_EQ(va, "untouched a");
        EXPECT_EQ(oka, preset);
        EXPECT_EQ(room.Recv(), "sent");

        // The default runs: same.
        EXPECT_EQ(
            gort::Select(gort::RecvCase(empty, &va, &oka), gort::DefaultCase()),
            1);
        EXPECT_EQ(va, "untouched a");
        EXPECT_EQ(oka, preset);
      }
    }
    // Move-only outputs too: an unchosen case keeps what its out held.
    auto p = gort::MakeChan<std::unique_ptr<int>>(1);
    auto q = gort::MakeChan<std::unique_ptr<int>>(1);
    q.Send(std::make_unique<int>(5));
    auto kept = std::make_unique<int>(1);
    auto got = std::make_unique<int>(2);
    EXPECT_EQ(gort::Select(gort::RecvCase(p, &kept), gort::RecvCase(q, &got)),
              1);
    ASSERT_NE(kept, nullptr);
    EXPECT_EQ(*kept, 1);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(*got, 5);
  });
}

// ---------------------------------------------------------------------------
// Nil channels, zero cases, the same channel twice.

TEST_F(SelectTest, NilChannelCasesAreNeverChosen) {
  gort::Run([] {
    gort::Chan<int> nil;
    auto ready = gort::MakeChan<int>(1);
    for (int i = 0; i < 500; ++i) {
      ready.Send(i);
      int v = -1, nv = -1;
      bool nok = true;
      EXPECT_EQ(
          gort::Select(gort::RecvCase(nil, &nv, &nok), gort::SendCase(nil, 1),
                       gort::RecvCase(ready, &v), gort::SendCase(nil, 2)),
          2);
      EXPECT_EQ(v, i);
      EXPECT_EQ(nv, -1);
      EXPECT_TRUE(nok);
      EXPECT_EQ(gort::Select(gort::SendCase(nil, 1), gort::RecvCase(nil),
                             gort::DefaultCase()),
                2);
    }
  });
}

TEST_F(SelectTest, SelectOnlyOnNilChannelsBlocksForever) {
  std::atomic<int> proceeded{0};  // Outside Run: the goroutines are abandoned.
  gort::Run(
      [&proceeded] {
        auto started = gort::MakeChan<int>(2);
        gort::Go([started, &proceeded] {
          started.Send(1);
          gort::Select();  // No cases: blocks forever.
          proceeded++;
        });
        gort::Go([started, &proceeded] {
          gort::Chan<int> nil;
          started.Send(1);
          gort::Select(gort::RecvCase(nil), gort::SendCase(nil, 1));
          proceeded++;
        });
        started.Recv();
        started.Recv();
        for (int i = 0; i < 10; ++i) gort::Gosched();
        gort::Sleep(5ms);
        EXPECT_EQ(proceeded.load(), 0);
      },
      {.maxprocs = 2});
  EXPECT_EQ(proceeded.load(), 0);
}

TEST_F(SelectDeathTest, EmptySelectInMainDeadlocks) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(gort::Run([] { gort::Select(); }), testing::ExitedWithCode(2),
              "fatal error: all goroutines are asleep - deadlock!");
}

TEST_F(SelectDeathTest, SelectOnNilChannelsInMainDeadlocks) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(gort::Run([] {
                gort::Chan<int> nil;
                gort::Select(gort::RecvCase(nil), gort::SendCase(nil, 1));
              }),
              testing::ExitedWithCode(2),
              "fatal error: all goroutines are asleep - deadlock!");
}

TEST_F(SelectTest, SendOnClosedChannelInSelectPanics) {
  gort::Run([] {
    auto c = gort::MakeChan<int>(1);
    c.Close();
    EXPECT_EQ(PanicMessage([&] { gort::Select(gort::SendCase(c, 1)); }),
              "send on closed channel");
    gort::Chan<int> nil;
    EXPECT_EQ(PanicMessage([&] {
                gort::Select(gort::RecvCase(nil), gort::SendCase(c, 1),
                             gort::DefaultCase());
              }),
              "send on closed channel");
  });
}

TEST_F(SelectTest, SameChannelInSeveralCases) {
  // Each of two identical ready cases must be chosen about half the time;
  // at least 300 of 1000 fails with probability below exp(-80) (Hoeffding).
  static constexpr int kTrials = 1000;
  gort::Run([] {
    auto c = gort::MakeChan<int>(1);
    std::array<int, 2> count = {0, 0};
    for (int i = 0; i < kTrials; ++i) {
      c.Send(i);
      int a = -1, b = -1;
      int chosen = gort::Select(gort::RecvCase(c, &a), gort::RecvCase(c, &b));
      ASSERT_TRUE(chosen == 0 || chosen == 1);
      ++count[chosen];
      EXPECT_EQ(chosen == 0 ? a : b, i);
      EXPECT_EQ(chosen == 0 ? b : a, -1);
      EXPECT_EQ(c.Len(), 0u);
    }
    EXPECT_GE(count[0], 300);
    EXPECT_GE(count[1], 300);

    // Two sends on the same channel: exactly one value goes in.
    for (int i = 0; i < 100; ++i) {
      int chosen = gort::Select(gort::SendCase(c, 10), gort::SendCase(c, 20));
      EXPECT_EQ(c.Len(), 1u);
      EXPECT_EQ(c.Recv(), chosen == 0 ? 10 : 20);
    }

    // A send and a receive on one channel with both possible.
    auto d = gort::MakeChan<int>(2);
    for (int i = 0; i < 100; ++i) {
      d.Send(1);
      int v = -1;
      int chosen = gort::Select(gort::SendCase(d, 2), gort::RecvCase(d, &v));
      if (chosen == 0) {
        EXPECT_EQ(d.Len(), 2u);
        EXPECT_EQ(v, -1);
        EXPECT_EQ(d.Recv(), 1);
        EXPECT_EQ(d.Recv(), 2);
      } else {
        EXPECT_EQ(chosen, 1);
        EXPECT_EQ(v, 1);
        EXPECT_EQ(d.Len(), 0u);
      }
    }
  });
}

// Go's TestSelectDuplicateChannel: a goroutine blocked in a select with the
// same channel in two cases is woken through a third; it must unlink itself
// from both queues so that a later receiver on that channel is found.
TEST_P(SelectProcsTest, DuplicateChannelWaiterUnlinksCleanly) {
  gort::Run(
      [] {
        for (int round = 0; round < 20; ++round) {
          auto c = gort::MakeChan<int>();
          auto d = gort::MakeChan<int>();
          auto e = gort::MakeChan<int>();
          auto b_got = gort::MakeChan<int>(1);
          gort::Go([c, d, e] {
            int chosen = gort::Select(gort::RecvCase(c), gort::RecvCase(c),
                                      gort::RecvCase(d));
            e.Send(chosen);
          });
          // The sleeps make the bad interleaving likely (A queued on c
          // before B); the outcome checked is the same in every order.
          gort::Sleep(1ms);
          gort::Go([c, b_got] { b_got.Send(c.Recv()); });
          gort::Sleep(1ms);
          d.Send(7);
          EXPECT_EQ(e.Recv(), 2);
          c.Send(8);
          EXPECT_EQ(b_got.Recv(), 8);
        }
      },
      Opts());
}

// ---------------------------------------------------------------------------
// Uniform choice, at the bound of Go's TestSelectFairness: with n trials
// among k always-ready cases, each case's share of the choices must lie
// within 4.891676 standard deviations (sqrt(p (1 - p) / n), p = 1/k) of 1/k,
// the two-sided six-nines confidence interval: a fair select fails one
// check in a million, and a bias of a few percent (55/45 at n = 10000)
// fails it.

constexpr int kFairTrials = 10000;
constexpr double kFairZ = 4.891676;  // Go's chan_test.go

// ExpectFairShare checks that `count` of n trials went to one of k equally
// likely cases, within Go's bound.
void ExpectFairShare(int count, int n, int k, const std::string& what) {
  const double p = 1.0 / k;
  const double share = static_cast<double>(count) / n;
  const double bound = kFairZ * std::sqrt(p * (1 - p) / n);
  EXPECT_LE(std::abs(share - p), bound)
      << what << ": " << count << " of " << n << " trials, expected share " << p
      << " +- " << bound;
}

TEST_F(SelectTest, FairAmongReadyReceives) {
  gort::Run([] {
    auto c1 = gort::MakeChan<int>(kFairTrials + 1);
    auto c2 = gort::MakeChan<int>(kFairTrials + 1);
    for (int i = 0; i < kFairTrials + 1; ++i) {
      c1.Send(1);
      c2.Send(2);
    }
    // Two more channels that are never ready, as in Go's test.
    auto c3 = gort::MakeChan<int>();
    auto c4 = gort::MakeChan<int>();
    std::array<int, 4> by_index = {0, 0, 0, 0};
    int mismatched = 0;
    for (int i = 0; i < kFairTrials; ++i) {
      int v = 0;
      int chosen = gort::Select(gort::RecvCase(c3, &v), gort::RecvCase(c4, &v),
                                gort::RecvCase(c1, &v), gort::RecvCase(c2, &v));
      ASSERT_TRUE(chosen >= 0 && chosen < 4) << chosen;
      ++by_index[chosen];
      if (v != chosen - 1) ++mismatched;
    }
    EXPECT_EQ(by_index[0], 0);
    EXPECT_EQ(by_index[1], 0);
    ExpectFairShare(by_index[2], kFairTrials, 2, "case 2");
    ExpectFairShare(by_index[3], kFairTrials, 2, "case 3");
    EXPECT_EQ(mismatched, 0);
    EXPECT_EQ(c1.Len() + c2.Len(), static_cast<std::size_t>(kFairTrials + 2));
  });
}

TEST_F(SelectTest, FairAmongReadySends) {
  gort::Run([] {
    auto c1 = gort::MakeChan<int>(kFairTrials);
    auto c2 = gort::MakeChan<int>(kFairTrials);
    std::array<int, 2> by_index = {0, 0};
    for (int i = 0; i < kFairTrials; ++i) {
      int chosen = gort::Select(gort::SendCase(c1, 1), gort::SendCase(c2, 2));
      ASSERT_TRUE(chosen == 0 || chosen == 1) << chosen;
      ++by_index[chosen];
    }
    ExpectFairShare(by_index[0], kFairTrials, 2, "send case 0");
    ExpectFairShare(by_index[1], kFairTrials, 2, "send case 1");
    EXPECT_EQ(c1.Len(), static_cast<std::size_t>(by_index[0]));
    EXPECT_EQ(c2.Len(), static_cast<std::size_t>(by_index[1]));
  });
}

TEST_F(SelectTest, FairBetweenReadySendAndReceive) {
  gort::Run([] {
    auto in = gort::MakeChan<int>(kFairTrials);
    for (int i = 0; i < kFairTrials; ++i) in.Send(i);
    auto out = gort::MakeChan<int>(kFairTrials);
    std::array<int, 2> by_index = {0, 0};
    for (int i = 0; i < kFairTrials; ++i) {
      int chosen = gort::Select(gort::RecvCase(in), gort::SendCase(out, i));
      ASSERT_TRUE(chosen == 0 || chosen == 1) << chosen;
      ++by_index[chosen];
    }
    ExpectFairShare(by_index[0], kFairTrials, 2, "receive case");
    ExpectFairShare(by_index[1], kFairTrials, 2, "send case");
    EXPECT_EQ(in.Len(), static_cast<std::size_t>(kFairTrials - by_index[0]));
    EXPECT_EQ(out.Len(), static_cast<std::size_t>(by_index[1]));
  });
}

// The poll order is a uniformly random permutation of the cases, not just a
// random first case: with ready cases separated by cases that are never
// ready, a select takes the first ready case of the order, and only a
// uniform permutation makes that uniform too (a random rotation of the case
// list, say, favours a ready case that follows never-ready ones; a
// single-cycle shuffle never leaves a case where it was). Each pattern marks
// which of 5 cases are ready.
TEST_F(SelectTest, RandomCaseOrderIsAUniformPermutation) {
  const std::vector<std::vector<bool>> patterns = {
      {true, false, false, false, true},
      {false, true, true, false, false},
      {true, false, true, true, false},
      {true, true, true, true, true},
  };
  gort::Run([&] {
    for (const std::vector<bool>& ready : patterns) {
      std::vector<gort::Chan<int>> chans;
      int k = 0;
      for (bool r : ready) {
        chans.push_back(gort::MakeChan<int>(kFairTrials + 1));
        if (r) {
          ++k;
          for (int i = 0; i < kFairTrials + 1; ++i) chans.back().Send(1);
        }
      }
      std::array<int, 5> by_index = {};
      for (int i = 0; i < kFairTrials; ++i) {
        int chosen =
            gort::Select(gort::RecvCase(chans[0]), gort::RecvCase(chans[1]),
                         gort::RecvCase(chans[2]), gort::RecvCase(chans[3]),
                         gort::RecvCase(chans[4]));
        ASSERT_TRUE(chosen >= 0 && chosen < 5) << chosen;
        ++by_index[chosen];
      }
      std::string name;
      for (bool r : ready) name += r ? 'R' : '.';
      for (int c = 0; c < 5; ++c) {
        if (ready[c]) {
          ExpectFairShare(by_index[c], kFairTrials, k,
                          name + " case " + std::to_string(c));
        } else {
          EXPECT_EQ(by_index[c], 0) << name << " case " << c;
        }
      }
    }
  });
}

// Fairness measured through a goroutine, as Go's TestSelectFairness does,
// at several GOMAXPROCS.
TEST_P(SelectProcsTest, FairThroughAGoroutine) {
  gort::Run(
      [] {
        auto c1 = gort::MakeChan<int>(kFairTrials + 1);
        auto c2 = gort::MakeChan<int>(kFairTrials + 1);
        for (int i = 0; i < kFairTrials + 1; ++i) {
          c1.Send(1);
          c2.Send(2);
        }
        auto c3 = gort::MakeChan<int>();
        auto c4 = gort::MakeChan<int>();
        auto out = gort::MakeChan<int>();
        auto done = gort::MakeChan<int>();
        auto exited = gort::MakeChan<int>(1);
        gort::Go([=] {
          for (;;) {
            int b = 0;
            gort::Select(gort::RecvCase(c3, &b), gort::RecvCase(c4, &b),
                         gort::RecvCase(c1, &b), gort::RecvCase(c2, &b));
            if (gort::Select(gort::SendCase(out, b), gort::RecvCase(done)) ==
                1) {
              break;
            }
          }
          exited.Send(1);
        });
        int cnt1 = 0, cnt2 = 0, other = 0;
        for (int i = 0; i < kFairTrials; ++i) {
          int b = out.Recv();
          if (b == 1) {
            ++cnt1;
          } else if (b == 2) {
            ++cnt2;
          } else {
            ++other;
          }
        }
        EXPECT_EQ(other, 0);
        ExpectFairShare(cnt1, kFairTrials, 2, "c1");
        EXPECT_EQ(cnt1 + cnt2, kFairTrials);
        done.Close();
        exited.Recv();
      },
      Opts());
}

// Go's TestPseudoRandomSend: a select with two sends of different values on
// one channel. With n = 1000 the chance that either value shows up 100 times
// or fewer is below exp(-2 * 400^2 / 1000) = exp(-320) (Hoeffding).
TEST_P(SelectProcsTest, PseudoRandomSend) {
  static constexpr int kN = 1000;
  gort::Run(
      [] {
        for (int cap : {0, kN}) {
          auto c = gort::MakeChan<int>(cap);
          auto got = gort::MakeChan<std::vector<int>>(1);
          gort::Go([c, got] {
            std::vector<int> l;
            for (int i = 0; i < kN; ++i) {
              gort::Gosched();
              l.push_back(c.Recv());
            }
            got.Send(std::move(l));
          });
          for (int i = 0; i < kN; ++i) {
            gort::Select(gort::SendCase(c, 1), gort::SendCase(c, 0));
          }
          std::vector<int> l = got.Recv();
          ASSERT_EQ(l.size(), static_cast<std::size_t>(kN));
          int ones = static_cast<int>(std::count(l.begin(), l.end(), 1));
          int zeros = static_cast<int>(std::count(l.begin(), l.end(), 0));
          EXPECT_EQ(ones + zeros, kN);
          EXPECT_GT(ones, kN / 10) << "cap " << cap;
          EXPECT_GT(zeros, kN / 10) << "cap " << cap;
        }
      },
      Opts());
}

// ---------------------------------------------------------------------------
// Concurrency.

// Go's TestSelfSelect: two goroutines each select between sending on and
// receiving from the same channel. On an unbuffered channel a goroutine must
// never receive its own send (a select cannot pair with itself); neither may
// the pair deadlock.
TEST_P(SelectProcsTest, SelfSelect) {
  static constexpr int kIters = 1000;
  gort::Run(
      [] {
        for (int cap : {0, 10}) {
          auto c = gort::MakeChan<int>(cap);
          auto done = gort::MakeChan<int>(2);
          for (int p = 0; p < 2; ++p) {
            gort::Go([c, done, p, cap] {
              int self_receives = 0;
              for (int i = 0; i < kIters; ++i) {
                int v = -1;
                int chosen;
                if (p == 0 || i % 2 == 0) {
                  chosen =
                      gort::Select(gort::SendCase(c, p), gort::RecvCase(c, &v));
                  if (chosen == 1 && cap == 0 && v == p) ++self_receives;
                } else {
                  chosen =
                      gort::Select(gort::RecvCase(c, &v), gort::SendCase(c, p));
                  if (chosen == 0 && cap == 0 && v == p) ++self_receives;
                }
              }
              done.Send(self_receives);
            });
          }
          EXPECT_EQ(done.Recv(), 0) << "cap " << cap;
          EXPECT_EQ(done.Recv(), 0) << "cap " << cap;
        }
      },
      Opts());
}

// Go's TestSelectStress: plain senders and receivers on four channels race
// with one goroutine that sends on all four in a select and one that receives
// from all four in a select, each dropping a channel (setting its case to nil)
// once it has moved its share. Everything must finish and every value sent
// must be received.
TEST_P(SelectProcsTest, Stress) {
  static constexpr int kN = 10000;
  // The channel index of each case of the sending select, in case order.
  static constexpr std::array<int, 4> kSendOrder = {3, 2, 0, 1};
  gort::Run(
      [] {
        std::array<gort::Chan<int>, 4> c = {
            gort::MakeChan<int>(), gort::MakeChan<int>(),
            gort::MakeChan<int>(2), gort::MakeChan<int>(3)};
        auto done = gort::MakeChan<std::int64_t>(10);
        for (int k = 0; k < 4; ++k) {
          gort::Go([ch = c[k], done, k] {
            for (int i = 0; i < kN; ++i) ch.Send(k + 1);
            done.Send(0);
          });
          gort::Go([ch = c[k], done, k] {
            std::int64_t sum = 0;
            for (int i = 0; i < kN; ++i) sum += ch.Recv();
            done.Send(sum);
          });
        }
        gort::Go([c, done] {
          std::array<int, 4> n = {0, 0, 0, 0};
          std::array<gort::Chan<int>, 4> c1 = c;
          for (int i = 0; i < 4 * kN; ++i) {
            int chosen = gort::Select(
                gort::SendCase(c1[3], 4), gort::SendCase(c1[2], 3),
                gort::SendCase(c1[0], 1), gort::SendCase(c1[1], 2));
            int k = kSendOrder[chosen];
            if (++n[k] == kN) c1[k] = gort::Chan<int>();
          }
          done.Send(0);
        });
        gort::Go([c, done] {
          std::array<int, 4> n = {0, 0, 0, 0};
          std::array<gort::Chan<int>, 4> c1 = c;
          std::int64_t sum = 0;
          for (int i = 0; i < 4 * kN; ++i) {
            int v = 0;
            int k = gort::Select(
                gort::RecvCase(c1[0], &v), gort::RecvCase(c1[1], &v),
                gort::RecvCase(c1[2], &v), gort::RecvCase(c1[3], &v));
            sum += v;
            if (++n[k] == kN) c1[k] = gort::Chan<int>();
          }
          done.Send(sum);
        });
        std::int64_t total = 0;
        for (int i = 0; i < 10; ++i) total += done.Recv();
        // Every channel k carried 2 * kN values equal to k + 1.
        EXPECT_EQ(total, 2 * kN * (1 + 2 + 3 + 4));
        for (const auto& ch : c) {
          EXPECT_EQ(ch.Len(), 0u);
        }
      },
      Opts());
}

// Many goroutines block in selects on one shared channel that never becomes
// ready and on their own channel (Go's ChanPopular loop): every wakeup must
// reach the right goroutine and unlink it from the shared queue.
TEST_P(SelectProcsTest, ManyGoroutinesWithASharedCase) {
  static constexpr int kGoroutines = 200;
  static constexpr int kRounds = 20;
  gort::Run(
      [] {
        auto shared = gort::MakeChan<bool>();
        std::vector<gort::Chan<int>> own;
        auto done = gort::MakeChan<int>(kGoroutines);
        for (int j = 0; j < kGoroutines; ++j) {
          own.push_back(gort::MakeChan<int>());
          gort::Go([shared, d = own.back(), done, j] {
            int bad = 0;
            for (int i = 0; i < kRounds; ++i) {
              int v = -1;
              int chosen =
                  gort::Select(gort::RecvCase(shared), gort::RecvCase(d, &v));
              if (chosen != 1 || v != j * kRounds + i) ++bad;
            }
            done.Send(bad);
          });
        }
        for (int i = 0; i < kRounds; ++i) {
          for (int j = 0; j < kGoroutines; ++j) own[j].Send(j * kRounds + i);
        }
        int bad = 0;
        for (int j = 0; j < kGoroutines; ++j) bad += done.Recv();
        EXPECT_EQ(bad, 0);
      },
      Opts());
}

// Producers and consumers select with timers that never fire and a close
// channel that is never closed beside the data channel (the loop of Go's
// BenchmarkSelectProdCons); nothing is lost.
TEST_P(SelectProcsTest, ProducerConsumerSelectWithIdleCases) {
  static constexpr int kPairs = 4;
  static constexpr int kPerProducer = 2000;
  gort::Run(
      [] {
        auto data = gort::MakeChan<int>(128);
        auto never_closed = gort::MakeChan<bool>();
        auto sums = gort::MakeChan<std::int64_t>(kPairs);
        for (int p = 0; p < kPairs; ++p) {
          gort::Go([data, never_closed] {
            auto timer = gort::After(std::chrono::hours(1));
            for (int i = 1; i <= kPerProducer; ++i) {
              gort::Select(gort::SendCase(data, i), gort::RecvCase(timer),
                           gort::RecvCase(never_closed));
            }
            data.Send(0);  // This producer is done.
          });
          gort::Go([data, never_closed, sums] {
            auto timer = gort::After(std::chrono::hours(1));
            std::int64_t sum = 0;
            for (;;) {
              int v = -1;
              gort::Select(gort::RecvCase(data, &v), gort::RecvCase(timer),
                           gort::RecvCase(never_closed));
              if (v == 0) break;
              sum += v;
            }
            sums.Send(sum);
          });
        }
        // Each consumer stops at one of the kPairs zeros; the last zero comes
        // after every producer's values, so all values are consumed.
        std::int64_t total = 0;
        for (int p = 0; p < kPairs; ++p) total += sums.Recv();
        EXPECT_EQ(total, static_cast<std::int64_t>(kPairs) * kPerProducer *
                             (kPerProducer + 1) / 2);
        EXPECT_EQ(data.Len(), 0u);
      },
      Opts());
}

// Waits, briefly and boundedly, until a goroutine just started has set
// *started. With more than one P this makes it likely that the goroutine is
// running on another thread while the caller goes on, which is when the
// races below can happen; what they check holds whether or not it is.
void AwaitStarted(const std::atomic<bool>& started) {
  if (gort::GOMAXPROCS(0) < 2) return;
  const std::int64_t give_up = gort::Nanotime() + 1000000;  // 1 ms.
  while (!started.load() && gort::Nanotime() < give_up) {
  }
}

// Go's TestNonblockRecvRace: while a non-blocking receive runs, the channel
// always holds a value or is closed, so the default case must never run.
TEST_P(SelectProcsTest, NonblockRecvRace) {
  static constexpr int kIters = 5000;
  gort::Run(
      [] {
        auto result = gort::MakeChan<int>(1);
        int defaults = 0;
        for (int i = 0; i < kIters; ++i) {
          auto c = gort::MakeChan<int>(1);
          c.Send(1);
          std::atomic<bool> started{false};
          gort::Go([c, result, &started] {
            started = true;
            result.Send(gort::Select(gort::RecvCase(c), gort::DefaultCase()));
          });
          AwaitStarted(started);
          c.Close();
          c.Recv();
          if (result.Recv() == 1) ++defaults;
        }
        EXPECT_EQ(defaults, 0);
      },
      Opts());
}

// Go's TestNonblockSelectRace: from the moment the goroutine starts, c1 or c2
// is ready, so its non-blocking select must never run the default case.
TEST_P(SelectProcsTest, NonblockSelectRace) {
  static constexpr int kIters = 5000;
  gort::Run(
      [] {
        auto result = gort::MakeChan<int>(1);
        int defaults = 0;
        for (int i = 0; i < kIters; ++i) {
          auto c1 = gort::MakeChan<int>(1);
          auto c2 = gort::MakeChan<int>(1);
          c1.Send(1);
          std::atomic<bool> started{false};
          gort::Go([c1, c2, result, &started] {
            started = true;
            result.Send(gort::Select(gort::RecvCase(c1), gort::RecvCase(c2),
                                     gort::DefaultCase()));
          });
          AwaitStarted(started);
          c2.Send(1);
          gort::Select(gort::RecvCase(c1), gort::DefaultCase());
          if (result.Recv() == 2) ++defaults;
        }
        EXPECT_EQ(defaults, 0);
      },
      Opts());
}

// Same, with close(c2) making c2 ready.
TEST_P(SelectProcsTest, NonblockSelectRaceWithClose) {
  static constexpr int kIters = 5000;
  gort::Run(
      [] {
        auto result = gort::MakeChan<int>(1);
        int defaults = 0;
        for (int i = 0; i < kIters; ++i) {
          auto c1 = gort::MakeChan<int>(1);
          auto c2 = gort::MakeChan<int>();
          c1.Send(1);
          std::atomic<bool> started{false};
          gort::Go([c1, c2, result, &started] {
            started = true;
            result.Send(gort::Select(gort::RecvCase(c1), gort::RecvCase(c2),
                                     gort::DefaultCase()));
          });
          AwaitStarted(started);
          c2.Close();
          gort::Select(gort::RecvCase(c1), gort::DefaultCase());
          if (result.Recv() == 2) ++defaults;
        }
        EXPECT_EQ(defaults, 0);
      },
      Opts());
}

// Selecting senders and receivers race with a close. There are more
// senders than the receivers and the buffer can take, so some senders are
// usually still blocked when the close comes, and receivers waiting for
// more are woken by it. Each sender either delivers its value or panics
// with "send on closed channel"; each receiver stops after its quota or at
// the close; main drains what is left in the buffer. The values received
// are exactly the values whose send succeeded.
TEST_P(SelectProcsTest, ClosesInFlight) {
  static constexpr int kTrials = 1000;
  static constexpr int kSenders = 6;
  static constexpr int kReceivers = 3;
  gort::Run(
      [] {
        int mismatches = 0, bad_messages = 0, bad_closes = 0;
        int panics = 0;
        for (int trial = 0; trial < kTrials; ++trial) {
          const int cap = trial % 3;
          const int quota = 1 + trial % 2;  // Receives per receiver, at most.
          auto c = gort::MakeChan<int>(cap);
          auto never = gort::MakeChan<int>();
          // A sender reports its value if sent, or -1 - value if it panicked.
          auto reports = gort::MakeChan<int>(kSenders);
          auto messages = gort::MakeChan<std::string>(kSenders);
          // A receiver reports its values, then -1000 if it saw the close
          // correctly or -2000 if the close gave a non-zero value.
          auto received = gort::MakeChan<std::vector<int>>(kReceivers);
          for (int s = 0; s < kSenders; ++s) {
            gort::Go([c, never, reports, messages, s] {
              const int value = 1 + s;
              std::string message = PanicMessage([&] {
                gort::Select(gort::RecvCase(never), gort::SendCase(c, value));
              });
              if (message == "no panic") {
                reports.Send(value);
              } else {
                messages.Send(std::move(message));
                reports.Send(-1 - value);
              }
            });
          }
          for (int r = 0; r < kReceivers; ++r) {
            gort::Go([c, never, received, quota] {
              std::vector<int> got;
              for (int i = 0; i < quota; ++i) {
                int v = -7;
                bool ok = true;
                gort::Select(gort::RecvCase(c, &v, &ok), gort::RecvCase(never));
                if (!ok) {
                  got.push_back(v == 0 ? -1000 : -2000);
                  break;
                }
                got.push_back(v);
              }
              received.Send(std::move(got));
            });
          }
          for (int i = 0; i < trial % 7; ++i) gort::Gosched();
          c.Close();

          std::vector<int> sent, got;
          int panicked = 0;
          for (int s = 0; s < kSenders; ++s) {
            int r = reports.Recv();
            if (r > 0) {
              sent.push_back(r);
            } else {
              ++panicked;
            }
          }
          panics += panicked;
          for (int i = 0; i < panicked; ++i) {
            if (messages.Recv() != "send on closed channel") ++bad_messages;
          }
          for (int r = 0; r < kReceivers; ++r) {
            for (int v : received.Recv()) {
              if (v == -2000) {
                ++bad_closes;
              } else if (v != -1000) {
                got.push_back(v);
              }
            }
          }
          while (std::optional<int> v = c.RecvOk()) got.push_back(*v);
          std::sort(sent.begin(), sent.end());
          std::sort(got.begin(), got.end());
          if (sent != got) ++mismatches;
        }
        EXPECT_EQ(mismatches, 0);
        EXPECT_EQ(bad_messages, 0);
        EXPECT_EQ(bad_closes, 0);
        // In the trials with a quota of 1, at most kReceivers + 2 of the
        // kSenders values find a taker, so at least one sender panics.
        EXPECT_GE(panics, kTrials / 2);
      },
      Opts());
}

// ---------------------------------------------------------------------------
// A move-only value in a send case is moved from only if its case runs
// (Go's `select { case ch <- job: default: keep(job) }`), however the select
// ends: another case, default, a panic, the end of the Run.

// A job whose destructor runs are counted in *dtors.
struct Job {
  std::atomic<int>* dtors;
  int id;
  ~Job() { dtors->fetch_add(1); }
};
using JobPtr = std::unique_ptr<Job>;

TEST_F(SelectTest, MoveOnlySendValueSurvivesWhenDefaultRuns) {
  std::atomic<int> dtors{0};
  gort::Run([&] {
    auto spill = gort::MakeChan<JobPtr>(1);
    JobPtr job(new Job{&dtors, 1});
    ASSERT_EQ(gort::Select(gort::SendCase(spill, JobPtr(new Job{&dtors, 0})),
                           gort::DefaultCase()),
              0);
    // spill is full: default runs and job is still the caller's.
    EXPECT_EQ(gort::Select(gort::SendCase(spill, std::move(job)),
                           gort::DefaultCase()),
              1);
    ASSERT_NE(job, nullptr);
    EXPECT_EQ(job->id, 1);
    EXPECT_EQ(dtors.load(), 0);
    EXPECT_EQ(spill.Recv()->id, 0);  // destroys job 0
    EXPECT_EQ(dtors.load(), 1);
    // Now there is room: the send runs and moves job into the channel.
    EXPECT_EQ(gort::Select(gort::SendCase(spill, std::move(job)),
                           gort::DefaultCase()),
              0);
    EXPECT_EQ(job, nullptr);
    EXPECT_EQ(dtors.load(), 1);
    EXPECT_EQ(spill.Recv()->id, 1);
    EXPECT_EQ(dtors.load(), 2);
  });
}

TEST_F(SelectTest, MoveOnlySendValueSurvivesWhenAnotherCaseRuns) {
  std::atomic<int> dtors{0};
  gort::Run([&] {
    auto blocked = gort::MakeChan<JobPtr>();  // no receiver: never ready
    auto ready = gort::MakeChan<int>(1);
    JobPtr job(new Job{&dtors, 7});
    for (int i = 0; i < 100; i++) {
      ready.Send(i);
      int v = -1;
      EXPECT_EQ(gort::Select(gort::SendCase(blocked, std::move(job)),
                             gort::RecvCase(ready, &v)),
                1);
      EXPECT_EQ(v, i);
      ASSERT_NE(job, nullptr);
    }
    // A blocked select woken for the other case leaves job too.
    auto wake = gort::MakeChan<int>();
    gort::Go([=] { wake.Send(1); });
    EXPECT_EQ(gort::Select(gort::SendCase(blocked, std::move(job)),
                           gort::RecvCase(wake)),
              1);
    ASSERT_NE(job, nullptr);
    EXPECT_EQ(job->id, 7);
    EXPECT_EQ(dtors.load(), 0);
    // And a blocked select whose send case is taken moves it exactly once.
    JobPtr got;
    auto done = gort::MakeChan<int>();
    gort::Go([&, blocked, done] {
      got = blocked.Recv();
      done.Send(1);
    });
    EXPECT_EQ(gort::Select(gort::SendCase(blocked, std::move(job)),
                           gort::RecvCase(ready)),
              0);
    done.Recv();
    EXPECT_EQ(job, nullptr);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->id, 7);
    EXPECT_EQ(dtors.load(), 0);
  });
  EXPECT_EQ(dtors.load(), 1);  // got, a local of main, destroyed it once
}

TEST_F(SelectTest, MoveOnlySendValueSurvivesASendOnClosedPanic) {
  std::atomic<int> dtors{0};
  gort::Run(
      [&] {
        auto closed = gort::MakeChan<JobPtr>(1);
        closed.Close();
        JobPtr job(new Job{&dtors, 3});
        EXPECT_EQ(PanicMessage([&] {
                    gort::Select(gort::SendCase(closed, std::move(job)),
                                 gort::DefaultCase());
                  }),
                  "send on closed channel");
        ASSERT_NE(job, nullptr);
        // A select blocked in a send case panics when another goroutine closes
        // the channel; the value is still the caller's.
        auto c = gort::MakeChan<JobPtr>();
        auto never = gort::MakeChan<int>();
        // With one P the goroutine runs once main blocks in the select.
        gort::Go([=] { c.Close(); });
        EXPECT_EQ(PanicMessage([&] {
                    gort::Select(gort::SendCase(c, std::move(job)),
                                 gort::RecvCase(never));
                  }),
                  "send on closed channel");
        ASSERT_NE(job, nullptr);
        EXPECT_EQ(job->id, 3);
        EXPECT_EQ(dtors.load(), 0);
      },
      gort::Options{.maxprocs = 1});
  EXPECT_EQ(dtors.load(), 1);
}

TEST_F(SelectTest, MoveOnlySendValueSurvivesTheEndOfRun) {
  std::atomic<int> dtors{0};
  JobPtr job(new Job{&dtors, 5});
  gort::Run(
      [&] {
        auto c = gort::MakeChan<JobPtr>();
        auto never = gort::MakeChan<int>();
        auto parked = gort::MakeChan<int>(1);
        gort::Go([&, c, never, parked] {
          parked.Send(1);
          gort::Select(gort::SendCase(c, std::move(job)),
                       gort::RecvCase(never));
          ADD_FAILURE() << "the select returned";
        });
        parked.Recv();
        // With one P, main runs again once the goroutine blocks in the
        // select; main returns and Run's end unwinds the goroutine.
      },
      gort::Options{.maxprocs = 1});
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->id, 5);
  EXPECT_EQ(dtors.load(), 0);
  job.reset();
  EXPECT_EQ(dtors.load(), 1);
}

// ---------------------------------------------------------------------------
// The handler form: OnRecv, OnSend, OnDefault run their handler for the case
// that runs, and only for it; Select still returns the index.

TEST_F(SelectTest, HandlersRunForTheChosenCaseOnly) {
  gort::Run([] {
    auto in = gort::MakeChan<int>(1);
    auto out = gort::MakeChan<std::string>(1);
    std::string calls;
    auto Step = [&] {
      return gort::Select(
          gort::OnRecv(in,
                       [&](int v, bool ok) {
                         calls += "recv(" + std::to_string(v) + "," +
                                  (ok ? "true" : "false") + ")";
                       }),
          gort::OnSend(out, std::string("x"), [&] { calls += "send"; }),
          gort::OnDefault([&] { calls += "default"; }));
    };
    // Only the send is ready.
    EXPECT_EQ(Step(), 1);
    EXPECT_EQ(calls, "send");
    EXPECT_EQ(out.Recv(), "x");
    out.Send("full");
    // Nothing is ready.
    calls.clear();
    EXPECT_EQ(Step(), 2);
    EXPECT_EQ(calls, "default");
    // Only the receive is ready.
    in.Send(7);
    calls.clear();
    EXPECT_EQ(Step(), 0);
    EXPECT_EQ(calls, "recv(7,true)");
    // A close runs the receive handler with T{} and false.
    in.Close();
    calls.clear();
    EXPECT_EQ(Step(), 0);
    EXPECT_EQ(calls, "recv(0,false)");
  });
}

TEST_F(SelectTest, HandlerFormsTakeTheValueOrNothing) {
  std::atomic<int> dtors{0};
  gort::Run([&] {
    auto jobs = gort::MakeChan<JobPtr>(1);
    auto ticks = gort::MakeChan<int>(1);
    JobPtr job(new Job{&dtors, 4});
    JobPtr got;
    ticks.Send(1);
    int ticked = 0;
    // The send is not ready (no room after the first): the tick wins and
    // job stays the caller's; then it is sent, then received by a handler
    // that takes it by value.
    jobs.Send(JobPtr(new Job{&dtors, 0}));
    EXPECT_EQ(gort::Select(gort::OnSend(jobs, std::move(job), [] {}),
                           gort::OnRecv(ticks, [&] { ticked++; })),
              1);
    EXPECT_EQ(ticked, 1);
    ASSERT_NE(job, nullptr);
    EXPECT_EQ(gort::Select(
                  gort::OnRecv(jobs, [&](JobPtr j) { EXPECT_EQ(j->id, 0); })),
              0);
    EXPECT_EQ(dtors.load(), 1);
    EXPECT_EQ(gort::Select(gort::OnSend(jobs, std::move(job), [] {}),
                           gort::OnDefault([] {})),
              0);
    EXPECT_EQ(job, nullptr);
    EXPECT_EQ(gort::Select(gort::OnRecv(jobs,
                                        [&](JobPtr j, bool ok) {
                                          EXPECT_TRUE(ok);
                                          got = std::move(j);
                                        })),
              0);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->id, 4);
    EXPECT_EQ(dtors.load(), 1);
  });
  EXPECT_EQ(dtors.load(), 2);
}

TEST_F(SelectTest, HandlerExceptionLeavesSelectAndDestroysTheValue) {
  std::atomic<int> dtors{0};
  gort::Run([&] {
    auto jobs = gort::MakeChan<JobPtr>(1);
    jobs.Send(JobPtr(new Job{&dtors, 1}));
    bool caught = false;
    try {
      gort::Select(gort::OnRecv(
          jobs, [](const JobPtr&) { throw std::runtime_error("handler"); }));
    } catch (const std::runtime_error&) {
      caught = true;
    }
    EXPECT_TRUE(caught);
    EXPECT_EQ(dtors.load(), 1);  // the received value was destroyed once
  });
}

TEST_F(SelectTest, HandlerFormLeavesALoopByIndex) {
  gort::Run([] {
    auto data = gort::MakeChan<int>(10);
    auto quit = gort::MakeChan<int>();
    for (int i = 1; i <= 5; i++) data.Send(i);
    gort::Go([=] {
      // quit is closed once data is drained: main receives all five first
      // only if it never picks quit too early, so close it after they are
      // taken.
      while (data.Len() > 0) gort::Gosched();
      quit.Close();
    });
    int sum = 0;
    for (;;) {
      if (gort::Select(gort::OnRecv(data, [&](int v) { sum += v; }),
                       gort::OnRecv(quit, [] {})) == 1) {
        break;
      }
    }
    EXPECT_EQ(sum, 15);
  });
}

}  // namespace
