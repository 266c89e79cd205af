// tests/watchdog.h: turns a hang in the runtime into a quick, named test
// failure. A scheduler bug often shows as a goroutine that never runs again;
// without a watchdog the test would sit until CTest's timeout and say
// nothing about where it stopped.
#ifndef GORT_TESTS_WATCHDOG_H_
#define GORT_TESTS_WATCHDOG_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "gort/runtime.h"
#include "gtest/gtest.h"

namespace gort_test {

// Scaled(n): n divided by $GORT_TEST_SCALE (default 1), at least 1. The
// sanitizer presets and emulated targets set it so that tests sized for a
// native run (100 000 goroutines, say) keep their assertions but do less
// work; ThreadSanitizer also caps a process at 8128 threads and fibers.
inline int Scaled(int n) {
  static const int scale = [] {
    const char* s = std::getenv("GORT_TEST_SCALE");
    int v = s != nullptr ? std::atoi(s) : 1;
    return v > 0 ? v : 1;
  }();
  int r = n / scale;
  return r > 0 ? r : 1;
}

// How long a bounded wait lasts before a test gives up: far beyond what a
// working runtime needs even on a loaded machine.
inline constexpr std::chrono::nanoseconds kDeadline{std::chrono::seconds(10)};

// A deadline kDeadline from now on gort's clock.
inline std::int64_t DeadlineFromNow() {
  return gort::Nanotime() + kDeadline.count();
}

// Busy-waits for d without calling into the runtime, so the goroutine never
// reaches a point where it could yield.
inline void SpinFor(std::chrono::nanoseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

// How long one Run may take before the watchdog ends the process. Every
// test's Run finishes in well under a second on a working runtime; the
// limit only has to be far below CTest's timeout.
inline constexpr std::chrono::seconds kRunLimit{30};

// Ends the process with status 3 and a message naming `what` unless it is
// destroyed within `limit`.
class Watchdog {
 public:
  Watchdog(std::string what, std::chrono::seconds limit)
      : what_(std::move(what)), thread_([this, limit] { Watch(limit); }) {}
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

 private:
  void Watch(std::chrono::seconds limit) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
      std::fprintf(stderr,
                   "watchdog: %s did not finish within %lld s; the runtime "
                   "seems to be hung\n",
                   what_.c_str(), static_cast<long long>(limit.count()));
      std::fflush(stderr);
      std::_Exit(3);
    }
  }

  std::string what_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;  // Last: starts after the members it uses.
};

// The name of the running test, for messages.
inline std::string CurrentTestName() {
  const ::testing::TestInfo* info =
      ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return "gort::Run";
  return std::string(info->test_suite_name()) + "." + info->name();
}

// A watchdog for a whole test, named after it: a fixture member, so a lost
// wakeup anywhere in the test fails fast and by name.
class TestWatchdog : public Watchdog {
 public:
  explicit TestWatchdog(std::chrono::seconds limit = std::chrono::seconds{60})
      : Watchdog(CurrentTestName(), limit) {}
};

// A test fixture under a TestWatchdog.
class WatchedTest : public ::testing::Test {
 private:
  TestWatchdog watchdog_;
};

// A test fixture parameterized by GOMAXPROCS, under a TestWatchdog; Opts()
// gives gort::Run that maxprocs.
class ProcsTest : public ::testing::TestWithParam<int> {
 protected:
  gort::Options Opts() const { return gort::Options{.maxprocs = GetParam()}; }

 private:
  TestWatchdog watchdog_;
};

// gort::Run under a watchdog: a Run that hangs fails the test after
// kRunLimit instead of blocking until CTest kills it.
template <class F>
void RunGuarded(F&& main, const gort::Options& options = {}) {
  Watchdog watchdog("gort::Run in " + CurrentTestName(), kRunLimit);
  gort::Run(std::forward<F>(main), options);
}

// Options with only maxprocs set.
inline gort::Options Procs(int n) {
  gort::Options options;
  options.maxprocs = n;
  return options;
}

// Lets every other runnable goroutine run until it parks: at GOMAXPROCS 1
// a few Goscheds make "blocked" certain without sleeping.
inline void LetOthersPark() {
  for (int i = 0; i < 20; i++) gort::Gosched();
}

// The name of a test instantiated per GOMAXPROCS value n: "P<n>". Built by
// appending: GCC 12 warns falsely (-Wrestrict) on "P" + std::to_string(n).
inline std::string ProcsName(const ::testing::TestParamInfo<int>& info) {
  return std::string("P").append(std::to_string(info.param));
}

}  // namespace gort_test

#endif  // GORT_TESTS_WATCHDOG_H_
