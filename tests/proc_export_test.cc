// tests/proc_export_test.cc: the scheduler's internals tested directly, as
// Go's export_test.go lets runtime tests reach inside (RunSchedLocalQueue*
// and friends): a P's run queue (put, get, runnext, grabbing half,
// overflowing to the global queue), the steal order, the sudog cache, the
// timer heap, wakep's needspinning, semaphore handoff and Mutex's
// starvation mode.
// The run-queue and sudog tests drive free-standing Ps and Gs outside any
// Run; the timer tests run on the one P of a Run.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gort/gort.h"
#include "gtest/gtest.h"
#include "os/os.h"
#include "os/traceback_os.h"
#include "proc.h"
#include "race.h"
#include "runnext.h"
#include "runtime2.h"
#include "sema.h"
#include "trace.h"
#include "traceback.h"
#include "watchdog.h"

namespace gort::runtime {
namespace {

using gort_test::Procs;
using gort_test::RunGuarded;

// n free-standing Gs, freed with the fixture.
class RunqTest : public ::testing::Test {
 protected:
  void SetUp() override { ClearGlobalQueue(); }
  void TearDown() override { ClearGlobalQueue(); }

  std::vector<G*> MakeGs(int n) {
    std::vector<G*> gs;
    for (int i = 0; i < n; i++) {
      owned_.push_back(std::make_unique<G>());
      gs.push_back(owned_.back().get());
    }
    return gs;
  }
  // The global run queue, head first.
  static std::vector<G*> GlobalQueue() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    std::vector<G*> q;
    lock(&sched.lock);
    for (gQueueChunk* c = sched.runqhead; c != nullptr; c = c->next) {
      for (int i = c->head; i < c->tail; i++) q.push_back(c->g[i]);
    }
    unlock(&sched.lock);
    return q;
  }
  static void ClearGlobalQueue() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    lock(&sched.lock);
    globrunqfree();
    unlock(&sched.lock);
  }
  // Everything pp's local queue yields, runnext first.
  static std::vector<G*> Drain(P* pp) {
    std::vector<G*> out;
    bool inherit = false;
    while (G* gp = runqget(pp, &inherit)) out.push_back(gp);
    return out;
  }

  P p_;
  P p2_;

 private:
  std::vector<std::unique_ptr<G>> owned_;
};

TEST_F(RunqTest, PutGetIsFifoAndEmptyAfter) {
  EXPECT_TRUE(runqempty(&p_));
  bool inherit = true;
  EXPECT_EQ(runqget(&p_, &inherit), nullptr);
  std::vector<G*> gs = MakeGs(10);
  for (G* gp : gs) runqput(&p_, gp, false);
  EXPECT_FALSE(runqempty(&p_));
  for (G* want : gs) {
    G* got = runqget(&p_, &inherit);
    EXPECT_EQ(got, want);
    EXPECT_FALSE(inherit);
  }
  EXPECT_TRUE(runqempty(&p_));
}

// Go's RunSchedLocalQueueTest: the ring works however far the head and tail
// counters have advanced (they wrap around the 256 slots many times).
TEST_F(RunqTest, RingWrapsAround) {
  std::vector<G*> gs = MakeGs(kRunqSize);
  const int sizes[] = {1, 5, 37, kRunqSize / 2, 200, kRunqSize - 1, kRunqSize};
  for (int round = 0; round < 30; round++) {
    int n = sizes[round % 7];
    for (int i = 0; i < n; i++) runqput(&p_, gs[i], false);
    std::vector<G*> got = Drain(&p_);
    ASSERT_EQ(got, std::vector<G*>(gs.begin(), gs.begin() + n)) << round;
  }
  EXPECT_TRUE(GlobalQueue().empty());
}

TEST_F(RunqTest, RunnextRunsFirstAndInheritsTheTimeSlice) {
  std::vector<G*> gs = MakeGs(4);
  runqput(&p_, gs[0], false);
  runqput(&p_, gs[1], true);  // runnext
  runqput(&p_, gs[2], true);  // replaces gs[1], which goes to the tail
  bool inherit = false;
  EXPECT_EQ(runqget(&p_, &inherit), gs[2]);
  EXPECT_TRUE(inherit);
  EXPECT_EQ(runqget(&p_, &inherit), gs[0]);
  EXPECT_FALSE(inherit);
  EXPECT_EQ(runqget(&p_, &inherit), gs[1]);
  EXPECT_FALSE(inherit);
  // runnext alone makes the queue non-empty.
  runqput(&p_, gs[3], true);
  EXPECT_FALSE(runqempty(&p_));
  EXPECT_EQ(Drain(&p_), std::vector<G*>{gs[3]});
}

// A full ring moves its older half plus the new G to the global queue, in
// order, in one batch (runqputslow).
TEST_F(RunqTest, OverflowMovesHalfToTheGlobalQueue) {
  std::vector<G*> gs = MakeGs(kRunqSize + 1);
  for (int i = 0; i < kRunqSize; i++) runqput(&p_, gs[i], false);
  EXPECT_TRUE(GlobalQueue().empty());
  runqput(&p_, gs[kRunqSize], false);
  std::vector<G*> global = GlobalQueue();
  std::vector<G*> want(gs.begin(), gs.begin() + kRunqSize / 2);
  want.push_back(gs[kRunqSize]);
  EXPECT_EQ(global, want);
  EXPECT_EQ(sched.runqsize.load(), kRunqSize / 2 + 1);
  EXPECT_EQ(Drain(&p_), std::vector<G*>(gs.begin() + kRunqSize / 2,
                                        gs.begin() + kRunqSize));
}

// runqsteal takes the older half (rounded up) of the victim's queue, returns
// the newest of what it took and queues the rest on the thief.
TEST_F(RunqTest, StealTakesHalf) {
  for (int n = 1; n <= 20; n++) {
    std::vector<G*> gs = MakeGs(n);
    for (G* gp : gs) runqput(&p2_, gp, false);
    std::int64_t steals = sched.steals.load();
    G* got = runqsteal(&p_, &p2_, false);
    int took = n - n / 2;
    ASSERT_EQ(got, gs[took - 1]) << n;
    EXPECT_EQ(sched.steals.load(), steals + 1);
    EXPECT_EQ(Drain(&p_), std::vector<G*>(gs.begin(), gs.begin() + took - 1))
        << n;
    EXPECT_EQ(Drain(&p2_), std::vector<G*>(gs.begin() + took, gs.end())) << n;
  }
}

// runnext is taken only when the thief asks for it (the last of
// stealWork's rounds) and the victim's queue is otherwise empty.
TEST_F(RunqTest, StealRunnextOnlyWhenAsked) {
  std::vector<G*> gs = MakeGs(2);
  runqput(&p2_, gs[0], true);
  EXPECT_EQ(runqsteal(&p_, &p2_, false), nullptr);
  ASSERT_NE(p2_.status.load(), _Prunning);  // no pause before taking it
  EXPECT_EQ(runqsteal(&p_, &p2_, true), gs[0]);
  EXPECT_TRUE(runqempty(&p2_));
  EXPECT_TRUE(runqempty(&p_));
  // With a queue, runnext stays: the queue is stolen instead.
  runqput(&p2_, gs[0], true);
  runqput(&p2_, gs[1], false);
  EXPECT_EQ(runqsteal(&p_, &p2_, true), gs[1]);
  EXPECT_EQ(Drain(&p2_), std::vector<G*>{gs[0]});
}

// globrunqget takes a fair share (size/gomaxprocs + 1, at most max and half
// a ring), returns the first and queues the rest locally, in order.
TEST_F(RunqTest, GlobrunqgetTakesAFairShare) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  std::vector<G*> gs = MakeGs(10);
  int saved = gomaxprocs.load();
  gomaxprocs.store(4);
  lock(&sched.lock);
  for (G* gp : gs) globrunqput(gp);
  G* got = globrunqget(&p_, 0);  // 10/4 + 1 = 3
  unlock(&sched.lock);
  gomaxprocs.store(saved);
  EXPECT_EQ(got, gs[0]);
  EXPECT_EQ(Drain(&p_), (std::vector<G*>{gs[1], gs[2]}));
  EXPECT_EQ(GlobalQueue(), std::vector<G*>(gs.begin() + 3, gs.end()));
  EXPECT_EQ(sched.runqsize.load(), 7);
}

// The global queue keeps FIFO order across its chunks, for Gs added one at
// a time, as an array (runqputslow), as a linked batch (injectglist) and at
// the head (runqdrain); the chunks it empties are reused, not leaked or
// reallocated.
TEST_F(RunqTest, GlobalQueueKeepsOrderAcrossChunks)
ABSL_NO_THREAD_SAFETY_ANALYSIS {
  const int per = kGQueueChunkSize;
  std::vector<G*> gs = MakeGs(3 * per + 7);
  auto chunks = []() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    std::set<gQueueChunk*> all;
    for (gQueueChunk* l : {sched.runqhead, sched.runqfree}) {
      for (gQueueChunk* c = l; c != nullptr; c = c->next) all.insert(c);
    }
    return all;
  };
  int saved = gomaxprocs.load();
  gomaxprocs.store(1);
  std::set<gQueueChunk*> first;
  for (int round = 0; round < 2; round++) {
    lock(&sched.lock);
    for (int i = 2; i < per + 5; i++) globrunqput(gs[i]);
    globrunqputarray(gs.data() + per + 5, per);
    for (int i = 2 * per + 5; i < 3 * per + 7; i++) {
      gs[i]->schedlink = i + 1 < 3 * per + 7 ? gs[i + 1] : nullptr;
    }
    globrunqputbatch(gs[2 * per + 5], gs[3 * per + 6], per + 2);
    globrunqputhead(gs[1]);
    globrunqputhead(gs[0]);
    unlock(&sched.lock);
    EXPECT_EQ(GlobalQueue(), gs) << round;
    EXPECT_EQ(sched.runqsize.load(), 3 * per + 7) << round;
    if (round == 0) first = chunks();
    EXPECT_EQ(chunks(), first) << round;  // round 1 made none
    std::vector<G*> got;
    lock(&sched.lock);
    while (G* gp = globrunqget(&p_, 0)) {
      got.push_back(gp);
      for (G* local : Drain(&p_)) got.push_back(local);
    }
    unlock(&sched.lock);
    EXPECT_EQ(got, gs) << round;
    EXPECT_EQ(sched.runqsize.load(), 0) << round;
    EXPECT_TRUE(GlobalQueue().empty()) << round;
    EXPECT_EQ(chunks(), first) << round;  // every chunk kept for reuse
  }
  // A queue going from empty to one G and back keeps using one chunk.
  lock(&sched.lock);
  for (int i = 0; i < 3 * per; i++) {
    globrunqput(gs[0]);
    EXPECT_EQ(globrunqget(&p_, 1), gs[0]);
  }
  unlock(&sched.lock);
  EXPECT_EQ(chunks(), first);
  EXPECT_EQ(sched.runqhead, sched.runqtail);
  gomaxprocs.store(saved);
}

// ---------------------------------------------------------------------------
// Steal order (Go's randomOrder and randomEnum): every walk visits each P
// exactly once, and the walks together use every increment coprime to the P
// count, so no P is always visited first.

TEST(StealOrderTest, EveryWalkVisitsEachPOnceAndAllStridesOccur) {
  static_assert(kMaxGomaxprocs == 256, "the sizes below include the maximum");
  std::vector<std::uint32_t> counts;
  for (std::uint32_t c = 1; c <= 40; c++) counts.push_back(c);
  for (std::uint32_t c : {64u, 97u, 100u, 255u, 256u}) {
    counts.push_back(c);
  }
  for (std::uint32_t count : counts) {
    resetStealOrder(count);
    std::vector<std::uint32_t> coprimes;
    for (std::uint32_t i = 1; i <= count; i++) {
      if (std::gcd(i, count) == 1) coprimes.push_back(i);
    }
    std::vector<bool> incSeen(count + 1, false);
    std::vector<bool> startSeen(count, false);
    for (std::uint32_t r = 0; r < count * coprimes.size(); r++) {
      std::vector<int> visits(count, 0);
      randomEnum e = stealOrderStart(r);
      ASSERT_LT(e.inc, count + 1);
      incSeen[e.inc] = true;
      startSeen[e.position()] = true;
      std::uint32_t steps = 0;
      for (; !e.done(); e.next()) {
        ASSERT_LT(e.position(), count);
        visits[e.position()]++;
        ASSERT_LE(++steps, count);
      }
      ASSERT_EQ(visits, std::vector<int>(count, 1)) << count << " " << r;
    }
    for (std::uint32_t c : coprimes)
      EXPECT_TRUE(incSeen[c]) << count << " " << c;
    EXPECT_EQ(std::count(startSeen.begin(), startSeen.end(), true),
              static_cast<std::ptrdiff_t>(count));
  }
  resetStealOrder(1);  // as a fresh Run would leave it for one P
}

// ---------------------------------------------------------------------------
// The sudog cache

class SudogCacheTest : public ::testing::Test {
 protected:
  void TearDown() override ABSL_NO_THREAD_SAFETY_ANALYSIS {
    for (P* pp : {&p_, &p2_}) {
      while (pp->nsudog > 0) freeSudog(pp->sudogcache[--pp->nsudog]);
    }
    lock(&sched.sudoglock);
    while (sudog* s = sched.sudogcache) {
      sched.sudogcache = s->next;
      freeSudog(s);
    }
    unlock(&sched.sudoglock);
  }
  static int CentralCount() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    int n = 0;
    lock(&sched.sudoglock);
    for (sudog* s = sched.sudogcache; s != nullptr; s = s->next) n++;
    unlock(&sched.sudoglock);
    return n;
  }
  P p_;
  P p2_;
};

TEST_F(SudogCacheTest, ReleasedSudogIsClearedAndReusedFirst) {
  sudog* s = acquireSudog(&p_);
  ASSERT_NE(s, nullptr);
  G g;
  s->g = &g;
  s->elem = &g;
  s->isSelect = true;
  s->ticket = 7;
  releaseSudog(s, &p_);
  EXPECT_EQ(p_.nsudog, 1);
  sudog* again = acquireSudog(&p_);
  EXPECT_EQ(again, s);  // no allocation: the cached one
  EXPECT_EQ(again->g, nullptr);
  EXPECT_EQ(again->elem, nullptr);
  EXPECT_FALSE(again->isSelect);
  EXPECT_EQ(again->ticket, 0u);
  releaseSudog(again, &p_);
}

// A full per-P cache sends half to the central cache; an empty P refills
// half a cache from there before allocating.
TEST_F(SudogCacheTest, OverflowGoesCentralAndRefillsAnotherP) {
  std::vector<sudog*> all;
  for (int i = 0; i < kSudogCacheSize + 1; i++) {
    all.push_back(acquireSudog(&p_));  // the cache is empty: allocates
  }
  for (sudog* s : all) releaseSudog(s, &p_);
  EXPECT_EQ(p_.nsudog, kSudogCacheSize / 2 + 1);
  EXPECT_EQ(CentralCount(), kSudogCacheSize / 2);
  sudog* s = acquireSudog(&p2_);
  EXPECT_NE(std::find(all.begin(), all.end(), s), all.end());  // not new
  EXPECT_EQ(p2_.nsudog, kSudogCacheSize / 2 - 1);
  EXPECT_EQ(CentralCount(), 0);
  releaseSudog(s, &p2_);
}

// ---------------------------------------------------------------------------
// The timer heap: a 4-ary min-heap on when, per P.

void Noop(void*, std::uintptr_t) {}

// Checks pp's heap: each timer's idx, its P, the heap order, timer0When.
void ExpectHeap(P* pp, std::size_t want_size) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  lock(&pp->timersLock);
  const std::vector<timer*>& h = pp->timers;
  EXPECT_EQ(h.size(), want_size);
  for (std::size_t i = 0; i < h.size(); i++) {
    EXPECT_EQ(h[i]->idx, i);
    EXPECT_EQ(h[i]->pp.load(), pp);
    if (i > 0) {
      EXPECT_LE(h[(i - 1) / 4]->when, h[i]->when) << i;
    }
  }
  EXPECT_EQ(pp->timer0When.load(), h.empty() ? 0 : h[0]->when);
  unlock(&pp->timersLock);
}

// No sudog outlives a Run: goroutines parked on a channel, a select, a
// Mutex and a Cond when main returns, and one a Mutex had woken but that
// never ran again, all get theirs freed (it once leaked from that last one,
// found by LeakSanitizer).
TEST(SudogLeakTest, NoneOutliveARun) {
  for (int round = 0; round < 2; round++) {
    // Outside the Run: abandoned goroutines unwind after main returns.
    gort::Mutex mu;
    gort::Cond cond(&mu);
    gort::Mutex woken;
    RunGuarded(
        [&] {
          gort::Chan<int> c = gort::MakeChan<int>();
          gort::Chan<int> d = gort::MakeChan<int>();
          gort::Chan<int> e = gort::MakeChan<int>();
          gort::Go([c]() mutable { c.Send(1); });
          gort::Go([d, e] {
            int v = 0;
            (void)gort::Select(gort::RecvCase(d, &v), gort::RecvCase(e, &v));
          });
          woken.Lock();
          gort::Go([&] {
            mu.Lock();
            cond.Wait();
          });
          gort::Go([&] { woken.Lock(); });
          for (int i = 0; i < 10; i++) gort::Gosched();  // all four park
          EXPECT_GT(gort::runtime::sudogsAllocated(), 0);
          mu.Lock();  // the Cond's waiter has let it go
          gort::Go([&] { mu.Lock(); });
          for (int i = 0; i < 10; i++) gort::Gosched();
          woken.Unlock();  // readies its waiter, which never runs again
        },
        Procs(1));
    EXPECT_EQ(gort::runtime::sudogsAllocated(), 0) << "round " << round;
  }
}

TEST(TimerHeapTest, AddModDelKeepTheHeapOrdered) {
  RunGuarded(
      [] {
        constexpr int kTimers = 100;
        constexpr std::int64_t kHour = 3'600'000'000'000;
        const std::int64_t base = gort::Nanotime() + kHour;  // never fires
        std::vector<std::unique_ptr<timer>> ts;
        std::mt19937 rng(19);
        P* pp = getg()->m->p;
        for (int i = 0; i < kTimers; i++) {
          ts.push_back(std::make_unique<timer>());
          ts.back()->f = Noop;
          ts.back()->when = base + static_cast<std::int64_t>(rng() % 1000);
          addtimer(ts.back().get());
        }
        ExpectHeap(pp, kTimers);
        // Earlier, later, and the same when.
        for (int i = 0; i < kTimers; i += 3) {
          std::int64_t when =
              base + static_cast<std::int64_t>(rng() % 2000) - 500;
          EXPECT_TRUE(modtimer(ts[i].get(), when, 0));
        }
        ExpectHeap(pp, kTimers);
        EXPECT_TRUE(modtimer(ts[5].get(), base - 1000, 0));  // the new minimum
        ExpectHeap(pp, kTimers);
        // Delete every other one; a second delete reports not pending.
        for (int i = 0; i < kTimers; i += 2) EXPECT_TRUE(deltimer(ts[i].get()));
        for (int i = 0; i < kTimers; i += 2)
          EXPECT_FALSE(deltimer(ts[i].get()));
        ExpectHeap(pp, kTimers / 2);
        // modtimer re-arms a deleted timer and reports it was not pending.
        EXPECT_FALSE(modtimer(ts[0].get(), base + 1, 0));
        ExpectHeap(pp, kTimers / 2 + 1);
        for (auto& t : ts) deltimer(t.get());
        ExpectHeap(pp, 0);
      },
      Procs(1));
}

// execute clears a yield request the goroutine still carries (Go's
// execute): a request sysmon made just before gp yielded or parked is stale
// once gp starts a fresh slice, and must not make it yield again at its
// next safe point.
TEST(ExecuteTest, ClearsAStaleYieldRequest) {
  bool after = true;
  RunGuarded(
      [&] {
        getg()->preempt.store(true, std::memory_order_relaxed);
        gort::Gosched();  // gosched itself does not look at the request
        after = getg()->preempt.load(std::memory_order_relaxed);
      },
      Procs(1));
  EXPECT_FALSE(after);
}

// Where the OS can fence other threads, execute's half of its handshake
// with a goroutine dump is a plain store and load (no locked instruction on
// the switch path), and then every dump must fence the running threads
// between setting dumpFreezing and reading their flags; without that, a dump
// could walk a goroutine that an M has just started running.
TEST(ExecuteTest, DumpFencesTheThreadsWhenExecuteIsLight) {
  bool light = fenceLight;
  std::int64_t before = 0;
  std::int64_t after = 0;
  RunGuarded(
      [&] {
        before = os::processFences(os::FenceFor::kDump);
        std::string dump = gort::Stack(true);
        after = os::processFences(os::FenceFor::kDump);
        EXPECT_EQ(dump.rfind("goroutine ", 0), 0u);
      },
      Procs(2));
#if defined(GORT_TSAN)
  EXPECT_FALSE(light);  // TSan cannot see another thread's fence
#else
  EXPECT_EQ(light, os::processFenceInit());
#endif
  if (light) {
    EXPECT_GT(after, before);
  } else {
    EXPECT_EQ(after, before);
  }
}

// waitFor polls cond until it holds or 20 s pass; whether it held.
bool waitFor(const std::function<bool()>& cond) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// A thread that finds a runtime mutex held past its spinning goes to sleep
// on the futex, and the unlock must wake it. Under fenceLight (unlock a plain
// store and a load) the sleeper counts itself in waiters and fences every
// running thread first; elsewhere it marks the key 2, as Go's lock2 does.
TEST(LockTest, ContendedLockSleepsAndTheUnlockWakesIt) {
  auto* mu = new mutex;  // leaked if the sleeper is never woken
  lock(mu);
  std::int64_t fences = os::processFences(os::FenceFor::kLock);
  std::atomic<bool> held{false};
  std::atomic<std::int64_t> tid{0};
  std::thread t([&] {
    tid.store(os::gettid());
    lock(mu);
    held.store(true);
    unlock(mu);
  });
  // Asleep in the kernel, not only about to be: else the unlock's store
  // alone lets it in and a missing wake-up goes unseen. (Where the OS cannot
  // tell, threadBlocked is -1: the marks are all there is.) Unlocked either
  // way: the thread must end before the test does.
  EXPECT_TRUE(waitFor([&] {
    bool marked = fenceLight ? mu->waiters.load() == 1 : mu->key.load() == 2;
    return marked && tid.load() != 0 && os::threadBlocked(tid.load()) != 0;
  })) << "the other thread never went to sleep on the mutex";
  unlock(mu);
  if (!waitFor([&] { return held.load(); })) {
    t.detach();
    FAIL() << "the sleeper was never woken";
  }
  t.join();
  if (fenceLight) {
    EXPECT_GT(os::processFences(os::FenceFor::kLock), fences);
    EXPECT_EQ(mu->waiters.load(), 0u);
  }
  EXPECT_EQ(mu->key.load(), 0u);
  delete mu;
}

// Threads taking one runtime mutex in turn, sometimes yielding their CPU
// while they hold it (so that the others give up spinning and sleep), lose
// no increment and no wake-up.
TEST(LockTest, ThreadsThatSleepOnAMutexAllGetIt) {
  mutex mu;
  std::int64_t count = 0;
  constexpr int kThreads = 4;
  constexpr int kIters = 20000;
  std::vector<std::thread> ts;
  for (int i = 0; i < kThreads; i++) {
    ts.emplace_back([&] {
      for (int j = 0; j < kIters; j++) {
        lock(&mu);
        count++;
        if (j % 64 == 0) std::this_thread::yield();
        unlock(&mu);
      }
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(count, std::int64_t{kThreads} * kIters);
  EXPECT_EQ(mu.key.load(), 0u);
  EXPECT_EQ(mu.waiters.load(), 0u);
}

// TracedAtOneP runs body in a Run at GOMAXPROCS 1 under a JSON trace (in
// the temporary file name) and returns what StopTrace captured: every M's
// records, each M's in its order.
traceCapture TracedAtOneP(const std::string& name,
                          const std::function<void()>& body) {
  traceCapture cap;
  traceCaptureForTest.store(&cap);
  std::string path = ::testing::TempDir() + name;
  RunGuarded(
      [&] {
        ASSERT_TRUE(gort::StartTrace(path, gort::TraceFormat::kChromeJSON));
        body();
        ASSERT_TRUE(gort::StopTrace());
      },
      Procs(1));
  traceCaptureForTest.store(nullptr);
  std::remove(path.c_str());
  return cap;
}

// wakep with no idle P cannot start anyone; it leaves sched.needspinning for
// the M that next drops a P, which must spin instead of parking (Go 1.20's
// fix of the lost wakeup). One P: while main runs there is no idle P, and
// a pretend spinning M makes the M that parks main look without spinning,
// so only needspinning can make it spin. A sleep can end before the M
// gets as far as dropping its P (under qemu), so main sleeps until one did.
// The timer sleeper spins when it wakes too (TimerSleeperTest), which also
// clears needspinning, so the trace says which came first: the M's spin
// must come before it parks for the timer.
TEST(WakepTest, NoIdlePAsksTheNextMThatDropsAPToSpin) {
  std::uint32_t afterWakep = 0;
  std::int32_t spinningAfterWakep = -1;
  std::uint32_t afterPark = 1;
  traceCapture cap = TracedAtOneP("gort_needspinning.json", [&] {
    wakep();
    afterWakep = sched.needspinning.load();
    spinningAfterWakep = sched.nmspinning.load();
    sched.nmspinning.fetch_add(1);  // someone else is spinning
    for (int i = 0; i < 200 && sched.needspinning.load() == 1; i++) {
      gort::Sleep(std::chrono::milliseconds(1));
    }
    afterPark = sched.needspinning.load();
    sched.nmspinning.fetch_sub(1);
    sched.needspinning.store(0);
  });
  EXPECT_EQ(afterWakep, 1u) << "wakep found no P and asked nobody to spin";
  EXPECT_EQ(spinningAfterWakep, 0) << "wakep kept a spinning slot it can't use";
  EXPECT_EQ(afterPark, 0u) << "the M that dropped its P did not spin for it";
  // Main's M, in its order: after main blocks, which comes first, a
  // SpinStart or an MPark? (Spinning, it may find main's timer due and
  // never park: a slow machine.)
  std::map<std::int32_t, bool> blocked;
  int first = 0;  // 1: MPark, 2: SpinStart
  for (const traceRecord& r : cap.recs) {
    if (r.ev == traceEv::GoBlock && r.g == 1) {
      blocked[r.m] = true;
    } else if (blocked[r.m] && first == 0 && r.ev == traceEv::SpinStart) {
      first = 2;
    } else if (blocked[r.m] && first == 0 && r.ev == traceEv::MPark) {
      first = 1;
    }
  }
  EXPECT_EQ(first, 2) << "main's M parked before it spun for needspinning"
                      << " (0: it neither spun nor parked)";
}

// ---------------------------------------------------------------------------
// Semaphores: lifo queueing and handoff (Go's semacquire1, semrelease1).

// With handoff, the woken waiter owns the count before it runs and runs
// before the releaser goes on; without, the releaser goes on first and the
// count waits for the waiter. One P, so the order is the scheduler's.
TEST(SemaHandoffTest, HandoffRunsTheWaiterBeforeTheReleaserGoesOn) {
  for (bool handoff : {false, true}) {
    std::uint32_t sem = 0;
    bool waiterRan = false;
    bool ranBeforeReleaseReturned = false;
    std::uint32_t countSeenByReleaser = 99;
    RunGuarded(
        [&] {
          gort::WaitGroup wg;
          wg.Add(1);
          gort::Go([&] {
            semacquire1(&sem, false, waitReason::semacquire);
            waiterRan = true;
            wg.Done();
          });
          gort_test::LetRunnextRun();  // the waiter parks on sem
          semrelease1(&sem, handoff);
          ranBeforeReleaseReturned = waiterRan;
          countSeenByReleaser = std::atomic_ref<std::uint32_t>(sem).load();
          wg.Wait();
        },
        Procs(1));
    EXPECT_TRUE(waiterRan);
    EXPECT_EQ(ranBeforeReleaseReturned, handoff) << "handoff " << handoff;
    // Without handoff the count waits for the waiter to take it.
    EXPECT_EQ(countSeenByReleaser, handoff ? 0u : 1u) << "handoff " << handoff;
  }
}

// Starts a goroutine that waits on sem (ahead of the others with lifo),
// notes id in *order, runs then() and quits, and lets it park.
void StartSemWaiter(std::uint32_t* sem, bool lifo, std::vector<int>* order,
                    int id, gort::WaitGroup* wg,
                    std::function<void()> then = {}) {
  wg->Add(1);
  gort::Go([=] {
    semacquire1(sem, lifo, waitReason::semacquire);
    order->push_back(id);
    if (then) then();
    wg->Done();
  });
  gort_test::LetRunnextRun();
}

// A handed-off count is the waiter's: the releaser, acquiring again at
// once, cannot take it back and parks behind the waiter instead.
TEST(SemaHandoffTest, HandedOffCountCannotBeTakenBackByTheReleaser) {
  std::uint32_t sem = 0;
  std::vector<int> order;
  RunGuarded(
      [&] {
        gort::WaitGroup wg;
        StartSemWaiter(&sem, false, &order, 1, &wg,
                       [&] { semrelease1(&sem, false); });
        semrelease1(&sem, true);
        semacquire1(&sem, false, waitReason::semacquire);
        order.push_back(0);
        wg.Wait();
      },
      Procs(1));
  EXPECT_EQ(order, (std::vector<int>{1, 0}));
}

// A lifo waiter goes ahead of those already queued on the same address.
TEST(SemaHandoffTest, LifoWaiterIsReleasedFirst) {
  std::uint32_t sem = 0;
  std::vector<int> order;
  RunGuarded(
      [&] {
        gort::WaitGroup wg;
        for (int i = 0; i < 3; i++) {
          StartSemWaiter(&sem, i == 2, &order, i, &wg);  // 2 comes last
        }
        for (int i = 0; i < 3; i++) {
          semrelease1(&sem, false);
          gort_test::LetRunnextRun();  // the woken waiter runs and notes its id
        }
        wg.Wait();
      },
      Procs(1));
  EXPECT_EQ(order, (std::vector<int>{2, 0, 1}));
}

// ---------------------------------------------------------------------------
// Mutex starvation mode (Go's sync/mutex.go), seen in its state word.

bool Starving(const gort::Mutex& mu) {
  return (mutexExport::state(mu) & kMutexStarving) != 0;
}
int Waiters(const gort::Mutex& mu) {
  return mutexExport::state(mu) >> kMutexWaiterShift;
}

// Restores the starvation threshold a test changed.
class MutexStarvationTest : public ::testing::Test {
 protected:
  void TearDown() override { starvationThresholdNs.store(kGoThreshold); }
  static constexpr std::int64_t kGoThreshold = 1'000'000;  // Go's 1 ms
};

// Starts a goroutine that locks mu, notes `id` in *order, runs inside() and
// unlocks, and lets it run until it parks in Lock (mu is held).
void StartWaiter(gort::Mutex* mu, std::vector<int>* order, int id,
                 gort::WaitGroup* wg, std::function<void()> inside = {}) {
  wg->Add(1);
  gort::Go([=] {
    mu->Lock();
    order->push_back(id);
    if (inside) inside();
    mu->Unlock();
    wg->Done();
  });
  gort_test::LetRunnextRun();
}

// A waiter that waited more than 1 ms switches the mutex to starvation
// mode; Unlock then hands it the lock even though the unlocker locks again
// at once, and the waiter, the last one, switches back to normal mode.
TEST_F(MutexStarvationTest, EnteredAfterAWaitPastTheThresholdLeftByTheLast) {
  ASSERT_EQ(starvationThresholdNs.load(), kGoThreshold);
  std::vector<int> order;
  bool starvingWhileHeld = false;
  bool starvingAfter = true;
  int waitersWhileHeld = -1;
  RunGuarded(
      [&] {
        gort::Mutex mu;
        gort::WaitGroup wg;
        mu.Lock();
        StartWaiter(&mu, &order, 1, &wg);
        gort::Sleep(std::chrono::milliseconds(2));  // > the threshold
        // Normal mode: the unlock wakes the waiter, but we (running) lock
        // again before it runs; it finds the lock held, having waited
        // 2 ms, and switches the mutex to starvation mode.
        mu.Unlock();
        mu.Lock();
        gort::Gosched();
        starvingWhileHeld = Starving(mu);
        waitersWhileHeld = Waiters(mu);
        mu.Unlock();  // handoff: the waiter runs before we go on
        mu.Lock();
        order.push_back(0);
        starvingAfter = Starving(mu);
        mu.Unlock();
        wg.Wait();
      },
      Procs(1));
  EXPECT_TRUE(starvingWhileHeld);
  EXPECT_EQ(waitersWhileHeld, 1);
  EXPECT_FALSE(starvingAfter);
  EXPECT_EQ(order, (std::vector<int>{1, 0}));
}

// In starvation mode the lock goes to the waiters in turn. The mode stays
// while each waiter that gets it waited too long and leaves others behind
// (the threshold is 0 for waiters 1 and 2), and ends with waiter 3, which
// waited less than the threshold (made huge by 2), though 4 still waits.
TEST_F(MutexStarvationTest, StaysForOldWaitersLeftByAWaiterThatWaitedLittle) {
  std::vector<int> order;
  std::vector<bool> starving;  // seen by waiters 1, 2 and 3 holding the lock
  std::vector<int> waiters;    // likewise
  RunGuarded(
      [&] {
        gort::Mutex mu;
        gort::WaitGroup wg;
        auto note = [&] {
          starving.push_back(Starving(mu));
          waiters.push_back(Waiters(mu));
        };
        starvationThresholdNs.store(0);  // every wait is too long
        mu.Lock();
        StartWaiter(&mu, &order, 1, &wg, note);
        StartWaiter(&mu, &order, 2, &wg, [&] {
          note();
          starvationThresholdNs.store(kGoThreshold * 1'000'000);
        });
        StartWaiter(&mu, &order, 3, &wg, note);
        StartWaiter(&mu, &order, 4, &wg);
        // Wake waiter 1 and lock again before it runs: it starves.
        mu.Unlock();
        mu.Lock();
        gort::Gosched();
        mu.Unlock();  // hands off to 1, which hands off to 2, then 3
        wg.Wait();
      },
      Procs(1));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(starving, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(waiters, (std::vector<int>{3, 2, 1}));
}

// WaitForSysmonClock yields until sysmon has published its clock, which it
// does at its first round with a P busy.
void WaitForSysmonClock() {
  while (sched.sysmonclock.now.load(std::memory_order_acquire) == 0) {
    gort::Gosched();
  }
}

// The dump's "N minutes" (Go's goroutineheader (traceback.go:1004)): park_m
// stamps a goroutine with the time it parked (waitsince, from sysmon's clock:
// parkstamp), and the dump counts whole minutes from it. The stamp is checked
// against sysmon's clock read before the park and the real clock read after
// it; then it is moved three minutes back, and the dump must say so. An
// attempt in which sysmon flagged a goroutine does not count (see
// ParkTest.ParkedSenderAndReceiverResumeInChansendAndChanrecv).
TEST(WaitSinceTest, ParkedGoroutineIsStampedAndTheDumpCountsMinutes) {
  RunGuarded(
      [] {
        WaitForSysmonClock();
        auto c = gort::MakeChan<int>();
        G* parked = nullptr;
        std::int64_t before = 0;
        std::int64_t after = 0;
        for (int attempt = 0;; attempt++) {
          ASSERT_LT(attempt, 20) << "sysmon flagged a goroutine every time";
          std::int64_t flags = gort::ReadStats().preempt_requests;
          before = sched.sysmonclock.now.load(std::memory_order_acquire);
          gort::Go([c, &parked] {
            parked = getg();
            c.Recv();
          });
          gort::Gosched();  // at GOMAXPROCS 1 it runs from runnext and parks
          after = os::nanotime();
          if (gort::ReadStats().preempt_requests == flags) break;
          c.Send(1);  // flagged: it may have yielded instead; let it go
        }
        ASSERT_NE(parked, nullptr);
        ASSERT_EQ(readgstatus(parked), _Gwaiting);
        // sysmon's clock only moves forward, and reads 0 (the real clock
        // then) only while sysmon sleeps.
        EXPECT_GE(parked->waitsince, before);
        EXPECT_LE(parked->waitsince, after);
        parked->waitsince -= 3 * 60'000'000'000LL;
        std::string dump = gort::Stack(true);
        std::string header =
            "goroutine " +
            std::to_string(parked->goid.load(std::memory_order_relaxed)) +
            " [chan receive, 3 minutes]:";
        EXPECT_NE(dump.find(header), std::string::npos) << dump;
        c.Send(1);
      },
      Procs(1));
}

// With no clock from sysmon (0: asleep on its note, or not started) a park
// reads the real clock; with one, it takes it as it is. Outside a Run no
// sysmon writes the clock (a Run before this one may have left its last
// reading: the next Run's schedinit clears it).
TEST(WaitSinceTest, ParkstampReadsTheRealClockOnlyWithoutSysmons) {
  sched.sysmonclock.now.store(0, std::memory_order_relaxed);
  std::int64_t before = os::nanotime();
  std::int64_t stamp = parkstamp();
  std::int64_t after = os::nanotime();
  EXPECT_GE(stamp, before);
  EXPECT_LE(stamp, after);
  sched.sysmonclock.now.store(12345, std::memory_order_relaxed);
  EXPECT_EQ(parkstamp(), 12345);
  sched.sysmonclock.now.store(0, std::memory_order_relaxed);
}

// sysmon withdraws its clock before it sleeps on its note: a clock kept
// through a sleep of up to a minute would date every park in that time back
// to the sleep's start. A thread outside the Run samples sysmonwait, the
// clock and sysmonwait again, with sysmon's wake-up count around them (it
// wakes from a usleep between any two sleeps on its note), until one sample
// falls within one such sleep; main sleeps meanwhile, so every P is idle.
TEST(WaitSinceTest, SysmonWithdrawsItsClockWhileItSleeps) {
  RunGuarded(
      [] {
        WaitForSysmonClock();  // a clock to withdraw
        std::atomic<bool> done{false};
        std::int64_t clock = -1;
        std::thread watcher([&] {
          for (;;) {
            std::int64_t w1 = sched.sysmonWakes.load(std::memory_order_acquire);
            bool sw1 = sched.sysmonwait.load(std::memory_order_acquire);
            std::int64_t c =
                sched.sysmonclock.now.load(std::memory_order_acquire);
            bool sw2 = sched.sysmonwait.load(std::memory_order_acquire);
            std::int64_t w2 = sched.sysmonWakes.load(std::memory_order_acquire);
            if (sw1 && sw2 && w1 == w2) {
              clock = c;
              break;
            }
            std::this_thread::yield();
          }
          done.store(true, std::memory_order_release);
        });
        while (!done.load(std::memory_order_acquire)) {
          gort::Sleep(std::chrono::milliseconds(20));
        }
        watcher.join();
        EXPECT_EQ(clock, 0);
      },
      Procs(1));
}

// Gosched gives a goroutine a fresh time slice, as Go's does by way of the
// global queue (execute with inheritTime false counts schedtick, which
// sysmon's preemption watches), also when gosched_m takes the next G from
// the global queue itself.
TEST(GoschedTest, EachGoschedStartsAFreshSlice) {
  RunGuarded(
      [] {
        P* pp = getg()->m->p;
        std::uint32_t before = pp->schedtick.load(std::memory_order_relaxed);
        for (int i = 0; i < 10; i++) gort::Gosched();
        EXPECT_EQ(getg()->m->p, pp);
        EXPECT_EQ(pp->schedtick.load(std::memory_order_relaxed) - before, 10u);
      },
      Procs(1));
}

// firstCaller: the first function on gp's parked stack that is not the
// switch itself (gort::os, gort_gogo, jump_fcontext), as symbolize names the
// real (not inlined) function of a frame; empty if this target cannot walk
// or name it.
std::string firstCaller(G* gp) {
  std::uintptr_t pcs[16];
  char* lo = static_cast<char*>(gp->stack.base) + gp->stack.guard;
  char* hi = static_cast<char*>(gp->stack.base) + gp->stack.size;
  int n = os::tracebackParked(gp->ctx, lo, hi, pcs, 16);
  for (int i = 0; i < n; i++) {
    os::Symbol syms[16];
    int k = os::symbolize(pcs[i], syms, 16);
    if (k <= 0) return "";
    const std::string& f = syms[k - 1].function;
    if (f.rfind("gort::os::", 0) == 0 || f.rfind("gort_gogo", 0) == 0 ||
        f.rfind("jump_fcontext", 0) == 0) {
      continue;
    }
    return f;
  }
  return "";
}

// park.h: mcall and gopark are inline, and chan.cc inlines its park into
// chansend and chanrecv, so a parked sender or receiver resumes in chansend
// or chanrecv's own frame, with no return through mcall, gopark or park
// (each a return the processor mispredicts after a switch). An attempt in
// which sysmon flagged a goroutine does not count: the sender runs on
// main's time slice (runnext), and flagged it yields at its Send instead
// of parking there (on a loaded host a sanitizer build's slice can be
// 10 ms old by then); the next attempt starts on a fresh slice.
TEST(ParkTest, ParkedSenderAndReceiverResumeInChansendAndChanrecv) {
  RunGuarded(
      [] {
        for (int attempt = 0; attempt < 20; attempt++) {
          std::int64_t before = gort::ReadStats().preempt_requests;
          auto c = gort::MakeChan<int>();
          auto d = gort::MakeChan<int>();
          G* receiver = nullptr;
          G* sender = nullptr;
          gort::Go([c, &receiver] {
            receiver = getg();
            c.Recv();
          });
          gort::Go([d, &sender] {
            sender = getg();
            d.Send(1);
          });
          gort::Gosched();  // at GOMAXPROCS 1 both run and park
          std::uint32_t rs = readgstatus(receiver);
          std::uint32_t ss = readgstatus(sender);
          std::string r = rs == _Gwaiting ? firstCaller(receiver) : "";
          std::string s = ss == _Gwaiting ? firstCaller(sender) : "";
          bool flagged = gort::ReadStats().preempt_requests != before;
          c.Send(1);
          d.Recv();
          if (flagged) continue;
          ASSERT_EQ(rs, _Gwaiting);
          ASSERT_EQ(ss, _Gwaiting);
          if (r.empty()) GTEST_SKIP() << "no parked-stack walk or symbols here";
          EXPECT_EQ(r.rfind("gort::internal::chanrecv", 0), 0u) << r;
          EXPECT_EQ(s.rfind("gort::internal::chansend", 0), 0u) << s;
          return;
        }
        FAIL() << "sysmon flagged a goroutine in every attempt";
      },
      Procs(1));
}

// ---------------------------------------------------------------------------
// The timer sleeper (findRunnable without a poller).

// The timer sleeper spins when it wakes with a P, so that finding work
// makes resetspinning wake an M for the Ps still idle. It may not get the P
// whose timer it slept for (pidleget takes the last P idled), and a busy M
// never looks at another P's timers while it finds work of its own:
// lockosthread_test's goroutine locked in Sleep waited for good about one
// run in 60. One P here: a Sleep of main makes its M give the P up and
// sleep for the timer, so each wake-up must spin before main starts.
TEST(TimerSleeperTest, WakesSpinning) {
  traceCapture cap = TracedAtOneP("gort_timer_sleeper.json", [] {
    for (int i = 0; i < 10; i++) gort::Sleep(std::chrono::milliseconds(2));
  });
  // Each M's records are in its order: after an M's MUnpark, does SpinStart
  // or main's GoStart come first?
  std::map<std::int32_t, bool> woke;
  int starts = 0, spun = 0;
  for (const traceRecord& r : cap.recs) {
    if (r.ev == traceEv::MUnpark) {
      woke[r.m] = true;
    } else if (woke[r.m] && r.ev == traceEv::SpinStart) {
      spun++;
      starts++;
      woke[r.m] = false;
    } else if (woke[r.m] && r.ev == traceEv::GoStart && r.g == 1) {
      starts++;
      woke[r.m] = false;
    }
  }
  // A sleep can end before the M has dropped its P (a slow machine): one
  // wake-up is enough to judge by.
  EXPECT_GE(starts, 1) << "main's Ms did not sleep for its timers";
  EXPECT_EQ(spun, starts) << "a woken timer sleeper started main unspun";
}

}  // namespace
}  // namespace gort::runtime
