// tests/gomaxprocs_api_test.cc: GOMAXPROCS as a program sets it, in the
// spirit of Go's runtime/proc_test.go: GOMAXPROCS(n) queries and changes it
// while goroutines run, spawn and sleep, and $GOMAXPROCS is read at each
// Run (a valid value is used, Options.maxprocs overrides it, an invalid or
// too large value warns). How the default follows CPU affinity and cgroup
// limits (Linux) is gomaxprocs_test.cc's.
//
// Conventions as in proc_test.cc: bounded waits (kDeadline), RunGuarded's
// watchdog, timings only as lower bounds.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "gomaxprocs_env.h"
#include "gort/gort.h"
#include "gtest/gtest.h"
#include "spawn_chain.h"
#include "test_os.h"
#include "watchdog.h"

namespace {

using gort_test::CpuCount;
using gort_test::DeadlineFromNow;
using gort_test::Procs;
using gort_test::RunGuarded;
using gort_test::RunWithGomaxprocsEnv;
using gort_test::SpawnChain;

// GOMAXPROCS with neither Options.maxprocs nor a valid $GOMAXPROCS.
int DefaultProcs() { return std::min(CpuCount(), 256); }

// Sets or unsets an environment variable for one scope.
class ScopedEnv {
 public:
  // value == nullptr unsets the variable.
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (old_.has_value()) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// Death tests fork after the runtime has made threads: re-exec instead.
class ThreadsafeDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// ---------------------------------------------------------------------------
// GOMAXPROCS

TEST(GomaxprocsTest, QueriesAndChanges) {
  std::vector<int> got;
  RunGuarded(
      [&] {
        got.push_back(gort::GOMAXPROCS(0));           // 2
        got.push_back(gort::GOMAXPROCS(-1));          // 2
        got.push_back(gort::GOMAXPROCS(4));           // 2
        got.push_back(gort::GOMAXPROCS(0));           // 4
        got.push_back(gort::ReadStats().gomaxprocs);  // 4
        got.push_back(gort::GOMAXPROCS(4));           // 4: unchanged
        got.push_back(gort::GOMAXPROCS(1));           // 4
        got.push_back(gort::GOMAXPROCS(0));           // 1
        got.push_back(gort::ReadStats().gomaxprocs);  // 1
      },
      Procs(2));
  EXPECT_EQ(got, (std::vector<int>{2, 2, 2, 4, 4, 4, 4, 1, 1}));
}

TEST(GomaxprocsTest, WorkCompletesAcrossChanges) {
  constexpr int kWorkers = 40;   // per batch
  constexpr int kSteps = 20;     // Gosched calls per worker
  constexpr int kSleepers = 10;  // per batch
  std::atomic<int> steps{0};
  std::atomic<int> woke{0};
  std::vector<int> previous;
  RunGuarded(
      [&] {
        gort::WaitGroup wg;
        auto spawn_batch = [&] {
          wg.Add(kWorkers + kSleepers);
          for (int i = 0; i < kWorkers; i++) {
            gort::Go([&] {
              for (int s = 0; s < kSteps; s++) {
                steps.fetch_add(1);
                gort::Gosched();
              }
              wg.Done();
            });
          }
          // Sleepers whose timers sit on Ps that may be destroyed below.
          for (int i = 0; i < kSleepers; i++) {
            gort::Go([&, i] {
              gort::Sleep(std::chrono::microseconds(200 * (i + 1)));
              woke.fetch_add(1);
              wg.Done();
            });
          }
        };
        spawn_batch();
        previous.push_back(gort::GOMAXPROCS(4));
        spawn_batch();
        previous.push_back(gort::GOMAXPROCS(1));
        spawn_batch();
        previous.push_back(gort::GOMAXPROCS(3));
        spawn_batch();
        previous.push_back(gort::GOMAXPROCS(2));
        wg.Wait();
        previous.push_back(gort::GOMAXPROCS(0));
      },
      Procs(2));
  EXPECT_EQ(previous, (std::vector<int>{2, 4, 1, 3, 2}));
  EXPECT_EQ(steps.load(), 4 * kWorkers * kSteps);
  EXPECT_EQ(woke.load(), 4 * kSleepers);
}

TEST(GomaxprocsTest, ConcurrentChangesWhileGoroutinesRunAndSpawn) {
  constexpr int kChangers = 2;
  constexpr int kChanges = 100;
  constexpr int kWorkers = 6;
  constexpr int kSteps = 500;
  std::atomic<int> steps{0};
  std::atomic<int> links{0};
  std::atomic<bool> chain_timed_out{false};
  int final_procs = 0;
  RunGuarded(
      [&] {
        std::atomic<bool> stop{false};
        gort::WaitGroup changers, workers, chain;
        chain.Add(1);
        gort::Go(SpawnChain{&stop, &chain_timed_out, &links, &chain,
                            DeadlineFromNow()});
        workers.Add(kWorkers);
        for (int i = 0; i < kWorkers; i++) {
          gort::Go([&] {
            for (int s = 0; s < kSteps; s++) {
              steps.fetch_add(1);
              gort::Gosched();
            }
            workers.Done();
          });
        }
        changers.Add(kChangers);
        for (int c = 0; c < kChangers; c++) {
          gort::Go([&, c] {
            for (int i = 0; i < kChanges; i++) {
              int n = 1 + (i + c) % 4;
              int before = gort::GOMAXPROCS(n);
              EXPECT_GE(before, 1);
              EXPECT_LE(before, 4);
            }
            changers.Done();
          });
        }
        changers.Wait();
        workers.Wait();
        stop.store(true);
        chain.Wait();
        final_procs = gort::GOMAXPROCS(0);
      },
      Procs(2));
  EXPECT_FALSE(chain_timed_out.load())
      << "the spawn chain starved the other goroutines";
  EXPECT_EQ(steps.load(), kWorkers * kSteps);
  EXPECT_GT(links.load(), 0);
  EXPECT_GE(final_procs, 1);
  EXPECT_LE(final_procs, 4);
}

// ---------------------------------------------------------------------------
// $GOMAXPROCS

TEST(GomaxprocsEnvTest, ValidValueIsUsed) {
  ScopedEnv env("GOMAXPROCS", "3");
  int procs = 0;
  RunGuarded([&] { procs = gort::GOMAXPROCS(0); });
  EXPECT_EQ(procs, 3);
}

TEST(GomaxprocsEnvTest, OptionsOverrideEnv) {
  ScopedEnv env("GOMAXPROCS", "3");
  int procs = 0;
  RunGuarded([&] { procs = gort::GOMAXPROCS(0); }, Procs(2));
  EXPECT_EQ(procs, 2);
}

TEST(GomaxprocsEnvTest, UnsetOrEmptyMeansCpuCount) {
  for (const char* value : {static_cast<const char*>(nullptr), ""}) {
    ScopedEnv env("GOMAXPROCS", value);
    int procs = 0;
    RunGuarded([&] { procs = gort::GOMAXPROCS(0); });
    EXPECT_EQ(procs, DefaultProcs())
        << "GOMAXPROCS=" << (value == nullptr ? "(unset)" : value);
  }
}

TEST(GomaxprocsEnvTest, ReadAtEachRun) {
  for (const char* value : {"2", "3", "1"}) {
    ScopedEnv env("GOMAXPROCS", value);
    int procs = 0;
    RunGuarded([&] { procs = gort::GOMAXPROCS(0); });
    EXPECT_EQ(procs, std::atoi(value));
  }
}

TEST(GomaxprocsEnvTest, MaximumIsAccepted) {
  ScopedEnv env("GOMAXPROCS", "256");
  int procs = 0;
  RunGuarded([&] { procs = gort::GOMAXPROCS(0); });
  EXPECT_EQ(procs, 256);
}

using GomaxprocsEnvDeathTest = ThreadsafeDeathTest;

TEST_F(GomaxprocsEnvDeathTest, InvalidValueWarnsAndUsesCpuCount) {
  for (const char* value : {"abc", "-1", "0", "4x"}) {
    EXPECT_EXIT(RunWithGomaxprocsEnv(value, DefaultProcs()),
                ::testing::ExitedWithCode(0), "GOMAXPROCS")
        << "GOMAXPROCS=" << value;
  }
}

TEST_F(GomaxprocsEnvDeathTest, TooLargeValueWarnsAndIsCapped) {
  EXPECT_EXIT(RunWithGomaxprocsEnv("1000", 256), ::testing::ExitedWithCode(0),
              "GOMAXPROCS");
}

}  // namespace
