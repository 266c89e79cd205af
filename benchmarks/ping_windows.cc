// benchmarks/ping_windows.cc: gort-ping on Windows. The same ping family as
// benchmarks/ping.cc (Go's runtime/syscall_windows_test.go: a Windows
// auto-reset event set with SetEvent and waited for with
// WaitForSingleObject, each in gort::Syscall), measured in both usleep
// modes and summarised as benchstat does, with the project's harness
// (Google Benchmark is not built for mingw). Unlike the Linux driver it
// measures in-process: there is no fork() to isolate each measurement.
//
//   gort-ping [--benchtime=1s] [--count=5] [--cpu=1]
//             [--mode=lowres|highres|both]
//
// --cpu is GOMAXPROCS (1 by default, as scripts/main-job.sh runs the Linux
// driver: with one P only sysmon can take it from a goroutine blocked in a
// syscall, so ChanToSyscallPing follows usleep's resolution).
// Prints Go benchmark lines per mode, then a table lowres vs highres.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "benchmarks/harness.h"
#include "benchmarks/ping_loops.h"
#include "gort/runtime.h"

namespace {

using gort::bench::Benchtime;

// The benchmarks and modes: benchmarks/ping_loops.h.
using Benchmark = gort::bench::PingBenchmark;
using Mode = gort::bench::PingMode;
constexpr const auto& kBenchmarks = gort::bench::kPingBenchmarks;
constexpr const auto& kModes = gort::bench::kPingModes;

struct Flags {
  Benchtime benchtime = *Benchtime::Parse("1s");
  int count = 5;
  int cpu = 1;
  std::vector<const Mode*> modes = {&kModes[0], &kModes[1]};
};

[[noreturn]] void UsageError(const std::string& message) {
  std::fprintf(stderr,
               "gort-ping: %s\nusage: gort-ping [--benchtime=1s|Nx] "
               "[--count=5] [--cpu=1] [--mode=lowres|highres|both]\n",
               message.c_str());
  std::exit(2);
}

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  gort::bench::FlagReader r(argc, argv, UsageError);
  while (r.Next()) {
    if (r.name() == "benchtime") {
      auto b = Benchtime::Parse(r.Value());
      if (!b) UsageError("bad --benchtime");
      f.benchtime = *b;
    } else if (r.name() == "count") {
      f.count = static_cast<int>(gort::bench::PositiveIntFlag(r, 1000));
    } else if (r.name() == "cpu") {
      f.cpu = static_cast<int>(gort::bench::PositiveIntFlag(r, 256));
    } else if (r.name() == "mode") {
      f.modes = gort::bench::ParsePingModes(r.Value());
      if (f.modes.empty()) UsageError("bad --mode");
    } else {
      UsageError("unknown flag --" + r.name());
    }
  }
  return f;
}

// Times fn(n) inside a fresh Run in mode; returns nanoseconds.
std::int64_t TimeRun(const Benchmark& b, const Mode& mode, std::int64_t n,
                     int cpu, int* procs) {
  std::int64_t ns = 0;
  gort::Options options;
  options.maxprocs = cpu;
  options.usleep = mode.usleep;
  gort::Run(
      [&] {
        *procs = gort::GOMAXPROCS(0);
        const std::int64_t t0 = gort::Nanotime();
        b.loop(n);
        ns = gort::Nanotime() - t0;
      },
      options);
  return ns;
}

// One measurement as go test makes it: grow N until the run takes the
// benchtime; prints the benchmark line and returns ns/op.
double Measure(const Benchmark& b, const Mode& mode, const Flags& flags) {
  const Benchtime& bt = flags.benchtime;
  int procs = 1;
  std::int64_t n = bt.fixed_n > 0 ? bt.fixed_n : 1;
  std::int64_t ns = TimeRun(b, mode, n, flags.cpu, &procs);
  while (bt.fixed_n == 0 && ns < bt.ns && n < gort::bench::kMaxN) {
    n = gort::bench::PredictN(bt.ns, n, ns);
    ns = TimeRun(b, mode, n, flags.cpu, &procs);
  }
  const double per_op = static_cast<double>(ns) / static_cast<double>(n);
  std::printf("Benchmark%s-%d\t%10lld%s\n", b.name, procs,
              static_cast<long long>(n),
              gort::bench::FormatGoValue(per_op, "ns/op").c_str());
  std::fflush(stdout);
  return per_op;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  std::vector<std::vector<std::vector<double>>> values(
      flags.modes.size(), std::vector<std::vector<double>>(std::size(kBenchmarks)));
  for (std::size_t m = 0; m < flags.modes.size(); ++m) {
    std::printf("mode: %s\n", flags.modes[m]->name);
    for (std::size_t i = 0; i < std::size(kBenchmarks); ++i) {
      for (int c = 0; c < flags.count; ++c) {
        values[m][i].push_back(
            Measure(kBenchmarks[i], *flags.modes[m], flags));
      }
    }
    std::printf("\n");
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> heading = {"name"};
  for (const Mode* mode : flags.modes) heading.push_back(mode->name);
  rows.push_back(heading);
  for (std::size_t i = 0; i < std::size(kBenchmarks); ++i) {
    std::vector<std::string> row = {kBenchmarks[i].name};
    const gort::bench::TimeScale scale = gort::bench::TimeScale::For(
        gort::bench::Summarize(values[0][i]).mean);
    for (std::size_t m = 0; m < flags.modes.size(); ++m) {
      row.push_back(gort::bench::FormatMetric(
          gort::bench::Summarize(values[m][i]), scale));
    }
    rows.push_back(row);
  }
  gort::bench::PrintTable(rows);
  return 0;
}
