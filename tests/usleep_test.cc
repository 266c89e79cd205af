// tests/usleep_test.cc: the usleep modes' mechanism, not their timing.
//
// On Linux, UsleepMode::kHighRes means a 1 ns timer slack on every runtime
// thread and kLowRes the slack the thread calling Run has (the kernel's
// 50 us unless the process inherited another); the tests read each thread's
// slack back from /proc/<tid>/timerslack_ns: sysmon's, every M's, and those
// of Ms started while the Run goes on. ReadStats reports the mode the
// threads got, so a kernel that refuses the slack (a seccomp filter here)
// makes it kLowRes. On every OS, sysmon asks usleep for Go's schedule of
// delays (20 us, doubling after 50 idle rounds, at most 10 ms), read from
// the execution trace, and usleep honours the duration it is given (a lower
// bound, the only timing a test asserts).
#if !defined(_WIN32)
#include <dirent.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gort/debug.h"
#include "gort/gort.h"
#include "gtest/gtest.h"
#include "test_os.h"
#include "trace_file.h"
#include "watchdog.h"

namespace {

using namespace std::chrono_literals;
using gort_test::Procs;
using gort_test::RunGuarded;

#if !defined(_WIN32)

// The timer slack of thread tid in ns, -1 if it cannot be read (the thread
// is gone, or the kernel predates /proc/<pid>/timerslack_ns).
long SlackOf(long tid) {
  std::ifstream in("/proc/" + std::to_string(tid) + "/timerslack_ns");
  long v = -1;
  if (!(in >> v)) return -1;
  return v;
}

// The ids of this process's threads.
std::set<long> Threads() {
  std::set<long> out;
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') out.insert(std::atol(e->d_name));
  }
  closedir(d);
  return out;
}

// The slack of every thread not in `before`: the runtime's threads, when
// `before` was taken just before Run.
std::map<long, long> NewThreadSlacks(const std::set<long>& before) {
  std::map<long, long> out;
  for (long tid : Threads()) {
    if (before.count(tid) == 0) out[tid] = SlackOf(tid);
  }
  return out;
}

// The calling thread's slack, from the kernel.
long OwnSlack() { return prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0); }

bool CanReadSlack() { return SlackOf(gort_test::Tid()) >= 0; }

// Waits (a bounded wait: the runtime applies the mode as each thread
// starts, which may trail its creation) until every runtime thread has
// slack `want`; returns the last reading.
std::map<long, long> AwaitSlacks(const std::set<long>& before, long want) {
  const std::int64_t deadline = gort_test::DeadlineFromNow();
  std::map<long, long> got;
  for (;;) {
    got = NewThreadSlacks(before);
    bool all = true;
    for (const auto& [tid, slack] : got) all &= slack == want || slack < 0;
    if (all || gort::Nanotime() > deadline) return got;
    gort::Sleep(1ms);
  }
}

std::string Describe(const std::map<long, long>& slacks) {
  std::string s;
  for (const auto& [tid, slack] : slacks) {
    s += ' ';
    s += std::to_string(tid);
    s += ':';
    s += std::to_string(slack);
  }
  return s;
}

// Runs a Run in `mode` with GOMAXPROCS 2, then starts more Ms (four
// goroutines blocked at once in BlockingSyscall, each on its own thread,
// and GOMAXPROCS raised to 4), and checks the slack of every runtime thread
// at both points: sysmon (running, since it has woken), the Ms seen from
// inside goroutines, and any other thread the Run made.
void CheckSlacks(gort::UsleepMode mode, long want) {
  // The process's first Run starts the SIGQUIT dumper thread (traceback.cc),
  // which lives for good and only ever waits on a futex: not one of this
  // Run's threads, so it must exist before `before` is taken.
  gort::Run([] {});
  gort_test::TestWatchdog watchdog;  // before `before`: not a runtime thread
  const std::set<long> before = Threads();
  gort::Options options = Procs(2);
  options.usleep = mode;
  // gort::Run, not RunGuarded: its watchdog thread would count as new.
  gort::Run(
      [&] {
        while (gort::ReadStats().sysmon_wakes == 0) gort::Gosched();
        std::map<long, long> early = AwaitSlacks(before, want);
        // sysmon and the M running main at least.
        EXPECT_GE(early.size(), 2u) << Describe(early);
        for (const auto& [tid, slack] : early) {
          EXPECT_EQ(slack, want)
              << "thread " << tid << " of" << Describe(early);
        }
        EXPECT_EQ(OwnSlack(), want) << "main's M";
        // Wrong already: waiting again for the later Ms would only add the
        // deadline to the failure.
        if (::testing::Test::HasFailure()) return;

        // Ms started later: each blocked goroutine holds a thread.
        EXPECT_EQ(gort::GOMAXPROCS(4), 2);
        constexpr int kBlocked = 4;
        gort_test::EventFd release[kBlocked];
        auto tids = gort::MakeChan<long>(kBlocked);
        auto done = gort::MakeChan<int>(kBlocked);
        for (int i = 0; i < kBlocked; i++) {
          gort::Go([&release, i, tids, done] {
            tids.Send(gort_test::Tid());
            gort::BlockingSyscall([&] { release[i].Read(); });
            done.Send(i);
          });
        }
        std::set<long> goroutineMs;
        for (int i = 0; i < kBlocked; i++) goroutineMs.insert(tids.Recv());
        // Every goroutine is in (or entering) its syscall on its own M, and
        // main needs one more: at least five Ms and sysmon.
        std::map<long, long> late = AwaitSlacks(before, want);
        for (int i = 0; i < kBlocked; i++) release[i].Signal();
        for (int i = 0; i < kBlocked; i++) done.Recv();
        EXPECT_GE(late.size(), static_cast<std::size_t>(kBlocked + 2))
            << Describe(late);
        for (const auto& [tid, slack] : late) {
          EXPECT_EQ(slack, want) << "thread " << tid << " of" << Describe(late);
        }
        for (long tid : goroutineMs) {
          EXPECT_EQ(late.count(tid), 1u)
              << "goroutine's M " << tid << " is not a new thread";
        }
        EXPECT_GE(gort::ReadStats().threads, static_cast<int>(early.size()));
      },
      options);
}

TEST(TimerSlackTest, HighResGivesEveryRuntimeThreadOneNanosecond) {
  if (!gort_test::HaveHighResUsleep()) GTEST_SKIP() << "no timer slack here";
  if (!CanReadSlack()) GTEST_SKIP() << "no /proc/<tid>/timerslack_ns";
  CheckSlacks(gort::UsleepMode::kHighRes, 1);
  gort::UsleepMode got = gort::ReadStats().usleep;
  EXPECT_EQ(got, gort::UsleepMode::kHighRes);
}

TEST(TimerSlackTest, AutoIsHighResWhereTheKernelAllowsIt) {
  if (!gort_test::HaveHighResUsleep()) GTEST_SKIP() << "no timer slack here";
  if (!CanReadSlack()) GTEST_SKIP() << "no /proc/<tid>/timerslack_ns";
  CheckSlacks(gort::UsleepMode::kAuto, 1);
}

TEST(TimerSlackTest, LowResKeepsTheCallersSlackOnEveryRuntimeThread) {
  if (!CanReadSlack()) GTEST_SKIP() << "no /proc/<tid>/timerslack_ns";
  const long inherited = OwnSlack();
  ASSERT_GT(inherited, 1) << "the test thread's own slack";
  CheckSlacks(gort::UsleepMode::kLowRes, inherited);
  EXPECT_EQ(gort::ReadStats().usleep, gort::UsleepMode::kLowRes);
}

// A kLowRes Run after a kHighRes one: the slack does not leak from one
// Run's threads into the next.
TEST(TimerSlackTest, LowResAfterHighResIsLowRes) {
  if (!gort_test::HaveHighResUsleep()) GTEST_SKIP() << "no timer slack here";
  if (!CanReadSlack()) GTEST_SKIP() << "no /proc/<tid>/timerslack_ns";
  const long inherited = OwnSlack();
  CheckSlacks(gort::UsleepMode::kHighRes, 1);
  CheckSlacks(gort::UsleepMode::kLowRes, inherited);
}

// Installs a seccomp filter on the calling thread (and the threads it
// starts later) that fails prctl(PR_SET_TIMERSLACK) with EPERM and allows
// everything else, PR_GET_TIMERSLACK included. Little-endian targets: the
// filter reads the low half of the first argument.
bool DenySetTimerSlack() {
  static sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prctl, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_TIMERSLACK, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog = {static_cast<unsigned short>(std::size(filter)), filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0;
}

// Whether a child process can install DenySetTimerSlack's filter and then
// sees the slack refused (qemu-user, for one, does not emulate seccomp).
bool CanDenySetTimerSlack() {
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    bool ok = DenySetTimerSlack() && prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0) != 0;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// ReadStats reports what the threads got: with the slack refused, a kHighRes
// Run is low resolution. In a child process, since a filter cannot be
// removed.
TEST(TimerSlackDeathTest, RefusedSlackMakesStatsSayLowRes) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  if (!gort_test::HaveHighResUsleep()) GTEST_SKIP() << "no timer slack here";
  if (!CanDenySetTimerSlack()) {
    GTEST_SKIP() << "seccomp cannot refuse PR_SET_TIMERSLACK here";
  }
  EXPECT_EXIT(
      {
        if (!DenySetTimerSlack()) {
          std::fprintf(stderr, "test: cannot install the seccomp filter\n");
          std::_Exit(7);
        }
        if (prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0) == 0) {
          std::fprintf(stderr, "test: the filter let the slack through\n");
          std::_Exit(7);
        }
        gort::Options options = Procs(2);
        options.usleep = gort::UsleepMode::kHighRes;
        gort::UsleepMode inside = gort::UsleepMode::kAuto;
        RunGuarded([&] { inside = gort::ReadStats().usleep; }, options);
        gort::UsleepMode after = gort::ReadStats().usleep;
        std::fprintf(stderr, "stats: inside %d after %d\n",
                     static_cast<int>(inside), static_cast<int>(after));
        std::_Exit(inside == gort::UsleepMode::kLowRes &&
                           after == gort::UsleepMode::kLowRes
                       ? 0
                       : 1);
      },
      ::testing::ExitedWithCode(0), "stats: inside 2 after 2");
}

#endif  // !_WIN32

// Go's sysmon delays: 20 us while it keeps finding work (idle == 0) and for
// the first 50 idle rounds, then doubling each round, at most 10 ms.
std::vector<std::int64_t> GoSysmonDelays(int n) {
  std::vector<std::int64_t> out;
  std::int64_t delay = 0;
  for (int idle = 0; idle < n; idle++) {
    if (idle == 0) {
      delay = 20;
    } else if (idle > 50) {
      delay *= 2;
    }
    if (delay > 10'000) delay = 10'000;
    out.push_back(delay);
  }
  return out;
}

// SysmonRequests: the microseconds sysmon asked of each usleep, in order,
// read from the trace $GORT_TRACE wrote to path (then unset and removed).
void SysmonRequests(const std::string& path, std::vector<std::int64_t>* got) {
  unsetenv("GORT_TRACE");
  unsetenv("GORT_TRACE_FORMAT");
  gort::trace::Trace t;
  std::string err;
  ASSERT_TRUE(gort::trace::LoadTrace(path, &t, &err)) << err;
  std::remove(path.c_str());
  std::vector<const gort::trace::Event*> sleeps;
  for (const gort::trace::Event& e : t.events) {
    if (e.cat != "usleep") continue;
    const std::string& track =
        t.tracks[std::make_pair(gort::trace::kPidM, e.tid)];
    if (track.find("sysmon") != std::string::npos) sleeps.push_back(&e);
  }
  std::sort(sleeps.begin(), sleeps.end(),
            [](auto* a, auto* b) { return a->ts < b->ts; });
  for (const gort::trace::Event* e : sleeps) {
    got->push_back(
        static_cast<std::int64_t>(e->args.NumOr("requested_us", -1)));
  }
}

TEST(SysmonScheduleTest, GoScheduleIsWhatWeCompareAgainst) {
  std::vector<std::int64_t> d = GoSysmonDelays(64);
  EXPECT_EQ(std::count(d.begin(), d.end(), 20), 51);
  EXPECT_EQ(d[51], 40);
  EXPECT_EQ(d[58], 5120);
  EXPECT_EQ(d[59], 10'000);
  EXPECT_EQ(d[60], 10'000);
  EXPECT_EQ(d[63], 10'000);
}

// With one P kept busy by a goroutine that yields but never blocks (so
// sysmon never sleeps on its note) and no syscalls to retake (so every
// round is idle), sysmon's usleep requests, recorded by the execution trace
// from the start of the Run, are exactly Go's schedule.
TEST(SysmonScheduleTest, RequestsFollowGosSchedule) {
  constexpr int kRounds = 66;  // past the 10 ms cap
  const std::string path = testing::TempDir() + "gort_usleep_sched_" +
                           std::to_string(gort_test::Pid()) + ".json";
  setenv("GORT_TRACE", path.c_str(), 1);
  setenv("GORT_TRACE_FORMAT", "json", 1);  // gort-trace reads the JSON
  RunGuarded(
      [&] {
        const std::int64_t deadline = gort_test::DeadlineFromNow();
        while (gort::ReadStats().sysmon_wakes < kRounds + 1 &&
               gort::Nanotime() < deadline) {
          gort::Gosched();
        }
      },
      Procs(1));
  std::vector<std::int64_t> got;
  SysmonRequests(path, &got);
  ASSERT_GE(got.size(), static_cast<std::size_t>(kRounds));
  got.resize(kRounds);
  EXPECT_EQ(got, GoSysmonDelays(kRounds));
}

// sysmon starts its back-off again after a deep sleep only when something
// woke it early (a syscall returning), not when it slept until a timer was
// due (Go's sysmon). So once its requests reach the 10 ms cap, a program
// with no syscalls that sleeps on a timer (every P idle: sysmon sleeps on
// its note) and then keeps its P busy again sees only 10 ms requests.
TEST(SysmonScheduleTest, TimerWakeKeepsTheBackoff) {
  const std::string path = testing::TempDir() + "gort_usleep_backoff_" +
                           std::to_string(gort_test::Pid()) + ".json";
  setenv("GORT_TRACE", path.c_str(), 1);
  setenv("GORT_TRACE_FORMAT", "json", 1);  // gort-trace reads the JSON
  RunGuarded(
      [&] {
        const std::int64_t deadline = gort_test::DeadlineFromNow();
        // Busy on its P with no scheduling point: a Gosched a turn put
        // millions of events into the trace, slow to write (40 s under Wine
        // at load 13, past the watchdog).
        auto spinUntil = [&](std::int64_t wakes) {
          while (gort::ReadStats().sysmon_wakes < wakes &&
                 gort::Nanotime() < deadline) {
            const std::int64_t until = gort::Nanotime() + 20'000;
            while (gort::Nanotime() < until) {
            }
          }
        };
        spinUntil(62);  // past the cap (GoSysmonDelays: index 59)
        gort::Sleep(std::chrono::milliseconds(30));
        spinUntil(gort::ReadStats().sysmon_wakes + 3);
      },
      Procs(1));
  std::vector<std::int64_t> got;
  SysmonRequests(path, &got);
  auto capped = std::find(got.begin(), got.end(), 10'000);
  ASSERT_NE(capped, got.end());
  ASSERT_GE(got.end() - capped, 3);
  EXPECT_EQ(std::count(capped, got.end(), 10'000), got.end() - capped)
      << "sysmon's back-off restarted after a timer wake-up";
}

// usleep sleeps at least what it is asked, in and outside a Run, in both
// modes: a lower bound long enough that a usleep ignoring its argument (a
// fixed 10 ms, say) falls short of it.
TEST(UsleepTest, SleepsAtLeastTheRequestedDuration) {
  for (std::uint32_t us : {30'000u, 50'000u}) {
    auto t0 = std::chrono::steady_clock::now();
    gort::debug::Usleep(us);
    EXPECT_GE(std::chrono::steady_clock::now() - t0,
              std::chrono::microseconds(us));
  }
  for (gort::UsleepMode mode :
       {gort::UsleepMode::kHighRes, gort::UsleepMode::kLowRes}) {
    gort::Options options = Procs(2);
    options.usleep = mode;
    std::int64_t elapsed = 0;
    RunGuarded(
        [&] {
          std::int64_t t0 = gort::Nanotime();
          gort::debug::Usleep(40'000);
          elapsed = gort::Nanotime() - t0;
        },
        options);
    EXPECT_GE(elapsed, 40'000'000) << "mode " << static_cast<int>(mode);
  }
}

// gort-usleep-probe's loop: usleep inside gort::Syscall. Where usleep runs
// on the M's own stack (Windows: Go's systemstack(usleep1)), the goroutine
// must come back still in its syscall, on the same thread, untouched;
// switching it out as a parked goroutine killed the probe with "casgstatus:
// bad incoming values" under Wine. Elsewhere usleep runs in place.
TEST(UsleepTest, InsideSyscallResumesTheGoroutineAsItWas) {
  constexpr int kSleeps = 50;
  std::int64_t elapsed = 0;
  int ticks = 0;
  RunGuarded(
      [&] {
        std::atomic<bool> finished{false};
        gort::Go([&elapsed, &finished] {
          std::int64_t t0 = gort::Nanotime();
          gort::Syscall([] {
            for (int i = 0; i < kSleeps; i++) gort::debug::Usleep(200);
          });
          elapsed = gort::Nanotime() - t0;
          finished.store(true);
        });
        // Meanwhile main keeps the P busy (sysmon may hand it off).
        while (!finished.load()) {
          ticks++;
          gort::Gosched();
        }
      },
      Procs(1));
  EXPECT_GE(elapsed, std::int64_t{kSleeps} * 200'000);
  EXPECT_GT(ticks, 0);
}

}  // namespace
