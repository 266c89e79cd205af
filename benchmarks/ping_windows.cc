// benchmarks/ping_windows.cc: gort-ping, the main job's measurement on
// Windows. The ping family of benchmarks/ping_loops.h (Go's
// runtime/syscall_windows_test.go: a Windows auto-reset event set with
// SetEvent and waited for with WaitForSingleObject, each in gort::Syscall)
// in each usleep mode, interleaved round by round, with the harness and the
// table of gort-compare --ping (benchmarks/harness.h: go test's N growth,
// medians ± 95% confidence intervals, the change where a Mann-Whitney U
// test finds one). Unlike gort-compare it measures in-process: there is no
// fork() to isolate each measurement.
//
//   gort-ping [--bench=REGEX] [--benchtime=1s|Nx] [--count=5] [--procs=1]
//             [--usleep=lowres,highres] [--smoke] [--list]
//
// --procs is GOMAXPROCS (1 by default, as the main job: with one P only
// sysmon can take it from a goroutine blocked in a syscall, so
// ChanToSyscallPing follows usleep's resolution).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "benchmarks/harness.h"
#include "benchmarks/ping_loops.h"
#include "gort/runtime.h"

namespace {

using gort::bench::PingBenchmark;

// --count 5, --benchtime 1s, --timeout unused (no child to kill).
struct Config : gort::bench::CommonFlags {
  Config() : CommonFlags(5, "1s", 0) {}
  std::vector<gort::UsleepMode> modes = {gort::UsleepMode::kLowRes,
                                         gort::UsleepMode::kHighRes};
  int procs = 1;
};

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "usage: gort-ping [--bench=REGEX] [--benchtime=1s|Nx] "
               "[--count=5] [--procs=1]\n"
               "                 [--usleep=lowres,highres] [--smoke] "
               "[--list]\n");
}

[[noreturn]] void UsageError(const std::string& message) {
  std::fprintf(stderr, "gort-ping: %s\n", message.c_str());
  PrintUsage(stderr);
  std::exit(2);
}

Config ParseFlags(int argc, char** argv) {
  Config config;
  gort::bench::FlagReader flags(argc, argv, UsageError);
  while (flags.Next()) {
    if (config.Parse(flags, PrintUsage)) continue;
    if (flags.name() == "procs") {
      config.procs = static_cast<int>(gort::bench::PositiveIntFlag(flags, 256));
    } else if (flags.name() == "usleep") {
      config.modes = gort::bench::ParseUsleepModes(flags.Value());
      if (config.modes.empty()) UsageError("bad --usleep");
    } else {
      UsageError("unknown flag --" + flags.name());
    }
  }
  if (config.smoke) config.ApplySmoke(100);
  return config;
}

// One measurement as go test makes it, each timed run in a fresh Run;
// prints the benchmark line and returns ns/op.
double Measure(const PingBenchmark& b, gort::UsleepMode mode,
               const Config& config) {
  std::int64_t n = 0;
  std::int64_t ns = 0;
  gort::bench::GrowN(config.benchtime, [&](std::int64_t iters) {
    gort::Run(
        [&] {
          const std::int64_t t0 = gort::Nanotime();
          b.loop(iters);
          ns = gort::Nanotime() - t0;
        },
        gort::Options{.maxprocs = config.procs, .usleep = mode});
    n = iters;
    return ns;
  });
  const double per_op = static_cast<double>(ns) / static_cast<double>(n);
  std::printf("Benchmark%s/%s-gort-%d\t%10lld%s\n", b.name,
              gort::bench::UsleepName(mode), config.procs,
              static_cast<long long>(n),
              gort::bench::FormatGoValue(per_op, "ns/op").c_str());
  std::fflush(stdout);
  return per_op;
}

}  // namespace

int main(int argc, char** argv) {
  const Config config = ParseFlags(argc, argv);
  const std::vector<const PingBenchmark*> benches =
      gort::bench::SelectBenchmarks(gort::bench::kPingBenchmarks, config,
                                    "gort-ping", UsageError,
                                    [](const PingBenchmark&) { return false; });
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> heads = {"GOMAXPROCS=" +
                                    std::to_string(config.procs)};
  for (gort::UsleepMode m : config.modes) {
    heads.push_back(gort::bench::UsleepName(m));
  }
  std::vector<gort::bench::ComparedRow> rows;
  for (const PingBenchmark* b : benches) {
    rows.push_back(
        {b->name, std::vector<std::vector<double>>(config.modes.size())});
    for (int round = 0; round < config.count; ++round) {
      for (std::size_t m = 0; m < config.modes.size(); ++m) {
        rows.back().columns[m].push_back(Measure(*b, config.modes[m], config));
      }
    }
  }
  gort::bench::PrintResultTrailer(
      "gort-ping", 0,
      config.count * static_cast<int>(benches.size() * config.modes.size()),
      start);
  if (!config.smoke) {
    std::printf("\n%s", gort::bench::FormatVsBase(heads, rows).c_str());
  }
  return 0;
}
