// tests/proc_test.cc: tests of the scheduler core, in the spirit of Go's
// runtime/proc_test.go: Run, Go, Gosched, NumGoroutine, parallelism,
// fairness, work stealing, Sleep and stats. GOMAXPROCS and $GOMAXPROCS are
// in gomaxprocs_api_test.cc; the fatal paths (deadlock, an exception
// escaping a goroutine, stack overflow) in fatal_test.cc; syscalls and
// sysmon's retake and preemption requests in syscall_test.cc.
//
// Conventions: a test that could hang on a broken runtime waits in a loop
// bounded by kDeadline (or an iteration count) and then fails; whatever is
// left is caught by RunGuarded's watchdog. Timings are only ever asserted as
// lower bounds. Spin loops that must not yield read std::chrono::steady_clock,
// never a gort function.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gort/debug.h"
#include "gort/gort.h"
#include "gtest/gtest.h"
#include "spawn_chain.h"
#include "test_os.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using gort_test::DeadlineFromNow;
using gort_test::kDeadline;
using gort_test::Procs;
using gort_test::RunGuarded;
using gort_test::Scaled;
using gort_test::SpawnChain;
using gort_test::SpinFor;

// ---------------------------------------------------------------------------
// Run

TEST(RunTest, ReturnsAfterMainReturns) {
  int steps = 0;
  RunGuarded(
      [&] {
        steps++;
        gort::Gosched();
        steps++;
      },
      Procs(2));
  EXPECT_EQ(steps, 2);
}

TEST(RunTest, AcceptsMoveOnlyMainAndGoroutines) {
  auto value = std::make_unique<int>(7);
  int seen_by_main = 0;
  int seen_by_goroutine = 0;
  RunGuarded(
      [&, value = std::move(value)] {
        seen_by_main = *value;
        gort::WaitGroup wg;
        wg.Add(1);
        auto other = std::make_unique<int>(11);
        gort::Go([&, other = std::move(other)] {
          seen_by_goroutine = *other;
          wg.Done();
        });
        wg.Wait();
      },
      Procs(1));
  EXPECT_EQ(seen_by_main, 7);
  EXPECT_EQ(seen_by_goroutine, 11);
}

// alignedLocal: whether a 16-byte-aligned local really is aligned, and a
// varargs call with a double (which saves SSE registers with aligned
// stores on amd64): both break when a goroutine starts on a stack the ABI
// does not align (the context backend's newContext).
__attribute__((noinline)) bool alignedLocal(double x) {
  alignas(16) volatile char local[16] = {};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", x);
  return reinterpret_cast<std::uintptr_t>(&local[0]) % 16 == 0 &&
         std::string(buf) == "1.5";
}

TEST(RunTest, GoroutinesRunOnAbiAlignedStacks) {
  std::atomic<int> aligned{0};
  constexpr int kGoroutines = 8;
  RunGuarded(
      [&] {
        gort::WaitGroup wg;
        for (int i = 0; i < kGoroutines; i++) {
          wg.Add(1);
          gort::Go([&] {
            bool ok = alignedLocal(1.5);
            gort::Gosched();  // and after being switched out and back
            if (ok && alignedLocal(1.5)) aligned++;
            wg.Done();
          });
        }
        wg.Wait();
      },
      Procs(2));
  EXPECT_EQ(aligned.load(), kGoroutines);
}

TEST(RunTest, TwiceWithDifferentMaxprocs) {
  for (int procs : {1, 3, 2}) {
    int inside = 0;
    int finished = 0;
    RunGuarded(
        [&] {
          inside = gort::GOMAXPROCS(0);
          std::atomic<int> ran{0};
          gort::WaitGroup wg;
          wg.Add(10);
          for (int i = 0; i < 10; i++) {
            gort::Go([&] {
              ran.fetch_add(1);
              wg.Done();
            });
          }
          wg.Wait();
          finished = ran.load();
        },
        Procs(procs));
    EXPECT_EQ(inside, procs);
    EXPECT_EQ(finished, 10) << "maxprocs " << procs;
    // After Run, ReadStats describes the Run that ended.
    EXPECT_EQ(gort::ReadStats().gomaxprocs, procs);
  }
}

TEST(RunTest, AbandonsGoroutinesStillBlockedWhenMainReturns) {
  // What the abandoned goroutines refer to must outlive them: each Run's
  // set is kept, reachable, for the rest of the process.
  struct Abandoned {
    gort::WaitGroup never;
    gort::Mutex lock;
  };
  static auto* kept = new std::vector<std::unique_ptr<Abandoned>>;
  kept->push_back(std::make_unique<Abandoned>());
  gort::WaitGroup* never = &kept->back()->never;
  gort::Mutex* lock = &kept->back()->lock;
  never->Add(1);
  std::atomic<int> blocking{0};
  RunGuarded(
      [&] {
        lock->Lock();
        gort::Go([&] {
          blocking.fetch_add(1);
          never->Wait();
        });
        gort::Go([&] {
          blocking.fetch_add(1);
          lock->Lock();
        });
        gort::Go([&] {
          blocking.fetch_add(1);
          gort::Sleep(1h);
        });
        gort::Go([&] {
          blocking.fetch_add(1);
          gort::MakeChan<int>().Recv();
        });
        // At GOMAXPROCS 1 main runs again only once each has parked.
        const std::int64_t deadline = DeadlineFromNow();
        while (blocking.load() < 4 && gort::Nanotime() < deadline) {
          gort::Gosched();
        }
        EXPECT_EQ(gort::NumGoroutine(), 5);
      },
      Procs(1));
  EXPECT_EQ(blocking.load(), 4);
  // The next Run starts from scratch.
  int goroutines = 0;
  RunGuarded([&] { goroutines = gort::NumGoroutine(); }, Procs(2));
  EXPECT_EQ(goroutines, 1);
}

// When main returns, an abandoned goroutine's stack is unwound: destructors
// of its locals run (no leaks under LeakSanitizer), but nothing after its
// blocking call does.
TEST(RunTest, AbandonedGoroutinesUnwindTheirStacks) {
  struct Counted {
    std::atomic<int>* destroyed;
    ~Counted() { destroyed->fetch_add(1); }
  };
  std::atomic<int> destroyed{0};
  std::atomic<int> parked{0};
  std::atomic<int> resumed{0};
  RunGuarded(
      [&] {
        auto never = gort::MakeChan<int>();
        auto sel = gort::MakeChan<std::string>();
        for (int i = 0; i < 3; i++) {
          gort::Go([&, never, sel, i] {
            Counted c{&destroyed};
            auto local = std::make_unique<std::string>(1000, 'x');
            parked.fetch_add(1);
            if (i == 0) never.Recv();
            if (i == 1)
              gort::Select(gort::RecvCase(never), gort::SendCase(sel, "s"));
            if (i == 2) gort::Sleep(1h);
            resumed.fetch_add(1);
          });
        }
        const std::int64_t deadline = DeadlineFromNow();
        while (parked.load() < 3 && gort::Nanotime() < deadline) {
          gort::Gosched();
        }
      },
      Procs(1));
  EXPECT_EQ(parked.load(), 3);
  EXPECT_EQ(destroyed.load(), 3);
  EXPECT_EQ(resumed.load(), 0);
}

// A goroutine may park inside a catch block and resume on another thread:
// the exception being handled travels with it (the C++ runtime keeps it per
// thread), so a rethrow still finds it.
TEST(RunTest, ParkingInsideCatchBlockKeepsTheException) {
  std::atomic<int> rethrown{0};
  constexpr int kGoroutines = 8;
  constexpr int kRounds = 500;
  RunGuarded(
      [&] {
        auto ping = gort::MakeChan<int>();
        gort::WaitGroup wg;
        wg.Add(kGoroutines);
        for (int k = 0; k < kGoroutines; k++) {
          gort::Go([&, k, ping] {
            for (int i = 0; i < kRounds; i++) {
              try {
                throw std::runtime_error("round " + std::to_string(i));
              } catch (const std::runtime_error&) {
                gort::Gosched();
                if (k % 2 == 0) {
                  ping.Send(i);
                } else {
                  ping.Recv();
                }
                try {
                  throw;
                } catch (const std::runtime_error& e) {
                  if (std::string(e.what()) == "round " + std::to_string(i)) {
                    rethrown.fetch_add(1);
                  }
                }
              }
              EXPECT_EQ(std::uncaught_exceptions(), 0);
            }
            wg.Done();
          });
        }
        wg.Wait();
      },
      Procs(2));
  EXPECT_EQ(rethrown.load(), kGoroutines * kRounds);
}

TEST(RunTest, FromAnotherThread) {
  int procs = 0;
  std::thread t(
      [&] { RunGuarded([&] { procs = gort::GOMAXPROCS(0); }, Procs(2)); });
  t.join();
  EXPECT_EQ(procs, 2);
  RunGuarded([&] { procs = gort::GOMAXPROCS(0); }, Procs(1));
  EXPECT_EQ(procs, 1);
}

TEST(RunTest, SchedulingCallsOutsideRunPanic) {
  EXPECT_THROW(gort::Gosched(), gort::Panic);
  EXPECT_THROW(gort::Sleep(1ms), gort::Panic);
  EXPECT_THROW(gort::GOMAXPROCS(1), gort::Panic);
  EXPECT_THROW(gort::GOMAXPROCS(4), gort::Panic);
  // The same once a Run has come and gone.
  RunGuarded([] {}, Procs(1));
  EXPECT_THROW(gort::Gosched(), gort::Panic);
  EXPECT_THROW(gort::Sleep(1ms), gort::Panic);
  EXPECT_THROW(gort::GOMAXPROCS(2), gort::Panic);
}

// Run inside a Run is misuse like Go outside one: it throws gort::Panic
// before touching anything, and the outer Run goes on.
TEST(RunTest, RunInsideMainGoroutinePanics) {
  std::string what;
  bool inner_ran = false;
  int after = 0;
  RunGuarded(
      [&] {
        try {
          gort::Run([&] { inner_ran = true; });
        } catch (const gort::Panic& p) {
          what = p.what();
        }
        // The outer runtime still schedules goroutines.
        auto c = gort::MakeChan<int>();
        gort::Go([c] { c.Send(7); });
        after = c.Recv();
      },
      Procs(2));
  EXPECT_EQ(what, "gort: Run called inside gort::Run");
  EXPECT_FALSE(inner_ran);
  EXPECT_EQ(after, 7);
}

TEST(RunTest, RunInsideOtherGoroutinePanics) {
  std::string what;
  RunGuarded(
      [&] {
        auto done = gort::MakeChan<std::string>();
        gort::Go([done] {
          try {
            gort::Run([] {});
            done.Send("returned");
          } catch (const gort::Panic& p) {
            done.Send(p.what());
          }
        });
        what = done.Recv();
      },
      Procs(2));
  EXPECT_EQ(what, "gort: Run called inside gort::Run");
}

TEST(RunTest, ConcurrentRunFromAnotherThreadPanics) {
  std::string what;
  bool inner_ran = false;
  RunGuarded(
      [&] {
        // A plain thread (getg() is null there) while this Run is certainly
        // in progress: main waits for it in a blocking syscall.
        std::thread t([&] {
          try {
            gort::Run([&] { inner_ran = true; });
          } catch (const gort::Panic& p) {
            what = p.what();
          }
        });
        gort::BlockingSyscall([&] { t.join(); });
      },
      Procs(2));
  EXPECT_EQ(what, "gort: Run called while another Run is in progress");
  EXPECT_FALSE(inner_ran);
  // Nothing of the refused Run is left behind.
  int procs = 0;
  RunGuarded([&] { procs = gort::GOMAXPROCS(0); }, Procs(1));
  EXPECT_EQ(procs, 1);
}

// ---------------------------------------------------------------------------
// Goroutines and NumGoroutine

TEST(GoroutineTest, HundredThousandGoroutinesRunToCompletion) {
  // 100 spawners x 10 batches x 100 goroutines; each spawner waits for its
  // batch, so at most ~10 000 exist at once and dead Gs are reused.
  const int kSpawners = Scaled(100);
  constexpr int kBatches = 10;
  constexpr int kBatch = 100;
  const int kTotal = kSpawners * kBatches * kBatch;
  std::atomic<int> ran{0};
  int left_over = -1;
  RunGuarded(
      [&] {
        gort::WaitGroup all;
        all.Add(kSpawners);
        for (int s = 0; s < kSpawners; s++) {
          gort::Go([&] {
            for (int b = 0; b < kBatches; b++) {
              gort::WaitGroup batch;
              batch.Add(kBatch);
              for (int i = 0; i < kBatch; i++) {
                gort::Go([&] {
                  ran.fetch_add(1, std::memory_order_relaxed);
                  batch.Done();
                });
              }
              batch.Wait();
            }
            all.Done();
          });
        }
        all.Wait();
        // The spawners are past Done but may not have exited yet.
        const std::int64_t deadline = DeadlineFromNow();
        while (gort::NumGoroutine() > 1 && gort::Nanotime() < deadline) {
          gort::Gosched();
        }
        left_over = gort::NumGoroutine();
      },
      Procs(2));
  EXPECT_EQ(ran.load(), kTotal);
  EXPECT_EQ(left_over, 1);
}

class HundredThousandTest : public ::testing::TestWithParam<int> {};

TEST_P(HundredThousandTest, SpawnedByMainAllRun) {
  if (gort_test::UnderWine() && sizeof(void*) == 4) {
    // Goroutine stacks are fibres on Windows, and Wine reserves much more
    // than the 16 KiB asked for each (measured: 25 000 do not fit in 4 GiB).
    GTEST_SKIP() << "every G holds a fibre stack here; Wine's 32-bit fibre "
                    "stacks are too large for this many in 4 GiB";
  }
  const int kTotal = Scaled(100'000);
  std::atomic<int> ran{0};
  int left_over = -1;
  RunGuarded(
      [&] {
        gort::WaitGroup wg;
        wg.Add(kTotal);
        for (int i = 0; i < kTotal; i++) {
          gort::Go([&] {
            ran.fetch_add(1, std::memory_order_relaxed);
            wg.Done();
          });
        }
        wg.Wait();
        const std::int64_t deadline = DeadlineFromNow();
        while (gort::NumGoroutine() > 1 && gort::Nanotime() < deadline) {
          gort::Gosched();
        }
        left_over = gort::NumGoroutine();
      },
      [] {
        gort::Options options = Procs(GetParam());
        // 32-bit targets: 100 000 default (256 KiB) stack reservations do
        // not fit in a 4 GiB address space; 16 KiB ones do.
        if (sizeof(void*) == 4) options.stack_size = 16 << 10;
        return options;
      }());
  EXPECT_EQ(ran.load(), kTotal);
  EXPECT_EQ(left_over, 1);
}

INSTANTIATE_TEST_SUITE_P(Maxprocs, HundredThousandTest,
                         ::testing::Values(1, 2));

TEST(GoroutineTest, TenThousandAliveAtOnce) {
  const int kN = Scaled(10'000);
  std::atomic<int> started{0};
  std::atomic<int> ran{0};
  int started_seen = 0;
  int alive = 0;
  int left_over = -1;
  RunGuarded(
      [&] {
        gort::WaitGroup gate, done;
        gate.Add(1);
        done.Add(kN);
        for (int i = 0; i < kN; i++) {
          gort::Go([&] {
            started.fetch_add(1, std::memory_order_relaxed);
            gate.Wait();
            ran.fetch_add(1, std::memory_order_relaxed);
            done.Done();
          });
        }
        // Every one of them starts (so has a stack) and parks on the gate.
        const std::int64_t deadline = DeadlineFromNow();
        while (started.load() < kN && gort::Nanotime() < deadline) {
          gort::Sleep(100us);
        }
        started_seen = started.load();
        alive = gort::NumGoroutine();
        EXPECT_EQ(ran.load(), 0);
        gate.Done();
        done.Wait();
        while (gort::NumGoroutine() > 1 && gort::Nanotime() < deadline) {
          gort::Gosched();
        }
        left_over = gort::NumGoroutine();
      },
      Procs(2));
  EXPECT_EQ(started_seen, kN);
  EXPECT_EQ(alive, kN + 1);
  EXPECT_EQ(ran.load(), kN);
  EXPECT_EQ(left_over, 1);
}

class NumGoroutineTest : public ::testing::TestWithParam<int> {};

TEST_P(NumGoroutineTest, CountsFromGoUntilExit) {
  constexpr int kN = 10;
  std::vector<int> counts;
  int stats_goroutines = 0;
  int after_release = -1;
  RunGuarded(
      [&] {
        counts.push_back(gort::NumGoroutine());
        gort::WaitGroup gate, done;
        gate.Add(1);
        done.Add(kN);
        for (int i = 0; i < kN; i++) {
          gort::Go([&] {
            gate.Wait();
            done.Done();
          });
          // Counted as soon as Go returns, whether or not it has started.
          counts.push_back(gort::NumGoroutine());
        }
        stats_goroutines = gort::ReadStats().goroutines;
        gate.Done();
        done.Wait();
        const std::int64_t deadline = DeadlineFromNow();
        while (gort::NumGoroutine() > 1 && gort::Nanotime() < deadline) {
          gort::Gosched();
        }
        after_release = gort::NumGoroutine();
      },
      Procs(GetParam()));
  std::vector<int> want;
  for (int i = 0; i <= kN; i++) want.push_back(1 + i);
  EXPECT_EQ(counts, want);
  EXPECT_EQ(stats_goroutines, kN + 1);
  EXPECT_EQ(after_release, 1);
}

TEST(NumGoroutineExitTest, FinishedGoroutineIsNoLongerCounted) {
  int before = 0;
  int after = -1;
  RunGuarded(
      [&] {
        std::atomic<bool> ran{false};
        gort::Go([&] { ran.store(true); });
        before = gort::NumGoroutine();
        const std::int64_t deadline = DeadlineFromNow();
        while ((!ran.load() || gort::NumGoroutine() > 1) &&
               gort::Nanotime() < deadline) {
          gort::Gosched();
        }
        after = gort::NumGoroutine();
      },
      Procs(1));  // So the goroutine cannot finish before it is counted.
  EXPECT_EQ(before, 2);
  EXPECT_EQ(after, 1);
}

INSTANTIATE_TEST_SUITE_P(Maxprocs, NumGoroutineTest, ::testing::Values(1, 2));

// ---------------------------------------------------------------------------
// Gosched and parallelism

// UntilStopOrDeadline runs step until stop is set; at deadline it sets
// *timed_out and returns instead (a test's bounded wait).
template <typename F>
void UntilStopOrDeadline(const std::atomic<bool>& stop, std::int64_t deadline,
                         std::atomic<bool>* timed_out, F step) {
  while (!stop.load()) {
    if (gort::Nanotime() > deadline) {
      timed_out->store(true);
      return;
    }
    step();
  }
}

TEST(GoschedTest, TwoGoroutinesAlternateAtMaxprocs1) {
  constexpr int kRounds = 1000;
  // Yields a goroutine may spend waiting for its turn; a working Gosched
  // needs one or two, a Gosched that does not yield never gets there.
  constexpr int kMaxYields = 100'000;
  std::atomic<int> turn{0};
  std::atomic<bool> stuck{false};
  int rounds[2] = {0, 0};
  RunGuarded(
      [&] {
        gort::WaitGroup wg;
        wg.Add(2);
        for (int me = 0; me < 2; me++) {
          gort::Go([&, me] {
            for (int r = 0; r < kRounds && !stuck.load(); r++) {
              for (int yields = 0; turn.load() != me && !stuck.load();) {
                if (++yields > kMaxYields) {
                  stuck.store(true);
                  break;
                }
                gort::Gosched();
              }
              if (stuck.load()) break;
              rounds[me]++;
              turn.store(1 - me);
            }
            wg.Done();
          });
        }
        wg.Wait();
      },
      Procs(1));
  EXPECT_FALSE(stuck.load()) << "a goroutine waited " << kMaxYields
                             << " Gosched calls for the other one to run";
  EXPECT_EQ(rounds[0], kRounds);
  EXPECT_EQ(rounds[1], kRounds);
}

TEST(GoschedTest, YieldingGoroutinesMakeProgressTogether) {
  // Main yields until a goroutine that also only yields has run a few
  // times, then stops it; at GOMAXPROCS 1 each needs the other's Gosched.
  constexpr int kMaxYields = 1'000'000;
  std::atomic<bool> stop{false};
  std::atomic<int> yields{0};
  int main_yields = 0;
  RunGuarded(
      [&] {
        gort::WaitGroup wg;
        wg.Add(1);
        gort::Go([&] {
          while (!stop.load() && yields.load() < kMaxYields) {
            yields.fetch_add(1);
            gort::Gosched();
          }
          wg.Done();
        });
        while (yields.load() < 10 && main_yields < kMaxYields) {
          main_yields++;
          gort::Gosched();
        }
        stop.store(true);
        wg.Wait();
      },
      Procs(1));
  EXPECT_LT(main_yields, kMaxYields) << "the goroutine never ran";
  EXPECT_GE(yields.load(), 10);
  EXPECT_LT(yields.load(), kMaxYields) << "main never ran";
}

TEST(GoschedTest, AloneReturnsAtOnce) {
  int calls = 0;
  RunGuarded(
      [&] {
        for (int i = 0; i < 1000; i++) {
          gort::Gosched();
          calls++;
        }
      },
      Procs(1));
  EXPECT_EQ(calls, 1000);
}

// A goroutine alone on its P that only yields takes itself back off the
// global queue in the same hold of its lock (gosched_m), but a stop of the
// world must still stop it: main changes GOMAXPROCS while it yields. It
// gives up at a deadline far beyond what a stop needs, so a gosched_m that
// ignored the stop fails here instead of hanging.
TEST(GoschedTest, AloneOnItsPStillLetsTheWorldStop) {
  std::atomic<bool> stop{false};
  std::atomic<bool> timed_out{false};
  std::atomic<int> yields{0};
  RunGuarded(
      [&] {
        gort::WaitGroup wg;
        wg.Add(1);
        const std::int64_t deadline = DeadlineFromNow();
        gort::Go([&] {
          UntilStopOrDeadline(stop, deadline, &timed_out, [&] {
            yields.fetch_add(1);
            gort::Gosched();
          });
          wg.Done();
        });
        // Spin, not yield: the other P's M steals it from this P and runs
        // it there alone (a Gosched here would queue main for it to take).
        while (yields.load() == 0) {
        }
        for (int i = 0; i < 10 && !timed_out.load(); i++) {
          gort::GOMAXPROCS(i % 2 == 0 ? 1 : 2);
        }
        stop.store(true);
        wg.Wait();
      },
      Procs(2));
  EXPECT_FALSE(timed_out.load())
      << "GOMAXPROCS waited for a goroutine yielding alone on its P";
}

// At GOMAXPROCS 1 a chain of goroutines, each starting the next and
// exiting, keeps the P busy forever; the scheduler must still run the
// others (sysmon ends the chain's time slice). The one kept waiting sits in
// the global run queue (main, after Gosched) or in the P's local one (a
// goroutine started just before the chain).
TEST(FairnessTest, SpawnChainDoesNotStarveGlobalRunQueue) {
  std::atomic<bool> timed_out{false};
  std::atomic<int> links{0};
  RunGuarded(
      [&] {
        std::atomic<bool> stop{false};
        gort::WaitGroup chain;
        chain.Add(1);
        gort::Go(
            SpawnChain{&stop, &timed_out, &links, &chain, DeadlineFromNow()});
        gort::Gosched();
        stop.store(true);
        chain.Wait();
      },
      Procs(1));
  EXPECT_FALSE(timed_out.load())
      << "main did not run again while a spawn chain ran (" << links.load()
      << " links)";
}

TEST(FairnessTest, SpawnChainDoesNotStarveLocalRunQueue) {
  std::atomic<bool> timed_out{false};
  std::atomic<int> links{0};
  bool other_ran = false;
  RunGuarded(
      [&] {
        std::atomic<bool> stop{false};
        gort::WaitGroup chain, other;
        chain.Add(1);
        other.Add(1);
        gort::Go([&] {
          other_ran = true;
          other.Done();
        });
        gort::Go(
            SpawnChain{&stop, &timed_out, &links, &chain, DeadlineFromNow()});
        other.Wait();
        stop.store(true);
        chain.Wait();
      },
      Procs(1));
  EXPECT_TRUE(other_ran);
  EXPECT_FALSE(timed_out.load())
      << "a runnable goroutine did not run while a spawn chain ran ("
      << links.load() << " links)";
}

// A goroutine in the P's local queue behind a spawn chain (the chain took
// runnext and pushed it there) runs within 61 goroutine runs, as one in the
// global queue does, not only when sysmon preempts a link. Each trial starts
// a fresh chain; a trial in which sysmon asked for a preemption is not
// counted, since a preempted link lets the queue run anyway.
TEST(FairnessTest, SpawnChainLetsALocallyQueuedGoroutineRunWithoutSysmon) {
  constexpr int kTrials = 20;
  // The 61-run check, and once more for slack (the chain's goroutines are
  // most of the runs, not all).
  constexpr int kMaxLinks = 2 * 61;
  std::atomic<bool> timed_out{false};
  int unpreempted = 0;
  int max_links = 0;
  RunGuarded(
      [&] {
        for (int trial = 0; trial < kTrials && !timed_out.load(); trial++) {
          std::atomic<bool> stop{false};
          std::atomic<int> links{0};
          gort::WaitGroup chain, queued;
          int links_before = 0;
          bool preempted = false;
          chain.Add(1);
          queued.Add(1);
          std::int64_t requests = gort::ReadStats().preempt_requests;
          gort::Go([&] {
            links_before = links.load();
            preempted = gort::ReadStats().preempt_requests != requests;
            queued.Done();
          });
          // Takes runnext; the goroutine above goes to the local queue.
          gort::Go(
              SpawnChain{&stop, &timed_out, &links, &chain, DeadlineFromNow()});
          queued.Wait();
          stop.store(true);
          chain.Wait();
          if (preempted) continue;
          unpreempted++;
          max_links = std::max(max_links, links_before);
        }
      },
      Procs(1));
  EXPECT_FALSE(timed_out.load()) << "the spawn chain starved the queue";
  EXPECT_GE(unpreempted, kTrials / 2)
      << "the locally queued goroutine ran only when sysmon preempted the "
         "chain";
  EXPECT_LE(max_links, kMaxLinks)
      << "the spawn chain ran " << max_links
      << " goroutines before the locally queued one";
}

// Not only must the one waiting run again: a goroutine that yields over
// and over beside a spawn chain must be served every so often, counted in
// the chain's goroutines, not in sysmon's 10 ms time slices. The chain
// never advances the P's schedtick (each link inherits its parent's time
// slice through runnext), so a global queue checked every 61st schedtick
// would only be reached when sysmon preempts a link: about a hundred
// steps a second, thousands of links apart (Go 1.19 does worse:
// golang/go#52934). Counting every goroutine run bounds the gap by the
// 61-run check, whatever the machine's speed.
TEST(FairnessTest, SpawnChainLetsAYieldingGoroutineKeepPace) {
  constexpr int kSteps = 100;
  // 61 runs until the check, plus one more round if a preempted link was
  // ahead of the yielder in the global queue; four times that for slack.
  constexpr int kMaxLinksPerStep = 4 * 61;
  std::atomic<bool> timed_out{false};
  std::atomic<int> links{0};
  int steps = 0;
  int max_gap = 0;
  // Steps during which sysmon asked for no preemption: the 61-run check
  // alone served them. With it, schedtick moves at each step and sysmon
  // rarely asks; a step it did ask in is not counted (a preempted link
  // can move the yielder into the P's local queue behind runnext, where
  // it waits for the next check, or the one after if the preempted link
  // is ahead of it in the global queue). With the check on schedtick
  // almost every step needs sysmon (all but about one in 61).
  int unpreempted_steps = 0;
  RunGuarded(
      [&] {
        std::atomic<bool> stop{false};
        gort::WaitGroup chain, yielder;
        chain.Add(1);
        yielder.Add(1);
        gort::Go(
            SpawnChain{&stop, &timed_out, &links, &chain, DeadlineFromNow()});
        gort::Go([&] {
          for (; steps < kSteps && !timed_out.load(); steps++) {
            int before = links.load();
            std::int64_t requests = gort::ReadStats().preempt_requests;
            gort::Gosched();
            if (gort::ReadStats().preempt_requests != requests) continue;
            unpreempted_steps++;
            max_gap = std::max(max_gap, links.load() - before);
          }
          yielder.Done();
        });
        yielder.Wait();
        stop.store(true);
        chain.Wait();
      },
      Procs(1));
  EXPECT_FALSE(timed_out.load()) << "the spawn chain starved the yielder";
  EXPECT_EQ(steps, kSteps);
  EXPECT_GE(unpreempted_steps, kSteps / 2)
      << "the yielder ran only when sysmon preempted the chain";
  EXPECT_LE(max_gap, kMaxLinksPerStep)
      << "the spawn chain ran " << max_gap
      << " goroutines between two turns of a yielding goroutine";
}

TEST(FairnessTest, ChannelPingPongDoesNotStarveOthers) {
  // Two goroutines hand a value back and forth; each wakes the other into
  // the P's run-next slot, which inherits the time slice.
  std::atomic<bool> timed_out{false};
  RunGuarded(
      [&] {
        std::atomic<bool> stop{false};
        auto ping = gort::MakeChan<int>();
        auto pong = gort::MakeChan<int>();
        gort::WaitGroup players;
        players.Add(2);
        const std::int64_t deadline = DeadlineFromNow();
        gort::Go([&] {
          UntilStopOrDeadline(stop, deadline, &timed_out, [&] {
            ping.Send(1);
            pong.Recv();
          });
          ping.Send(0);
          players.Done();
        });
        gort::Go([&] {
          while (ping.Recv() != 0) pong.Send(1);
          players.Done();
        });
        gort::Gosched();
        stop.store(true);
        players.Wait();
      },
      Procs(1));
  EXPECT_FALSE(timed_out.load())
      << "main did not run again while two goroutines played ping-pong";
}

// Starts n goroutines at GOMAXPROCS n that each wait, without ever yielding,
// until all n are running: only true parallelism lets them finish.
void ExpectParallel(int n) {
  constexpr int kRounds = 3;
  std::atomic<int> timed_out{0};
  std::atomic<int> finished{0};
  RunGuarded(
      [&] {
        for (int round = 0; round < kRounds && timed_out.load() == 0; round++) {
          std::atomic<int> arrived{0};
          gort::WaitGroup wg;
          wg.Add(n);
          const auto deadline = std::chrono::steady_clock::now() + kDeadline;
          for (int i = 0; i < n; i++) {
            gort::Go([&] {
              arrived.fetch_add(1);
              while (arrived.load() < n) {
                if (std::chrono::steady_clock::now() > deadline) {
                  timed_out.fetch_add(1);
                  break;
                }
              }
              finished.fetch_add(1);
              wg.Done();
            });
          }
          wg.Wait();
        }
      },
      Procs(n));
  EXPECT_EQ(timed_out.load(), 0)
      << "goroutines at GOMAXPROCS " << n << " did not all run at once";
  EXPECT_EQ(finished.load() % n, 0);
}

TEST(ParallelismTest, TwoGoroutinesRunAtOnceAtMaxprocs2) { ExpectParallel(2); }

TEST(ParallelismTest, FourGoroutinesRunAtOnceAtMaxprocs4) { ExpectParallel(4); }

TEST(StealTest, IdlePStealsFromBusyP) {
  constexpr int kWorkers = 64;
  gort::Stats stats;
  std::atomic<int> ran{0};
  RunGuarded(
      [&] {
        const std::int64_t deadline = DeadlineFromNow();
        do {
          // One goroutine fills its own P's run queue with CPU-bound work;
          // the other P has nothing unless it steals.
          gort::WaitGroup round;
          round.Add(1);
          gort::Go([&] {
            gort::WaitGroup workers;
            workers.Add(kWorkers);
            for (int i = 0; i < kWorkers; i++) {
              gort::Go([&] {
                SpinFor(100us);
                ran.fetch_add(1);
                workers.Done();
              });
            }
            workers.Wait();
            round.Done();
          });
          round.Wait();
        } while (gort::ReadStats().steals == 0 && gort::Nanotime() < deadline);
        stats = gort::ReadStats();
      },
      Procs(2));
  EXPECT_GT(stats.steals, 0);
  EXPECT_GE(stats.stolen, stats.steals);
  EXPECT_EQ(ran.load() % kWorkers, 0);
  EXPECT_GT(ran.load(), 0);
}

// ---------------------------------------------------------------------------
// Sleep

TEST(SleepTest, SleepsAtLeastTheDuration) {
  std::vector<std::int64_t> elapsed;
  const std::vector<std::chrono::nanoseconds> durations = {100us, 1ms, 5ms,
                                                           20ms};
  RunGuarded(
      [&] {
        for (auto d : durations) {
          std::int64_t start = gort::Nanotime();
          gort::Sleep(d);
          elapsed.push_back(gort::Nanotime() - start);
        }
      },
      Procs(1));
  ASSERT_EQ(elapsed.size(), durations.size());
  for (std::size_t i = 0; i < durations.size(); i++) {
    EXPECT_GE(elapsed[i], durations[i].count());
  }
}

TEST(SleepTest, ZeroOrNegativeReturns) {
  int calls = 0;
  RunGuarded(
      [&] {
        gort::Sleep(0ns);
        calls++;
        gort::Sleep(-5ms);
        calls++;
      },
      Procs(1));
  EXPECT_EQ(calls, 2);
}

class ManySleepersTest : public ::testing::TestWithParam<int> {};

TEST_P(ManySleepersTest, AllWakeAfterTheirDurations) {
  constexpr int kN = 1000;
  std::atomic<int> woke{0};
  std::atomic<int> early{0};
  RunGuarded(
      [&] {
        gort::WaitGroup wg;
        wg.Add(kN);
        for (int i = 0; i < kN; i++) {
          gort::Go([&, i] {
            const auto d = std::chrono::microseconds(500 * (i % 20 + 1));
            std::int64_t start = gort::Nanotime();
            gort::Sleep(d);
            if (gort::Nanotime() - start <
                std::chrono::nanoseconds(d).count()) {
              early.fetch_add(1);
            }
            woke.fetch_add(1);
            wg.Done();
          });
        }
        // Only sleepers exist while main waits: not a deadlock.
        wg.Wait();
      },
      Procs(GetParam()));
  EXPECT_EQ(woke.load(), kN);
  EXPECT_EQ(early.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Maxprocs, ManySleepersTest,
                         ::testing::Values(1, 2, 4));

// ---------------------------------------------------------------------------
// Stats, usleep modes, stacks, the clock

TEST(StatsTest, DescribeTheLastRun) {
  RunGuarded([] { gort::GOMAXPROCS(3); }, Procs(2));
  gort::Stats stats = gort::ReadStats();
  EXPECT_EQ(stats.gomaxprocs, 3);
  EXPECT_GE(stats.threads, 1);
  EXPECT_NE(stats.usleep, gort::UsleepMode::kAuto);
}

TEST(StatsTest, UsleepModeInEffect) {
  gort::Options options = Procs(1);
  options.usleep = gort::UsleepMode::kLowRes;
  gort::UsleepMode inside = gort::UsleepMode::kAuto;
  RunGuarded([&] { inside = gort::ReadStats().usleep; }, options);
  EXPECT_EQ(inside, gort::UsleepMode::kLowRes);
  EXPECT_EQ(gort::ReadStats().usleep, gort::UsleepMode::kLowRes);

  options.usleep = gort::UsleepMode::kHighRes;
  RunGuarded([&] { inside = gort::ReadStats().usleep; }, options);
  // Linux has it unless something (a seccomp filter) denies timer slack.
  if (gort_test::HaveHighResUsleep()) {
    EXPECT_EQ(inside, gort::UsleepMode::kHighRes);
  } else {
    EXPECT_EQ(inside, gort::UsleepMode::kLowRes);
  }

  options.usleep = gort::UsleepMode::kAuto;
  RunGuarded([&] { inside = gort::ReadStats().usleep; }, options);
  EXPECT_NE(inside, gort::UsleepMode::kAuto);
}

TEST(StatsTest, DebugUsleepSleepsAtLeastTheDuration) {
  auto start = std::chrono::steady_clock::now();
  gort::debug::Usleep(2000);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 2ms);
  std::int64_t elapsed = 0;
  RunGuarded(
      [&] {
        std::int64_t t0 = gort::Nanotime();
        gort::debug::Usleep(2000);
        elapsed = gort::Nanotime() - t0;
      },
      Procs(1));
  EXPECT_GE(elapsed, 2'000'000);
}

// Writes to `bytes` of the calling goroutine's stack.
__attribute__((noinline)) int UseStack(std::size_t bytes) {
  volatile char* buf = static_cast<volatile char*>(__builtin_alloca(bytes));
  for (std::size_t i = 0; i < bytes; i += 256) buf[i] = static_cast<char>(i);
  return buf[bytes / 2];
}

TEST(StackTest, StackSizeOptionGivesLargerStacks) {
  gort::Options options = Procs(2);
  options.stack_size = 4 << 20;
  std::atomic<int> done{0};
  RunGuarded(
      [&] {
        UseStack(2 << 20);
        gort::WaitGroup wg;
        wg.Add(4);
        for (int i = 0; i < 4; i++) {
          gort::Go([&] {
            UseStack(2 << 20);
            done.fetch_add(1);
            wg.Done();
          });
        }
        wg.Wait();
      },
      options);
  EXPECT_EQ(done.load(), 4);
}

TEST(NanotimeTest, IsMonotonic) {
  std::int64_t last = gort::Nanotime();
  for (int i = 0; i < 100'000; i++) {
    std::int64_t now = gort::Nanotime();
    ASSERT_GE(now, last);
    last = now;
  }
  std::int64_t t0 = gort::Nanotime();
  std::this_thread::sleep_for(2ms);
  EXPECT_GT(gort::Nanotime(), t0);
}

}  // namespace
