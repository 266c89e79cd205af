// tests/once_test.cc: Once, in the spirit of Go's sync/once_test.go: f runs
// once however many goroutines call Do; callers that come while f runs wait
// for it to finish; an exception from f reaches its caller and still marks
// the Once done.
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using gort_test::Procs;
using gort_test::RunGuarded;

// Go's TestOnce: every caller returns only after f has finished.
TEST(OnceTest, RunsOnceAndOthersWaitForIt) {
  for (int procs : {1, 2, 4}) {
    constexpr int kCallers = 10;
    std::atomic<int> calls{0};
    std::atomic<int> saw_unfinished{0};
    RunGuarded(
        [&] {
          gort::Once once;
          std::atomic<bool> finished{false};
          gort::WaitGroup wg;
          wg.Add(kCallers);
          for (int i = 0; i < kCallers; i++) {
            gort::Go([&] {
              once.Do([&] {
                calls.fetch_add(1);
                gort::Sleep(2ms);  // the others arrive and must wait
                finished = true;
              });
              if (!finished.load()) saw_unfinished.fetch_add(1);
              wg.Done();
            });
          }
          wg.Wait();
        },
        Procs(procs));
    EXPECT_EQ(calls.load(), 1) << "procs=" << procs;
    EXPECT_EQ(saw_unfinished.load(), 0) << "procs=" << procs;
  }
}

// Go's TestOncePanic: the exception propagates; the Once is done anyway.
TEST(OnceTest, ExceptionMarksDone) {
  std::string caught;
  bool second_ran = false;
  RunGuarded([&] {
    gort::Once once;
    try {
      once.Do([] { throw std::runtime_error("failed"); });
    } catch (const std::runtime_error& e) {
      caught = e.what();
    }
    once.Do([&] { second_ran = true; });
  });
  EXPECT_EQ(caught, "failed");
  EXPECT_FALSE(second_ran);
}

// Do accepts lvalues, const callables and move-only callables.
TEST(OnceTest, CallableKinds) {
  int n = 0;
  RunGuarded([&] {
    gort::Once a, b, c;
    auto inc = [&] { n++; };
    a.Do(inc);
    const auto cinc = [&] { n += 10; };
    b.Do(cinc);
    auto owned = std::make_unique<int>(100);
    c.Do([&, p = std::move(owned)] { n += *p; });
    a.Do(inc);
    b.Do(cinc);
  });
  EXPECT_EQ(n, 111);
}

}  // namespace
