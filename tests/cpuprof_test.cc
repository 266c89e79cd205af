// tests/cpuprof_test.cc: the CPU profile and profiler labels (pkg/pprof, as
// Go's runtime/pprof pprof_test.go: TestCPUProfile, TestCPUProfileLabel,
// and label_test.go). A goroutine burning CPU in a known function must be in
// the profile under that function's name, its samples carrying the labels
// it runs under (inherited from the goroutine that made it); a profile with
// no samples is still one pprof reads; a second profile is refused.
#include <ctime>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "gort/gort.h"
#include "gort/pprof.h"
#include "gtest/gtest.h"
#include "profile_reader.h"
#include "test_os.h"
#include "watchdog.h"

namespace {

using gort_test::ParseProfile;
using gort_test::Procs;
using gort_test::Profile;
using gort_test::RunGuarded;

// CPU profiles are sampled where a signal's stack can be walked:
// linux/amd64 (docs/targets.md).
#if defined(__linux__) && defined(__x86_64__)
constexpr bool kCPUProfile = true;
#else
constexpr bool kCPUProfile = false;
#endif

constexpr std::clock_t kBurn = CLOCKS_PER_SEC * 3 / 10;  // 300 ms of CPU

volatile std::uint64_t sink;

// burn spins until the process has used kBurn more CPU (the burning
// goroutine is the only one running, so most of it is its own).
[[gnu::noinline]] void burn(std::uint64_t seed) {
  std::clock_t end = std::clock() + kBurn;
  std::uint64_t x = seed;
  while (std::clock() < end) {
    for (int i = 0; i < 100000; i++) x = x * 6364136223846793005u + 1;
  }
  sink = x;
}

// CpuHogUnlabeled and CpuHogLabeled burn CPU under their own names (not
// inlined, and different, or identical-code folding would merge them: the
// profile must name each).
[[gnu::noinline]] void CpuHogUnlabeled() {
  burn(1);
  asm volatile("");
}
[[gnu::noinline]] void CpuHogLabeled() {
  burn(2);
  asm volatile("");
}

// Profiled runs body between StartCPUProfile and StopCPUProfile, in a Run,
// and returns the profile read back.
template <class F>
Profile Profiled(F body) {
  std::ostringstream out;
  RunGuarded(
      [&] {
        std::string why;
        ASSERT_TRUE(gort::pprof::StartCPUProfile(out, &why)) << why;
        body();
        gort::pprof::StopCPUProfile();
      },
      Procs(1));
  return ParseProfile(out.str());
}

// Has: whether stack names a function containing name.
bool Has(const std::vector<std::string>& stack, const std::string& name) {
  for (const std::string& f : stack) {
    if (f.find(name) != std::string::npos) return true;
  }
  return false;
}

TEST(CpuprofTest, CPUProfileNamesTheBurningFunction) {
  if (!kCPUProfile) GTEST_SKIP() << "no CPU profiler on this target";
  Profile p = Profiled([] {
    auto done = gort::MakeChan<int>();
    gort::Go([done] {
      CpuHogUnlabeled();
      done.Close();
    });
    done.Recv();
  });
  ASSERT_EQ(p.sampleTypes.size(), 2u);
  EXPECT_EQ(p.sampleTypes[0],
            std::make_pair(std::string("samples"), std::string("count")));
  EXPECT_EQ(p.sampleTypes[1],
            std::make_pair(std::string("cpu"), std::string("nanoseconds")));
  std::int64_t hog = 0;
  for (const auto& s : p.samples) {
    ASSERT_EQ(s.values.size(), 2u);
    EXPECT_EQ(s.values[1], s.values[0] * 10'000'000);
    if (Has(s.functions, "CpuHogUnlabeled")) {
      hog += s.values[0];
      EXPECT_TRUE(Has(s.functions, "burn")) << "the leaf is in burn";
      EXPECT_TRUE(s.labels.empty());
    }
  }
  EXPECT_GE(hog, 1) << "no sample in CpuHogUnlabeled of " << p.samples.size();
}

TEST(CpuprofTest, CPUProfileLabelsAreInheritedAndAttached) {
  if (!kCPUProfile) GTEST_SKIP() << "no CPU profiler on this target";
  Profile p = Profiled([] {
    auto done = gort::MakeChan<int>();
    gort::pprof::Do(gort::pprof::Labels("key", "value"), [&] {
      gort::Go([done] {  // inherits key=value
        CpuHogLabeled();
        done.Close();
      });
    });
    done.Recv();
  });
  std::int64_t hog = 0;
  for (const auto& s : p.samples) {
    if (!Has(s.functions, "CpuHogLabeled")) continue;
    hog += s.values[0];
    ASSERT_EQ(s.labels.size(), 1u);
    EXPECT_EQ(s.labels.at("key"), "value");
  }
  EXPECT_GE(hog, 1) << "no sample in CpuHogLabeled of " << p.samples.size();
}

TEST(CpuprofTest, EmptyProfileIsValid) {
  if (!kCPUProfile) GTEST_SKIP() << "no CPU profiler on this target";
  Profile p = Profiled([] {});
  EXPECT_EQ(p.sampleTypes.size(), 2u);
  EXPECT_EQ(p.periodType,
            std::make_pair(std::string("cpu"), std::string("nanoseconds")));
  EXPECT_EQ(p.period, 10'000'000);
}

TEST(CpuprofTest, SecondProfileIsRefused) {
  RunGuarded([] {
    std::ostringstream a, b;
    std::string why;
    if (!gort::pprof::StartCPUProfile(a, &why)) {
      EXPECT_FALSE(kCPUProfile) << why;
      EXPECT_NE(why.find("not implemented"), std::string::npos) << why;
      return;
    }
    EXPECT_FALSE(gort::pprof::StartCPUProfile(b, &why));
    EXPECT_EQ(why, "cpu profiling already in use");
    gort::pprof::StopCPUProfile();
    EXPECT_TRUE(gort::pprof::StartCPUProfile(b, &why)) << why;
    gort::pprof::StopCPUProfile();
    EXPECT_FALSE(b.str().empty());
  });
}

TEST(CpuprofTest, RunEndStopsTheSampling) {
  if (!kCPUProfile) GTEST_SKIP() << "no CPU profiler on this target";
  std::ostringstream out;
  RunGuarded([&] {
    ASSERT_TRUE(gort::pprof::StartCPUProfile(out));
    CpuHogUnlabeled();
  });
  gort::pprof::StopCPUProfile();  // after the Run: writes what it sampled
  Profile p = ParseProfile(out.str());
  EXPECT_EQ(p.period, 10'000'000);
}

// label_test.go: TestContextLabels, as Do on the goroutine.
TEST(LabelTest, DoSetsMergesAndRestores) {
  RunGuarded([] {
    EXPECT_FALSE(gort::pprof::Label("key").has_value());
    gort::pprof::Do(gort::pprof::Labels("key", "value", "a", "1"), [] {
      EXPECT_EQ(gort::pprof::Label("key"), "value");
      gort::pprof::Do(gort::pprof::Labels("key", "other"), [] {
        EXPECT_EQ(gort::pprof::Label("key"), "other");
        EXPECT_EQ(gort::pprof::Label("a"), "1");
      });
      EXPECT_EQ(gort::pprof::Label("key"), "value");
      try {
        gort::pprof::Do(gort::pprof::Labels("key", "thrown"),
                        [] { throw std::runtime_error("x"); });
      } catch (const std::runtime_error&) {
      }
      EXPECT_EQ(gort::pprof::Label("key"), "value");
    });
    EXPECT_FALSE(gort::pprof::Label("key").has_value());
  });
}

TEST(LabelTest, LabelsSortsAndLaterValuesWin) {
  auto set = gort::pprof::Labels("b", "1", "a", "2", "b", "3");
  ASSERT_EQ(set.list().size(), 2u);
  EXPECT_EQ(set.list()[0], std::make_pair(std::string("a"), std::string("2")));
  EXPECT_EQ(set.list()[1], std::make_pair(std::string("b"), std::string("3")));
}

TEST(LabelTest, GoroutinesInheritLabels) {
  RunGuarded([] {
    auto got = gort::MakeChan<std::string>();
    gort::pprof::Do(gort::pprof::Labels("req", "42"), [&] {
      gort::Go([got] {
        got.Send(gort::pprof::Label("req").value_or("none"));
        gort::Go(
            [got] { got.Send(gort::pprof::Label("req").value_or("none")); });
      });
    });
    gort::Go([got] { got.Send(gort::pprof::Label("req").value_or("none")); });
    std::multiset<std::string> all{got.Recv(), got.Recv(), got.Recv()};
    EXPECT_EQ(all.count("42"), 2u);
    EXPECT_EQ(all.count("none"), 1u);
  });
}

}  // namespace
