// tests/cpuprof_test.cc: the CPU profile and profiler labels (pkg/pprof, as
// Go's runtime/pprof pprof_test.go: TestCPUProfile, TestCPUProfileLabel,
// and label_test.go). A goroutine burning CPU in a known function must be in
// the profile under that function's name, its samples carrying the labels
// it runs under (inherited from the goroutine that made it); a profile with
// no samples is still one pprof reads; a second profile is refused.
#include <ctime>
#if defined(__linux__)
#include <time.h>
#endif
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "gort/gort.h"
#include "gort/net.h"
#include "gort/pprof.h"
#include "gort/trace.h"
#include "gtest/gtest.h"
#include "profile_reader.h"
#include "test_os.h"
#include "watchdog.h"

namespace {

using gort_test::ParseProfile;
using gort_test::Procs;
using gort_test::Profile;
using gort_test::RunGuarded;

// CPU profiles are sampled, with whole stacks, on linux/amd64 (a signal's
// stack walked), windows/amd64 (a suspended thread's stack unwound) and
// windows/386 (a suspended thread's frame-pointer chain walked);
// docs/targets.md. The tests below check that a sample of burn names its
// callers.
#if (defined(__x86_64__) && (defined(__linux__) || defined(_WIN32))) || \
    (defined(__i386__) && defined(_WIN32))
constexpr bool kCPUProfile = true;
#else
constexpr bool kCPUProfile = false;
#endif
#if defined(_WIN32)
constexpr bool kHasProfiler = true;
#else
constexpr bool kHasProfiler = kCPUProfile;
#endif

constexpr std::int64_t kBurn = 300'000'000;  // ns of the process's CPU

// cpuNanos: the process's CPU time. On Linux, clock_gettime itself (not
// clock(), which glibc calls it from inside): ThreadSanitizer runs a signal
// handler only when the thread next enters one of its interceptors, and a
// loop that calls none would take no sample until it ends. On Windows,
// GetProcessTimes (the C runtime's clock() counts wall time there, and on a
// loaded machine the burn would get little CPU).
std::int64_t cpuNanos() {
#if defined(__linux__)
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
#elif defined(_WIN32)
  FILETIME c, e, k, u;
  GetProcessTimes(GetCurrentProcess(), &c, &e, &k, &u);
  auto ns = [](const FILETIME& f) {
    return static_cast<std::int64_t>(
               (static_cast<std::uint64_t>(f.dwHighDateTime) << 32) |
               f.dwLowDateTime) *
           100;
  };
  return ns(k) + ns(u);
#else
  return static_cast<std::int64_t>(std::clock()) *
         (1'000'000'000 / CLOCKS_PER_SEC);
#endif
}

volatile std::uint64_t sink;

// burn spins until the process has used kBurn more CPU (the burning
// goroutine is the only one running, so most of it is its own).
[[gnu::noinline]] void burn(std::uint64_t seed) {
  std::int64_t end = cpuNanos() + kBurn;
  std::uint64_t x = seed;
  while (cpuNanos() < end) {
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
  // Symbolized here, so pprof must not ask a server's /debug/pprof/symbol.
  EXPECT_EQ(p.locationsLeftToPprof, 0);
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
      EXPECT_FALSE(kHasProfiler) << why;
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

// net/http/pprof's pprof_test.go, for ListenAndServe: a client of its own
// (one request per connection, as the server answers).
struct HttpAnswer {
  int status = 0;
  std::string head;
  std::string body;
};

HttpAnswer Get(const std::string& addr, const std::string& target) {
  gort::net::Conn c = gort::net::Dial("tcp", addr);
  std::string req = "GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n";
  c.Write(req.data(), req.size());
  std::string all;
  char buf[4096];
  for (std::size_t n; (n = c.Read(buf, sizeof buf)) > 0;) all.append(buf, n);
  HttpAnswer a;
  auto end = all.find("\r\n\r\n");
  if (end == std::string::npos || all.rfind("HTTP/1.1 ", 0) != 0) return a;
  a.status = std::stoi(all.substr(9, 3));
  a.head = all.substr(0, end);
  a.body = all.substr(end + 4);
  return a;
}

// WithServer runs body with the endpoints served on an ephemeral port.
template <class F>
void WithServer(F body) {
  RunGuarded(
      [&] {
        std::string addr = gort::pprof::ListenAndServe("127.0.0.1:0");
        ASSERT_NE(addr.find("127.0.0.1:"), std::string::npos);
        ASSERT_NE(addr, "127.0.0.1:0");
        int serving = gort::NumGoroutine();
        body(addr);
        // Handlers finish (a hung-up one may still be writing its profile
        // off its P) before Run ends.
        while (gort::NumGoroutine() > serving) {
          gort::Sleep(std::chrono::milliseconds(1));
        }
      },
      Procs(2));
}

TEST(HttpTest, IndexAndProfiles) {
  WithServer([](const std::string& addr) {
    HttpAnswer a = Get(addr, "/debug/pprof/");
    EXPECT_EQ(a.status, 200);
    for (const char* p :
         {"goroutine?debug=1", "block?debug=1", "mutex?debug=1",
          "threadcreate?debug=1", "profile", "trace", "goroutine?debug=2"}) {
      EXPECT_NE(a.body.find(p), std::string::npos) << p << "\n" << a.body;
    }
    a = Get(addr, "/debug/pprof/goroutine?debug=1");
    EXPECT_EQ(a.status, 200);
    EXPECT_EQ(a.body.rfind("goroutine profile: total ", 0), 0u) << a.body;
    a = Get(addr, "/debug/pprof/goroutine?debug=2");
    EXPECT_EQ(a.status, 200);
    EXPECT_NE(a.body.find("goroutine 1 ["), std::string::npos) << a.body;
    for (const char* p : {"goroutine", "block", "mutex", "threadcreate"}) {
      a = Get(addr, std::string("/debug/pprof/") + p);
      EXPECT_EQ(a.status, 200) << p;
      EXPECT_NO_THROW(ParseProfile(a.body)) << p;
      EXPECT_NE(a.head.find("application/octet-stream"), std::string::npos);
    }
  });
}

TEST(HttpTest, BadRequestsGetGosAnswers) {
  WithServer([](const std::string& addr) {
    HttpAnswer a = Get(addr, "/debug/pprof/nosuch");
    EXPECT_EQ(a.status, 404);
    EXPECT_EQ(a.body, "Unknown profile\n");
    EXPECT_NE(a.head.find("X-Go-Pprof: 1"), std::string::npos) << a.head;
    EXPECT_EQ(Get(addr, "/elsewhere").status, 404);
    for (const char* q :
         {"profile?seconds=x", "profile?seconds=0", "profile?seconds=-1",
          "profile?seconds=1.5", "trace?seconds=x", "trace?seconds=0"}) {
      a = Get(addr, std::string("/debug/pprof/") + q);
      EXPECT_EQ(a.status, 400) << q;
      EXPECT_NE(a.body.find("invalid value for \"seconds\""), std::string::npos)
          << q << ": " << a.body;
    }
    for (const char* q : {"profile?seconds=300", "trace?seconds=1e9"}) {
      a = Get(addr, std::string("/debug/pprof/") + q);
      EXPECT_EQ(a.status, 400) << q;
      EXPECT_EQ(a.body, "profile duration exceeds server's WriteTimeout\n");
    }
    EXPECT_EQ(Get(addr, "/debug/pprof/goroutine?seconds=1").status, 400);
  });
}

TEST(HttpTest, SecondProfileOrTraceIsRefused) {
  if (!kCPUProfile) GTEST_SKIP() << "no CPU profiler on this target";
  WithServer([](const std::string& addr) {
    std::ostringstream out;
    ASSERT_TRUE(gort::pprof::StartCPUProfile(out));
    HttpAnswer a = Get(addr, "/debug/pprof/profile?seconds=1");
    gort::pprof::StopCPUProfile();
    EXPECT_EQ(a.status, 500);
    EXPECT_EQ(a.body,
              "Could not enable CPU profiling: cpu profiling already in "
              "use\n");
    std::string path = ::testing::TempDir() + "/cpuprof_test.trace";
    ASSERT_TRUE(gort::StartTrace(path));
    a = Get(addr, "/debug/pprof/trace?seconds=1");
    EXPECT_TRUE(gort::StopTrace());
    EXPECT_EQ(a.status, 500);
    EXPECT_EQ(a.body, "Could not enable tracing: tracing is already enabled\n");
  });
}

TEST(HttpTest, ProfileAndTraceAreServed) {
  if (!kCPUProfile) GTEST_SKIP() << "no CPU profiler on this target";
  WithServer([](const std::string& addr) {
    HttpAnswer a = Get(addr, "/debug/pprof/profile?seconds=1");
    ASSERT_EQ(a.status, 200) << a.body;
    Profile p = ParseProfile(a.body);
    EXPECT_EQ(p.period, 10'000'000);
    EXPECT_EQ(p.locationsLeftToPprof, 0);
    a = Get(addr, "/debug/pprof/trace?seconds=0.2");
    ASSERT_EQ(a.status, 200) << a.body;
    EXPECT_EQ(a.body.rfind("go 1.19 trace", 0), 0u);
  });
}

// A client that leaves mid-profile ends the collection: the next profile
// can start long before the 200 s asked for (the test's time limit).
TEST(HttpTest, DisconnectStopsTheCollection) {
  if (!kCPUProfile) GTEST_SKIP() << "no CPU profiler on this target";
  // It waits for the handler's stack to show it waits.
  if (!gort_test::kStacks) GTEST_SKIP() << "no goroutine stacks on this target";
  WithServer([](const std::string& addr) {
    for (const char* what : {"profile", "trace"}) {
      {
        gort::net::Conn c = gort::net::Dial("tcp", addr);
        std::string req = std::string("GET /debug/pprof/") + what +
                          "?seconds=200 HTTP/1.1\r\n\r\n";
        c.Write(req.data(), req.size());
        // Wait until it collects (its handler waits on the connection).
        while (gort::Stack(true).find("waitOrHangup") == std::string::npos) {
          gort::Sleep(std::chrono::milliseconds(1));
        }
      }  // the client hangs up
      for (;;) {
        std::ostringstream out;
        if (std::string(what) == "profile" &&
            gort::pprof::StartCPUProfile(out)) {
          gort::pprof::StopCPUProfile();
          break;
        }
        if (std::string(what) == "trace" &&
            gort::StartTrace(::testing::TempDir() + "/cpuprof_test.trace")) {
          EXPECT_TRUE(gort::StopTrace());
          break;
        }
        gort::Sleep(std::chrono::milliseconds(1));
      }
    }
  });
}

}  // namespace
