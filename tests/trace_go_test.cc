// tests/trace_go_test.cc: the execution trace in Go 1.19's format
// (runtime/trace_go.cc), read back with go_trace_reader.h: each test traces a
// program whose events are known and checks that Go's events for them are
// there, with the stacks that name the code that caused them, and that the
// whole trace replays through Go's state machine. scripts/trace-test.sh
// opens such traces with `go tool trace` itself.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "go_trace_reader.h"
#include "gort/gort.h"
#include "gtest/gtest.h"
#include "test_os.h"
#include "trace_known.h"
#include "watchdog.h"

namespace {

namespace gt = gort_test::gotrace;
using gort_test::Procs;
using gort_test::RunGuarded;

std::string TempTrace(const std::string& name) {
  return testing::TempDir() + "gort_gotrace_" + name + "_" +
         std::to_string(gort_test::Pid()) + ".out";
}

gt::Trace Load(const std::string& path) {
  gt::Trace t;
  std::string err;
  EXPECT_TRUE(gt::Load(path, &t, &err)) << err;
  std::remove(path.c_str());
  EXPECT_EQ(gt::Replay(t), "");
  return t;
}

// Traced runs body at GOMAXPROCS 1 under StartTrace (Go's format).
gt::Trace Traced(const std::string& name, void (*body)()) {
  std::string path = TempTrace(name);
  RunGuarded(
      [&] {
        ASSERT_TRUE(gort::StartTrace(path));
        body();
        ASSERT_TRUE(gort::StopTrace());
      },
      Procs(1));
  return Load(path);
}

std::map<int, int> CountTypes(const gt::Trace& t) {
  std::map<int, int> n;
  for (const gt::Event& e : t.events) n[e.type]++;
  return n;
}

using gort_test::kStacks;

// Names reports whether stack id's frames name a function containing fn.
bool Names(const gt::Trace& t, std::uint64_t id, const std::string& fn) {
  auto it = t.stacks.find(id);
  if (it == t.stacks.end()) return false;
  for (const gt::Frame& f : it->second) {
    if (f.fn.find(fn) != std::string::npos) return true;
  }
  return false;
}

// Trace of trace_known.h's program: every goroutine created is created once
// with a stack naming KnownProgram, starts and ends; one block per round;
// one syscall that sysmon retakes (GoSysCall naming KnownProgram, GoSysBlock,
// GoSysExit); a Gomaxprocs of 1 and the frequency.
TEST(GoTraceTest, KnownProgramEvents) {
  gt::Trace t = Traced("known", gort_test::KnownProgram);
  std::map<int, int> n = CountTypes(t);
  EXPECT_EQ(t.frequency, 1'000'000'000u);
  std::set<std::uint64_t> created, ended, started;
  for (const gt::Event& e : t.events) {
    if (e.type == gt::kGoCreate && e.g == 1) {
      EXPECT_TRUE(created.insert(e.args[0]).second);
      EXPECT_TRUE(!kStacks || Names(t, e.stk, "KnownProgram"))
          << "G" << e.args[0];
      EXPECT_NE(e.args[1], 0u);  // the new goroutine's stack
    }
    if (e.type == gt::kGoEnd) ended.insert(e.g);
    if (e.type == gt::kGoStart) started.insert(e.args[0]);
    if (e.type == gt::kGomaxprocs) {
      EXPECT_EQ(e.args[0], 1u);
    }
  }
  EXPECT_EQ(created.size(),
            static_cast<std::size_t>(gort_test::kKnownGoroutines - 1));
  EXPECT_EQ(ended, created);
  for (std::uint64_t g : created) EXPECT_TRUE(started.count(g)) << g;
  EXPECT_EQ(n[gt::kGoBlockRecv] + n[gt::kGoBlockSend],
            gort_test::kKnownSenders);
  // Each round's wake-up is by a goroutine (the sender, or main receiving),
  // on its P, with its stack in the channel operation.
  int byGoroutine = 0;
  for (const gt::Event& e : t.events) {
    if (e.type == gt::kGoUnblock && e.g != 0 && e.p == 0 &&
        (!kStacks || Names(t, e.stk, "::Send") || Names(t, e.stk, "::Recv"))) {
      byGoroutine++;
    }
  }
  EXPECT_GE(byGoroutine, gort_test::kKnownSenders);
  EXPECT_EQ(n[gt::kGoSysCall], 1);
  EXPECT_EQ(n[gt::kGoSysBlock], 1);
  EXPECT_EQ(n[gt::kGoSysExit], 1);
  EXPECT_GE(n[gt::kProcStart], 1);
  EXPECT_GE(n[gt::kGomaxprocs], 1);
  for (const gt::Event& e : t.events) {
    if (e.type == gt::kGoSysCall) {
      EXPECT_TRUE(!kStacks || Names(t, e.stk, "KnownProgram"));
      EXPECT_FALSE(Names(t, e.stk, "traceWalk"));  // the tracer's own frames
    }
    if (e.type == gt::kGoBlockRecv && e.g == 1) {
      EXPECT_TRUE(!kStacks || Names(t, e.stk, "KnownProgram"));
      EXPECT_TRUE(!kStacks || Names(t, e.stk, "chanrecv"));
    }
  }
}

// Every blocking kind gets its Go event, with a stack, once at least; the
// sleep's and the network wait's wake-ups come from outside a goroutine.
TEST(GoTraceTest, EveryBlockingKind) {
  gt::Trace t = Traced("kinds", gort_test::BlockingKinds);
  std::map<int, int> n = CountTypes(t);
  for (int ev : {gt::kGoBlockRecv, gt::kGoBlockSelect, gt::kGoBlockSync,
                 gt::kGoBlockCond, gt::kGoSleep, gt::kGoBlockNet, gt::kGoSched,
                 gt::kGoSysCall, gt::kGoSysBlock, gt::kGoSysExit}) {
    EXPECT_GE(n[ev], 1) << "event type " << ev;
  }
  std::map<std::uint64_t, int> lastBlock;  // goroutine -> its block's type
  int netWakes = 0, sleepWakes = 0;
  for (const gt::Event& e : t.events) {
    if (gt::HasStack(e.type) && e.type != gt::kGomaxprocs &&
        e.type != gt::kGoUnblock && e.g != 0) {
      EXPECT_TRUE(!kStacks || Names(t, e.stk, "BlockingKinds"))
          << "event type " << e.type << " of G" << e.g;
    }
  }
  // Merged in time order, a wake-up follows its block.
  std::vector<const gt::Event*> ev;
  for (const gt::Event& e : t.events) ev.push_back(&e);
  std::stable_sort(ev.begin(), ev.end(),
                   [](auto* a, auto* b) { return a->ts < b->ts; });
  for (const gt::Event* e : ev) {
    if (gt::Blocks(e->type)) {
      lastBlock[e->g] = e->type;
    }
    if (e->type == gt::kGoUnblock) {
      int why = lastBlock[e->args[0]];
      if (why == gt::kGoBlockNet && e->g == 0) netWakes++;
      if (why == gt::kGoSleep && e->g == 0) sleepWakes++;
    }
  }
  EXPECT_GE(netWakes, 1);
  EXPECT_GE(sleepWakes, 1);
}

volatile int lastCaller = 0;  // keeps the A and B twins from being folded

// Two callers with the same frame, so that the goroutine blocks at the same
// stack depth under either: the tracer's walk cache (runtime/os,
// tracebackSelfCached) must tell their stacks apart by the return addresses
// still on the stack, not answer the second with the first's.
__attribute__((noinline)) void RecvUnderA(gort::Chan<int> c) {
  (void)c.Recv();
  lastCaller = 1;  // and not a tail call: this frame stays
}
__attribute__((noinline)) void RecvUnderB(gort::Chan<int> c) {
  (void)c.Recv();
  lastCaller = 2;  // and not a tail call: this frame stays
}
__attribute__((noinline)) void SleepUnderA() {
  gort::Sleep(std::chrono::microseconds(1));
  lastCaller = 3;  // and not a tail call: this frame stays
}
__attribute__((noinline)) void SleepUnderB() {
  gort::Sleep(std::chrono::microseconds(1));
  lastCaller = 4;  // and not a tail call: this frame stays
}

constexpr int kAlternations = 20;

// At GOMAXPROCS 1 main yields before each send, so the worker is always
// parked in its Recv when the value comes: one GoBlockRecv per round, under
// A and B in turn; main sleeps under A and B in turn.
void AlternatingCallers() {
  auto c = gort::MakeChan<int>();
  auto done = gort::MakeChan<int>();
  gort::Go([c, done] {
    for (int i = 0; i < kAlternations; i++) {
      if (i % 2 == 0) {
        RecvUnderA(c);
      } else {
        RecvUnderB(c);
      }
    }
    done.Send(1);
  });
  for (int i = 0; i < kAlternations; i++) {
    gort::Gosched();
    c.Send(i);
    if (i % 2 == 0) {
      SleepUnderA();
    } else {
      SleepUnderB();
    }
  }
  done.Recv();
}

// The letters (A or B) naming each event of type ev, in time order.
std::string CallerSequence(const gt::Trace& t, int ev, const std::string& a,
                           const std::string& b) {
  std::vector<const gt::Event*> evs;
  for (const gt::Event& e : t.events) {
    if (e.type == ev) evs.push_back(&e);
  }
  std::stable_sort(evs.begin(), evs.end(),
                   [](auto* x, auto* y) { return x->ts < y->ts; });
  std::string seq;
  for (const gt::Event* e : evs) {
    bool inA = Names(t, e->stk, a), inB = Names(t, e->stk, b);
    if (inA || inB) seq += inA && inB ? '?' : inA ? 'A' : 'B';
  }
  return seq;
}

TEST(GoTraceTest, StacksOfAlternatingCallersStayApart) {
  if (!kStacks) GTEST_SKIP() << "no goroutine stacks on this target";
  gt::Trace t = Traced("callers", AlternatingCallers);
  std::string want;
  for (int i = 0; i < kAlternations; i++) want += i % 2 == 0 ? 'A' : 'B';
  EXPECT_EQ(CallerSequence(t, gt::kGoBlockRecv, "RecvUnderA", "RecvUnderB"),
            want);
  EXPECT_EQ(CallerSequence(t, gt::kGoSleep, "SleepUnderA", "SleepUnderB"),
            want);
}

// GORT_TRACE writes Go's format by default, the whole Run: main (G1) is
// created by the trace's own GoCreate and ends.
TEST(GoTraceTest, EnvTraceIsGoFormat) {
  std::string path = TempTrace("env");
  setenv("GORT_TRACE", path.c_str(), 1);
  RunGuarded([] { gort_test::KnownProgram(); }, Procs(1));
  unsetenv("GORT_TRACE");
  gt::Trace t = Load(path);
  int mainCreated = 0, mainEnded = 0;
  for (const gt::Event& e : t.events) {
    if (e.type == gt::kGoCreate && e.args[0] == 1) mainCreated++;
    if (e.type == gt::kGoEnd && e.g == 1) mainEnded++;
  }
  EXPECT_EQ(mainCreated, 1);
  EXPECT_EQ(mainEnded, 1);
}

}  // namespace
