// examples/scavenge.cc: memory coming back after a spike of goroutines.
//
// Starts n goroutines (default 100 000) that all wait on one channel, so
// each has touched a stack of its own, lets them all end, then idles and
// prints the process's resident set size every half second next to what
// the scheduler reports: the dead Gs kept for reuse (free_gs) and those the
// scavenger has freed with their stacks (gs_freed, stacks_released). A dead
// goroutine waits on the global free list; once it has gone unused for a
// whole GODEBUG=scavenge period (default 2000 ms), sysmon frees it and
// returns its stack's pages to the OS.
//
//   build/default/examples/gort-example-scavenge            # 100 000, 10 s
//   GODEBUG=scavenge=0 build/default/examples/gort-example-scavenge  # off
//
// The last line says whether RSS came back within 16 MiB of its value
// before the spike. RSS is read from /proc/self/status (Linux; elsewhere the
// RSS columns read 0).
//
// Usage: gort-example-scavenge [goroutines] [idle_seconds]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "gort/gort.h"

namespace {

// The resident set size in KiB, 0 if the OS does not say.
std::int64_t RssKiB() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return 0;
}

void Report(double t, std::int64_t base) {
  gort::Stats s = gort::ReadStats();
  std::int64_t rss = RssKiB();
  std::printf(
      "%6.1f s  rss %7.1f MiB (%+7.1f)  free_gs %6d  gs_freed %6lld"
      "  stacks_released %6lld\n",
      t, static_cast<double>(rss) / 1024,
      static_cast<double>(rss - base) / 1024, s.free_gs,
      static_cast<long long>(s.gs_freed),
      static_cast<long long>(s.stacks_released));
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 100000;
  const int idle = argc > 2 ? std::atoi(argv[2]) : 10;
  bool back = false;
  gort::Run([&] {
    const std::int64_t base = RssKiB();
    std::printf("before: rss %.1f MiB; %d goroutines\n",
                static_cast<double>(base) / 1024, n);
    auto gate = gort::MakeChan<int>();
    gort::WaitGroup started, done;
    started.Add(n);
    done.Add(n);
    for (int i = 0; i < n; i++) {
      gort::Go([&, gate]() mutable {
        started.Done();
        (void)gate.RecvOk();
        done.Done();
      });
    }
    started.Wait();
    std::printf("peak:   rss %.1f MiB\n", static_cast<double>(RssKiB()) / 1024);
    gate.Close();
    done.Wait();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i <= 2 * idle; i++) {
      double t =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
      Report(t, base);
      if (i < 2 * idle) gort::Sleep(std::chrono::milliseconds(500));
    }
    back = RssKiB() - base <= 16 * 1024;
    std::printf("rss within 16 MiB of before after %d s idle: %s\n", idle,
                back ? "yes" : "no");
  });
  return back ? 0 : 1;
}
