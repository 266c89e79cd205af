// tests/pprof_test.cc: runtime profiles (pkg/pprof, in the spirit of Go's
// runtime/pprof tests): goroutines parked in a known function must show in
// the goroutine profile, counted and named, in each of its forms; the
// threadcreate profile counts the runtime's threads. scripts/trace-test.sh
// opens the debug 0 form with `go tool pprof`.
#include "gort/pprof.h"

#include <sstream>
#include <string>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "runnext.h"
#include "test_os.h"
#include "watchdog.h"

namespace {

using gort_test::Procs;
using gort_test::RunGuarded;

constexpr int kParked = 5;

// ParkedInProfileTest parks until release closes (not inlined: the profile
// must name it).
[[gnu::noinline]] void ParkedInProfileTest(gort::Chan<int> release,
                                           gort::WaitGroup* parked) {
  parked->Done();
  release.Recv();
}

int CountOf(const std::string& s, const std::string& what) {
  int n = 0;
  for (auto i = s.find(what); i != std::string::npos; i = s.find(what, i + 1))
    n++;
  return n;
}

using gort_test::kStacks;

// TextCheckingProto returns profile `name` in its text form (debug 1) and
// checks that its debug 0 form is gzip (a proto pprof reads).
std::string TextCheckingProto(const char* name) {
  std::ostringstream out;
  gort::pprof::WriteProfile(name, out, 1);
  std::ostringstream proto;
  gort::pprof::WriteProfile(name, proto);
  EXPECT_EQ(static_cast<unsigned char>(proto.str()[0]), 0x1f) << name;
  return out.str();
}

// WithParked runs body while kParked goroutines wait in ParkedInProfileTest;
// spawn(start) runs start, which creates them (pprof::Do, for labels).
template <class F, class S>
void WithParked(F body, S spawn) {
  RunGuarded(
      [&] {
        auto release = gort::MakeChan<int>();
        gort::WaitGroup parked;
        parked.Add(kParked);
        spawn([&] {
          for (int i = 0; i < kParked; i++) {
            gort::Go(
                [release, &parked] { ParkedInProfileTest(release, &parked); });
          }
        });
        parked.Wait();
        // Done runs before Recv parks: wait until all are in the receive.
        while (CountOf(gort::Stack(true), "[chan receive]") < kParked) {
          gort::Gosched();
        }
        body();
        release.Close();
      },
      Procs(2));
}

template <class F>
void WithParked(F body) {
  WithParked(body, [](auto start) { start(); });
}

TEST(PprofTest, GoroutineCountsAndNamesParkedGoroutines) {
  if (!kStacks) GTEST_SKIP() << "no goroutine stacks on this target";
  WithParked([] {
    std::ostringstream out;
    gort::pprof::WriteProfile("goroutine", out, 1);
    std::string s = out.str();
    EXPECT_EQ(s.rfind("goroutine profile: total " +
                          std::to_string(gort::NumGoroutine()) + "\n",
                      0),
              0u)
        << s;
    EXPECT_NE(s.find("\n" + std::to_string(kParked) + " @ 0x"),
              std::string::npos)
        << s;
    EXPECT_NE(s.find("ParkedInProfileTest"), std::string::npos) << s;
    EXPECT_NE(s.find("pprof_test.cc:"), std::string::npos) << s;
  });
}

// Go's TestGoroutineProfileLabels... as printCountProfile shows them: the
// goroutines parked under pprof.Do carry its labels, grouped apart.
TEST(PprofTest, GoroutineProfileShowsLabels) {
  if (!kStacks) GTEST_SKIP() << "no goroutine stacks on this target";
  WithParked(
      [] {
        std::ostringstream out;
        gort::pprof::WriteProfile("goroutine", out, 1);
        std::string s = out.str();
        auto at = s.find("\n" + std::to_string(kParked) + " @ 0x");
        ASSERT_NE(at, std::string::npos) << s;
        auto line = s.find('\n', at + 1);
        EXPECT_EQ(s.substr(line + 1, s.find('\n', line + 1) - line - 1),
                  "# labels: {\"a\":\"b\\\"c\", \"who\":\"parked\"}")
            << s;
        EXPECT_EQ(CountOf(s, "# labels:"), 1) << s;
      },
      [](auto start) {
        gort::pprof::Do(gort::pprof::Labels("who", "parked", "a", "b\"c"),
                        start);
      });
}

TEST(PprofTest, GoroutineDebug2IsTheDump) {
  if (!kStacks) GTEST_SKIP() << "no goroutine stacks on this target";
  WithParked([] {
    std::ostringstream out;
    gort::pprof::WriteProfile("goroutine", out, 2);
    EXPECT_GE(CountOf(out.str(), "[chan receive]"), kParked) << out.str();
    EXPECT_GE(CountOf(out.str(), "ParkedInProfileTest"), kParked);
  });
}

TEST(PprofTest, GoroutineDebug0IsGzippedProto) {
#if !defined(GORT_TEST_HAVE_ZLIB)
  GTEST_SKIP() << "built without zlib: profiles are written uncompressed";
#endif
  WithParked([] {
    std::ostringstream out;
    gort::pprof::WriteProfile("goroutine", out);
    std::string s = out.str();
    ASSERT_GE(s.size(), 20u);
    EXPECT_EQ(static_cast<unsigned char>(s[0]), 0x1f);  // gzip's magic
    EXPECT_EQ(static_cast<unsigned char>(s[1]), 0x8b);
  });
}

TEST(PprofTest, ThreadCreateCountsTheRuntimesThreads) {
  RunGuarded(
      [] {
        std::ostringstream out;
        gort::pprof::WriteProfile("threadcreate", out, 1);
        std::string s = out.str();
        const std::string head = "threadcreate profile: total ";
        ASSERT_EQ(s.rfind(head, 0), 0u) << s;
        EXPECT_GE(std::stoi(s.substr(head.size())), 2) << s;  // + sysmon
      },
      Procs(1));
}

[[gnu::noinline]] void RecvInBlockTest(gort::Chan<int> c) { c.Recv(); }
[[gnu::noinline]] void SendInBlockTest(gort::Chan<int> c) { c.Send(1); }
[[gnu::noinline]] void LockInBlockTest(gort::Mutex* mu) {
  mu->Lock();
  mu->Unlock();
}
[[gnu::noinline]] void RecvWhileOff(gort::Chan<int> c) { c.Recv(); }

// With the rate 1 every wait is kept: a channel wait (one side of a send
// and a receive blocks, whichever came first) and a Mutex wait, named by
// the function that blocked; with the rate 0 nothing is.
TEST(PprofTest, BlockProfileNamesChannelAndMutexWaits) {
  if (!kStacks) GTEST_SKIP() << "no goroutine stacks on this target";
  std::string text;
  RunGuarded(
      [&text] {
        auto c = gort::MakeChan<int>();
        gort::pprof::SetBlockProfileRate(0);
        gort::Go([c] { c.Send(0); });
        RecvWhileOff(c);
        gort::pprof::SetBlockProfileRate(1);
        gort::Go([c] { RecvInBlockTest(c); });
        gort_test::LetRunnextRun();  // GOMAXPROCS 1: it runs and parks in Recv
        SendInBlockTest(c);
        gort::Mutex mu;
        auto done = gort::MakeChan<int>();
        mu.Lock();
        gort::Go([&mu, done] {
          LockInBlockTest(&mu);
          done.Send(0);
        });
        gort_test::LetRunnextRun();  // it runs and parks in Lock
        mu.Unlock();
        done.Recv();
        gort::pprof::SetBlockProfileRate(0);
        text = TextCheckingProto("block");
      },
      Procs(1));
  EXPECT_EQ(text.rfind("--- contention:\ncycles/second=1000000000\n", 0), 0u)
      << text;
  EXPECT_TRUE(text.find("RecvInBlockTest") != std::string::npos ||
              text.find("SendInBlockTest") != std::string::npos)
      << text;
  EXPECT_NE(text.find("LockInBlockTest"), std::string::npos) << text;
  EXPECT_EQ(text.find("RecvWhileOff"), std::string::npos) << text;
}

// The write after Unlock keeps it from being a tail call, which would leave
// no frame of these functions on the releaser's stack.
volatile int afterUnlock = 0;
[[gnu::noinline]] void UnlockInMutexTest(gort::Mutex* mu) {
  mu->Unlock();
  afterUnlock = afterUnlock + 1;
}
[[gnu::noinline]] void UnlockWhileOff(gort::Mutex* mu) {
  mu->Unlock();
  afterUnlock = afterUnlock + 1;
}

// Contention(unlock): main holds a Mutex while another goroutine queues for
// it, then unlocks with unlock: a contended release.
void Contention(void (*unlock)(gort::Mutex*)) {
  gort::Mutex mu;
  auto done = gort::MakeChan<int>();
  mu.Lock();
  gort::Go([&mu, done] {
    mu.Lock();
    mu.Unlock();
    done.Send(0);
  });
  gort_test::LetRunnextRun();  // GOMAXPROCS 1: it runs and queues in Lock
  unlock(&mu);
  done.Recv();
}

// With the fraction 1 every contended release is kept, on the releaser's
// stack; with 0 none is. SetMutexProfileFraction returns the old rate.
TEST(PprofTest, MutexProfileNamesContendedUnlock) {
  if (!kStacks) GTEST_SKIP() << "no goroutine stacks on this target";
  std::string text;
  RunGuarded(
      [&text] {
        EXPECT_EQ(gort::pprof::SetMutexProfileFraction(0), 0);
        Contention(UnlockWhileOff);
        EXPECT_EQ(gort::pprof::SetMutexProfileFraction(1), 0);
        Contention(UnlockInMutexTest);
        EXPECT_EQ(gort::pprof::SetMutexProfileFraction(-1), 1);
        text = TextCheckingProto("mutex");
        EXPECT_EQ(gort::pprof::SetMutexProfileFraction(0), 1);
      },
      Procs(1));
  EXPECT_EQ(text.rfind("--- mutex:\ncycles/second=1000000000\n"
                       "sampling period=1\n",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("UnlockInMutexTest"), std::string::npos) << text;
  EXPECT_EQ(text.find("UnlockWhileOff"), std::string::npos) << text;
}

TEST(PprofTest, UnknownProfileAndOutsideRunPanic) {
  std::ostringstream out;
  EXPECT_THROW(gort::pprof::WriteProfile("goroutine", out), gort::Panic);
  RunGuarded(
      [] {
        std::ostringstream o;
        EXPECT_THROW(gort::pprof::WriteProfile("heapz", o), gort::Panic);
      },
      Procs(1));
}

}  // namespace
