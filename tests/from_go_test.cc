// tests/from_go_test.cc: runs the examples of docs/from-go.md (their C++
// side, tests/from_go_snippets.cc) and checks what they compute.
#include <string>

#include "from_go_snippets.h"
#include "gort/gort.h"
#include "gtest/gtest.h"
#include "watchdog.h"

namespace {

using gort_test::RunGuarded;

TEST(FromGoTest, GoAndChannels) { EXPECT_EQ(from_go::GoAndChannels(), 30); }

TEST(FromGoTest, Select) {
  int got = 0;
  RunGuarded([&] { got = from_go::SelectExamples(); });
  EXPECT_EQ(got, 7);
}

TEST(FromGoTest, Sync) {
  int got = 0;
  RunGuarded([&] { got = from_go::SyncExamples(); });
  EXPECT_EQ(got, 103);
}

TEST(FromGoTest, Time) {
  int ticks = 0;
  RunGuarded([&] { ticks = from_go::TimeExamples(); });
  EXPECT_GE(ticks, 0);  // how many fit in 20 ms is up to the machine
}

TEST(FromGoTest, Context) {
  gort::ContextError err = gort::ContextError::kNone;
  RunGuarded([&] { err = from_go::ContextExamples(); });
  EXPECT_EQ(err, gort::ContextError::kDeadlineExceeded);
}

TEST(FromGoTest, Runtime) {
  int got = 0;
  RunGuarded([&] { got = from_go::RuntimeExamples(); });
  EXPECT_EQ(got, 1);
}

#if defined(GORT_FROM_GO_PENDING) && GORT_FROM_GO_PENDING
TEST(FromGoTest, ThreadAndStack) {
  std::string dump;
  RunGuarded([&] { dump = from_go::ThreadExamples(); });
  EXPECT_NE(dump.find("goroutine 1 ["), std::string::npos) << dump;
}
#endif

}  // namespace
