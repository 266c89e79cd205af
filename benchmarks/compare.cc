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
// --ping, the main job (scripts/main-job.sh): gort against itself instead of
// Go, on the ping family of Go's CL 248699 (benchmarks/ping_loops.h) at
// GOMAXPROCS 1, each benchmark in each --usleep mode (lowres, Go's
// behaviour, as the base; highres), rounds as above with no Go columns,
// then a table as the current benchstat prints it: medians ± their 95%
// confidence interval, and the change of the median where a Mann-Whitney U
// test gives p < 0.05.
//
// The C floor: TCPPingPong and TCPPingPong100 also have a twin in plain C
// with one thread and one epoll loop (benchmarks/c/tcp_pingpong.c, built as
// gort-tcp-floor-c next to this executable), run at GOMAXPROCS 1 as a third
// kind of child in the same shuffled rounds; those rows are also judged on
// the paired ratio gort/C (c_target), so the scheduler's share of a network
// round trip is measured against no scheduler at all.
//
// Output: every measurement as a Go benchmark line
// (BenchmarkChanToChanPing-gort-1, BenchmarkChanToChanPing-go-1,
// BenchmarkChanToChanPing-go-slack1ns-1, ...), then per GOMAXPROCS a table,
// then FanOut's scaling over the GOMAXPROCS sweep. --markdown writes the
// same, with the commit, machine, date and command, into a generated file,
// docs/results/compare-<cpu>.md by default (docs/performance.md copies it).
// The Park benchmarks report resident memory per parked goroutine instead of
// time; Skynet reports the peak RSS as well.
//
// This file holds the benchmark table, the flags, the parent (class Parent)
// and main; compare_child.cc the measuring child, compare_run.cc the running of
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

// A loop benchmark with one gort variant, in --usleep's mode, judged at
// GOMAXPROCS 1..target_procs.
constexpr Benchmark Loop(const char* name, void (*loop)(std::int64_t),
                         Goal goal, double target, int target_procs = 1) {
  Benchmark b{name, Kind::kLoop, loop, 0, 0, 1, {{nullptr, goal, target}, {}}};
  b.target_procs = target_procs;
  return b;
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

// A loop benchmark that is also judged against its C twin (gort-tcp-floor-c)
// at GOMAXPROCS 1: paired time ratio gort/C at most c_target.
constexpr Benchmark WithCFloor(Benchmark b, double c_target) {
  b.c_target = c_target;
  return b;
}

// A loop with no Go twin (Go's osyield is not exported), run with --ping
// only.
constexpr Benchmark GortOnly(const char* name, void (*loop)(std::int64_t)) {
  Benchmark b = Loop(name, loop, Goal::kNone, 0);
  b.go_twin = false;
  return b;
}

// The rows and their targets (paired ratio gort/Go at GOMAXPROCS 1 unless
// stated, or absolute for memory). Append new rows here; a row's Go twin in
// gortbench-go has the same name.
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
    // A burst whose goroutines stay parked (time and peak RSS).
    Sized("ParkBurst", gort::bench::ParkBurst, gort::bench::kParkBurst,
          Goal::kRatio, 0.8, 1, 1.0),
    // Ahead of Go on every CPU.
    Loop("ChanBuffered", gort::bench::ChanBuffered, Goal::kRatio, 0.8),
    Loop("Select2", gort::bench::Select2, Goal::kRatio, 0.9),
    Loop("ChanContended", gort::bench::ChanContended, Goal::kNone, 0),
    Loop("MutexUncontended", gort::bench::MutexUncontended, Goal::kNone, 0),
    Loop("FanOut", gort::bench::FanOut, Goal::kNone, 0),
    Sized("Skynet", gort::bench::Skynet, gort::bench::kSkynetLeaves,
          Goal::kRatio, 0.7, 2, 1.0),
    // The network poller (benchmarks/net_loops.h). The two ping-pongs are
    // also judged within 1.05x the same op in plain C (the floor).
    WithCFloor(Loop("TCPPingPong", gort::bench::TCPPingPong, Goal::kRatio, 1.0),
               1.05),
    WithCFloor(
        Loop("TCPPingPong100", gort::bench::TCPPingPong100, Goal::kRatio, 1.0),
        1.05),
    Loop("TCPStream1MiB", gort::bench::TCPStream1MiB, Goal::kRatio, 1.0),
    Loop("ChanToNetpollPing", gort::bench::ChanToNetpollPing, Goal::kRatio, 1.0,
         2),
    Park("Park100k", 100'000, 6, Goal::kKiB, 4.5),
    Park("Park1M", 1'000'000, 1, Goal::kStarts, 0),
    // The rest of the ping family, for --ping.
    GortOnly("OsYield", gort::bench::OsYield),
    GortOnly("OsYieldRaw", gort::bench::OsYieldRaw),
};

constexpr const char* kDefaultBenchtime = "200ms";
constexpr int kDefaultCount = 10;
constexpr int kDefaultMaxCountFactor = 3;  // --max-count: 3 x --count.
constexpr std::int64_t kSmokeN = 100;
constexpr std::int64_t kSmokeGoroutines = 1000;
// --markdown without a PATH: ParseFlags fills in TOPIC (compare, or
// load-test with --samples) and CPU (CpuSlug: this machine's CPU model).
constexpr const char* kDefaultMarkdown = "docs/results/TOPIC-CPU.md";

}  // namespace

const Benchmark* FindBenchmark(const std::string& name) {
  for (const Benchmark& b : kBenchmarks) {
    if (name == b.name || name == std::string("Benchmark") + b.name) return &b;
  }
  return nullptr;
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
      "the row's target, the 95%% confidence interval of the judged\n"
      "ratio and the verdict (met, missed or inconclusive).\n"
      "\n"
      "With --ping (the main job): no Go; the ping family of Go's CL 248699\n"
      "(ChanToSyscallPing, SyscallToSyscallPing, ChanToChanPing, OsYield,\n"
      "OsYieldRaw) at GOMAXPROCS 1 in each --usleep mode, then a benchstat\n"
      "table: medians, and the change against the first mode (lowres, Go's\n"
      "behaviour) where a Mann-Whitney U test gives p < 0.05.\n"
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
      "                     (1 to the CPU count; the default, 1 with --ping)\n"
      "  --usleep=MODE      gort's usleep mode for the benchmarks other than\n"
      "                     ChanToSyscallPing (which runs lowres and\n"
      "                     highres): auto, lowres or highres (default auto);\n"
      "                     with --ping the modes to compare, the base first\n"
      "                     (default lowres,highres)\n"
      "  --ping             gort in each --usleep mode on the ping family,\n"
      "                     no Go (default --procs 1)\n"
      "  --go=PATH          the Go benchmark binary (default gortbench-go\n"
      "                     next to this executable)\n"
      "  --c=PATH           the C floor of the TCPPingPong rows (default\n"
      "                     gort-tcp-floor-c next to this executable), run\n"
      "                     and judged against at GOMAXPROCS 1\n"
      "  --timeout=SECONDS  kill a measurement whose current step makes no\n"
      "                     progress for this long (default 60, 30 with\n"
      "                     --smoke)\n"
      "  --seed=N           seed of the order within rounds (default: time)\n"
      "  --stats            add gort's scheduler counters per op (handoffs,\n"
      "                     sysmon wakes, steals, goroutines stolen) to\n"
      "                     gort's result lines\n"
      "  --markdown[=PATH]  also write the results, with the commit, the\n"
      "                     machine, the date and this command, to PATH,\n"
      "                     replacing the whole file (default %s:\n"
      "                     TOPIC compare, or load-test with --samples; CPU\n"
      "                     the CPU model as a file name, e.g. amd-epyc)\n"
      "  --note=TEXT        a sentence for the markdown (e.g. the load)\n"
      "  --samples=FILE     judge samples measured elsewhere instead of\n"
      "                     running: lines \"point impl round rps p99-ms\"\n"
      "                     (impl gort or go; scripts/load-test.sh); with\n"
      "                     --markdown, their table goes to that file\n"
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
      "and of one C floor measurement:\n"
      "  gort-tcp-floor-c -protocol -bench=NAME -benchtime=D\n"
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
  } else if (name == "samples") {
    config.samples = flags.Value();
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
    if (gort::bench::ParseUsleepModes(config.usleep).empty()) {
      UsageError("bad --usleep " + config.usleep +
                 " (want auto, lowres or highres)");
    }
  } else if (name == "ping") {
    config.ping = flags.Bool();
  } else if (name == "goroutines") {
    config.goroutines = PositiveIntFlag(flags, 100'000'000);
  } else if (name == "go") {
    config.go_binary = flags.Value();
  } else if (name == "c") {
    config.c_binary = flags.Value();
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
  if (config.markdown == kDefaultMarkdown) {
    config.markdown = std::string("docs/results/") +
                      (config.samples.empty() ? "compare-" : "load-test-") +
                      CpuSlug() + ".md";
  }
  if (config.usleep.empty())
    config.usleep = config.ping ? "lowres,highres" : "auto";
  if (!config.ping && config.usleep.find(',') != std::string::npos) {
    UsageError("a list of --usleep modes needs --ping");
  }
  if (config.procs.empty()) {
    config.procs = config.ping ? std::vector<int>{1} : ProcsSweep();
  }
  if (!config.markdown.empty() && config.ping) {
    UsageError("--markdown records gort against Go, not --ping");
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

// The parent: runs every measurement as a child process, prints its line,
// and at the end the tables (and with --markdown the results block).
class Parent {
 public:
  explicit Parent(const Config& config) : config_(config), rng_(config.seed) {}

  int Run() {
    SelectBenchmarks();
    if (!config_.ping && (!FindGo() || !FindC())) return 1;
    record_.started_at = Now();
    record_.load_start = LoadAverage();
    if (!config_.markdown.empty()) record_.commit = CommitText(MarkdownDir());
    PrintHeader();
    const auto start = std::chrono::steady_clock::now();
    for (int procs : config_.procs) {
      for (const Benchmark* b : benches_) RunBenchmark(*b, procs);
    }
    record_.elapsed_s = gort::bench::PrintResultTrailer(
        "gort-compare", record_.failures, record_.measurements, start);
    const int exit_code = record_.failures == 0 ? 0 : 1;
    if (config_.smoke) return exit_code;
    record_.load_end = LoadAverage();
    std::printf("loadavg at end: %s\n", record_.load_end.c_str());
    return Report() ? exit_code : 1;
  }

 private:
  // The benchmarks --bench selects: with --ping the ping family, else those
  // with a Go twin; Park1M takes seconds and gigabytes, so not with --smoke.
  void SelectBenchmarks() {
    benches_ = gort::bench::SelectBenchmarks(
        kBenchmarks, config_, "gort-compare", UsageError,
        [this](const Benchmark& b) {
          if (config_.ping) return !InPingFamily(b);
          return !b.go_twin || (config_.smoke && b.kind == Kind::kPark &&
                                b.goroutines >= 1'000'000);
        });
    for (const Benchmark* b : benches_) {
      std::size_t w = std::strlen("Benchmark") + std::strlen(b->name) +
                      std::strlen(config_.ping       ? "/highres-gort-99"
                                  : b->nvariants > 1 ? "/highres-go-slack1ns-99"
                                                     : "-go-slack1ns-99");
      name_width_ = std::max(name_width_, w);
    }
  }

  static bool InPingFamily(const Benchmark& b) {
    for (const auto& p : gort::bench::kPingBenchmarks) {
      if (std::strcmp(p.name, b.name) == 0) return true;
    }
    return false;
  }

  // Finds gortbench-go and its version; false (with a message) if missing.
  bool FindGo() {
    go_binary_ = config_.go_binary.empty() ? SelfDir() + "gortbench-go"
                                           : config_.go_binary;
    if (access(go_binary_.c_str(), X_OK) != 0) {
      std::fprintf(stderr,
                   "gort-compare: the Go benchmarks (%s) are not built: %s\n"
                   "  build them with: cmake --build <dir> --target "
                   "gortbench_go (needs Go 1.19, scripts/deps.sh)\n",
                   go_binary_.c_str(), std::strerror(errno));
      return false;
    }
    record_.go_version = CommandOutput({go_binary_, "-version"});
    return true;
  }

  // Whether GOMAXPROCS p runs b's C floor as well.
  static bool HasCFloor(const Benchmark& b, int procs) {
    return b.c_target > 0 && procs == 1;
  }

  // Finds gort-tcp-floor-c if a selected row runs it; false (with a
  // message) if it is missing.
  bool FindC() {
    bool needed = false;
    for (const Benchmark* b : benches_) {
      for (int procs : config_.procs) needed |= HasCFloor(*b, procs);
    }
    if (!needed) return true;
    c_binary_ = config_.c_binary.empty() ? SelfDir() + "gort-tcp-floor-c"
                                         : config_.c_binary;
    if (access(c_binary_.c_str(), X_OK) == 0) return true;
    std::fprintf(stderr,
                 "gort-compare: the C floor (%s) is not built: %s\n"
                 "  build it with: cmake --build <dir> --target "
                 "gort-tcp-floor-c\n",
                 c_binary_.c_str(), std::strerror(errno));
    return false;
  }

  // The directory of the --markdown file, for its git commit.
  std::string MarkdownDir() const {
    const std::size_t slash = config_.markdown.rfind('/');
    if (slash == std::string::npos) return ".";
    return config_.markdown.substr(0, std::max<std::size_t>(slash, 1));
  }

  // The header lines of a go test run, and this run's settings.
  void PrintHeader() const {
    std::printf("goos: linux\n");
#if defined(__x86_64__)
    std::printf("goarch: amd64\n");
#endif
    std::printf("pkg: gort/benchmarks/compare\n");
    if (std::string cpu = gort::bench::CpuModel(); !cpu.empty()) {
      std::printf("cpu: %s\n", cpu.c_str());
    }
    std::printf("date: %s\n", record_.started_at.c_str());
    std::printf("loadavg: %s\n", record_.load_start.c_str());
    if (config_.ping) {
      std::printf("gort-usleep: %s (base: the first)\n",
                  config_.usleep.c_str());
    } else {
      std::printf("go-version: %s\n", record_.go_version.empty()
                                          ? "?"
                                          : record_.go_version.c_str());
      std::printf("gort-usleep: %s (ChanToSyscallPing: lowres and highres)\n",
                  config_.usleep.c_str());
    }
    std::printf("seed: %" PRIu64 "\n", config_.seed);
    if (config_.smoke) {
      std::printf("smoke: N=%" PRId64, config_.benchtime.fixed_n);
      if (!config_.ping) {
        std::printf(", Park/SpawnBurst/Skynet size %" PRId64,
                    config_.goroutines);
      }
      std::printf(", one run each\n");
    } else {
      std::printf("benchtime: %s\ncount: %d", config_.benchtime.text.c_str(),
                  config_.count);
      if (!config_.ping) {
        std::printf(" (up to %d while inconclusive)", config_.max_count);
      }
      std::printf("\n");
    }
    std::fflush(stdout);
  }

  Series* NewSeries(std::string label, std::string line_name,
                    std::string mode) {
    storage_.push_back(std::make_unique<Series>());
    Series* s = storage_.back().get();
    s->label = std::move(label);
    s->line_name = std::move(line_name);
    s->mode = std::move(mode);
    return s;
  }

  // The series of b at procs: one per --usleep mode with --ping; else one
  // per gort variant (each a row), the two Go columns and, for a row with a
  // C floor at GOMAXPROCS 1, the C loop.
  Group NewGroup(const Benchmark& b, int procs) {
    const std::string base = std::string("Benchmark") + b.name;
    Group g{&b, procs, {}};
    if (config_.ping) {
      for (gort::UsleepMode m : gort::bench::ParseUsleepModes(config_.usleep)) {
        const std::string mode = gort::bench::UsleepName(m);
        g.series.push_back(
            NewSeries("gort-" + mode, base + "/" + mode + "-gort", mode));
      }
      return g;
    }
    Series* go = NewSeries("go", base + "-go", "");
    Series* slack = NewSeries("go-slack1ns", base + "-go-slack1ns", "");
    go->go = slack->go = slack->slack1 = true;
    Series* c = nullptr;
    if (HasCFloor(b, procs)) {
      c = NewSeries("c", base + "-c", "");
      c->c = true;
    }
    for (int v = 0; v < b.nvariants; ++v) {
      const char* mode = b.variants[v].mode;
      Series* s = mode == nullptr
                      ? NewSeries("gort", base + "-gort", config_.usleep)
                      : NewSeries(std::string("gort-") + mode,
                                  base + "/" + mode + "-gort", mode);
      rows_.push_back({&b, procs, v, s, go, slack, c});
      g.series.push_back(s);
    }
    g.series.push_back(go);
    g.series.push_back(slack);
    if (c != nullptr) g.series.push_back(c);
    return g;
  }

  // Rounds of b at procs, each series once per round in a shuffled order:
  // --count rounds, more (up to --max-count) while a verdict is
  // inconclusive, at most the benchmark's own limit.
  void RunBenchmark(const Benchmark& b, int procs) {
    const std::size_t first_row = rows_.size();
    groups_.push_back(NewGroup(b, procs));
    std::vector<Series*> order = groups_.back().series;
    const int limit = b.rounds > 0 ? b.rounds : config_.max_count;
    const int base_rounds = std::min(limit, config_.count);
    const int max_rounds = std::min(limit, config_.max_count);
    for (int round = 0; round < max_rounds; ++round) {
      if (round >= base_rounds && !AnyInconclusive(rows_, first_row)) break;
      std::shuffle(order.begin(), order.end(), rng_);
      for (Series* s : order) Measure(b, s, procs, round);
    }
  }

  // The command line of a child measuring series s of b at procs.
  std::vector<std::string> ChildArgv(const Benchmark& b, const Series& s,
                                     int procs) const {
    std::vector<std::string> argv;
    const char* dash = s.go || s.c ? "-" : "--";
    if (s.go) {
      argv = {go_binary_};
    } else if (s.c) {
      argv = {c_binary_, "-protocol"};
    } else {
      argv = {SelfPath(), "--child", "--usleep=" + s.mode};
    }
    argv.push_back(dash + std::string("bench=") + b.name);
    argv.push_back(dash + std::string("benchtime=") + config_.benchtime.text);
    argv.push_back(dash + std::string("procs=") + std::to_string(procs));
    if (config_.goroutines > 0 && !s.c) {
      argv.push_back(dash + std::string("goroutines=") +
                     std::to_string(config_.goroutines));
    }
    return argv;
  }

  // One measurement of series s of b at procs in round `round`.
  void Measure(const Benchmark& b, Series* s, int procs, int round) {
    const std::vector<std::string> argv = ChildArgv(b, *s, procs);
    const ChildOutcome o =
        RunMeasurement(argv, procs, config_.timeout_s, s->slack1);
    ++record_.measurements;
    ++s->runs;
    const std::string name = s->line_name + "-" + std::to_string(procs);
    if (!o.ok) {
      Failed(s, name, round, procs, argv, o.failure);
      return;
    }
    if (!o.stderr_text.empty()) {
      std::fprintf(stderr, "%s: child stderr:\n%s", name.c_str(),
                   o.stderr_text.c_str());
    }
    if (!s->go && !s->c) {
      s->usleep = o.Str("usleep");
      if (s->mode != "auto" && s->usleep != s->mode) {
        std::fprintf(stderr,
                     "gort-compare: warning: %s asked for usleep mode %s, the "
                     "runtime reports %s\n",
                     name.c_str(), s->mode.c_str(), s->usleep.c_str());
      }
    }
    std::string line = name;
    if (line.size() < name_width_) line.append(name_width_ - line.size(), ' ');
    s->by_round[round] = Record(b, *s, o, &line);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

  // Counts a failed measurement and prints it with the command to repeat it.
  void Failed(Series* s, const std::string& name, int round, int procs,
              const std::vector<std::string>& argv,
              const std::string& failure) {
    ++record_.failures;
    ++s->failures;
    if (s->first_failure.empty()) s->first_failure = failure;
    std::string repro;
    for (const std::string& a : argv) repro += " " + a;
    std::printf(
        "--- FAIL: %s (round %d)\n    %s\n    repro: %sGOMAXPROCS=%d%s\n",
        name.c_str(), round + 1, failure.c_str(),
        s->slack1 ? "(timer slack 1 ns) " : "", procs, repro.c_str());
    std::fflush(stdout);
  }

  // The numbers of a successful measurement o, also appended to *line in
  // Go's benchmark format.
  Sample Record(const Benchmark& b, const Series& s, const ChildOutcome& o,
                std::string* line) const {
    using gort::bench::FormatGoValue;
    const std::int64_t n = std::max<std::int64_t>(o.Int("n"), 1);
    const std::int64_t ns = o.Int("ns");
    Sample sample;
    sample.ns_per_op = static_cast<double>(ns) / n;
    sample.cpus = ns > 0 ? static_cast<double>(o.Int("cpu-ns")) / ns : 0;
    sample.peak_rss_kib = static_cast<double>(o.peak_rss_kib);
    char count_field[32];
    std::snprintf(count_field, sizeof(count_field), "\t%8" PRId64, n);
    *line += count_field;
    *line += FormatGoValue(sample.ns_per_op, "ns/op");
    if (b.kind == Kind::kPark) {
      const double bytes =
          static_cast<double>(o.Int("rss-parked") - o.Int("rss-before")) / n;
      sample.kib_per_goroutine = bytes / 1024;
      *line += FormatGoValue(bytes, "rss-B/goroutine");
      return sample;
    }
    *line += FormatGoValue(sample.cpus, "cpus");
    if (b.rss_target > 0) {
      *line += FormatGoValue(sample.peak_rss_kib * 1024, "peak-rss-B");
    }
    if (s.go || s.c) return sample;
    sample.steals_per_op = static_cast<double>(o.Int("steals")) / n;
    sample.stolen_per_op = static_cast<double>(o.Int("stolen")) / n;
    if (config_.stats) {
      *line += FormatGoValue(static_cast<double>(o.Int("handoffs")) / n,
                             "handoffs/op");
      *line += FormatGoValue(static_cast<double>(o.Int("sysmon-wakes")) / n,
                             "sysmon-wakes/op");
      *line += FormatGoValue(sample.steals_per_op, "steals/op");
      *line += FormatGoValue(sample.stolen_per_op, "stolen/op");
    }
    return sample;
  }

  // Prints the tables and writes --markdown's file; false if it cannot.
  bool Report() const {
    std::string report;
    if (config_.ping) {
      for (int procs : config_.procs) {
        report += "\n" + FormatPing(groups_, procs);
      }
      report +=
          "\nmedians \u00b1 the 95% confidence interval of the median "
          "(benchstat's; \u221e below\n6 runs); vs base: the change of the "
          "median when a Mann-Whitney U test gives\np < 0.05, else ~.\n";
      std::fputs(report.c_str(), stdout);
      return true;
    }
    std::vector<std::string> notes;
    for (int procs : config_.procs) {
      report += "\n" + FormatResults(rows_, procs, &notes);
    }
    report += kLegend;
    std::vector<std::vector<std::string>> scaling_verdicts;
    report +=
        FormatScaling(rows_, config_.procs, config_.seed, &scaling_verdicts);
    if (!notes.empty()) {
      report += "\nnotes:\n";
      for (const std::string& n : notes) report += "  " + n + "\n";
    }
    std::fputs(report.c_str(), stdout);
    if (config_.markdown.empty()) return true;
    const std::string md =
        FormatMarkdown(config_, record_, rows_, scaling_verdicts, report);
    if (!WriteMarkdown(config_.markdown, md)) {
      std::fprintf(stderr, "gort-compare: cannot write %s: %s\n",
                   config_.markdown.c_str(), std::strerror(errno));
      return false;
    }
    std::printf("\nwrote the results into %s\n", config_.markdown.c_str());
    return true;
  }

  static constexpr const char* kLegend =
      "\ngort, Go, Go+1ns: medians \u00b1 the 95% confidence interval of the "
      "median\n(benchstat's; \u221e below 6 runs). Go+1ns: Go run with 1 ns "
      "timer slack\n(PR_SET_TIMERSLACK, inherited across exec).\n"
      "gort/Go, gort/Go+1ns: medians of the per-round (paired) ratios.\n"
      "target: judged against Go+1ns when gort runs in high-resolution "
      "mode, else Go.\n95% CI: of the median of the judged paired ratios; "
      "verdict met when its upper\nend is at or below the target, MISSED "
      "when its lower end is above, else\ninconclusive (which earns more "
      "rounds, up to --max-count). Park rows: resident\nKiB per parked "
      "goroutine, judged on gort's own interval.\n(X) C loop: X's op in "
      "plain C, one thread and one epoll loop (gort-tcp-floor-c),\nin the "
      "same rounds at GOMAXPROCS 1: its median, and in the gort/Go column "
      "the\nmedian paired ratio gort/C, which that line's target "
      "judges. (X) CPU/op: the\nprocess CPU time per op of gort and of the "
      "C loop and their paired ratio with\nits 95% CI, not judged: waiting "
      "for a CPU on a loaded machine does not count.\n\n";

  const Config& config_;
  std::vector<const Benchmark*> benches_;
  std::string go_binary_;
  std::string c_binary_;
  RunRecord record_;
  std::vector<std::unique_ptr<Series>> storage_;  // Stable addresses.
  std::vector<Group> groups_;  // Every benchmark at every GOMAXPROCS.
  std::vector<Row> rows_;      // Without --ping: each gort variant's row.
  std::mt19937_64 rng_;
  std::size_t name_width_ = 0;
};

}  // namespace
}  // namespace gort_compare

int main(int argc, char** argv) {
  const gort_compare::Config config = gort_compare::ParseFlags(argc, argv);
  if (config.child) return gort_compare::RunChild(config);
  if (!config.samples.empty()) return gort_compare::RunSamples(config);
  return gort_compare::Parent(config).Run();
}
