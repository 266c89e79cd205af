// benchmarks/sched_loops.h: the loop bodies of gort-compare's scheduler,
// channel and memory benchmarks, beside the ping family of ping_loops.h.
// benchmarks/go/loops.go holds their Go twins, line for line, so that
// gort-compare can run both on the same machine in the same run.
//
// Each loop runs its benchmark `n` times and must be called from a
// goroutine, normally the main function given to gort::Run. They are plain
// inline functions so that tests can call them as correctness checks with a
// small n: every value that crosses a channel is checked, and a broken
// protocol prints "sched_loops: <what>" and aborts the process.
//
//   Gosched        two goroutines each call Gosched n times.
//   Spawn          GOMAXPROCS chains of goroutines, each starting the next
//                  and exiting: n goroutines created, run and finished (Go's
//                  BenchmarkCreateGoroutines / ...Parallel).
//   ChanBuffered   one producer, one consumer, a channel of capacity 128.
//   Select2        a select over two channels, exactly one ready (the body
//                  of Go's BenchmarkSelectUncontended).
//   Select2Handlers the same with OnRecv handlers (gort only).
//   ChanContended  4 producers and 4 consumers on one unbuffered channel.
//   MutexUncontended  Lock and Unlock of a Mutex nobody else wants (the
//                  fast paths; Go's BenchmarkMutexUncontended, one goroutine).
//   FanOut         per op, 256 goroutines of CPU work and a WaitGroup; with
//                  GOMAXPROCS 2 the second P only gets work by stealing.
//   ParkGoroutines starts `count` goroutines parked on a channel and
//                  measures the resident memory they take.
//   SpawnBurst     bursts of goroutines all started before any of them runs,
//                  then a WaitGroup wait.
//   ParkBurst      bursts of goroutines that each send once on a buffered
//                  channel main drains afterwards: most park first.
//   Skynet         atemerev/skynet: a 10-ary tree of goroutines over
//                  unbuffered channels (1 000 000 leaves by default).
#ifndef GORT_BENCHMARKS_SCHED_LOOPS_H_
#define GORT_BENCHMARKS_SCHED_LOOPS_H_

#if !defined(_WIN32)
#include <unistd.h>
#endif

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "benchmarks/loops_fail.h"
#include "gort/chan.h"
#include "gort/runtime.h"
#include "gort/select.h"
#include "gort/sync.h"

namespace gort::bench {

namespace sched_internal {

// Prints "sched_loops: <what>" and aborts.
[[noreturn]] inline void Fail(const char* what) {
  LoopsFail("sched_loops", what);
}

// Starts a goroutine that starts the next, n deep; the last one sends on
// *done (Go's benchmarkCreateGoroutines' f, which captures c by reference).
inline void SpawnChain(const gort::Chan<bool>* done, std::int64_t n) {
  if (n == 0) {
    done->Send(true);
    return;
  }
  gort::Go([done, n] { SpawnChain(done, n - 1); });
}

}  // namespace sched_internal

// Gosched: the main goroutine and a second one each call gort::Gosched n
// times; an op is one Gosched by each.
inline void Gosched(std::int64_t n) {
  auto done = gort::MakeChan<int>();
  gort::Go([n, done] {
    for (std::int64_t i = 0; i < n; ++i) gort::Gosched();
    done.Send(1);
  });
  for (std::int64_t i = 0; i < n; ++i) gort::Gosched();
  if (done.Recv() != 1) sched_internal::Fail("Gosched: done delivered != 1");
}

// Spawn: GOMAXPROCS chains of goroutines, each goroutine starting the next
// and exiting, n goroutines in all (plus one per chain); an op is one
// goroutine created, run and finished.
inline void Spawn(std::int64_t n) {
  const std::int64_t chains = gort::GOMAXPROCS(0);
  auto done = gort::MakeChan<bool>();
  for (std::int64_t c = 0; c < chains; ++c) {
    std::int64_t length = n / chains;
    if (c < n % chains) ++length;
    gort::Go([d = &done, length] { sched_internal::SpawnChain(d, length); });
  }
  for (std::int64_t c = 0; c < chains; ++c) {
    if (!done.Recv()) sched_internal::Fail("Spawn: done delivered false");
  }
}

// ChanBuffered's channel capacity.
inline constexpr std::size_t kChanBufferedCap = 128;

// ChanBuffered: one producer sends 0..n-1 on a channel of capacity 128, the
// main goroutine receives and checks them; an op is one value.
inline void ChanBuffered(std::int64_t n) {
  auto ch = gort::MakeChan<std::int64_t>(kChanBufferedCap);
  gort::Go([n, ch] {
    for (std::int64_t i = 0; i < n; ++i) ch.Send(i);
  });
  for (std::int64_t i = 0; i < n; ++i) {
    if (ch.Recv() != i) {
      sched_internal::Fail("ChanBuffered: values arrived out of order");
    }
  }
}

// Select2: a select over two channels of capacity 1 of which exactly one
// holds a value; the chosen case refills the other (the body of Go's
// BenchmarkSelectUncontended on one goroutine). An op is one select and one
// send.
inline void Select2(std::int64_t n) {
  auto c1 = gort::MakeChan<int>(1);
  auto c2 = gort::MakeChan<int>(1);
  c1.Send(0);
  for (std::int64_t i = 0; i < n; ++i) {
    int v = -1;
    switch (gort::Select(gort::RecvCase(c1, &v), gort::RecvCase(c2, &v))) {
      case 0:
        c2.Send(0);
        break;
      case 1:
        c1.Send(0);
        break;
      default:
        sched_internal::Fail("Select2: Select returned no case");
    }
    if (v != 0) sched_internal::Fail("Select2: received a value != 0");
  }
}

// Select2Handlers: Select2 written with handlers (OnRecv), gort-only, to
// show the handler form costs what the index form does
// (gort-select-forms measures the two interleaved).
inline void Select2Handlers(std::int64_t n) {
  auto c1 = gort::MakeChan<int>(1);
  auto c2 = gort::MakeChan<int>(1);
  c1.Send(0);
  for (std::int64_t i = 0; i < n; ++i) {
    int v = -1;
    gort::Select(gort::OnRecv(c1,
                              [&](int got) {
                                v = got;
                                c2.Send(0);
                              }),
                 gort::OnRecv(c2, [&](int got) {
                   v = got;
                   c1.Send(0);
                 }));
    if (v != 0) sched_internal::Fail("Select2Handlers: received a value != 0");
  }
}

inline constexpr int kContendedProducers = 4;
inline constexpr int kContendedConsumers = 4;

// ChanContended: 4 producers send 0..n-1 between them over one unbuffered
// channel, 4 consumers receive a quarter each and report their sums, which
// must add up to n(n-1)/2; an op is one value.
inline void ChanContended(std::int64_t n) {
  auto ch = gort::MakeChan<std::int64_t>();
  auto sums = gort::MakeChan<std::int64_t>(kContendedConsumers);
  for (std::int64_t p = 0; p < kContendedProducers; ++p) {
    gort::Go([ch, n, p] {
      for (std::int64_t v = p; v < n; v += kContendedProducers) ch.Send(v);
    });
  }
  for (std::int64_t c = 0; c < kContendedConsumers; ++c) {
    std::int64_t quota = n / kContendedConsumers;
    if (c < n % kContendedConsumers) ++quota;
    gort::Go([ch, sums, quota] {
      std::int64_t sum = 0;
      for (std::int64_t i = 0; i < quota; ++i) sum += ch.Recv();
      sums.Send(sum);
    });
  }
  std::int64_t total = 0;
  for (int c = 0; c < kContendedConsumers; ++c) total += sums.Recv();
  if (total != n * (n - 1) / 2) {
    sched_internal::Fail("ChanContended: the values received do not add up");
  }
}

// MutexUncontended: an op is one Lock and one Unlock of a Mutex only the
// calling goroutine uses, around an increment the loop checks.
inline void MutexUncontended(std::int64_t n) {
  gort::Mutex mu;
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    mu.Lock();
    ++count;
    mu.Unlock();
  }
  if (count != n) sched_internal::Fail("MutexUncontended: lost increments");
}

inline constexpr int kFanOutGoroutines = 256;  // Goroutines per op.
inline constexpr int kFanOutSteps = 4096;      // LCG steps per goroutine.

// Runs steps steps of a 64-bit linear congruential generator from seed: a
// chain of dependent multiply-adds that no compiler can shorten, so Go and
// C++ take the same time per step.
inline std::uint64_t FanOutWork(std::uint64_t seed, int steps) {
  std::uint64_t x = seed;
  for (int i = 0; i < steps; ++i) {
    x = x * 6364136223846793005u + 1442695040888963407u;
  }
  return x;
}

// FanOut: an op starts 256 goroutines that each run 4096 LCG steps (a few
// microseconds of CPU) and waits for all of them. The main goroutine's P
// queues them all, so with GOMAXPROCS 2 the second P gets work only by
// stealing; time per op should halve.
inline void FanOut(std::int64_t n) {
  struct State {
    std::array<std::uint64_t, kFanOutGoroutines> results{};
    gort::WaitGroup wg;
  };
  auto st = std::make_unique<State>();
  std::uint64_t want = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    st->wg.Add(kFanOutGoroutines);
    for (int g = 0; g < kFanOutGoroutines; ++g) {
      gort::Go([s = st.get(), g] {
        s->results[g] = FanOutWork(static_cast<std::uint64_t>(g), kFanOutSteps);
        s->wg.Done();
      });
    }
    st->wg.Wait();
    std::uint64_t sum = 0;
    for (std::uint64_t r : st->results) sum += r;
    if (i == 0) {
      want = sum;
    } else if (sum != want) {
      sched_internal::Fail("FanOut: the results changed between ops");
    }
  }
}

// SpawnBurst's default burst: goroutines started before any of them runs.
inline constexpr std::int64_t kSpawnBurst = 200'000;

// SpawnBurst: the main goroutine starts `burst` goroutines that each call
// WaitGroup.Done, then waits for them; with GOMAXPROCS 1 none runs before
// the wait, so they pile up in the run queues (and the global queue) first.
// Repeated n times: an op is one whole burst, so every run measures bursts
// of the same size (cut to what was left of n, a slower machine's shorter
// runs measured smaller bursts).
inline void SpawnBurst(std::int64_t n, std::int64_t burst = kSpawnBurst) {
  gort::WaitGroup wg;
  for (std::int64_t b = 0; b < n; ++b) {
    wg.Add(static_cast<int>(burst));
    for (std::int64_t i = 0; i < burst; ++i) {
      gort::Go([w = &wg] { w->Done(); });
    }
    wg.Wait();
  }
}

// ParkBurst's default burst.
inline constexpr std::int64_t kParkBurst = 100'000;

// ParkBurst's channel capacity.
inline constexpr std::size_t kParkBurstCap = 1024;

// ParkBurst: the main goroutine starts `burst` goroutines that each send
// once on a channel of capacity 1024, then receives every value: the first
// 1024 senders fill the buffer and the rest park, so unlike SpawnBurst most
// goroutines are alive, parked, at once (their stacks all in use).
// Repeated n times: an op is one whole burst, so the peak RSS is always
// that of `burst` goroutines (cut to what was left of n, a slower machine's
// shorter runs parked fewer at once, and took less memory).
inline void ParkBurst(std::int64_t n, std::int64_t burst = kParkBurst) {
  auto ch = gort::MakeChan<std::int64_t>(kParkBurstCap);
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t i = 0; i < burst; ++i) {
      gort::Go([ch, i] { ch.Send(i); });
    }
    std::int64_t sum = 0;
    for (std::int64_t i = 0; i < burst; ++i) sum += ch.Recv();
    if (sum != burst * (burst - 1) / 2) {
      sched_internal::Fail("ParkBurst: a value was lost or doubled");
    }
  }
}

// Skynet's default number of leaves (the 1M-goroutine tree).
inline constexpr std::int64_t kSkynetLeaves = 1'000'000;

namespace sched_internal {

// One node of the skynet tree: a leaf sends its number, an inner node
// starts 10 children on a fresh unbuffered channel, sums their answers and
// sends the sum on c.
inline void SkynetNode(gort::Chan<std::int64_t> c, std::int64_t num,
                       std::int64_t size) {
  if (size == 1) {
    c.Send(num);
    return;
  }
  constexpr std::int64_t kDiv = 10;
  auto rc = gort::MakeChan<std::int64_t>();
  for (std::int64_t i = 0; i < kDiv; ++i) {
    const std::int64_t sub = num + i * (size / kDiv);
    gort::Go([rc, sub, size] { SkynetNode(rc, sub, size / kDiv); });
  }
  std::int64_t sum = 0;
  for (std::int64_t i = 0; i < kDiv; ++i) sum += rc.Recv();
  c.Send(sum);
}

}  // namespace sched_internal

// Skynet (github.com/atemerev/skynet): n times, a tree of goroutines with
// `leaves` leaves (a power of 10), each inner node having 10 children and
// every edge an unbuffered channel; the leaves send their numbers, the
// inner nodes their sums. An op is one whole tree (1 111 111 goroutines for
// a million leaves); the root's sum is checked.
inline void Skynet(std::int64_t n, std::int64_t leaves = kSkynetLeaves) {
  for (std::int64_t i = 0; i < n; ++i) {
    auto c = gort::MakeChan<std::int64_t>();
    gort::Go([c, leaves] { sched_internal::SkynetNode(c, 0, leaves); });
    if (c.Recv() != leaves * (leaves - 1) / 2) {
      sched_internal::Fail("Skynet: the sum of the leaves is wrong");
    }
  }
}

// The resident set size of this process in bytes (/proc/self/statm), or -1
// (always on Windows, which has no /proc).
inline std::int64_t ResidentBytes() {
#if defined(_WIN32)
  return -1;
#else
  std::FILE* f = std::fopen("/proc/self/statm", "re");
  if (f == nullptr) return -1;
  long long size = 0;
  long long resident = -1;
  const int got = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  if (got != 2) return -1;
  return resident * sysconf(_SC_PAGESIZE);
#endif
}

// What ParkGoroutines measured.
struct ParkResult {
  std::int64_t rss_before = 0;  // Resident bytes before the goroutines.
  std::int64_t rss_parked = 0;  // Resident bytes with all of them parked.
  std::int64_t start_ns = 0;    // Time to start them all and see them parked.
};

// Starts count goroutines that each park receiving from one channel,
// measures the resident memory with all of them parked, then closes the
// channel and waits for all of them to exit.
inline ParkResult ParkGoroutines(std::int64_t count) {
  struct State {
    gort::Chan<int> ch = gort::MakeChan<int>();
    gort::WaitGroup parked;
    gort::WaitGroup exited;
  };
  auto st = std::make_unique<State>();
  ParkResult r;
  r.rss_before = ResidentBytes();
  const std::int64_t start = gort::Nanotime();
  st->parked.Add(static_cast<int>(count));
  st->exited.Add(static_cast<int>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    gort::Go([s = st.get()] {
      s->parked.Done();
      s->ch.Recv();
      s->exited.Done();
    });
  }
  st->parked.Wait();
  r.start_ns = gort::Nanotime() - start;
  r.rss_parked = ResidentBytes();
  st->ch.Close();
  st->exited.Wait();
  return r;
}

}  // namespace gort::bench

#endif  // GORT_BENCHMARKS_SCHED_LOOPS_H_
