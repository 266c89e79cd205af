// examples/steal.cc: work stealing made to happen, so it can be watched.
//
// Each round, one goroutine creates a batch of goroutines, which go to its
// own P's run queue (runnext and the local queue), and then keeps its P
// busy without yielding until one of them has started. Until it yields,
// nothing of its queue can run on its own P: the one that started was
// stolen, by another P's spinning M. Each goroutine then computes for about
// a millisecond without yielding, so the queues stay long enough for
// schedtrace to show them being shared out.
//
//   export GORT_TRACE_FORMAT=json   # gort-trace reads the JSON
//   GORT_TRACE=steal.json build/default/examples/gort-example-steal
//   build/default/tools/gort-trace summary steal.json   # steals, spinning
//   GODEBUG=schedtrace=1 build/default/examples/gort-example-steal
//
// Usage: gort-example-steal [rounds] (default 10).
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "gort/gort.h"

namespace {

constexpr int kProcs = 4;
constexpr int kBatch = 32;
constexpr std::int64_t kWorkNs = 1'000'000;

// Computes for about ns without yielding (a goroutine with no safe point).
void Compute(std::int64_t ns) {
  const std::int64_t end = gort::Nanotime() + ns;
  while (gort::Nanotime() < end) {
  }
}

// One round: a batch on this P, then a busy wait for the first thief.
void Round(std::int64_t* waited_ns) {
  std::atomic<int> started{0};
  gort::WaitGroup wg;
  for (int i = 0; i < kBatch; i++) {
    wg.Add(1);
    gort::Go([&] {
      started.fetch_add(1);
      Compute(kWorkNs);
      wg.Done();
    });
  }
  const std::int64_t t0 = gort::Nanotime();
  // No Gosched here: only a thief can start one of the batch. A fallback
  // after a second, for a machine that never schedules the other threads.
  while (started.load() == 0 && gort::Nanotime() - t0 < 1'000'000'000) {
  }
  *waited_ns += gort::Nanotime() - t0;
  wg.Wait();
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
  gort::Run(
      [rounds] {
        const gort::Stats before = gort::ReadStats();
        std::int64_t waited_ns = 0;
        for (int r = 0; r < rounds; r++) Round(&waited_ns);
        const gort::Stats after = gort::ReadStats();
        std::printf(
            "%d rounds of %d goroutines on %d Ps: %lld steals moved %lld "
            "goroutines; the first thief came after %.1f us on average\n",
            rounds, kBatch, kProcs,
            static_cast<long long>(after.steals - before.steals),
            static_cast<long long>(after.stolen - before.stolen),
            rounds > 0 ? static_cast<double>(waited_ns) / 1e3 / rounds : 0.0);
      },
      gort::Options{.maxprocs = kProcs});
}
