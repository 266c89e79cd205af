// tests/soak.cc: gort-soak, a long-running leak check (not a CTest test).
//
//   gort-soak [--seconds=N] [--procs=P]
//
// Runs channel, select and spawn traffic inside one gort::Run for N seconds
// (default 60) and prints the resident set size (VmRSS from
// /proc/self/status) after a warm-up, every 10 s, and at the end. Exits 1
// if the final RSS exceeds the warm-up RSS by more than 10% + 4 MiB, or if
// the traffic lost or duplicated a message; 0 otherwise.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gort/gort.h"

namespace {

using namespace std::chrono_literals;

// VmRSS in KiB, or -1.
long RssKiB() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

struct Totals {
  std::atomic<std::int64_t> sent{0};
  std::atomic<std::int64_t> received{0};
  std::atomic<std::int64_t> spawned{0};
  std::atomic<std::int64_t> selects{0};
  std::atomic<std::int64_t> panics{0};
};

// One round of traffic: a pipeline, a select fan-in with a close in flight,
// and a burst of short-lived goroutines. Returns false if a message was lost.
bool Round(Totals& t, int round) {
  bool ok = true;
  // Pipeline over channels of capacities 0, 1 and 64.
  {
    constexpr int kN = 2000;
    auto a = gort::MakeChan<int>(0);
    auto b = gort::MakeChan<int>(1);
    auto c = gort::MakeChan<int>(64);
    gort::Go([a] {
      for (int i = 0; i < kN; i++) a.Send(i);
      a.Close();
    });
    gort::Go([a, b] {
      while (auto v = a.RecvOk()) b.Send(*v);
      b.Close();
    });
    gort::Go([b, c] {
      while (auto v = b.RecvOk()) c.Send(*v);
      c.Close();
    });
    std::int64_t sum = 0;
    int count = 0;
    while (auto v = c.RecvOk()) {
      sum += *v;
      count++;
    }
    t.sent.fetch_add(kN);
    t.received.fetch_add(count);
    ok = ok && count == kN && sum == std::int64_t{kN} * (kN - 1) / 2;
  }
  // Select fan-in; one channel closes while senders are still sending.
  {
    constexpr int kSenders = 8;
    constexpr int kEach = 200;
    auto x = gort::MakeChan<int>(4);
    auto y = gort::MakeChan<int>(0);
    auto quit = gort::MakeChan<int>();
    std::atomic<int> sent{0};
    gort::WaitGroup wg;
    for (int s = 0; s < kSenders; s++) {
      wg.Add(1);
      gort::Go([&, x, y, s] {
        try {
          for (int i = 0; i < kEach; i++) {
            if ((i + s) % 2 == 0) {
              x.Send(1);
            } else {
              gort::Select(gort::SendCase(x, 1), gort::SendCase(y, 1));
            }
            sent.fetch_add(1);
          }
        } catch (const gort::Panic&) {
          t.panics.fetch_add(1);
        }
        wg.Done();
      });
    }
    gort::Go([&, quit] {
      wg.Wait();
      quit.Close();
    });
    int received = 0;
    bool closing = round % 2 == 0;  // close mid-traffic this round
    bool closed = false;
    gort::Chan<int> rx = x;  // the receiver's handles; nil once drained
    gort::Chan<int> ry = y;
    for (;;) {
      int v = 0;
      bool rok = false;
      int i = gort::Select(gort::RecvCase(rx, &v, &rok),
                           gort::RecvCase(ry, &v, &rok),
                           gort::RecvCase(quit, &v, &rok));
      t.selects.fetch_add(1);
      if (i == 2) break;
      if (rok) {
        received++;
      } else if (i == 0) {
        rx = gort::Chan<int>();  // closed and drained: nil, never ready
      } else {
        ry = gort::Chan<int>();
      }
      if (closing && received == kSenders * kEach / 2) {
        x.Close();  // senders on x now panic
        y.Close();
        closing = false;
        closed = true;
      }
    }
    // Every sender is done: close (if not yet) and drain what the buffered
    // channel still holds.
    if (!closed) {
      x.Close();
      y.Close();
    }
    while (x.RecvOk()) received++;
    ok = ok && received == sent.load();
  }
  // A burst of short-lived goroutines.
  {
    constexpr int kBurst = 500;
    gort::WaitGroup wg;
    std::atomic<int> ran{0};
    wg.Add(kBurst);
    for (int i = 0; i < kBurst; i++) {
      gort::Go([&] {
        ran.fetch_add(1);
        if (ran.load() % 3 == 0) gort::Gosched();
        wg.Done();
      });
    }
    wg.Wait();
    t.spawned.fetch_add(kBurst);
    ok = ok && ran.load() == kBurst;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  int seconds = 60;
  int procs = 0;
  for (int i = 1; i < argc; i++) {
    if (std::strncmp(argv[i], "--seconds=", 10) == 0) {
      seconds = std::atoi(argv[i] + 10);
    } else if (std::strncmp(argv[i], "--procs=", 8) == 0) {
      procs = std::atoi(argv[i] + 8);
    } else {
      std::fprintf(stderr, "usage: %s [--seconds=N] [--procs=P]\n", argv[0]);
      return 2;
    }
  }
  if (seconds < 1) seconds = 1;
  Totals totals;
  long warm_rss = -1;
  long end_rss = -1;
  bool ok = true;
  gort::Options options;
  options.maxprocs = procs;
  gort::Run(
      [&] {
        const std::int64_t start = gort::Nanotime();
        // Warm-up: a few seconds (or a tenth of the run) so that free lists,
        // stacks and thread counts reach their steady state.
        const std::int64_t warm_ns =
            std::min<std::int64_t>(5'000'000'000, seconds * 100'000'000LL);
        int round = 0;
        while (gort::Nanotime() - start < warm_ns) ok &= Round(totals, round++);
        warm_rss = RssKiB();
        std::printf("gort-soak: warm-up done after %d rounds: VmRSS %ld KiB\n",
                    round, warm_rss);
        std::fflush(stdout);
        const std::int64_t begin = gort::Nanotime();
        const std::int64_t end = begin + seconds * 1'000'000'000LL;
        std::int64_t next_report = begin + 10'000'000'000LL;
        while (gort::Nanotime() < end) {
          ok &= Round(totals, round++);
          if (gort::Nanotime() >= next_report) {
            std::printf(
                "gort-soak: t=%llds rounds=%d VmRSS %ld KiB goroutines=%d\n",
                static_cast<long long>((gort::Nanotime() - begin) /
                                       1'000'000'000),
                round, RssKiB(), gort::NumGoroutine());
            std::fflush(stdout);
            next_report += 10'000'000'000LL;
          }
        }
        end_rss = RssKiB();
        std::printf(
            "gort-soak: end after %d rounds: VmRSS %ld KiB; messages %lld "
            "sent %lld received, %lld selects, %lld goroutines spawned, "
            "%lld send-on-closed panics\n",
            round, end_rss, static_cast<long long>(totals.sent.load()),
            static_cast<long long>(totals.received.load()),
            static_cast<long long>(totals.selects.load()),
            static_cast<long long>(totals.spawned.load()),
            static_cast<long long>(totals.panics.load()));
      },
      options);
  const gort::Stats stats = gort::ReadStats();
  std::printf("gort-soak: threads=%d gomaxprocs=%d\n", stats.threads,
              stats.gomaxprocs);
  if (!ok) {
    std::printf("gort-soak: FAIL: a round lost or duplicated a message\n");
    return 1;
  }
  const long limit = warm_rss + warm_rss / 10 + 4096;
  if (warm_rss < 0 || end_rss < 0 || end_rss > limit) {
    std::printf(
        "gort-soak: FAIL: VmRSS grew from %ld KiB to %ld KiB "
        "(limit %ld KiB)\n",
        warm_rss, end_rss, limit);
    return 1;
  }
  std::printf("gort-soak: PASS: VmRSS %ld KiB -> %ld KiB (limit %ld KiB)\n",
              warm_rss, end_rss, limit);
  return 0;
}
