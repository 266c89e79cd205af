// examples/idle.cc: sysmon's back-off, to watch in the execution trace.
//
// sysmon sleeps 20 us between rounds while it keeps finding work, doubles
// the sleep after 50 rounds with nothing to do, up to 10 ms, and sleeps on
// a note until the next timer when every P is idle. This program is busy
// (yielding each millisecond, never in a syscall: nothing for sysmon to
// retake) for a while, then idle in Sleep, then busy again:
//
//   export GORT_TRACE_FORMAT=json   # gort-trace reads the JSON
//   GORT_TRACE=idle.json build/default/examples/gort-example-idle
//   build/default/tools/gort-trace summary idle.json   # the usleep lines
//
// Usage: gort-example-idle [busy_ms] [sleep_ms] (default 100 and 200).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "gort/gort.h"

namespace {

// Keeps the P busy for ms, yielding every millisecond (well within
// sysmon's 10 ms slice, so it preempts nobody).
void Busy(std::int64_t ms) {
  const std::int64_t end = gort::Nanotime() + ms * 1'000'000;
  while (gort::Nanotime() < end) {
    const std::int64_t slice = gort::Nanotime() + 1'000'000;
    while (gort::Nanotime() < slice) {
    }
    gort::Gosched();
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t busy = argc > 1 ? std::atoll(argv[1]) : 100;
  const std::int64_t sleep = argc > 2 ? std::atoll(argv[2]) : 200;
  gort::Run(
      [busy, sleep] {
        Busy(busy);
        const std::int64_t before = gort::ReadStats().sysmon_wakes;
        gort::Sleep(std::chrono::milliseconds(sleep));
        const std::int64_t during = gort::ReadStats().sysmon_wakes - before;
        Busy(busy / 2);
        std::printf(
            "busy %lld ms, idle %lld ms, busy %lld ms: sysmon woke %lld "
            "times in all, %lld of them while idle\n",
            static_cast<long long>(busy), static_cast<long long>(sleep),
            static_cast<long long>(busy / 2),
            static_cast<long long>(gort::ReadStats().sysmon_wakes),
            static_cast<long long>(during));
      },
      gort::Options{.maxprocs = 1});
}
