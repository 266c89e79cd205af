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
//
// This file holds the benchmark table, the flags, the parent's loop and
// main; compare_child.cc the measuring child, compare_run.cc the running of
// children, compare_verdict.cc the statistics and verdicts, and
// compare_report.cc the tables, the markdown and the machine and commit
// text, with their shared declarations in compare.h.

#include "benchmarks/compare.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "benchmarks/harness.h"
#include "benchmarks/net_loops.h"
#include "benchmarks/ping_loops.h"
#include "benchmarks/sched_loops.h"
#include "gort/runtime.h"

namespace gort_compare {
namespace {

using gort::bench::Benchtime;
using gort::bench::PositiveIntFlag;

// ---------------------------------------------------------------------------
// What to run.

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
  Benchmark b{
      name, Kind::kLoop, nullptr, size, 0, 1, {{nullptr, goal, target}, {}}};
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

constexpr const char* kDefaultBenchtime = "200ms";
constexpr int kDefaultCount = 10;
constexpr int kDefaultMaxCountFactor = 3;  // --max-count: 3 x --count.
constexpr std::int64_t kSmokeN = 100;
constexpr std::int64_t kSmokeGoroutines = 1000;
constexpr const char* kDefaultMarkdown = "docs/performance.md";

}  // namespace

const Benchmark* FindBenchmark(const std::string& name) {
  for (const Benchmark& b : kBenchmarks) {
    if (name == b.name || name == std::string("Benchmark") + b.name) return &b;
  }
  return nullptr;
}

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

Config::Config() : CommonFlags(kDefaultCount, kDefaultBenchtime, 60) {}

namespace {

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

// ShellQuote: arg as the shell reads it back: as is when it holds only
// characters the shell leaves alone, else in single quotes.
std::string ShellQuote(const std::string& arg) {
  const char* plain =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
      "_./=:,+@%-";
  if (!arg.empty() && arg.find_first_not_of(plain) == std::string::npos) {
    return arg;
  }
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') {
      out += "'\\''";  // close, an escaped quote, reopen
    } else {
      out += c;
    }
  }
  return out + "'";
}

Config ParseFlags(int argc, char** argv) {
  Config config;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) config.command += ' ';
    config.command += ShellQuote(argv[i]);
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
                config.benchtime.text.c_str(), config.count, config.max_count);
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
      const int max_rounds = b->rounds > 0
                                 ? std::min(b->rounds, config.max_count)
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
    md +=
        "\n### Verdicts\n\n| row | GOMAXPROCS | judged | target | "
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
              c.what + " | " + c.target + " | " + Interval(c.summary) + " | " +
              VerdictText(c.verdict) + " | " +
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
}  // namespace gort_compare

int main(int argc, char** argv) {
  const gort_compare::Config config = gort_compare::ParseFlags(argc, argv);
  if (config.child) return gort_compare::RunChild(config);
  return gort_compare::RunParent(config);
}
