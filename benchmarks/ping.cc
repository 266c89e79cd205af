// benchmarks/ping.cc: gort-ping, the ping benchmarks of Go's change
// "runtime: use CreateWaitableTimerEx to implement usleep" (CL 248699),
// run on gort in both usleep modes and compared benchstat-style.
//
// Each measurement is one gort::Run with GOMAXPROCS 1 and the usleep mode
// under test, by default in a forked child so that a runtime crash or hang
// fails one measurement instead of the session. Like `go test -bench`, the
// iteration count N starts at 1 and grows until one timed run lasts at least
// --benchtime; the whole search is repeated --count times. The two modes
// alternate (lowres, highres, lowres, ...) so that load on a shared machine
// hits both alike. Every run prints a line in Go's benchmark format; at the
// end a table in the format of the old golang.org/x/perf benchstat compares
// lowres (old) with highres (new): Tukey-fence outliers dropped, mean of the
// rest, ± the largest deviation from that mean, and a delta only when a
// Mann-Whitney U test gives p < 0.05.
//
// OsYield wraps sched_yield in gort::Syscall, as gort's spec asks; Go's own
// osyield enters no syscall state, which OsYieldRaw reproduces.
//
// The flag syntax, N growth, number format and statistics are shared with
// gort-compare through benchmarks/harness.h.

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "benchmarks/harness.h"
#include "benchmarks/ping_loops.h"
#include "gort/runtime.h"

namespace {

using gort::bench::CpuModel;
using gort::bench::DescribeStatus;
using gort::bench::FormatGoValue;
using gort::bench::FormatMetric;
using gort::bench::kMaxN;
using gort::bench::MannWhitney;
using gort::bench::PredictN;
using gort::bench::PrintTable;
using gort::bench::Summarize;
using gort::bench::Summary;
using gort::bench::TimeScale;
using gort::bench::UTest;

// ---------------------------------------------------------------------------
// What to run.

// The benchmarks and modes: benchmarks/ping_loops.h.
using Benchmark = gort::bench::PingBenchmark;
using Mode = gort::bench::PingMode;
constexpr const auto& kBenchmarks = gort::bench::kPingBenchmarks;
constexpr const auto& kModes = gort::bench::kPingModes;

constexpr std::int64_t kSmokeN = 200;

// --count 10 (as in Go's commit message), --benchtime 500ms, --timeout 120.
struct Config : gort::bench::CommonFlags {
  Config() : CommonFlags(10, "500ms", 120) {}
  std::vector<const Mode*> modes = {&kModes[0], &kModes[1]};
  bool isolate = true;
};

// ---------------------------------------------------------------------------
// Command line.

void PrintUsage(FILE* out) {
  std::fprintf(
      out,
      "usage: gort-ping [flags]\n"
      "\n"
      "Go's usleep ping benchmarks (CL 248699) on gort, GOMAXPROCS=1, in the\n"
      "lowres (Go's default timer slack) and highres (1 ns slack) usleep\n"
      "modes, interleaved, then a benchstat table: old=lowres new=highres.\n"
      "\n"
      "flags:\n"
      "  --bench=REGEX      run benchmarks whose name matches (default .)\n"
      "  --benchtime=D|Nx   target time per measurement, e.g. 1s, 500ms, or\n"
      "                     a fixed iteration count such as 1000x\n"
      "                     (default 500ms)\n"
      "  --count=N          measurements per benchmark and mode (default\n"
      "                     10, as in Go's commit message)\n"
      "  --mode=M           lowres, highres or both (default both)\n"
      "  --smoke            run every selected loop once per mode with N=%d\n"
      "                     and exit (CI sanity check; no table)\n"
      "  --stats            add sysmon handoffs/op and sysmon-wakes/op to\n"
      "                     each result line\n"
      "  --isolate=BOOL     run each measurement in a forked child, so a\n"
      "                     runtime crash or hang fails only that\n"
      "                     measurement (default true)\n"
      "  --timeout=SECONDS  fail a measurement whose current step (one\n"
      "                     timed loop) makes no progress for this long;\n"
      "                     without --isolate the process exits (default\n"
      "                     120, 30 with --smoke)\n"
      "  --list             list the benchmarks and exit\n"
      "  --help             show this text\n"
      "\n"
      "Benchmarks: ChanToSyscallPing, SyscallToSyscallPing, ChanToChanPing,\n"
      "OsYield (sched_yield in gort::Syscall) and OsYieldRaw (bare\n"
      "sched_yield, like Go's osyield).\n"
      "\n"
      "Run time: each measurement takes about 1.8x --benchtime (N search\n"
      "included), so the default run (5 benchmarks x 2 modes x 10) takes\n"
      "about 1.5 minutes; Go's own --benchtime=1s about 3. On a noisy\n"
      "machine more counts help the U test more than longer runs.\n"
      "Exit status: 0 if every measurement succeeded, 1 if one failed\n"
      "(runtime crash or hang), 2 for bad flags.\n",
      static_cast<int>(kSmokeN));
}

[[noreturn]] void UsageError(const std::string& message) {
  std::fprintf(stderr, "gort-ping: %s\n\n", message.c_str());
  PrintUsage(stderr);
  std::exit(2);
}

Config ParseFlags(int argc, char** argv) {
  Config config;
  gort::bench::FlagReader flags(argc, argv, UsageError);
  while (flags.Next()) {
    if (config.Parse(flags, PrintUsage)) continue;
    const std::string& name = flags.name();
    if (name == "isolate") {
      config.isolate = flags.Bool();
    } else if (name == "mode") {
      const std::string v = flags.Value();
      config.modes = gort::bench::ParsePingModes(v);
      if (config.modes.empty()) {
        UsageError("bad --mode " + v + " (want lowres, highres or both)");
      }
    } else {
      UsageError("unknown flag -" + name);
    }
  }
  if (config.smoke) config.ApplySmoke(kSmokeN);
  return config;
}

// ---------------------------------------------------------------------------
// Watchdog: a plain thread outside the runtime that ends the process with a
// precise message if a measurement stops making progress.

class Watchdog {
 public:
  explicit Watchdog(double timeout_s)
      : timeout_(std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::duration<double>(timeout_s))),
        thread_([this] { Loop(); }) {}
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

  // Starts (or restarts) the clock for the step described by what.
  void Arm(std::string what) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      what_ = std::move(what);
      armed_ = true;
      deadline_ = std::chrono::steady_clock::now() + timeout_;
    }
    cv_.notify_one();
  }

  void Disarm() {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = false;
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (!armed_) {
        cv_.wait(lock);
        continue;
      }
      if (std::chrono::steady_clock::now() < deadline_) {
        cv_.wait_until(lock, deadline_);
        continue;
      }
      std::fprintf(stderr,
                   "\ngort-ping: TIMEOUT: %s: no progress after %g s; the "
                   "runtime looks hung\n",
                   what_.c_str(),
                   std::chrono::duration<double>(timeout_).count());
      std::fflush(stderr);
      // ReadStats may need a runtime lock a hung runtime holds: give it five
      // seconds before SIGALRM ends the process.
      alarm(5);
      gort::Stats s = gort::ReadStats();
      std::fprintf(stderr,
                   "gort-ping: stats: goroutines=%d threads=%d idle_ps=%d "
                   "spinning_ms=%d handoffs=%" PRId64 " sysmon_wakes=%" PRId64
                   " preempt_requests=%" PRId64 "\n",
                   s.goroutines, s.threads, s.idle_ps, s.spinning_ms,
                   s.handoffs, s.sysmon_wakes, s.preempt_requests);
      std::fflush(stderr);
      _exit(3);
    }
  }

  const std::chrono::nanoseconds timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool armed_ = false;
  std::chrono::steady_clock::time_point deadline_;
  std::string what_;
  std::thread thread_;  // Last: starts after the fields above exist.
};

// ---------------------------------------------------------------------------
// Measuring.

struct Measurement {
  std::int64_t n = 0;
  std::int64_t ns = 0;
  std::int64_t handoffs = 0;
  std::int64_t sysmon_wakes = 0;
  gort::UsleepMode usleep_in_effect = gort::UsleepMode::kAuto;

  double NsPerOp() const { return static_cast<double>(ns) / n; }
};

// Runs one measurement: a gort::Run in which N grows as in `go test` (or is
// fixed). progress(what) is called before every step that could hang.
Measurement Measure(const Benchmark& bench, const Mode& mode,
                    const Config& config,
                    const std::function<void(const std::string&)>& progress) {
  Measurement result;
  auto timed_run = [&](std::int64_t n) {
    progress("timed loop with N=" + std::to_string(n));
    gort::Stats before;
    if (config.stats) before = gort::ReadStats();
    const std::int64_t start = gort::Nanotime();
    bench.loop(n);
    const std::int64_t elapsed = gort::Nanotime() - start;
    result.n = n;
    result.ns = elapsed;
    if (config.stats) {
      gort::Stats after = gort::ReadStats();
      result.handoffs = after.handoffs - before.handoffs;
      result.sysmon_wakes = after.sysmon_wakes - before.sysmon_wakes;
    }
    result.usleep_in_effect = gort::ReadStats().usleep;
  };

  progress("gort::Run start (main not yet running)");
  gort::Run(
      [&] {
        if (config.benchtime.fixed_n > 0) {
          timed_run(config.benchtime.fixed_n);
        } else {
          timed_run(1);
          while (result.ns < config.benchtime.ns && result.n < kMaxN) {
            timed_run(PredictN(config.benchtime.ns, result.n, result.ns));
          }
        }
        progress("gort::Run shutdown (main has returned)");
      },
      gort::Options{.maxprocs = 1, .usleep = mode.usleep});
  return result;
}

// The result of one measurement, or why there is none.
struct Outcome {
  bool ok = false;
  Measurement m;
  std::string failure;  // When !ok: what went wrong, for a FAIL line.
};

// In-process: the measurement runs in this process, guarded by watchdog,
// which ends the whole process if it hangs; a runtime crash ends it too.
Outcome MeasureInProcess(const Benchmark& bench, const Mode& mode,
                         const Config& config, Watchdog& watchdog) {
  const std::string label =
      std::string("Benchmark") + bench.name + "-" + mode.name + ", ";
  Outcome out;
  out.m = Measure(bench, mode, config,
                  [&](const std::string& what) { watchdog.Arm(label + what); });
  watchdog.Disarm();
  out.ok = true;
  return out;
}

// A fixed-size message from a measuring child to the parent; small enough
// that each write() on the pipe is atomic.
struct ChildRecord {
  enum Kind : std::int32_t { kProgress = 1, kResult = 2 } kind;
  char what[200];
  Measurement m;
};
static_assert(sizeof(ChildRecord) <= PIPE_BUF);

void WriteRecord(int fd, const ChildRecord& record) {
  gort::bench::WriteAllOrExit(fd, &record, sizeof(record));
}

// Isolated: the measurement runs in a forked child, so a runtime crash or
// hang costs one measurement, not the whole session. The child reports its
// steps and result over a pipe; the parent kills it if a step makes no
// progress within the timeout.
Outcome MeasureInChild(const Benchmark& bench, const Mode& mode,
                       const Config& config) {
  Outcome out;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    out.failure = std::string("pipe: ") + std::strerror(errno);
    return out;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    out.failure = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return out;
  }
  if (pid == 0) {
    close(fds[0]);
    ChildRecord record{};
    record.kind = ChildRecord::kProgress;
    record.m = Measure(bench, mode, config, [&](const std::string& what) {
      std::snprintf(record.what, sizeof(record.what), "%s", what.c_str());
      WriteRecord(fds[1], record);
    });
    record.kind = ChildRecord::kResult;
    record.what[0] = '\0';
    WriteRecord(fds[1], record);
    _exit(0);
  }
  close(fds[1]);

  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::duration<double>(config.timeout_s));
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string step = "starting";
  bool have_result = false;
  bool timed_out = false;
  ChildRecord record;
  std::size_t got = 0;
  for (;;) {
    const int left = gort::bench::MillisLeftOrKill(deadline, pid);
    if (left < 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready = poll(&pfd, 1, left + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // Timeout: caught at the top of the loop.
    const ssize_t r = read(fds[0], reinterpret_cast<char*>(&record) + got,
                           sizeof(record) - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;  // EOF: the child is gone.
    got += static_cast<std::size_t>(r);
    if (got < sizeof(record)) continue;
    got = 0;
    if (record.kind == ChildRecord::kResult) {
      out.m = record.m;
      have_result = true;
    } else {
      record.what[sizeof(record.what) - 1] = '\0';
      step = record.what;
      deadline = std::chrono::steady_clock::now() + timeout;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%g", config.timeout_s);
    out.failure = std::string("hung: no progress for ") + buf + " s during " +
                  step + " (child killed; the runtime looks deadlocked)";
  } else if (!have_result || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    out.failure = "runtime died during " + step + ": " + DescribeStatus(status);
  } else {
    out.ok = true;
  }
  return out;
}

// One benchstat row per benchmark: old = modes[0], new = modes[1].
void PrintComparison(const std::vector<const Benchmark*>& benches,
                     const std::vector<const Mode*>& modes,
                     const std::vector<std::vector<std::vector<double>>>&
                         ns_per_op /* [bench][mode][run] */) {
  std::vector<std::vector<std::string>> rows;
  const bool two = modes.size() == 2;
  if (two) {
    rows.push_back({"name", "old time/op", "new time/op", "delta"});
  } else {
    rows.push_back({"name", "time/op"});
  }
  for (std::size_t b = 0; b < benches.size(); ++b) {
    std::vector<Summary> sums;
    for (std::size_t m = 0; m < modes.size(); ++m) {
      sums.push_back(Summarize(ns_per_op[b][m]));
    }
    if (std::all_of(sums.begin(), sums.end(),
                    [](const Summary& s) { return s.kept.empty(); })) {
      continue;  // Every measurement failed: no row, as in benchstat.
    }
    double base = 0;  // The baseline's mean, or the first one measured.
    for (const Summary& s : sums) {
      if (!s.kept.empty()) {
        base = s.mean;
        break;
      }
    }
    const TimeScale scale = TimeScale::For(base);
    std::vector<std::string> row = {benches[b]->name};
    for (const Summary& s : sums) row.push_back(FormatMetric(s, scale));
    if (two) {
      const Summary& old_s = sums[0];
      const Summary& new_s = sums[1];
      UTest test = MannWhitney(old_s.kept, new_s.kept);
      std::string delta = "~   ";
      std::string note;
      char buf[64];
      if (test.error != nullptr) {
        note = std::string("(") + test.error + ")";
      } else {
        if (test.p < 0.05) {
          std::snprintf(buf, sizeof(buf), "%+.2f%%",
                        (new_s.mean / old_s.mean - 1) * 100);
          delta = buf;
        }
        std::snprintf(buf, sizeof(buf), "(p=%0.3f n=%zu+%zu)", test.p,
                      old_s.kept.size(), new_s.kept.size());
        note = buf;
      }
      row.push_back(delta);
      row.push_back(note);
    }
    rows.push_back(std::move(row));
  }
  PrintTable(std::move(rows));
}

const char* UsleepName(gort::UsleepMode m) {
  switch (m) {
    case gort::UsleepMode::kAuto:
      return "auto";
    case gort::UsleepMode::kHighRes:
      return "highres";
    case gort::UsleepMode::kLowRes:
      return "lowres";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  const Config config = ParseFlags(argc, argv);

  const std::vector<const Benchmark*> benches = gort::bench::SelectBenchmarks(
      kBenchmarks, config, "gort-ping", UsageError,
      [](const Benchmark&) { return false; });

  std::size_t name_width = 0;
  for (const Benchmark* b : benches) {
    for (const Mode* m : config.modes) {
      name_width =
          std::max(name_width, std::strlen("Benchmark") + std::strlen(b->name) +
                                   1 + std::strlen(m->name));
    }
  }

  std::printf("goos: linux\n");
#if defined(__x86_64__)
  std::printf("goarch: amd64\n");
#endif
  std::printf("pkg: gort/benchmarks\n");
  if (std::string cpu = CpuModel(); !cpu.empty()) {
    std::printf("cpu: %s\n", cpu.c_str());
  }
  std::printf("gomaxprocs: 1\n");
  for (const Mode* m : config.modes) {
    std::printf("mode-%s: %s\n", m->name, m->about);
  }
  if (config.smoke) {
    std::printf("smoke: N=%" PRId64 ", one run per mode\n",
                config.benchtime.fixed_n);
  } else {
    std::printf("benchtime: %s\ncount: %d\n", config.benchtime.text.c_str(),
                config.count);
  }
  std::fflush(stdout);

  const auto start = std::chrono::steady_clock::now();
  std::optional<Watchdog> watchdog;  // Only in-process: fork needs 1 thread.
  if (!config.isolate) watchdog.emplace(config.timeout_s);
  std::vector<std::vector<std::vector<double>>> ns_per_op(
      benches.size(), std::vector<std::vector<double>>(config.modes.size()));
  std::vector<bool> mode_warned(config.modes.size());
  int failures = 0;
  for (std::size_t b = 0; b < benches.size(); ++b) {
    for (int run = 0; run < config.count; ++run) {
      for (std::size_t m = 0; m < config.modes.size(); ++m) {
        const Mode& mode = *config.modes[m];
        const std::string name =
            std::string("Benchmark") + benches[b]->name + "-" + mode.name;
        Outcome outcome =
            config.isolate
                ? MeasureInChild(*benches[b], mode, config)
                : MeasureInProcess(*benches[b], mode, config, *watchdog);
        if (!outcome.ok) {
          ++failures;
          std::printf("--- FAIL: %s (run %d of %d)\n    %s\n", name.c_str(),
                      run + 1, config.count, outcome.failure.c_str());
          std::fflush(stdout);
          continue;
        }
        const Measurement& r = outcome.m;
        if (r.usleep_in_effect != mode.usleep && !mode_warned[m]) {
          mode_warned[m] = true;
          std::fprintf(stderr,
                       "gort-ping: warning: asked for usleep mode %s, the "
                       "runtime reports %s\n",
                       mode.name, UsleepName(r.usleep_in_effect));
        }
        ns_per_op[b][m].push_back(r.NsPerOp());
        std::string line = name;
        line.append(name_width - name.size(), ' ');
        char count_field[32];
        std::snprintf(count_field, sizeof(count_field), "\t%8" PRId64, r.n);
        line += count_field;
        line += FormatGoValue(r.NsPerOp(), "ns/op");
        if (config.stats) {
          line += FormatGoValue(static_cast<double>(r.handoffs) / r.n,
                                "handoffs/op");
          line += FormatGoValue(static_cast<double>(r.sysmon_wakes) / r.n,
                                "sysmon-wakes/op");
        }
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
      }
    }
  }
  gort::bench::PrintResultTrailer(
      "gort-ping", failures,
      config.count * static_cast<int>(benches.size() * config.modes.size()),
      start);
  const int exit_code = failures == 0 ? 0 : 1;
  if (config.smoke) return exit_code;

  std::printf("\n");
  PrintComparison(benches, config.modes, ns_per_op);
  return exit_code;
}
