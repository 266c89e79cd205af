// benchmarks/compare_child.cc: gort-compare's measuring child (--child):
// one measurement of one gort benchmark in this process, reported to the
// parent on stdout in the line protocol (benchmarks/go/main.go describes
// it), a "step" line before each stage so that the parent can tell a hang
// from progress.

#include <sys/resource.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "benchmarks/compare.h"
#include "benchmarks/harness.h"
#include "benchmarks/ping_loops.h"
#include "benchmarks/sched_loops.h"
#include "gort/runtime.h"

namespace gort_compare {
namespace {

// Writes one protocol line to stdout with a single write(2).
void Emit(const std::string& line) {
  const std::string text = line + "\n";
  gort::bench::WriteAllOrExit(STDOUT_FILENO, text.data(), text.size());
}

std::int64_t CpuNanos() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return (static_cast<std::int64_t>(ru.ru_utime.tv_sec) + ru.ru_stime.tv_sec) *
             1'000'000'000 +
         (static_cast<std::int64_t>(ru.ru_utime.tv_usec) +
          ru.ru_stime.tv_usec) *
             1'000;
}

}  // namespace

int RunChild(const Config& config) {
  const Benchmark* bench = FindBenchmark(config.bench);
  if (bench == nullptr) {
    std::fprintf(stderr, "gort-compare: --child: unknown benchmark %s\n",
                 config.bench.c_str());
    return 2;
  }
  const std::vector<gort::UsleepMode> modes =
      gort::bench::ParseUsleepModes(config.usleep);
  if (modes.size() != 1) {
    std::fprintf(stderr, "gort-compare: --child: bad --usleep %s\n",
                 config.usleep.c_str());
    return 2;
  }
  char buf[256];
  std::string result;
  Emit("step gort::Run start (main not yet running)");
  gort::Run(
      [&] {
        const gort::Stats s0 = gort::ReadStats();
        if (bench->kind == Kind::kPark) {
          const std::int64_t count =
              config.goroutines > 0 ? config.goroutines : bench->goroutines;
          std::snprintf(buf, sizeof(buf), "step parking %" PRId64 " goroutines",
                        count);
          Emit(buf);
          const std::int64_t c0 = CpuNanos();
          gort::bench::ParkResult r = gort::bench::ParkGoroutines(count);
          const std::int64_t cpu = CpuNanos() - c0;
          std::snprintf(buf, sizeof(buf),
                        "result n=%" PRId64 " ns=%" PRId64 " cpu-ns=%" PRId64
                        " rss-before=%" PRId64 " rss-parked=%" PRId64,
                        count, r.start_ns, cpu, r.rss_before, r.rss_parked);
          result = buf;
        } else {
          std::int64_t n = 0;
          std::int64_t ns = 0;
          std::int64_t cpu = 0;
          const std::int64_t size =
              config.goroutines > 0 ? config.goroutines : bench->goroutines;
          gort::Stats before, after;
          gort::bench::GrowN(config.benchtime, [&](std::int64_t iters) {
            std::snprintf(buf, sizeof(buf), "step timed loop with N=%" PRId64,
                          iters);
            Emit(buf);
            before = gort::ReadStats();
            const std::int64_t c0 = CpuNanos();
            const std::int64_t t0 = gort::Nanotime();
            if (bench->sized != nullptr) {
              bench->sized(iters, size);
            } else {
              bench->loop(iters);
            }
            ns = gort::Nanotime() - t0;
            cpu = CpuNanos() - c0;
            after = gort::ReadStats();
            n = iters;
            return ns;
          });
          std::snprintf(
              buf, sizeof(buf),
              "result n=%" PRId64 " ns=%" PRId64 " cpu-ns=%" PRId64
              " handoffs=%" PRId64 " sysmon-wakes=%" PRId64 " steals=%" PRId64
              " stolen=%" PRId64 " preempt-requests=%" PRId64,
              n, ns, cpu, after.handoffs - before.handoffs,
              after.sysmon_wakes - before.sysmon_wakes,
              after.steals - before.steals, after.stolen - before.stolen,
              after.preempt_requests - before.preempt_requests);
          result = buf;
        }
        std::snprintf(buf, sizeof(buf), " usleep=%s gomaxprocs=%d",
                      gort::bench::UsleepName(gort::ReadStats().usleep),
                      s0.gomaxprocs);
        result += buf;
        Emit("step gort::Run shutdown (main has returned)");
      },
      gort::Options{.maxprocs = config.child_procs, .usleep = modes[0]});
  std::int64_t n = 0;
  std::int64_t ns = 0;
  std::sscanf(result.c_str(), "result n=%" SCNd64 " ns=%" SCNd64, &n, &ns);
  if (n > 0) {
    std::snprintf(buf, sizeof(buf), " ns-per-op=%.4g",
                  static_cast<double>(ns) / n);
    result += buf;
  }
  Emit(result);
  return 0;
}

}  // namespace gort_compare
