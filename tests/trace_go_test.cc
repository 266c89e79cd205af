// tests/trace_go_test.cc: the execution trace in Go 1.19's format
// (runtime/trace_go.cc), read back with go_trace_reader.h: each test traces a
// program whose events are known and checks that Go's events for them are
// there, with the stacks that name the code that caused them, and that the
// whole trace replays through Go's state machine. scripts/trace-test.sh
// opens such traces with `go tool trace` itself. The stack table the events'
// stack ids come from (runtime/trace_stack.h) is tested directly too.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "go_trace_reader.h"
#include "gort/gort.h"
#include "gtest/gtest.h"
#include "runnext.h"
#include "test_os.h"
#include "trace.h"
#include "trace_known.h"
#include "trace_stack.h"
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

// TraceTo runs body at GOMAXPROCS 1 under StartTrace (Go's format) into
// path.
void TraceTo(const std::string& path, const std::function<void()>& body) {
  RunGuarded(
      [&] {
        ASSERT_TRUE(gort::StartTrace(path));
        body();
        ASSERT_TRUE(gort::StopTrace());
      },
      Procs(1));
}

// Traced: the trace of body (TraceTo), read back.
gt::Trace Traced(const std::string& name, void (*body)()) {
  std::string path = TempTrace(name);
  TraceTo(path, body);
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
    gort_test::LetRunnextRun();
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

// The stack ids of the events of type ev whose stack names fn.
std::set<std::uint64_t> StackIds(const gt::Trace& t, int ev,
                                 const std::string& fn) {
  std::set<std::uint64_t> ids;
  for (const gt::Event& e : t.events) {
    if (e.type == ev && Names(t, e.stk, fn)) ids.insert(e.stk);
  }
  return ids;
}

// Each caller's blocks, the same stack every round, share one id (the
// stack is interned, not stored per event), and A's is not B's.
TEST(GoTraceTest, StacksOfAlternatingCallersStayApart) {
  if (!kStacks) GTEST_SKIP() << "no goroutine stacks on this target";
  gt::Trace t = Traced("callers", AlternatingCallers);
  std::string want;
  for (int i = 0; i < kAlternations; i++) want += i % 2 == 0 ? 'A' : 'B';
  EXPECT_EQ(CallerSequence(t, gt::kGoBlockRecv, "RecvUnderA", "RecvUnderB"),
            want);
  EXPECT_EQ(CallerSequence(t, gt::kGoSleep, "SleepUnderA", "SleepUnderB"),
            want);
  for (auto [ev, a, b] :
       {std::tuple{gt::kGoBlockRecv, "RecvUnderA", "RecvUnderB"},
        std::tuple{gt::kGoSleep, "SleepUnderA", "SleepUnderB"}}) {
    std::set<std::uint64_t> idsA = StackIds(t, ev, a),
                            idsB = StackIds(t, ev, b);
    EXPECT_EQ(idsA.size(), 1u) << a;
    EXPECT_EQ(idsB.size(), 1u) << b;
    EXPECT_NE(idsA, idsB);
  }
}

__attribute__((noinline)) void RecvUnderC(gort::Chan<int> c) {
  (void)c.Recv();
  lastCaller = 5;  // and not a tail call: this frame stays
}

// A goroutine parks once under RecvUnderC and is woken.
void ParkOnceElsewhere() {
  auto c = gort::MakeChan<int>();
  auto done = gort::MakeChan<int>();
  gort::Go([c, done] {
    RecvUnderC(c);
    done.Send(1);
  });
  gort_test::LetRunnextRun();
  c.Send(1);
  done.Recv();
}

// Two traces in one Run, on one thread (main locked to it, so its walks
// hit that thread's walk cache): the cache keeps each walk's stack id
// (runtime/trace.cc, traceStackID), and an id from the first trace's table
// must not be taken for the second's (whose ids start again at 1, here
// for other stacks first). Each sleep of each trace names its caller, the
// second trace's first one answered by the cache.
TEST(GoTraceTest, SecondTraceGetsItsOwnStackIds) {
  if (!kStacks) GTEST_SKIP() << "no goroutine stacks on this target";
  std::string first = TempTrace("first"), second = TempTrace("second");
  static volatile int twice = 2;
  const int sleeps = twice;  // so that the loop is not unrolled
  RunGuarded(
      [&] {
        gort::LockOSThread();
        for (const std::string& path : {first, second}) {
          ASSERT_TRUE(gort::StartTrace(path));
          // New stacks first in the second: other ids.
          if (path == second) ParkOnceElsewhere();
          for (int i = 0; i < sleeps; i++) SleepUnderA();  // one call site
          ASSERT_TRUE(gort::StopTrace());
        }
        gort::UnlockOSThread();
      },
      Procs(1));
  gt::Trace t1 = Load(first), t2 = Load(second);
  EXPECT_EQ(CallerSequence(t1, gt::kGoSleep, "SleepUnderA", "SleepUnderB"),
            "AA");
  EXPECT_EQ(CallerSequence(t2, gt::kGoSleep, "SleepUnderA", "SleepUnderB"),
            "AA");
}

// TableStacks: distinct stacks that tempt a careless table: thousands of
// the same depth (so buckets chain stacks of equal length), drawn from a
// small range of addresses, every prefix of one deep stack, and stacks
// that are others' addresses in reverse order.
std::vector<std::vector<std::uintptr_t>> TableStacks() {
  std::mt19937_64 rnd(30);
  std::set<std::vector<std::uintptr_t>> seen;
  std::vector<std::vector<std::uintptr_t>> out;
  auto add = [&](const std::vector<std::uintptr_t>& s) {
    if (seen.insert(s).second) out.push_back(s);
  };
  for (int i = 0; i < 4000; i++) {
    std::vector<std::uintptr_t> s(8);
    for (std::uintptr_t& pc : s) pc = 0x401000 + rnd() % 512;
    add(s);
  }
  std::vector<std::uintptr_t> deep(32);
  for (std::uintptr_t& pc : deep) pc = 0x401000 + rnd() % 512;
  for (std::size_t n = 1; n <= deep.size(); n++) {
    add(std::vector<std::uintptr_t>(deep.begin(), deep.begin() + n));
  }
  for (int i = 0; i < 200; i++) add({out[i].rbegin(), out[i].rend()});
  return out;
}

// Ms put the same stacks at once, each in its own order, twice: every stack
// gets one id whoever put it first, no two stacks share one, ids run 1..n,
// and the table's dump holds each stack at its id (so an event's id always
// names its own stack in the trace).
TEST(TraceStackTableTest, ConcurrentPutsGiveEachStackOneId) {
  namespace rt = gort::runtime;
  const std::vector<std::vector<std::uintptr_t>> stacks = TableStacks();
  const std::size_t n = stacks.size();
  auto tab = std::make_unique<rt::traceStackTable>();
  constexpr int kThreads = 4;
  std::vector<std::vector<std::uint32_t>> ids(kThreads,
                                              std::vector<std::uint32_t>(n, 0));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      std::vector<std::size_t> order(n);
      for (std::size_t i = 0; i < n; i++) order[i] = i;
      std::shuffle(order.begin(), order.end(), std::mt19937(t));
      for (int round = 0; round < 2; round++) {
        for (std::size_t i : order) {
          std::uint32_t id =
              tab->put(stacks[i].data(), static_cast<int>(stacks[i].size()));
          if (round == 1 && id != ids[t][i]) id = 0;  // a second id: wrong
          ids[t][i] = id;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  std::set<std::uint32_t> distinct;
  for (std::size_t i = 0; i < n; i++) {
    ASSERT_NE(ids[0][i], 0u) << "stack " << i;
    for (int t = 1; t < kThreads; t++) {
      ASSERT_EQ(ids[t][i], ids[0][i]) << "stack " << i << ", thread " << t;
    }
    distinct.insert(ids[0][i]);
  }
  EXPECT_EQ(distinct.size(), n);  // no two stacks share an id
  EXPECT_EQ(*distinct.begin(), 1u);
  EXPECT_EQ(*distinct.rbegin(), n);
  rt::traceStacks dump = tab->dump();
  ASSERT_EQ(dump.size(), n);
  for (std::size_t i = 0; i < n; i++) {
    ASSERT_EQ(dump[ids[0][i] - 1], stacks[i]) << "stack " << i;
  }
  EXPECT_EQ(tab->put(nullptr, 0), 0u);  // no stack, no id
  tab->reset();
  EXPECT_TRUE(tab->dump().empty());
  EXPECT_EQ(tab->put(stacks[5].data(), static_cast<int>(stacks[5].size())),
            1u);  // ids start again
}

// gort's own events (spinning, M park and unpark, usleep, steals) are left
// out of a trace in Go's format unless they are the first record of their M
// since it took or dropped a P: the claim is that the file is the same.
// With the test's shadow switch the skipped ones are recorded too, marked,
// and the records of a busy program at GOMAXPROCS 2 (Ms spinning, parking,
// handing off Ps in syscalls) must give the same file with and without them.
TEST(GoTraceTest, OwnEventsLeftOutLeaveTheFileAsItWas) {
  namespace rt = gort::runtime;
  rt::traceCapture cap;
  cap.shadow = true;
  rt::traceCaptureForTest.store(&cap);
  std::string path = TempTrace("own");
  RunGuarded(
      [&] {
        ASSERT_TRUE(gort::StartTrace(path));
        gort::WaitGroup wg;
        for (int p = 0; p < 4; p++) {
          wg.Add(1);
          gort::Go([&wg] {
            auto ping = gort::MakeChan<int>();
            auto pong = gort::MakeChan<int>();
            gort::Go([ping, pong] {
              for (int i = 0; i < 200; i++) pong.Send(ping.Recv());
            });
            for (int i = 0; i < 200; i++) {
              ping.Send(i);
              pong.Recv();
              if (i % 50 == 0) gort::Sleep(std::chrono::microseconds(200));
            }
            wg.Done();
          });
        }
        wg.Wait();
        // Every P idle a while: Ms park and wake for the timer.
        for (int i = 0; i < 20; i++) {
          gort::Sleep(std::chrono::microseconds(100));
        }
        gort_test::KnownProgram();
        ASSERT_TRUE(gort::StopTrace());
      },
      Procs(2));
  rt::traceCaptureForTest.store(nullptr);
  std::remove(path.c_str());
  std::vector<rt::traceRecord> all = cap.recs, kept;
  int shadow = 0, own = 0;
  for (const rt::traceRecord& r : cap.recs) {
    if (r.reason == rt::kTraceShadow) {  // any own event traceOwnSkip skips
      shadow++;
      continue;
    }
    bool isOwn =
        r.ev == rt::traceEv::MPark || r.ev == rt::traceEv::MUnpark ||
        r.ev == rt::traceEv::SpinStart || r.ev == rt::traceEv::SpinStop ||
        r.ev == rt::traceEv::Usleep || r.ev == rt::traceEv::Steal ||
        r.ev == rt::traceEv::PreemptReq || r.ev == rt::traceEv::NetpollBlock ||
        r.ev == rt::traceEv::NetpollWake;
    if (isOwn) own++;
    kept.push_back(r);
  }
  EXPECT_GE(shadow, 10) << "own events left out";
  EXPECT_GE(own, 10) << "own events kept: each M's first after a P change";
  std::string withAll =
      rt::traceGo(all, cap.stacks, cap.start, cap.end, cap.procs);
  std::string withKept =
      rt::traceGo(kept, cap.stacks, cap.start, cap.end, cap.procs);
  EXPECT_TRUE(withAll == withKept)
      << "the file changes when the skipped own events are left out ("
      << withAll.size() << " against " << withKept.size() << " bytes)";
}

// A trace longer than the chunks StartTrace touched: sysmon tops the pool up
// (traceRefillPool), so the records' page faults are taken on its thread.
// Records of 40 chunks' worth (StartTrace touches 64) leave it 24 chunks;
// with the P busy, sysmon must bring it back to 32 chunks.
TEST(GoTraceTest, SysmonTopsUpTheChunkPool) {
  namespace rt = gort::runtime;
  std::string path = TempTrace("pool");
  RunGuarded(
      [&] {
        ASSERT_TRUE(gort::StartTrace(path));
        for (int i = 0; i < 40 * 4096; i++) {
          rt::traceEvent(rt::traceEv::Steal, 0, 0, 1);
        }
        auto deadline =
            std::chrono::steady_clock::now() + std::chrono::seconds(5);
        // Spin without yielding: a Gosched would record events of its own.
        while (rt::tracePoolChunks() < 32 &&
               std::chrono::steady_clock::now() < deadline) {
        }
        EXPECT_GE(rt::tracePoolChunks(), 32) << "sysmon did not refill it";
        ASSERT_TRUE(gort::StopTrace());
      },
      Procs(1));
  std::remove(path.c_str());
}

// Captured runs body at GOMAXPROCS 1 under StartTrace (Go's format) and
// leaves in *cap the records StopTrace turned into the file.
void Captured(const std::string& name, const std::function<void()>& body,
              gort::runtime::traceCapture* cap) {
  gort::runtime::traceCaptureForTest.store(cap);
  std::string path = TempTrace(name);
  TraceTo(path, body);
  gort::runtime::traceCaptureForTest.store(nullptr);
  std::remove(path.c_str());
}

// entersyscall stamps GoSysCall while the goroutine still holds its P and
// writes the record once the P is _Psyscall (traceGoSysCallAt), when the M
// holds no P: the record must still name the P the call was entered on,
// carry the goroutine's stack, and come before sysmon's retake of that P.
TEST(GoTraceTest, SysCallWrittenAfterThePIsLetGoKeepsItsPAndStamp) {
  namespace rt = gort::runtime;
  rt::traceCapture cap;
  Captured("syscallp", gort_test::KnownProgram, &cap);
  std::vector<rt::traceRecord> calls, retakes;
  for (const rt::traceRecord& r : cap.recs) {
    if (r.ev == rt::traceEv::GoSysCall) calls.push_back(r);
    if (r.ev == rt::traceEv::ProcRetake) retakes.push_back(r);
  }
  ASSERT_EQ(calls.size(), 1u);
  ASSERT_EQ(retakes.size(), 1u);
  EXPECT_EQ(calls[0].p, 0);  // P0, though the M had let it go by then
  EXPECT_EQ(retakes[0].a0, 0);
  EXPECT_LT(calls[0].ts, retakes[0].ts);
  EXPECT_TRUE(!kStacks || calls[0].stk != 0);
}

// A buffer is a list of chunks, all full but the tail, whose count the
// buffer keeps (traceBuf::n): every record of two and a half chunks' worth
// written by one M comes back once, in order.
TEST(GoTraceTest, RecordsAcrossChunksAllComeBackInOrder) {
  namespace rt = gort::runtime;
  constexpr int kRecords = 10000;  // chunks of 4096
  constexpr std::int64_t kMark = 424242;
  rt::traceCapture cap;
  Captured(
      "chunks",
      [] {
        for (int i = 0; i < kRecords; i++) {
          rt::traceEvent(rt::traceEv::Steal, 0, i, kMark);
        }
      },
      &cap);
  std::vector<std::int64_t> seen;
  for (const rt::traceRecord& r : cap.recs) {
    if (r.ev == rt::traceEv::Steal && r.a1 == kMark) seen.push_back(r.a0);
  }
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(kRecords));
  for (int i = 0; i < kRecords; i++) {
    ASSERT_EQ(seen[i], i) << "record " << i;
  }
}

// Where the OS can fence other threads, a record's busy flag is a plain
// store and its look at traceOn a plain load (traceBusy: no locked
// instruction a record), and StopTrace must then fence the running threads
// between clearing traceOn and reading the flags; without that it could
// drain a buffer an M is still writing to.
TEST(GoTraceTest, StopFencesTheWritersWhenRecordsAreLight) {
  namespace rt = gort::runtime;
  std::int64_t before = 0;
  std::int64_t after = 0;
  std::string path = TempTrace("fence");
  RunGuarded(
      [&] {
        ASSERT_TRUE(gort::StartTrace(path));
        gort::Gosched();
        before = gort::os::processFences(gort::os::FenceFor::kTrace);
        ASSERT_TRUE(gort::StopTrace());
        after = gort::os::processFences(gort::os::FenceFor::kTrace);
      },
      Procs(2));
  std::remove(path.c_str());
  // (Whether fenceLight is on here is proc_export_test's to check: off
  // under ThreadSanitizer, else where the OS has the fence.)
  if (rt::fenceLight) {
    EXPECT_GT(after, before);
  } else {
    EXPECT_EQ(after, before);
  }
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
