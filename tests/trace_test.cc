// tests/trace_test.cc: the execution trace (runtime/trace.cc, in the spirit
// of Go's runtime/trace tests): each test runs a program whose events are
// known, writes the trace with gort::StartTrace/StopTrace or GORT_TRACE,
// reads it back with gort-trace's reader and checks the events a broken
// tracer would lose, duplicate or mislabel. No timing is asserted.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "test_os.h"
#include "trace_file.h"
#include "trace_known.h"
#include "watchdog.h"

namespace {

using gort::trace::Event;
using gort::trace::Trace;
using gort_test::Procs;
using gort_test::RunGuarded;
using gort_test::Scaled;

std::string TempTrace(const std::string& name) {
  return testing::TempDir() + "gort_trace_" + name + "_" +
         std::to_string(gort_test::Pid()) + ".json";
}

Trace Load(const std::string& path) {
  Trace t;
  std::string err;
  EXPECT_TRUE(gort::trace::LoadTrace(path, &t, &err)) << err;
  std::remove(path.c_str());
  return t;
}

// TraceKnownProgram: the trace of trace_known.h's program at GOMAXPROCS 1.
Trace TraceKnownProgram(const std::string& name) {
  std::string path = TempTrace(name);
  RunGuarded(
      [&] {
        ASSERT_TRUE(gort::StartTrace(path, gort::TraceFormat::kChromeJSON));
        gort_test::KnownProgram();
        ASSERT_TRUE(gort::StopTrace());
      },
      Procs(1));
  return Load(path);
}

std::vector<Event> OfCat(const Trace& t, const std::string& cat) {
  std::vector<Event> out;
  for (const Event& e : t.events) {
    if (e.cat == cat) out.push_back(e);
  }
  return out;
}

std::int64_t G(const Event& e) {
  return static_cast<std::int64_t>(e.args.NumOr("g", -1));
}

TEST(TraceTest, OffByDefault) {
  EXPECT_FALSE(gort::TraceEnabled());
  EXPECT_FALSE(gort::StopTrace());
}

// N goroutines created -> N create events naming their parent, N end
// events, each goroutine with at least one run slice.
TEST(TraceTest, CreateAndEndEvents) {
  const int n = Scaled(200);
  std::string path = TempTrace("create");
  RunGuarded(
      [&] {
        ASSERT_TRUE(gort::StartTrace(path, gort::TraceFormat::kChromeJSON));
        EXPECT_FALSE(gort::StartTrace(
            path, gort::TraceFormat::kChromeJSON));  // one trace at a time
        auto done = gort::MakeChan<int>(n);
        for (int i = 0; i < n; i++) gort::Go([done, i] { done.Send(i); });
        for (int i = 0; i < n; i++) done.Recv();
        while (gort::NumGoroutine() > 1) gort::Gosched();
        ASSERT_TRUE(gort::StopTrace());
      },
      Procs(2));
  Trace t = Load(path);
  std::set<std::int64_t> created, ended, ran;
  for (const Event& e : OfCat(t, "GoCreate")) {
    EXPECT_EQ(e.args.NumOr("parent", -1), 1);
    EXPECT_TRUE(created.insert(G(e)).second) << "G" << G(e) << " twice";
  }
  for (const Event& e : OfCat(t, "GoEnd")) {
    EXPECT_TRUE(ended.insert(G(e)).second) << "G" << G(e) << " ended twice";
  }
  for (const Event& e : OfCat(t, "goroutine")) ran.insert(G(e));
  EXPECT_EQ(created.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(ended, created);
  for (std::int64_t g : created) EXPECT_TRUE(ran.count(g)) << "G" << g;
}

// A goroutine blocked in a channel receive: a block event with Go's wait
// reason, then an unblock naming the sender and the reason, then a flow
// from the sender to the receiver's next run.
TEST(TraceTest, BlockedRecvThenUnblockedBySender) {
  Trace t = TraceKnownProgram("block");
  std::map<std::int64_t, std::int64_t> parent;
  for (const Event& e : OfCat(t, "GoCreate")) {
    parent[G(e)] = static_cast<std::int64_t>(e.args.NumOr("parent", 0));
  }
  int recvBlocks = 0, sendBlocks = 0;
  for (const Event& e : OfCat(t, "GoBlock")) {
    std::string r = e.args.Str("reason");
    if (r == "chan receive" && G(e) == 1) recvBlocks++;
    if (r == "chan send" && parent[G(e)] == 1) sendBlocks++;
  }
  // One block per round, whoever got there first (see trace_known.h).
  EXPECT_EQ(recvBlocks + sendBlocks, gort_test::kKnownSenders);
  int byASender = 0;
  double blockedNs = 0;
  for (const Event& e : OfCat(t, "GoUnblock")) {
    if (G(e) != 1 || e.args.Str("reason") != "chan receive") continue;
    // Each at least 0, and only their sum must be positive: under qemu-user
    // arm64's counter moves in steps of about 1 us (qemu 7.2 reads it from
    // the host's realtime clock), so a block and its unblock a few hundred
    // ns apart can share a stamp (0 in about 1 run in 20 on qemu-aarch64).
    double ns = e.args.NumOr("blocked_ns", -1);
    EXPECT_GE(ns, 0);
    if (ns > 0) blockedNs += ns;
    std::int64_t by = static_cast<std::int64_t>(e.args.NumOr("by", 0));
    if (parent[by] == 1) byASender++;
  }
  EXPECT_EQ(byASender, recvBlocks);
  if (recvBlocks > 0) {
    EXPECT_GT(blockedNs, 0);
  }
  int starts = 0, finishes = 0;
  for (const Event& e : t.events) {
    if (e.cat != "unblock") continue;
    (e.ph == 's' ? starts : finishes)++;
  }
  EXPECT_GE(starts, gort_test::kKnownSenders);
  EXPECT_GE(finishes, 1);
}

// A goroutine stuck in a syscall with work queued behind it: sysmon
// retakes its P (a retake event for P0 on sysmon's M) and the syscall
// slice ends.
TEST(TraceTest, SyscallHandoffRecordsRetake) {
  Trace t = TraceKnownProgram("retake");
  std::vector<Event> retakes = OfCat(t, "ProcRetake");
  ASSERT_EQ(retakes.size(), 1u);
  EXPECT_EQ(retakes[0].args.NumOr("retaken", -1), 0);
  EXPECT_EQ(retakes[0].pid, gort::trace::kPidM);
  int sysmonM = retakes[0].tid;
  std::string sysmonName =
      t.tracks[std::make_pair(gort::trace::kPidM, sysmonM)];
  EXPECT_NE(sysmonName.find("sysmon"), std::string::npos) << sysmonName;
  // The usleep before the retake may have begun before StartTrace; any
  // usleep recorded is sysmon's (GORT_TRACE's test counts them).
  for (const Event& e : OfCat(t, "usleep")) {
    EXPECT_EQ(e.tid, sysmonM);
    EXPECT_GE(e.args.NumOr("requested_us", 0), 20);
  }
  std::vector<Event> sys = OfCat(t, "syscall");
  ASSERT_EQ(sys.size(), 1u);
  EXPECT_EQ(G(sys[0]), 1);
  EXPECT_EQ(sys[0].args.NumOr("blocking", -1), 0);
}

// Records are stamped with cputicks and converted when the trace stops:
// the syscall slice of a goroutine sleeping in the kernel contains the
// sleep and lies inside the window the test read around the call, both
// from nanotime (1 % given to the conversion's rate: unconverted ticks
// are off by the clock's frequency in GHz). sysmon retakes the P from the
// sleeper, so it slept; its usleeps are recorded late (before its next
// sleep), so the test waits for three retakes: the usleep before the
// second began after the first and was recorded before the third. One
// retake proves nothing: the usleep before it may have begun before the
// trace, and the one after it may still be unrecorded when the trace stops.
TEST(TraceTest, StampsInNanosecondsAndSysmonSleepsRecorded) {
  std::string path = TempTrace("stamps");
  std::int64_t inner = 0, outer = 0;
  RunGuarded(
      [&] {
        ASSERT_TRUE(gort::StartTrace(path, gort::TraceFormat::kChromeJSON));
        std::int64_t handoffs = gort::ReadStats().handoffs;
        for (int i = 0; i < 500 && gort::ReadStats().handoffs < handoffs + 3;
             i++) {
          std::int64_t t0 = gort::Nanotime();
          gort::Syscall([&] {
            std::int64_t a = gort::Nanotime();
            gort_test::SleepInKernel(20);
            inner = gort::Nanotime() - a;
          });
          outer = gort::Nanotime() - t0;
        }
        EXPECT_GE(gort::ReadStats().handoffs, handoffs + 3);
        ASSERT_TRUE(gort::StopTrace());
      },
      Procs(1));
  Trace t = Load(path);
  std::vector<Event> sys = OfCat(t, "syscall");
  ASSERT_FALSE(sys.empty());
  double dur = sys.back().dur * 1000;  // the last call's, in ns
  EXPECT_GE(dur, 0.99 * static_cast<double>(inner));
  EXPECT_LE(dur, 1.01 * static_cast<double>(outer));
  for (const Event& e : sys) {
    EXPECT_GE(e.ts, 0);
    EXPECT_LE(e.ts + e.dur, t.duration_us);
  }
  EXPECT_GE(OfCat(t, "usleep").size(), 1u);
  EXPECT_GE(OfCat(t, "ProcRetake").size(), 1u);
}

TEST(TraceTest, GomaxprocsChange) {
  std::string path = TempTrace("procs");
  RunGuarded(
      [&] {
        ASSERT_TRUE(gort::StartTrace(path, gort::TraceFormat::kChromeJSON));
        EXPECT_EQ(gort::GOMAXPROCS(2), 1);
        ASSERT_TRUE(gort::StopTrace());
      },
      Procs(1));
  Trace t = Load(path);
  std::vector<Event> ev = OfCat(t, "Gomaxprocs");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].args.NumOr("procs", 0), 2);
  EXPECT_EQ(ev[0].args.NumOr("old", 0), 1);
  EXPECT_TRUE(t.tracks.count(std::make_pair(gort::trace::kPidP, 1)));
}

// Every successful runqsteal is one Steal event naming its victim and how
// many goroutines it moved: the trace agrees with the scheduler's counters
// over the traced window (no goroutine but main exists at its edges, so
// nothing can be stolen outside it).
TEST(TraceTest, StealsMatchSchedulerCounters) {
  const int n = Scaled(2000);
  std::string path = TempTrace("steal");
  gort::Stats before, after;
  RunGuarded(
      [&] {
        before = gort::ReadStats();
        ASSERT_TRUE(gort::StartTrace(path, gort::TraceFormat::kChromeJSON));
        gort::WaitGroup wg;
        for (int i = 0; i < n; i++) {
          wg.Add(1);
          gort::Go([&wg] {
            gort::Gosched();
            wg.Done();
          });
        }
        wg.Wait();
        while (gort::NumGoroutine() > 1) gort::Gosched();
        ASSERT_TRUE(gort::StopTrace());
        after = gort::ReadStats();
      },
      Procs(4));
  Trace t = Load(path);
  std::int64_t steals = 0, stolen = 0;
  for (const Event& e : OfCat(t, "Steal")) {
    steals++;
    stolen += static_cast<std::int64_t>(e.args.NumOr("count", 0));
    EXPECT_GE(e.args.NumOr("count", 0), 1);
    EXPECT_NE(e.args.NumOr("victim", -1), e.args.NumOr("p", -1));
  }
  EXPECT_EQ(steals, after.steals - before.steals);
  EXPECT_EQ(stolen, after.stolen - before.stolen);
}

// A steal the program forces (examples/steal.cc's round): main queues a
// batch on its P and keeps the P without yielding until one of the batch
// has started, which only a thief can have done. The trace, taken of the
// whole Run so no spinning spell began before it, has a Steal from main's P,
// and every Steal lies inside a spinning spell of the thief's M; a spell
// that stole ends with "found work"; the summary counts both. A round in
// which sysmon preempted main (it yields at its next Go once it has run
// 10 ms, as under qemu it can) lets main's own P start the batch: such a
// round proves nothing and is run again.
Trace ForcedStealRound(const std::string& path) {
  setenv("GORT_TRACE", path.c_str(), 1);
  setenv("GORT_TRACE_FORMAT", "json", 1);
  RunGuarded(
      [&] {
        std::atomic<int> started{0};
        gort::WaitGroup wg;
        for (int i = 0; i < 8; i++) {
          wg.Add(1);
          gort::Go([&] {
            started.fetch_add(1);
            wg.Done();
          });
        }
        while (started.load() == 0) {
        }
        wg.Wait();
      },
      Procs(4));
  unsetenv("GORT_TRACE");
  unsetenv("GORT_TRACE_FORMAT");
  return Load(path);
}

bool MainWasPreempted(const Trace& t) {
  for (const Event& e : OfCat(t, "GoPreempt")) {
    if (G(e) == 1) return true;
  }
  return false;
}

TEST(TraceTest, ForcedStealInsideASpinningSpell) {
  std::string path = TempTrace("spin");
  Trace t = ForcedStealRound(path);
  for (int round = 1; round < 5 && MainWasPreempted(t); round++) {
    t = ForcedStealRound(path);
  }
  ASSERT_FALSE(MainWasPreempted(t)) << "sysmon preempted main in 5 rounds";
  std::int64_t mainP = -1;
  // main (goroutine 1) ran on one P until its busy wait ended.
  for (const Event& e : t.events) {
    if (e.cat == "goroutine" && e.pid == gort::trace::kPidP && G(e) == 1) {
      mainP = e.tid;
      break;
    }
  }
  ASSERT_GE(mainP, 0);
  std::vector<Event> spells = OfCat(t, "spinning");
  bool fromMain = false;
  // Compared in whole ns (the file's unit), not as sums of µs doubles: under
  // qemu-user arm64's counter moves in steps of about 1 µs, so a steal and
  // the end of its spell often share a stamp, and ts + dur in floating
  // point can land a hair below it.
  auto ns = [](double us) { return std::llround(us * 1000); };
  for (const Event& st : OfCat(t, "Steal")) {
    if (st.args.NumOr("victim", -1) == mainP) fromMain = true;
    const int m = static_cast<int>(st.args.NumOr("m", -1));
    bool inside = false;
    std::string seen;
    for (const Event& sp : spells) {
      if (sp.pid != gort::trace::kPidM || sp.tid != m) continue;
      const std::string end = sp.args.Str("end");
      if (ns(sp.ts) <= ns(st.ts) && ns(st.ts) <= ns(sp.ts) + ns(sp.dur)) {
        inside = end == "found work";
      }
      seen += " [" + std::to_string(ns(sp.ts)) + ", +" +
              std::to_string(ns(sp.dur)) + " ns: " + end + "]";
    }
    EXPECT_TRUE(inside) << "steal at " << ns(st.ts) << " ns by M" << m
                        << " outside a spinning spell that found work; M" << m
                        << "'s spells:" << seen;
  }
  EXPECT_TRUE(fromMain) << "no steal from main's P" << mainP;
  gort::trace::Summary s = gort::trace::Summarize(t);
  EXPECT_GE(s.steals, 1);
  EXPECT_GE(s.spins_found, 1);
  EXPECT_NE(gort::trace::FormatSummary(s).find("\nspinning: "),
            std::string::npos);
}

// GORT_TRACE traces the whole Run, main's creation included, and the
// summary gort-trace prints has the known program's counts.
TEST(TraceTest, EnvTraceSummaryOfKnownProgram) {
  std::string path = TempTrace("env");
  setenv("GORT_TRACE", path.c_str(), 1);
  setenv("GORT_TRACE_FORMAT", "json", 1);
  RunGuarded([] { gort_test::KnownProgram(); }, Procs(1));
  unsetenv("GORT_TRACE");
  unsetenv("GORT_TRACE_FORMAT");
  EXPECT_FALSE(gort::TraceEnabled());
  gort::trace::Summary s = gort::trace::Summarize(Load(path));
  EXPECT_EQ(s.created, gort_test::kKnownGoroutines);
  EXPECT_EQ(s.ended, gort_test::kKnownGoroutines);
  EXPECT_EQ(s.goroutines, gort_test::kKnownGoroutines);
  EXPECT_EQ(s.blocked["chan receive"].count + s.blocked["chan send"].count,
            gort_test::kKnownSenders);
  EXPECT_EQ(s.blocks, s.unblocks);
  EXPECT_EQ(s.syscalls, 1);
  EXPECT_EQ(s.retakes, 1);
  EXPECT_EQ(s.gomaxprocs_changes, 1);
  EXPECT_EQ(s.ps, 1);
  EXPECT_GE(s.usleeps, 1);
  std::string text = gort::trace::FormatSummary(s);
  EXPECT_NE(text.find("goroutines: 10 seen, 10 created, 10 ended"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("1 syscall handoffs"), std::string::npos) << text;
}

// Starting and stopping while goroutines on two Ps record events, and a
// thread outside the runtime asks whether a trace runs: every stopped
// trace is a whole file (and ThreadSanitizer sees no race).
TEST(TraceTest, StartStopWhileRunning) {
  const int rounds = 5;
  std::vector<std::string> paths;
  for (int i = 0; i < rounds; i++) {
    paths.push_back(TempTrace("toggle" + std::to_string(i)));
  }
  std::atomic<bool> stop{false};
  std::thread watcher([&] {
    while (!stop.load()) (void)gort::TraceEnabled();
  });
  RunGuarded(
      [&] {
        auto quit = gort::MakeChan<bool>();
        auto ping = gort::MakeChan<int>();
        gort::WaitGroup wg;
        for (int w = 0; w < 4; w++) {
          wg.Add(1);
          gort::Go([&wg, ping, quit] {
            int v = 0;
            for (;;) {
              int i =
                  gort::Select(gort::SendCase(ping, 1),
                               gort::RecvCase(ping, &v), gort::RecvCase(quit));
              if (i == 2) break;
            }
            wg.Done();
          });
        }
        for (const std::string& p : paths) {
          ASSERT_TRUE(gort::StartTrace(p, gort::TraceFormat::kChromeJSON));
          for (int i = 0; i < 200; i++) gort::Gosched();
          ASSERT_TRUE(gort::StopTrace());
        }
        quit.Close();
        wg.Wait();
      },
      Procs(2));
  stop.store(true);
  watcher.join();
  for (const std::string& p : paths) {
    Trace t = Load(p);
    EXPECT_FALSE(t.events.empty());
  }
}

}  // namespace
