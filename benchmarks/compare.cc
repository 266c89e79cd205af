// benchmarks/compare.cc: gort-compare runs gort's benchmarks and the same
// benchmarks written in Go (benchmarks/go/, built as gortbench-go next to
// this executable) side by side, in one run, on one machine, and prints the
// ratio gort/Go for each. On a shared, noisy machine absolute times drift
// but ratios measured in the same minute hold, so Go itself is the
// reference.
//
// For each GOMAXPROCS (1 to the CPU count by default) and each benchmark,
// a round measures every gort variant (ChanToSyscallPing runs gort in
// usleep modes lowres, Go's algorithm, and highres, gort's improvement), Go
// as shipped and Go with 1 ns timer slack (set with PR_SET_TIMERSLACK in the
// forked child before the exec; every thread inherits it), in an order
// shuffled per round. Each measurement is a fresh child process:
// gort-compare re-executes itself with --child for gort, and runs
// gortbench-go for Go. Both grow the iteration count N as go test does until
// one timed run lasts --benchtime, and report over a pipe in a line protocol
// (benchmarks/go/main.go describes it); a child that makes no progress for
// --timeout seconds is killed, and a child that crashes fails that
// measurement only, with the first line of its fatal error reported. The
// parent takes each child's peak resident set from wait4.
//
// Verdicts: a row's target is judged on the per-round (paired) ratio
// gort/Go against Go+1ns when gort runs in high-resolution mode, else
// against Go as shipped: "met" when the upper end of the 95% confidence
// interval of the median ratio (order statistics, as benchstat) is at or
// below the target, "missed" when its lower end is above, otherwise
// "inconclusive", and an inconclusive row gets more rounds, up to
// --max-count.
//
// Output: every measurement as a Go benchmark line
// (BenchmarkChanToChanPing-gort-1, BenchmarkChanToChanPing-go-1,
// BenchmarkChanToChanPing-go-slack1ns-1, ...), then per GOMAXPROCS a table,
// then FanOut's scaling over the GOMAXPROCS sweep. --markdown writes the
// same into docs/performance.md with the commit, machine, date and command.
// The Park benchmarks report resident memory per parked goroutine instead of
// time; Skynet reports the peak RSS as well.

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "benchmarks/harness.h"
#include "benchmarks/net_loops.h"
#include "benchmarks/ping_loops.h"
#include "benchmarks/sched_loops.h"
#include "gort/runtime.h"

namespace {

using gort::bench::Benchtime;
using gort::bench::kMaxN;
using gort::bench::PositiveIntFlag;

// ---------------------------------------------------------------------------
// What to run.

enum class Kind {
  kLoop,  // A loop run N times; the result is time per op.
  kPark,  // Park a fixed number of goroutines; the result is memory.
};

enum class Goal {
  kNone,    // Reported only.
  kRatio,   // Paired ratio gort/Go at most `target` (95% CI).
  kKiB,     // gort's resident KiB per parked goroutine at most target.
  kStarts,  // gort starts all the goroutines.
};

// A gort configuration of a benchmark; most have one, ChanToSyscallPing two.
// A kRatio target is judged against the Go column that matches gort's usleep
// mode in effect: Go with 1 ns timer slack when gort runs highres, Go as
// shipped when it runs lowres.
struct Variant {
  const char* mode;  // Name of the usleep mode, or nullptr for --usleep's.
  Goal goal;
  double target;
  double target_shipped = 0;  // > 0: also at most this against Go as shipped.
};

constexpr int kMaxVariants = 2;

struct Benchmark {
  const char* name;  // Without Go's "Benchmark" prefix; as in gortbench-go.
  Kind kind;
  void (*loop)(std::int64_t n);  // kLoop.
  std::int64_t goroutines;       // kPark: goroutines; sized loops: the size.
  int rounds;                    // 0: --count; else at most this many.
  int nvariants;
  Variant variants[kMaxVariants];
  // A kLoop with a size (SpawnBurst's burst, Skynet's leaves), which
  // --goroutines overrides; loop is then unused.
  void (*sized)(std::int64_t n, std::int64_t size) = nullptr;
  int target_procs = 1;   // Targets are judged at GOMAXPROCS 1..this.
  double rss_target = 0;  // > 0: paired peak-RSS ratio at most this.
};

// A loop benchmark with one gort variant, in --usleep's mode.
constexpr Benchmark Loop(const char* name, void (*loop)(std::int64_t),
                         Goal goal, double target) {
  return {name, Kind::kLoop, loop, 0, 0, 1, {{nullptr, goal, target}, {}}};
}

// A loop benchmark with a size parameter (default `size`), judged at
// GOMAXPROCS 1..target_procs, and on peak RSS too if rss_target > 0.
constexpr Benchmark Sized(const char* name,
                          void (*sized)(std::int64_t, std::int64_t),
                          std::int64_t size, Goal goal, double target,
                          int target_procs = 1, double rss_target = 0) {
  Benchmark b{name, Kind::kLoop, nullptr, size, 0, 1,
              {{nullptr, goal, target}, {}}};
  b.sized = sized;
  b.target_procs = target_procs;
  b.rss_target = rss_target;
  return b;
}

// A memory benchmark parking `goroutines`, at most `rounds` times.
constexpr Benchmark Park(const char* name, std::int64_t goroutines, int rounds,
                         Goal goal, double target) {
  return {name,
          Kind::kPark,
          nullptr,
          goroutines,
          rounds,
          1,
          {{nullptr, goal, target}, {}}};
}

// The rows and the targets of the performance issues (paired ratio gort/Go
// at GOMAXPROCS 1 unless stated, or absolute for memory). Append new rows
// here; a row's Go twin in gortbench-go has the same name.
constexpr Benchmark kBenchmarks[] = {
    {"ChanToSyscallPing",
     Kind::kLoop,
     gort::bench::ChanToSyscallPing,
     0,
     0,
     2,
     {{"lowres", Goal::kRatio, 1.05}, {"highres", Goal::kRatio, 1.0, 0.5}}},
    Loop("SyscallToSyscallPing", gort::bench::SyscallToSyscallPing,
         Goal::kRatio, 1.0),
    Loop("ChanToChanPing", gort::bench::ChanToChanPing, Goal::kRatio, 0.6),
    Loop("Gosched", gort::bench::Gosched, Goal::kRatio, 0.7),
    Loop("Spawn", gort::bench::Spawn, Goal::kRatio, 0.5),
    Sized("SpawnBurst", gort::bench::SpawnBurst, gort::bench::kSpawnBurst,
          Goal::kRatio, 0.8),
    Loop("ChanBuffered", gort::bench::ChanBuffered, Goal::kRatio, 1.0),
    Loop("Select2", gort::bench::Select2, Goal::kRatio, 1.0),
    Loop("ChanContended", gort::bench::ChanContended, Goal::kNone, 0),
    Loop("FanOut", gort::bench::FanOut, Goal::kNone, 0),
    Sized("Skynet", gort::bench::Skynet, gort::bench::kSkynetLeaves,
          Goal::kRatio, 0.7, 2, 1.0),
    // The network poller (issue 13; benchmarks/net_loops.h).
    Loop("TCPPingPong", gort::bench::TCPPingPong, Goal::kRatio, 1.0),
    Loop("TCPPingPong100", gort::bench::TCPPingPong100, Goal::kRatio, 1.0),
    Loop("TCPStream1MiB", gort::bench::TCPStream1MiB, Goal::kRatio, 1.0),
    Loop("ChanToNetpollPing", gort::bench::ChanToNetpollPing, Goal::kRatio,
         1.0),
    Park("Park100k", 100'000, 6, Goal::kKiB, 4.5),
    Park("Park1M", 1'000'000, 1, Goal::kStarts, 0),
};

struct UsleepModeName {
  const char* name;
  gort::UsleepMode mode;
};

constexpr UsleepModeName kUsleepModes[] = {
    {"auto", gort::UsleepMode::kAuto},
    {"lowres", gort::UsleepMode::kLowRes},
    {"highres", gort::UsleepMode::kHighRes},
};

const char* UsleepName(gort::UsleepMode m) {
  for (const auto& u : kUsleepModes) {
    if (u.mode == m) return u.name;
  }
  return "?";
}

std::optional<gort::UsleepMode> ParseUsleep(const std::string& s) {
  for (const auto& u : kUsleepModes) {
    if (s == u.name) return u.mode;
  }
  return std::nullopt;
}

constexpr const char* kDefaultBenchtime = "200ms";
constexpr int kDefaultCount = 10;
constexpr int kDefaultMaxCountFactor = 3;  // --max-count: 3 x --count.
constexpr std::int64_t kSmokeN = 100;
constexpr std::int64_t kSmokeGoroutines = 1000;
constexpr const char* kDefaultMarkdown = "docs/performance.md";

// The number of CPUs this process may run on.
int CpuCount() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

// 1, 2, ..., the CPU count: the default --procs sweep.
std::vector<int> ProcsSweep() {
  std::vector<int> procs;
  for (int p = 1; p <= std::max(2, CpuCount()); ++p) procs.push_back(p);
  return procs;
}

// CommonFlags (benchmarks/harness.h): bench, benchtime, count, timeout,
// smoke, stats, list.
struct Config : gort::bench::CommonFlags {
  Config() : CommonFlags(kDefaultCount, kDefaultBenchtime, 60) {}
  // Parent and child.
  std::string usleep = "auto";  // For the benchmarks with one variant.
  std::int64_t goroutines = 0;  // Park and sized-loop override.
  // Parent.
  int max_count = 0;  // 0: kDefaultMaxCountFactor x count.
  std::vector<int> procs = ProcsSweep();
  std::string go_binary;  // Default: gortbench-go next to this executable.
  std::uint64_t seed = 0;
  bool seed_set = false;
  std::string markdown;  // Non-empty: write the results into this file.
  std::string note;      // A sentence for the markdown's header.
  std::string command;   // The full command, for the record.
  // Child.
  bool child = false;
  int child_procs = 1;
};

// ---------------------------------------------------------------------------
// Command line.

void PrintUsage(FILE* out) {
  std::fprintf(
      out,
      "usage: gort-compare [flags]\n"
      "\n"
      "Runs gort's benchmarks and their Go twins (gortbench-go, Go 1.19)\n"
      "at each GOMAXPROCS, each measurement in a fresh process, gort and Go\n"
      "in random order within a round; Go runs twice per round, as shipped\n"
      "and with 1 ns timer slack. Prints Go benchmark lines and a table per\n"
      "GOMAXPROCS: medians, paired ratios gort/Go against both Go columns,\n"
      "the issue's target, the 95%% confidence interval of the judged\n"
      "ratio and the verdict (met, missed or inconclusive).\n"
      "\n"
      "flags:\n"
      "  --bench=REGEX      benchmarks whose name matches (default .)\n"
      "  --benchtime=D|Nx   target time of each measurement's last timed\n"
      "                     run, as go test -benchtime (default %s)\n"
      "  --count=N          rounds per benchmark and GOMAXPROCS (default %d;\n"
      "                     Park100k runs at most 6, Park1M one); a verdict\n"
      "                     needs 6 or more\n"
      "  --max-count=N      rounds at most while a verdict is inconclusive\n"
      "                     (default %d x --count)\n"
      "  --procs=LIST       GOMAXPROCS values: 1,2 or a range 1-4, or 'all'\n"
      "                     (1 to the CPU count; the default)\n"
      "  --usleep=MODE      gort's usleep mode for the benchmarks other than\n"
      "                     ChanToSyscallPing (which runs lowres and\n"
      "                     highres): auto, lowres or highres (default auto)\n"
      "  --go=PATH          the Go benchmark binary (default gortbench-go\n"
      "                     next to this executable)\n"
      "  --timeout=SECONDS  kill a measurement whose current step makes no\n"
      "                     progress for this long (default 60, 30 with\n"
      "                     --smoke)\n"
      "  --seed=N           seed of the order within rounds (default: time)\n"
      "  --stats            add gort's scheduler counters per op (handoffs,\n"
      "                     sysmon wakes, steals, goroutines stolen) to\n"
      "                     gort's result lines\n"
      "  --markdown[=PATH]  also write the results, with the commit, the\n"
      "                     machine, the date and this command, into PATH\n"
      "                     (default %s) between its gort-compare markers\n"
      "  --note=TEXT        a sentence for the markdown (e.g. the load)\n"
      "  --smoke            every benchmark once per implementation and\n"
      "                     GOMAXPROCS with N=%d (Park, SpawnBurst's burst,\n"
      "                     Skynet's leaves: %d; Park1M skipped), no table;\n"
      "                     exit status 0 iff everything ran (for CI)\n"
      "  --list             list the benchmarks and exit\n"
      "  --help             show this text\n"
      "\n"
      "Repro of one gort measurement (what the driver runs):\n"
      "  gort-compare --child --bench=NAME --procs=P --benchtime=D\n"
      "               [--usleep=MODE] [--goroutines=K]\n"
      "and of one Go measurement (with 1 ns slack: under a parent that set\n"
      "PR_SET_TIMERSLACK to 1):\n"
      "  GOMAXPROCS=P gortbench-go -bench=NAME -benchtime=D\n"
      "\n"
      "Exit status: 0 if every measurement ran, 1 if one failed (crash,\n"
      "hang, Park1M failing to start), 2 for bad flags. Missed targets do\n"
      "not change it.\n",
      kDefaultBenchtime, kDefaultCount, kDefaultMaxCountFactor,
      kDefaultMarkdown, static_cast<int>(kSmokeN),
      static_cast<int>(kSmokeGoroutines));
}

[[noreturn]] void UsageError(const std::string& message) {
  std::fprintf(stderr, "gort-compare: %s\n\n", message.c_str());
  PrintUsage(stderr);
  std::exit(2);
}

// Parses --procs: "all", "1,2,4", "1-4" or a mix such as "1,4-6".
std::vector<int> ParseProcs(const std::string& v) {
  if (v == "all" || v == "sweep") return ProcsSweep();
  std::vector<int> procs;
  std::size_t pos = 0;
  while (pos <= v.size()) {
    std::size_t comma = v.find(',', pos);
    if (comma == std::string::npos) comma = v.size();
    const std::string item = v.substr(pos, comma - pos);
    const std::size_t dash = item.find('-');
    auto lo = gort::bench::ParsePositiveInt(item.substr(0, dash));
    auto hi = dash == std::string::npos
                  ? lo
                  : gort::bench::ParsePositiveInt(item.substr(dash + 1));
    if (!lo || !hi || *hi < *lo || *hi > 1024) UsageError("bad --procs " + v);
    for (std::int64_t p = *lo; p <= *hi; ++p) {
      procs.push_back(static_cast<int>(p));
    }
    pos = comma + 1;
  }
  return procs;
}

// ParseOwnFlag reads the flag flags is at, one of gort-compare's own (those
// of CommonFlags are read before).
void ParseOwnFlag(gort::bench::FlagReader& flags, Config& config) {
  const std::string& name = flags.name();
  if (name == "child") {
    config.child = flags.Bool();
  } else if (name == "markdown") {
    // --markdown alone takes no value (so it can precede other flags).
    config.markdown = flags.HasValue() ? flags.Value() : kDefaultMarkdown;
  } else if (name == "note") {
    config.note = flags.Value();
  } else if (name == "max-count") {
    config.max_count = static_cast<int>(PositiveIntFlag(flags, 1000));
  } else if (name == "seed") {
    const std::string v = flags.Value();
    char* end = nullptr;
    config.seed = std::strtoull(v.c_str(), &end, 10);
    if (end == v.c_str() || *end != '\0') UsageError("bad --seed " + v);
    config.seed_set = true;
  } else if (name == "procs") {
    config.procs = ParseProcs(flags.Value());
    config.child_procs = config.procs.front();
  } else if (name == "usleep") {
    config.usleep = flags.Value();
    if (!ParseUsleep(config.usleep)) {
      UsageError("bad --usleep " + config.usleep +
                 " (want auto, lowres or highres)");
    }
  } else if (name == "goroutines") {
    config.goroutines = PositiveIntFlag(flags, 100'000'000);
  } else if (name == "go") {
    config.go_binary = flags.Value();
  } else {
    UsageError("unknown flag -" + name);
  }
}

Config ParseFlags(int argc, char** argv) {
  Config config;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) config.command += ' ';
    config.command += argv[i];
  }
  gort::bench::FlagReader flags(argc, argv, UsageError);
  while (flags.Next()) {
    if (!config.Parse(flags, PrintUsage)) ParseOwnFlag(flags, config);
  }
  if (config.max_count == 0) {
    config.max_count = std::min(1000, kDefaultMaxCountFactor * config.count);
  }
  config.max_count = std::max(config.max_count, config.count);
  if (!config.seed_set) {
    config.seed = static_cast<std::uint64_t>(
        std::chrono::system_clock::now().time_since_epoch().count());
  }
  if (config.smoke) {
    config.ApplySmoke(kSmokeN);
    config.max_count = 1;
    config.goroutines = kSmokeGoroutines;
  }
  return config;
}

// ---------------------------------------------------------------------------
// The gort child: one measurement, reported in the line protocol.

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

const Benchmark* FindBenchmark(const std::string& name) {
  for (const Benchmark& b : kBenchmarks) {
    if (name == b.name || name == std::string("Benchmark") + b.name) return &b;
  }
  return nullptr;
}

int RunChild(const Config& config) {
  const Benchmark* bench = FindBenchmark(config.bench);
  if (bench == nullptr) {
    std::fprintf(stderr, "gort-compare: --child: unknown benchmark %s\n",
                 config.bench.c_str());
    return 2;
  }
  const gort::UsleepMode usleep = *ParseUsleep(config.usleep);
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
          auto timed_run = [&](std::int64_t iters) {
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
          };
          if (config.benchtime.fixed_n > 0) {
            timed_run(config.benchtime.fixed_n);
          } else {
            timed_run(1);
            while (ns < config.benchtime.ns && n < kMaxN) {
              timed_run(gort::bench::PredictN(config.benchtime.ns, n, ns));
            }
          }
          std::snprintf(buf, sizeof(buf),
                        "result n=%" PRId64 " ns=%" PRId64 " cpu-ns=%" PRId64
                        " handoffs=%" PRId64 " sysmon-wakes=%" PRId64
                        " steals=%" PRId64 " stolen=%" PRId64,
                        n, ns, cpu, after.handoffs - before.handoffs,
                        after.sysmon_wakes - before.sysmon_wakes,
                        after.steals - before.steals,
                        after.stolen - before.stolen);
          result = buf;
        }
        std::snprintf(buf, sizeof(buf), " usleep=%s gomaxprocs=%d",
                      UsleepName(gort::ReadStats().usleep), s0.gomaxprocs);
        result += buf;
        Emit("step gort::Run shutdown (main has returned)");
      },
      gort::Options{.maxprocs = config.child_procs, .usleep = usleep});
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

// ---------------------------------------------------------------------------
// The parent: running children.

// What one child reported.
struct ChildOutcome {
  bool ok = false;
  std::map<std::string, std::string> fields;  // The result line's key=value.
  std::string failure;  // When !ok: what went wrong, one line.
  std::string stderr_text;
  std::int64_t peak_rss_kib = 0;  // The child's peak resident set (wait4).

  std::int64_t Int(const std::string& key) const {
    auto it = fields.find(key);
    return it == fields.end() ? 0
                              : std::strtoll(it->second.c_str(), nullptr, 10);
  }
  std::string Str(const std::string& key) const {
    auto it = fields.find(key);
    return it == fields.end() ? "" : it->second;
  }
};

// The first line of text that reports a fatal error or panic, else its last
// non-empty line.
std::string FatalLine(const std::string& text) {
  std::string last;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.find("fatal error") != std::string::npos ||
        line.rfind("panic:", 0) == 0 ||
        line.find("sched_loops:") != std::string::npos ||
        line.find("ping_loops:") != std::string::npos) {
      return line;
    }
    if (!line.empty()) last = line;
  }
  return last;
}

// Runs argv[0] with GOMAXPROCS=procs in its environment, reading its line
// protocol from stdout and keeping its stderr; kills it when a step makes
// no progress for timeout_s. With slack1 the child's timer slack is set to
// 1 ns before the exec, which every thread it creates inherits. The peak
// resident set comes from wait4's rusage (it includes the few MB of this
// process that the fork copied, the same for every child).
ChildOutcome RunMeasurement(const std::vector<std::string>& argv, int procs,
                            double timeout_s, bool slack1) {
  ChildOutcome out;
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    out.failure = std::string("pipe: ") + std::strerror(errno);
    return out;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    out.failure = std::string("pipe: ") + std::strerror(errno);
    close(out_pipe[0]);
    close(out_pipe[1]);
    return out;
  }
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string procs_text = std::to_string(procs);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    out.failure = std::string("fork: ") + std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
      close(fd);
    }
    return out;
  }
  if (pid == 0) {
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    setenv("GOMAXPROCS", procs_text.c_str(), 1);
    if (slack1) prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    execv(args[0], args.data());
    const std::string msg = std::string("gort-compare: exec ") + args[0] +
                            ": " + std::strerror(errno) + "\n";
    ssize_t ignored = write(STDERR_FILENO, msg.data(), msg.size());
    (void)ignored;
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);

  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::duration<double>(timeout_s));
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string step = "starting";
  std::string out_buf;
  bool have_result = false;
  bool timed_out = false;
  bool out_open = true;
  bool err_open = true;
  constexpr std::size_t kMaxStderr = 64 * 1024;
  auto handle_line = [&](const std::string& line) {
    if (line.rfind("step ", 0) == 0) {
      step = line.substr(5);
      deadline = std::chrono::steady_clock::now() + timeout;
    } else if (line.rfind("result ", 0) == 0) {
      have_result = true;
      std::size_t pos = 7;
      while (pos < line.size()) {
        std::size_t sp = line.find(' ', pos);
        if (sp == std::string::npos) sp = line.size();
        std::string field = line.substr(pos, sp - pos);
        if (auto eq = field.find('='); eq != std::string::npos) {
          out.fields[field.substr(0, eq)] = field.substr(eq + 1);
        }
        pos = sp + 1;
      }
    } else if (out.stderr_text.size() < kMaxStderr) {
      out.stderr_text += line + "\n";  // Stray output: keep it for reports.
    }
  };
  while (out_open || err_open) {
    const int left = gort::bench::MillisLeftOrKill(deadline, pid);
    if (left < 0) {
      timed_out = true;
      break;
    }
    pollfd pfds[2];
    int nfds = 0;
    int out_index = -1;
    int err_index = -1;
    if (out_open) {
      out_index = nfds;
      pfds[nfds++] = {out_pipe[0], POLLIN, 0};
    }
    if (err_open) {
      err_index = nfds;
      pfds[nfds++] = {err_pipe[0], POLLIN, 0};
    }
    const int ready = poll(pfds, nfds, left + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // Timeout: caught at the top of the loop.
    char buf[4096];
    if (out_index >= 0 && pfds[out_index].revents != 0) {
      const ssize_t r = read(out_pipe[0], buf, sizeof(buf));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        out_open = false;
      } else {
        out_buf.append(buf, static_cast<std::size_t>(r));
        std::size_t nl;
        while ((nl = out_buf.find('\n')) != std::string::npos) {
          handle_line(out_buf.substr(0, nl));
          out_buf.erase(0, nl + 1);
        }
      }
    }
    if (err_index >= 0 && pfds[err_index].revents != 0) {
      const ssize_t r = read(err_pipe[0], buf, sizeof(buf));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        err_open = false;
      } else if (out.stderr_text.size() < kMaxStderr) {
        out.stderr_text.append(buf, static_cast<std::size_t>(r));
      }
    }
  }
  if (!out_buf.empty()) handle_line(out_buf);
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  rusage ru{};
  while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  out.peak_rss_kib = ru.ru_maxrss;
  if (timed_out) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%g", timeout_s);
    out.failure = std::string("hung: no progress for ") + buf + " s during " +
                  step + " (child killed)";
  } else if (!have_result || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    out.failure = gort::bench::DescribeStatus(status) + " during " + step;
    const std::string fatal = FatalLine(out.stderr_text);
    if (!fatal.empty()) out.failure += ": " + fatal;
  } else {
    out.ok = true;
  }
  return out;
}

// The directory of this executable, with a trailing slash.
std::string SelfDir() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "./";
  std::string s(path, static_cast<std::size_t>(n));
  return s.substr(0, s.rfind('/') + 1);
}

std::string SelfPath() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "gort-compare";
  return std::string(path, static_cast<std::size_t>(n));
}

// The first line a command prints, or "".
std::string CommandOutput(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return "";
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return "";
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    std::vector<char*> args;
    for (const std::string& a : argv) {
      args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  std::string text;
  char buf[512];
  ssize_t r;
  while ((r = read(fds[0], buf, sizeof(buf))) != 0) {
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    text.append(buf, static_cast<std::size_t>(r));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "";
  return text.substr(0, text.find('\n'));
}

// ---------------------------------------------------------------------------
// Collecting results.

// One measurement's numbers.
struct Sample {
  double ns_per_op = 0;
  double cpus = 0;               // CPU time / wall time.
  double kib_per_goroutine = 0;  // Park.
  double peak_rss_kib = 0;       // The whole process's peak (wait4).
  double steals_per_op = 0;      // gort only.
  double stolen_per_op = 0;      // gort only: goroutines moved.
};

// Which number of a Sample a statistic is about.
enum class Metric { kTime, kKiB, kRss, kCpus };

double Get(const Sample& s, Metric m) {
  switch (m) {
    case Metric::kTime:
      return s.ns_per_op;
    case Metric::kKiB:
      return s.kib_per_goroutine;
    case Metric::kRss:
      return s.peak_rss_kib;
    case Metric::kCpus:
      return s.cpus;
  }
  return 0;
}

// One implementation's measurements of one benchmark at one GOMAXPROCS: a
// gort variant, Go as shipped or Go with 1 ns timer slack.
struct Series {
  std::string label;      // "gort", "gort-lowres", "go", "go-slack1ns".
  std::string line_name;  // BenchmarkX[/mode]-impl, without "-procs".
  bool slack1 = false;    // Go run with 1 ns timer slack.
  std::map<int, Sample> by_round;  // Successful runs by round, for pairs.
  std::string usleep;  // gort: the usleep mode in effect, as reported.
  int runs = 0;
  int failures = 0;
  std::string first_failure;

  std::vector<double> Values(Metric m) const {
    std::vector<double> v;
    for (const auto& [round, sample] : by_round) v.push_back(Get(sample, m));
    return v;
  }
};

// The per-round ratios a/b of metric m, over the rounds both measured.
std::vector<double> PairedRatios(const Series& a, const Series& b, Metric m) {
  std::vector<double> ratios;
  for (const auto& [round, sa] : a.by_round) {
    auto it = b.by_round.find(round);
    if (it != b.by_round.end() && Get(it->second, m) > 0) {
      ratios.push_back(Get(sa, m) / Get(it->second, m));
    }
  }
  return ratios;
}

struct Row {
  const Benchmark* bench;
  int procs;
  int variant;  // Index into bench->variants; the gort side of the row.
  Series* gort;
  Series* go;     // As shipped.
  Series* slack;  // With 1 ns timer slack.

  const Variant& variant_spec() const { return bench->variants[variant]; }
  std::string Name() const {
    std::string name = bench->name;
    const Variant& v = variant_spec();
    if (v.mode != nullptr && bench->nvariants > 1) {
      name += std::string("/") + v.mode;
    }
    return name;
  }
  // Whether gort ran in high-resolution mode, so that Go with 1 ns slack
  // is the fair reference.
  bool Highres() const {
    const Variant& v = variant_spec();
    if (v.mode != nullptr) return std::string(v.mode) == "highres";
    return gort->usleep == "highres";
  }
  const Series* Judged() const { return Highres() ? slack : go; }
};

enum class Verdict { kMet, kMissed, kInconclusive, kFailed };

const char* VerdictText(Verdict v) {
  switch (v) {
    case Verdict::kMet:
      return "met";
    case Verdict::kMissed:
      return "MISSED";
    case Verdict::kInconclusive:
      return "inconclusive";
    case Verdict::kFailed:
      return "failed";
  }
  return "?";
}

// "met" when the whole 95% confidence interval is at or below the target,
// "missed" when it is all above, else inconclusive (an infinite interval,
// below 6 values, is inconclusive).
Verdict Judge(const gort::bench::MedianSummary& s, double target) {
  if (s.n == 0) return Verdict::kFailed;
  if (!s.Finite()) return Verdict::kInconclusive;
  if (s.hi <= target) return Verdict::kMet;
  if (s.lo > target) return Verdict::kMissed;
  return Verdict::kInconclusive;
}

// One target of a row and how it fared.
struct Check {
  std::string what;    // "time vs Go+1ns slack", "peak RSS vs Go", ...
  std::string target;  // "≤ 0.60"
  gort::bench::MedianSummary summary;  // Of the judged quantity.
  Verdict verdict = Verdict::kFailed;
};

std::string FormatDouble(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

// The reference column's short name.
const char* RefName(const Series* s) { return s->slack1 ? "Go+1ns" : "Go"; }

// The targets that apply to a row, judged on what has been measured so far.
std::vector<Check> Checks(const Row& row) {
  std::vector<Check> checks;
  const Benchmark& b = *row.bench;
  const Variant& v = row.variant_spec();
  if (v.goal == Goal::kNone || row.procs > b.target_procs) return checks;
  auto ratio_check = [&](const Series* ref, Metric m, const char* what,
                         double target) {
    Check c;
    c.what = std::string(what) + " vs " + RefName(ref);
    c.target = FormatDouble("\u2264 %.2f", target);
    c.summary = gort::bench::SummarizeMedian(PairedRatios(*row.gort, *ref, m));
    c.verdict = Judge(c.summary, target);
    checks.push_back(std::move(c));
  };
  switch (v.goal) {
    case Goal::kRatio:
      ratio_check(row.Judged(), Metric::kTime, "time", v.target);
      if (v.target_shipped > 0) {
        ratio_check(row.go, Metric::kTime, "time", v.target_shipped);
      }
      if (b.rss_target > 0) {
        ratio_check(row.Judged(), Metric::kRss, "peak RSS", b.rss_target);
      }
      break;
    case Goal::kKiB: {
      Check c;
      c.what = "KiB per parked goroutine";
      c.target = FormatDouble("\u2264 %.1f KiB", v.target);
      c.summary =
          gort::bench::SummarizeMedian(row.gort->Values(Metric::kKiB));
      c.verdict = Judge(c.summary, v.target);
      checks.push_back(std::move(c));
      break;
    }
    case Goal::kStarts: {
      Check c;
      c.what = "1 000 000 goroutines start";
      c.target = "starts";
      c.summary = gort::bench::SummarizeMedian(row.gort->Values(Metric::kKiB));
      c.verdict = row.gort->by_round.empty() ? Verdict::kMissed : Verdict::kMet;
      checks.push_back(std::move(c));
      break;
    }
    case Goal::kNone:
      break;
  }
  return checks;
}

bool AnyInconclusive(const std::vector<Row>& rows, std::size_t first) {
  for (std::size_t i = first; i < rows.size(); ++i) {
    for (const Check& c : Checks(rows[i])) {
      if (c.verdict == Verdict::kInconclusive) return true;
    }
  }
  return false;
}

std::string WithSpread(const std::string& value,
                       const gort::bench::MedianSummary& s) {
  return value + " \u00b1 " + s.SpreadText();
}

std::string Interval(const gort::bench::MedianSummary& s) {
  if (s.n == 0) return "";
  if (!s.Finite()) return "[-\u221e, \u221e]";
  return FormatDouble("[%.2f, ", s.lo) + FormatDouble("%.2f]", s.hi);
}

// A megabyte figure from KiB.
std::string Mebibytes(double kib) { return FormatDouble("%.0fMB", kib / 1024); }

// The table for one GOMAXPROCS.
std::string FormatResults(const std::vector<Row>& rows, int procs,
                          std::vector<std::string>* notes) {
  std::vector<std::vector<std::string>> table;
  table.push_back({"GOMAXPROCS=" + std::to_string(procs), "gort", "Go",
                   "Go+1ns", "gort/Go", "gort/Go+1ns", "target", "95% CI",
                   "verdict", "rounds"});
  for (const Row& row : rows) {
    if (row.procs != procs) continue;
    const Benchmark& b = *row.bench;
    const std::string name = row.Name();
    for (const Series* s : {row.gort, row.go, row.slack}) {
      if (s->failures > 0) {
        notes->push_back(name + " (GOMAXPROCS=" + std::to_string(procs) + ", " +
                         s->label + "): " + std::to_string(s->failures) +
                         " of " + std::to_string(s->runs) +
                         " runs failed; first: " + s->first_failure);
      }
    }
    const std::vector<Check> checks = Checks(row);
    const bool park = b.kind == Kind::kPark;
    const bool starts = park && b.goroutines >= 1'000'000;
    const Metric metric = park ? Metric::kKiB : Metric::kTime;
    const auto gs = gort::bench::SummarizeMedian(row.gort->Values(metric));
    const auto os = gort::bench::SummarizeMedian(row.go->Values(metric));
    const auto ss = gort::bench::SummarizeMedian(row.slack->Values(metric));
    const auto scale = gort::bench::TimeScale::For(
        os.n > 0 ? os.median : gs.n > 0 ? gs.median : 0);
    auto value = [&](const gort::bench::MedianSummary& s) -> std::string {
      if (s.n == 0) return "failed";
      if (starts) return FormatDouble("yes, %.2f KiB/g", s.median);
      if (park) return WithSpread(FormatDouble("%.2f", s.median), s);
      return WithSpread(scale.Format(s.median), s);
    };
    auto paired = [&](const Series* ref) -> std::string {
      const auto p =
          gort::bench::SummarizeMedian(PairedRatios(*row.gort, *ref, metric));
      return p.n == 0 ? "" : FormatDouble("%.2f", p.median);
    };
    std::vector<std::string> cells(10);
    cells[0] = name + (starts  ? " (starts?)"
                       : park ? " (KiB/goroutine)"
                              : "");
    cells[1] = starts && gs.n == 0 ? "no" : value(gs);
    cells[2] = value(os);
    cells[3] = value(ss);
    cells[4] = paired(row.go);
    cells[5] = paired(row.slack);
    cells[9] = std::to_string(row.gort->by_round.size());
    auto fill = [](std::vector<std::string>* c, const Check& check) {
      (*c)[6] = check.target + " " +
                (check.what.find(" vs ") != std::string::npos
                     ? check.what.substr(check.what.find(" vs ") + 1)
                     : std::string());
      (*c)[7] = Interval(check.summary);
      (*c)[8] = VerdictText(check.verdict);
    };
    std::size_t next = 0;
    if (!checks.empty() && checks[0].what.rfind("time", 0) == 0) {
      fill(&cells, checks[0]);
      next = 1;
    } else if (!checks.empty() && park) {
      cells[6] = checks[0].target;
      cells[7] = starts ? "" : Interval(checks[0].summary);
      cells[8] = VerdictText(checks[0].verdict);
      next = 1;
    }
    table.push_back(std::move(cells));
    // Peak RSS, for rows that measure it.
    if (b.rss_target > 0) {
      std::vector<std::string> rss(10);
      rss[0] = name + " (peak RSS)";
      auto mb = [](const Series* s) {
        const auto m = gort::bench::SummarizeMedian(s->Values(Metric::kRss));
        return m.n == 0 ? std::string("failed") : Mebibytes(m.median);
      };
      rss[1] = mb(row.gort);
      rss[2] = mb(row.go);
      rss[3] = mb(row.slack);
      auto pr = [&](const Series* ref) {
        const auto p = gort::bench::SummarizeMedian(
            PairedRatios(*row.gort, *ref, Metric::kRss));
        return p.n == 0 ? std::string() : FormatDouble("%.2f", p.median);
      };
      rss[4] = pr(row.go);
      rss[5] = pr(row.slack);
      for (std::size_t i = next; i < checks.size(); ++i) {
        if (checks[i].what.rfind("peak RSS", 0) == 0) fill(&rss, checks[i]);
      }
      table.push_back(std::move(rss));
    }
    // Further time targets (ChanToSyscallPing/highres against Go as shipped).
    for (std::size_t i = next; i < checks.size(); ++i) {
      if (checks[i].what.rfind("time", 0) != 0) continue;
      std::vector<std::string> extra(10);
      extra[0] = "  (" + name + ")";
      fill(&extra, checks[i]);
      table.push_back(std::move(extra));
    }
  }
  return gort::bench::FormatTable(std::move(table));
}

// Resamples each of the four series with replacement and returns the 2.5%
// and 97.5% quantiles of (median(g1)/median(gp)) / (median(o1)/median(op)),
// gort's speedup from GOMAXPROCS 1 to p over Go's: a bootstrap interval.
std::pair<double, double> SpeedupInterval(const std::vector<double>& g1,
                                          const std::vector<double>& gp,
                                          const std::vector<double>& o1,
                                          const std::vector<double>& op,
                                          std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto resampled_median = [&](const std::vector<double>& v) {
    std::vector<double> r(v.size());
    std::uniform_int_distribution<std::size_t> pick(0, v.size() - 1);
    for (double& x : r) x = v[pick(rng)];
    std::sort(r.begin(), r.end());
    const std::size_t n = r.size();
    return n % 2 == 1 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
  };
  constexpr int kResamples = 2000;
  std::vector<double> stats;
  for (int i = 0; i < kResamples; ++i) {
    const double g = resampled_median(g1) / resampled_median(gp);
    const double o = resampled_median(o1) / resampled_median(op);
    stats.push_back(g / o);
  }
  std::sort(stats.begin(), stats.end());
  return {gort::bench::Quantile(stats, 0.025),
          gort::bench::Quantile(stats, 0.975)};
}

// FanOut's scaling over the GOMAXPROCS sweep: speedup over GOMAXPROCS 1 and
// CPUs busy (CPU time over wall time) for gort and both Go columns, and the
// verdict on gort's speedup at least the judged Go column's (bootstrap 95%
// interval of the ratio of speedups, at or above 1 for "met").
std::string FormatScaling(const std::vector<Row>& rows,
                          const std::vector<int>& procs_list,
                          std::uint64_t seed,
                          std::vector<std::vector<std::string>>* verdicts) {
  std::map<int, const Row*> at;
  for (const Row& row : rows) {
    if (std::string(row.bench->name) == "FanOut") at[row.procs] = &row;
  }
  if (at.count(1) == 0 || at.size() < 2) return "";
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> heading = {"FanOut scaling"};
  for (int p : procs_list) {
    if (at.count(p) == 0) continue;
    heading.push_back("time/op @" + std::to_string(p));
    if (p > 1) {
      heading.push_back("speedup 1\u2192" + std::to_string(p));
      heading.push_back("CPUs busy @" + std::to_string(p));
    }
  }
  heading.push_back("steals/op @2");
  table.push_back(heading);
  const Row& r1 = *at[1];
  for (int impl = 0; impl < 3; ++impl) {
    auto pick = [&](const Row& r) {
      return impl == 0 ? r.gort : impl == 1 ? r.go : r.slack;
    };
    const Series* s1 = pick(r1);
    if (s1->by_round.empty()) continue;
    const auto m1 = gort::bench::SummarizeMedian(s1->Values(Metric::kTime));
    const auto scale = gort::bench::TimeScale::For(m1.median);
    std::vector<std::string> line = {impl == 0   ? "gort"
                                     : impl == 1 ? "Go"
                                                 : "Go+1ns"};
    for (int p : procs_list) {
      if (at.count(p) == 0) continue;
      const Series* sp = pick(*at[p]);
      if (sp->by_round.empty()) {
        line.push_back("failed");
        if (p > 1) line.insert(line.end(), {"", ""});
        continue;
      }
      const auto mp = gort::bench::SummarizeMedian(sp->Values(Metric::kTime));
      line.push_back(scale.Format(mp.median));
      if (p > 1) {
        const auto c = gort::bench::SummarizeMedian(sp->Values(Metric::kCpus));
        line.push_back(FormatDouble("%.2fx", m1.median / mp.median));
        line.push_back(FormatDouble("%.2f", c.median));
      }
    }
    if (impl == 0 && at.count(2) != 0 && !at[2]->gort->by_round.empty()) {
      std::vector<double> steals;
      for (const auto& [round, s] : at[2]->gort->by_round) {
        steals.push_back(s.steals_per_op);
      }
      line.push_back(FormatDouble(
          "%.1f", gort::bench::SummarizeMedian(steals).median));
    }
    table.push_back(std::move(line));
  }
  std::string text = gort::bench::FormatTable(std::move(table));
  // The verdicts: speedup at least Go's, at each GOMAXPROCS > 1.
  for (const auto& [p, row] : at) {
    if (p == 1) continue;
    const Series* ref = row->Judged();
    const Series* ref1 = r1.Judged();
    const auto g1 = r1.gort->Values(Metric::kTime);
    const auto gp = row->gort->Values(Metric::kTime);
    const auto o1 = ref1->Values(Metric::kTime);
    const auto op = ref->Values(Metric::kTime);
    std::string interval;
    Verdict v = Verdict::kFailed;
    if (!g1.empty() && !gp.empty() && !o1.empty() && !op.empty()) {
      const auto [lo, hi] = SpeedupInterval(g1, gp, o1, op, seed + p);
      interval = FormatDouble("[%.2f, ", lo) + FormatDouble("%.2f]", hi);
      v = g1.size() < 6 || gp.size() < 6 ? Verdict::kInconclusive
          : lo >= 1                      ? Verdict::kMet
          : hi < 1                       ? Verdict::kMissed
                                         : Verdict::kInconclusive;
    }
    char buf[160];
    std::snprintf(buf, sizeof(buf),
                  "FanOut speedup 1\u2192%d, gort over %s: 95%% interval %s "
                  "(bootstrap), target \u2265 1.00: %s\n",
                  p, RefName(ref), interval.c_str(), VerdictText(v));
    text += buf;
    if (verdicts != nullptr) {
      verdicts->push_back({"FanOut speedup 1\u2192" + std::to_string(p),
                           std::to_string(p),
                           std::string("speedup vs ") + RefName(ref),
                           "\u2265 1.00", interval, VerdictText(v),
                           std::to_string(gp.size())});
    }
  }
  return text;
}

// /proc/loadavg's three load averages, or "?".
std::string LoadAverage() {
  std::FILE* f = std::fopen("/proc/loadavg", "re");
  if (f == nullptr) return "?";
  char a[32], b[32], c[32];
  const int got = std::fscanf(f, "%31s %31s %31s", a, b, c);
  std::fclose(f);
  if (got != 3) return "?";
  return std::string(a) + " " + b + " " + c;
}

std::string Now() {
  char buf[64];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof(buf), "%a %b %e %H:%M:%S UTC %Y", &tm);
  return buf;
}

// "Linux 6.1.0 x86_64, 2 CPUs (AMD EPYC ...), 23.4 GiB RAM".
std::string MachineText() {
  std::string text;
  utsname u{};
  if (uname(&u) == 0) {
    text = std::string(u.sysname) + " " + u.release + " " + u.machine + ", ";
  }
  text += std::to_string(CpuCount()) + " CPUs";
  if (std::string cpu = gort::bench::CpuModel(); !cpu.empty()) {
    text += " (" + cpu + ")";
  }
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) {
    text += FormatDouble(", %.1f GiB RAM",
                         static_cast<double>(pages) * page / (1 << 30));
  }
  return text;
}

// The commit the benchmarks were built from: HEAD of the git work tree
// around `dir`, with "+dirty" when tracked files differ from it.
std::string CommitText(const std::string& dir) {
  std::string commit =
      CommandOutput({"git", "-C", dir, "rev-parse", "--short=12", "HEAD"});
  if (commit.empty()) return "unknown";
  const std::string dirty = CommandOutput(
      {"git", "-C", dir, "status", "--porcelain", "--untracked-files=no"});
  if (!dirty.empty()) commit += "+dirty";
  return commit;
}

constexpr const char* kMarkdownBegin =
    "<!-- gort-compare:begin (written by gort-compare --markdown; do not "
    "edit by hand) -->";
constexpr const char* kMarkdownEnd = "<!-- gort-compare:end -->";

// Replaces the text between the markers in path (or appends the block when
// the markers are missing) with block.
bool WriteMarkdown(const std::string& path, const std::string& block) {
  std::string text;
  if (std::FILE* f = std::fopen(path.c_str(), "re")) {
    char buf[4096];
    std::size_t r;
    while ((r = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, r);
    std::fclose(f);
  }
  const std::string full =
      std::string(kMarkdownBegin) + "\n" + block + kMarkdownEnd + "\n";
  const std::size_t b = text.find(kMarkdownBegin);
  const std::size_t e = text.find(kMarkdownEnd);
  if (b != std::string::npos && e != std::string::npos && e > b) {
    std::size_t after = e + std::strlen(kMarkdownEnd);
    if (after < text.size() && text[after] == '\n') ++after;
    text = text.substr(0, b) + full + text.substr(after);
  } else {
    if (!text.empty() && text.back() != '\n') text += "\n";
    text += (text.empty() ? "" : "\n") + full;
  }
  std::FILE* f = std::fopen(path.c_str(), "we");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

// A participant of a round: a gort variant or one of the two Go columns.
struct Participant {
  Series* series;
  int variant;  // gort: index into variants; Go: -1.
};

int RunParent(const Config& config) {
  // Park1M takes seconds and gigabytes: not for CI (--smoke).
  const std::vector<const Benchmark*> benches = gort::bench::SelectBenchmarks(
      kBenchmarks, config, "gort-compare", UsageError,
      [&config](const Benchmark& b) {
        return config.smoke && b.kind == Kind::kPark &&
               b.goroutines >= 1'000'000;
      });
  const std::string self = SelfPath();
  const std::string go_binary =
      config.go_binary.empty() ? SelfDir() + "gortbench-go" : config.go_binary;
  if (access(go_binary.c_str(), X_OK) != 0) {
    std::fprintf(stderr,
                 "gort-compare: the Go benchmarks (%s) are not built: %s\n"
                 "  build them with: cmake --build <dir> --target "
                 "gortbench_go (needs Go 1.19, scripts/deps.sh)\n",
                 go_binary.c_str(), std::strerror(errno));
    return 1;
  }
  const std::string go_version = CommandOutput({go_binary, "-version"});
  const std::string started_at = Now();
  const std::string load_start = LoadAverage();
  std::string markdown_dir = ".";
  if (!config.markdown.empty()) {
    const std::size_t slash = config.markdown.rfind('/');
    if (slash != std::string::npos) {
      markdown_dir = config.markdown.substr(0, std::max<std::size_t>(slash, 1));
    }
  }
  const std::string commit =
      config.markdown.empty() ? "" : CommitText(markdown_dir);

  std::vector<Row> rows;
  std::vector<std::unique_ptr<Series>> storage;  // Stable addresses.
  auto new_series = [&](std::string label, std::string line_name) {
    storage.push_back(std::make_unique<Series>());
    storage.back()->label = std::move(label);
    storage.back()->line_name = std::move(line_name);
    return storage.back().get();
  };

  std::printf("goos: linux\n");
#if defined(__x86_64__)
  std::printf("goarch: amd64\n");
#endif
  std::printf("pkg: gort/benchmarks/compare\n");
  if (std::string cpu = gort::bench::CpuModel(); !cpu.empty()) {
    std::printf("cpu: %s\n", cpu.c_str());
  }
  std::printf("date: %s\n", started_at.c_str());
  std::printf("loadavg: %s\n", load_start.c_str());
  std::printf("go-version: %s\n",
              go_version.empty() ? "?" : go_version.c_str());
  std::printf("gort-usleep: %s (ChanToSyscallPing: lowres and highres)\n",
              config.usleep.c_str());
  std::printf("seed: %" PRIu64 "\n", config.seed);
  if (config.smoke) {
    std::printf("smoke: N=%" PRId64 ", Park/SpawnBurst/Skynet size %" PRId64
                ", one run each\n",
                config.benchtime.fixed_n, config.goroutines);
  } else {
    std::printf("benchtime: %s\ncount: %d (up to %d while inconclusive)\n",
                config.benchtime.text.c_str(), config.count,
                config.max_count);
  }
  std::fflush(stdout);

  std::size_t name_width = 0;
  for (const Benchmark* b : benches) {
    for (int v = 0; v < b->nvariants; ++v) {
      std::size_t w = std::strlen("Benchmark") + std::strlen(b->name) +
                      std::strlen("-go-slack1ns-99");
      if (b->nvariants > 1) w += 1 + std::strlen(b->variants[v].mode);
      name_width = std::max(name_width, w);
    }
  }

  std::mt19937_64 rng(config.seed);
  const auto start = std::chrono::steady_clock::now();
  int failures = 0;
  int measurements = 0;
  // Runs one measurement of p at `procs` in round `round` of `rounds`.
  auto measure = [&](const Benchmark* b, const Participant& p, int procs,
                     int round) {
    Series* series = p.series;
    const bool is_go = p.variant < 0;
    std::vector<std::string> argv;
    if (is_go) {
      argv = {go_binary, std::string("-bench=") + b->name,
              "-benchtime=" + config.benchtime.text,
              "-procs=" + std::to_string(procs)};
      if (config.goroutines > 0) {
        argv.push_back("-goroutines=" + std::to_string(config.goroutines));
      }
    } else {
      const char* mode = b->variants[p.variant].mode != nullptr
                             ? b->variants[p.variant].mode
                             : config.usleep.c_str();
      argv = {self,
              "--child",
              std::string("--bench=") + b->name,
              "--benchtime=" + config.benchtime.text,
              "--procs=" + std::to_string(procs),
              std::string("--usleep=") + mode};
      if (config.goroutines > 0) {
        argv.push_back("--goroutines=" + std::to_string(config.goroutines));
      }
    }
    ChildOutcome o =
        RunMeasurement(argv, procs, config.timeout_s, series->slack1);
    ++measurements;
    ++series->runs;
    const std::string name = series->line_name + "-" + std::to_string(procs);
    if (!o.ok) {
      ++failures;
      ++series->failures;
      if (series->first_failure.empty()) series->first_failure = o.failure;
      std::string repro;
      for (const std::string& a : argv) repro += " " + a;
      std::printf(
          "--- FAIL: %s (round %d)\n    %s\n    repro: %sGOMAXPROCS=%d%s\n",
          name.c_str(), round + 1, o.failure.c_str(),
          series->slack1 ? "(timer slack 1 ns) " : "", procs, repro.c_str());
      std::fflush(stdout);
      return;
    }
    if (!o.stderr_text.empty()) {
      std::fprintf(stderr, "%s: child stderr:\n%s", name.c_str(),
                   o.stderr_text.c_str());
    }
    if (!is_go) {
      series->usleep = o.Str("usleep");
      const char* want = b->variants[p.variant].mode;
      if (b->nvariants > 1 && series->usleep != want) {
        std::fprintf(stderr,
                     "gort-compare: warning: %s asked for usleep mode %s, the "
                     "runtime reports %s\n",
                     name.c_str(), want, series->usleep.c_str());
      }
    }
    const std::int64_t n = std::max<std::int64_t>(o.Int("n"), 1);
    const std::int64_t ns = o.Int("ns");
    Sample sample;
    sample.ns_per_op = static_cast<double>(ns) / n;
    sample.cpus = ns > 0 ? static_cast<double>(o.Int("cpu-ns")) / ns : 0;
    sample.peak_rss_kib = static_cast<double>(o.peak_rss_kib);
    std::string line = name;
    if (line.size() < name_width) line.append(name_width - line.size(), ' ');
    char count_field[32];
    std::snprintf(count_field, sizeof(count_field), "\t%8" PRId64, n);
    line += count_field;
    line += gort::bench::FormatGoValue(sample.ns_per_op, "ns/op");
    if (b->kind == Kind::kPark) {
      const double bytes =
          static_cast<double>(o.Int("rss-parked") - o.Int("rss-before")) / n;
      sample.kib_per_goroutine = bytes / 1024;
      line += gort::bench::FormatGoValue(bytes, "rss-B/goroutine");
    } else {
      line += gort::bench::FormatGoValue(sample.cpus, "cpus");
      if (b->rss_target > 0) {
        line += gort::bench::FormatGoValue(sample.peak_rss_kib * 1024,
                                           "peak-rss-B");
      }
      if (!is_go) {
        sample.steals_per_op = static_cast<double>(o.Int("steals")) / n;
        sample.stolen_per_op = static_cast<double>(o.Int("stolen")) / n;
      }
      if (!is_go && config.stats) {
        line += gort::bench::FormatGoValue(
            static_cast<double>(o.Int("handoffs")) / n, "handoffs/op");
        line += gort::bench::FormatGoValue(
            static_cast<double>(o.Int("sysmon-wakes")) / n, "sysmon-wakes/op");
        line += gort::bench::FormatGoValue(sample.steals_per_op, "steals/op");
        line += gort::bench::FormatGoValue(sample.stolen_per_op, "stolen/op");
      }
    }
    series->by_round[round] = sample;
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };

  for (int procs : config.procs) {
    for (const Benchmark* b : benches) {
      const std::string base = std::string("Benchmark") + b->name;
      Series* go = new_series("go", base + "-go");
      Series* slack = new_series("go-slack1ns", base + "-go-slack1ns");
      slack->slack1 = true;
      const std::size_t first_row = rows.size();
      std::vector<Participant> order;
      for (int v = 0; v < b->nvariants; ++v) {
        std::string label = "gort";
        std::string line = base;
        if (b->nvariants > 1) {
          label += std::string("-") + b->variants[v].mode;
          line += std::string("/") + b->variants[v].mode;
        }
        Series* g = new_series(label, line + "-gort");
        rows.push_back({b, procs, v, g, go, slack});
        order.push_back({g, v});
      }
      order.push_back({go, -1});
      order.push_back({slack, -1});
      const int base_rounds =
          b->rounds > 0 ? std::min(b->rounds, config.count) : config.count;
      const int max_rounds =
          b->rounds > 0 ? std::min(b->rounds, config.max_count)
                        : config.max_count;
      for (int round = 0; round < max_rounds; ++round) {
        if (round >= base_rounds && !AnyInconclusive(rows, first_row)) break;
        std::shuffle(order.begin(), order.end(), rng);
        for (const Participant& p : order) measure(b, p, procs, round);
      }
    }
  }
  const double elapsed = gort::bench::PrintResultTrailer(
      "gort-compare", failures, measurements, start);
  const int exit_code = failures == 0 ? 0 : 1;
  if (config.smoke) return exit_code;

  const std::string load_end = LoadAverage();
  std::printf("loadavg at end: %s\n", load_end.c_str());
  std::vector<std::string> notes;
  std::string report;
  for (int procs : config.procs) {
    report += "\n" + FormatResults(rows, procs, &notes);
  }
  report +=
      "\ngort, Go, Go+1ns: medians \u00b1 the 95% confidence interval of the "
      "median\n(benchstat's; \u221e below 6 runs). Go+1ns: Go run with 1 ns "
      "timer slack\n(PR_SET_TIMERSLACK, inherited across exec).\n"
      "gort/Go, gort/Go+1ns: medians of the per-round (paired) ratios.\n"
      "target: judged against Go+1ns when gort runs in high-resolution "
      "mode, else Go.\n95% CI: of the median of the judged paired ratios; "
      "verdict met when its upper\nend is at or below the target, MISSED "
      "when its lower end is above, else\ninconclusive (which earns more "
      "rounds, up to --max-count). Park rows: resident\nKiB per parked "
      "goroutine, judged on gort's own interval.\n\n";
  std::vector<std::vector<std::string>> scaling_verdicts;
  report += FormatScaling(rows, config.procs, config.seed, &scaling_verdicts);
  if (!notes.empty()) {
    report += "\nnotes:\n";
    for (const std::string& n : notes) report += "  " + n + "\n";
  }
  std::fputs(report.c_str(), stdout);

  if (!config.markdown.empty()) {
    std::string md;
    md += "## Results (written by `gort-compare --markdown`)\n\n";
    md += "- gort commit: `" + commit + "`; " +
          (go_version.empty() ? std::string("Go ?") : go_version) + "\n";
    md += "- machine: " + MachineText() + "\n";
    md += "- date: " + started_at + "; " + FormatDouble("%.0f", elapsed) +
          " s, " + std::to_string(measurements) + " measurements, " +
          std::to_string(failures) + " failed\n";
    md += "- load average (1, 5, 15 min): " + load_start + " at the start, " +
          load_end + " at the end\n";
    const char* script = std::getenv("GORT_COMPARE_COMMAND");
    md += "- command: `" +
          (script != nullptr && *script != '\0'
               ? std::string(script) + "` (runs `" + config.command + "`)"
               : config.command + "`") +
          "\n";
    md += "- seed: " + std::to_string(config.seed) + "\n";
    if (!config.note.empty()) md += "- note: " + config.note + "\n";
    md += "\n### Verdicts\n\n| row | GOMAXPROCS | judged | target | "
          "95% CI | verdict | rounds |\n|---|---|---|---|---|---|---|\n";
    int met = 0, missed = 0, inconclusive = 0;
    auto tally = [&](const std::string& v) {
      if (v == "met") ++met;
      if (v == "MISSED") ++missed;
      if (v == "inconclusive" || v == "failed") ++inconclusive;
    };
    for (const Row& row : rows) {
      for (const Check& c : Checks(row)) {
        tally(VerdictText(c.verdict));
        md += "| " + row.Name() + " | " + std::to_string(row.procs) + " | " +
              c.what + " | " + c.target + " | " + Interval(c.summary) +
              " | " + VerdictText(c.verdict) + " | " +
              std::to_string(row.gort->by_round.size()) + " |\n";
      }
    }
    for (const auto& v : scaling_verdicts) {
      tally(v[5]);
      md += "| " + v[0] + " | " + v[1] + " | " + v[2] + " | " + v[3] + " | " +
            v[4] + " | " + v[5] + " | " + v[6] + " |\n";
    }
    md += "\n" + std::to_string(met) + " met, " + std::to_string(missed) +
          " missed, " + std::to_string(inconclusive) +
          " inconclusive or failed.\n";
    md += "\n### Tables, as printed\n\n```\n" + report.substr(1) + "```\n";
    if (WriteMarkdown(config.markdown, md)) {
      std::printf("\nwrote the results into %s\n", config.markdown.c_str());
    } else {
      std::fprintf(stderr, "gort-compare: cannot write %s: %s\n",
                   config.markdown.c_str(), std::strerror(errno));
      return 1;
    }
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  const Config config = ParseFlags(argc, argv);
  if (config.child) return RunChild(config);
  return RunParent(config);
}
