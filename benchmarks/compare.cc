// benchmarks/compare.cc: gort-compare runs gort's benchmarks and the same
// benchmarks written in Go (benchmarks/go/, built as gortbench-go next to
// this executable) side by side, in one run, on one machine, and prints the
// ratio gort/Go for each. On a shared, noisy machine absolute times drift
// but ratios measured in the same minute hold, so Go itself is the
// reference.
//
// For each GOMAXPROCS (1, then 2) and each benchmark, the two
// implementations alternate: gort, Go, gort, Go, ... for --count rounds
// (ChanToSyscallPing runs gort twice per round, in usleep modes lowres,
// Go's algorithm, and highres, gort's improvement). Each measurement is a
// fresh child process: gort-compare re-executes itself with --child for
// gort, and runs gortbench-go for Go. Both grow the iteration count N as
// go test does until one timed run lasts --benchtime, and report over a
// pipe in a line protocol (benchmarks/go/main.go describes it); a child
// that makes no progress for --timeout seconds is killed, and a child that
// crashes fails that measurement only, with the first line of its fatal
// error reported.
//
// Output: every measurement as a Go benchmark line
// (BenchmarkChanToChanPing-gort-1, BenchmarkChanToChanPing-go-1, ...), then
// per GOMAXPROCS a table: medians with benchstat's ± (95% confidence
// interval of the median), the ratio of medians, the target ratio of the
// performance issue (at GOMAXPROCS 1) and whether it is met, and the
// Mann-Whitney U test's p-value. The Park benchmarks report resident
// memory per parked goroutine instead of time.

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
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

// ---------------------------------------------------------------------------
// What to run.

enum class Kind {
  kLoop,  // A loop run N times; the result is time per op.
  kPark,  // Park a fixed number of goroutines; the result is memory.
};

enum class Goal {
  kNone,    // Reported only.
  kRatio,   // Median gort/Go at GOMAXPROCS 1 at most `target`.
  kKiB,     // gort's median resident KiB per parked goroutine at most target.
  kStarts,  // gort starts all the goroutines.
};

// A gort configuration of a benchmark; most have one, ChanToSyscallPing two.
struct Variant {
  const char* mode;  // Name of the usleep mode, or nullptr for --usleep's.
  Goal goal;
  double target;
};

constexpr int kMaxVariants = 2;

struct Benchmark {
  const char* name;  // Without Go's "Benchmark" prefix; as in gortbench-go.
  Kind kind;
  void (*loop)(std::int64_t n);  // kLoop.
  std::int64_t goroutines;       // kPark.
  int rounds;                    // 0: --count; else at most this many.
  int nvariants;
  Variant variants[kMaxVariants];
};

// A loop benchmark with one gort variant, in --usleep's mode.
constexpr Benchmark Loop(const char* name, void (*loop)(std::int64_t),
                         Goal goal, double target) {
  return {name, Kind::kLoop, loop, 0, 0, 1, {{nullptr, goal, target}, {}}};
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

// The benchmarks and the targets of the performance issue (ratio gort/Go of
// medians at GOMAXPROCS 1, or absolute for memory).
constexpr Benchmark kBenchmarks[] = {
    {"ChanToSyscallPing",
     Kind::kLoop,
     gort::bench::ChanToSyscallPing,
     0,
     0,
     2,
     {{"lowres", Goal::kRatio, 1.05}, {"highres", Goal::kRatio, 0.35}}},
    Loop("SyscallToSyscallPing", gort::bench::SyscallToSyscallPing,
         Goal::kRatio, 1.0),
    Loop("ChanToChanPing", gort::bench::ChanToChanPing, Goal::kRatio, 0.6),
    Loop("Gosched", gort::bench::Gosched, Goal::kRatio, 0.6),
    Loop("Spawn", gort::bench::Spawn, Goal::kRatio, 0.5),
    Loop("ChanBuffered", gort::bench::ChanBuffered, Goal::kRatio, 1.0),
    Loop("Select2", gort::bench::Select2, Goal::kRatio, 1.0),
    Loop("ChanContended", gort::bench::ChanContended, Goal::kNone, 0),
    Loop("FanOut", gort::bench::FanOut, Goal::kNone, 0),
    // The network poller (issue 13; benchmarks/net_loops.h).
    Loop("TCPPingPong", gort::bench::TCPPingPong, Goal::kRatio, 1.0),
    Loop("TCPPingPong100", gort::bench::TCPPingPong100, Goal::kRatio, 1.0),
    Loop("TCPStream1MiB", gort::bench::TCPStream1MiB, Goal::kRatio, 1.0),
    Loop("ChanToNetpollPing", gort::bench::ChanToNetpollPing, Goal::kRatio,
         1.0),
    Park("Park100k", 100'000, 6, Goal::kKiB, 8),
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
constexpr std::int64_t kSmokeN = 100;
constexpr std::int64_t kSmokeGoroutines = 1000;

struct Config {
  // Parent and child.
  std::string bench = ".";
  Benchtime benchtime = *Benchtime::Parse(kDefaultBenchtime);
  std::string usleep = "auto";  // For the benchmarks with one variant.
  std::int64_t goroutines = 0;  // Park override (--smoke, or by hand).
  // Parent.
  int count = kDefaultCount;
  std::vector<int> procs = {1, 2};
  std::string go_binary;  // Default: gortbench-go next to this executable.
  double timeout_s = 60;
  bool timeout_set = false;
  bool smoke = false;
  bool stats = false;
  bool list = false;
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
      "interleaved, at GOMAXPROCS 1 and 2, each measurement in a fresh\n"
      "process, and prints Go benchmark lines and a table per GOMAXPROCS:\n"
      "medians, benchstat's spread (95%% CI of the median), the ratio\n"
      "gort/Go, the issue's target and whether it is met.\n"
      "\n"
      "flags:\n"
      "  --bench=REGEX      benchmarks whose name matches (default .)\n"
      "  --benchtime=D|Nx   target time of each measurement's last timed\n"
      "                     run, as go test -benchtime (default %s)\n"
      "  --count=N          rounds (gort, Go) per benchmark and GOMAXPROCS\n"
      "                     (default %d; Park100k runs at most 6 rounds,\n"
      "                     Park1M one); 6 or more give finite spreads\n"
      "  --procs=LIST       GOMAXPROCS values, e.g. 1 or 1,2 (default 1,2)\n"
      "  --usleep=MODE      gort's usleep mode for the benchmarks other than\n"
      "                     ChanToSyscallPing (which runs lowres and\n"
      "                     highres): auto, lowres or highres (default auto)\n"
      "  --go=PATH          the Go benchmark binary (default gortbench-go\n"
      "                     next to this executable)\n"
      "  --timeout=SECONDS  kill a measurement whose current step makes no\n"
      "                     progress for this long (default 60, 30 with\n"
      "                     --smoke)\n"
      "  --stats            add gort's scheduler counters per op (handoffs,\n"
      "                     sysmon wakes, steals, goroutines stolen) to\n"
      "                     gort's result lines\n"
      "  --smoke            every benchmark once per implementation and\n"
      "                     GOMAXPROCS with N=%d (Park: %d goroutines;\n"
      "                     Park1M skipped), no table; exit status 0 iff\n"
      "                     everything ran (for CI)\n"
      "  --list             list the benchmarks and exit\n"
      "  --help             show this text\n"
      "\n"
      "Repro of one gort measurement (what the driver runs):\n"
      "  gort-compare --child --bench=NAME --procs=P --benchtime=D\n"
      "               [--usleep=MODE] [--goroutines=K]\n"
      "and of one Go measurement:\n"
      "  GOMAXPROCS=P gortbench-go -bench=NAME -benchtime=D\n"
      "\n"
      "Exit status: 0 if every measurement ran, 1 if one failed (crash,\n"
      "hang, Park1M failing to start), 2 for bad flags. Missed targets do\n"
      "not change it.\n",
      kDefaultBenchtime, kDefaultCount, static_cast<int>(kSmokeN),
      static_cast<int>(kSmokeGoroutines));
}

[[noreturn]] void UsageError(const std::string& message) {
  std::fprintf(stderr, "gort-compare: %s\n\n", message.c_str());
  PrintUsage(stderr);
  std::exit(2);
}

Config ParseFlags(int argc, char** argv) {
  Config config;
  gort::bench::FlagReader flags(argc, argv, UsageError);
  while (flags.Next()) {
    const std::string& name = flags.name();
    if (name == "help" || name == "h") {
      PrintUsage(stdout);
      std::exit(0);
    } else if (name == "smoke") {
      config.smoke = flags.Bool();
    } else if (name == "stats") {
      config.stats = flags.Bool();
    } else if (name == "list") {
      config.list = flags.Bool();
    } else if (name == "child") {
      config.child = flags.Bool();
    } else if (name == "bench") {
      config.bench = flags.Value();
    } else if (name == "benchtime") {
      std::string v = flags.Value();
      auto b = Benchtime::Parse(v);
      if (!b) UsageError("bad --benchtime " + v);
      config.benchtime = *b;
    } else if (name == "count") {
      auto n = gort::bench::ParsePositiveInt(flags.Value());
      if (!n || *n > 1000) UsageError("bad --count");
      config.count = static_cast<int>(*n);
    } else if (name == "procs") {
      std::string v = flags.Value();
      std::vector<int> procs;
      std::size_t pos = 0;
      while (pos <= v.size()) {
        std::size_t comma = v.find(',', pos);
        if (comma == std::string::npos) comma = v.size();
        auto n = gort::bench::ParsePositiveInt(v.substr(pos, comma - pos));
        if (!n || *n > 1024) UsageError("bad --procs " + v);
        procs.push_back(static_cast<int>(*n));
        pos = comma + 1;
      }
      config.procs = procs;
      config.child_procs = procs.front();
    } else if (name == "usleep") {
      config.usleep = flags.Value();
      if (!ParseUsleep(config.usleep)) {
        UsageError("bad --usleep " + config.usleep +
                   " (want auto, lowres or highres)");
      }
    } else if (name == "goroutines") {
      auto n = gort::bench::ParsePositiveInt(flags.Value());
      if (!n || *n > 100'000'000) UsageError("bad --goroutines");
      config.goroutines = *n;
    } else if (name == "go") {
      config.go_binary = flags.Value();
    } else if (name == "timeout") {
      std::string v = flags.Value();
      char* end = nullptr;
      double s = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(s > 0)) {
        UsageError("bad --timeout " + v);
      }
      config.timeout_s = s;
      config.timeout_set = true;
    } else {
      UsageError("unknown flag -" + name);
    }
  }
  if (config.smoke) {
    config.count = 1;
    config.benchtime = *Benchtime::Parse(std::to_string(kSmokeN) + "x");
    config.goroutines = kSmokeGoroutines;
    if (!config.timeout_set) config.timeout_s = 30;
  }
  return config;
}

// ---------------------------------------------------------------------------
// The gort child: one measurement, reported in the line protocol.

// Writes one protocol line to stdout with a single write(2).
void Emit(const std::string& line) {
  std::string text = line + "\n";
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t r = write(STDOUT_FILENO, p, left);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) _exit(120);
    p += r;
    left -= static_cast<std::size_t>(r);
  }
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
          gort::Stats before, after;
          auto timed_run = [&](std::int64_t iters) {
            std::snprintf(buf, sizeof(buf), "step timed loop with N=%" PRId64,
                          iters);
            Emit(buf);
            before = gort::ReadStats();
            const std::int64_t c0 = CpuNanos();
            const std::int64_t t0 = gort::Nanotime();
            bench->loop(iters);
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
// no progress for timeout_s.
ChildOutcome RunMeasurement(const std::vector<std::string>& argv, int procs,
                            double timeout_s) {
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
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      kill(pid, SIGKILL);
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
    const int ready = poll(pfds, nfds, static_cast<int>(left.count()) + 1);
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
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
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
    execv(args[0], args.data());
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

// One implementation's measurements of one benchmark at one GOMAXPROCS: a
// gort variant or Go.
struct Series {
  std::string label;      // "gort", "gort-lowres", "go".
  std::string line_name;  // BenchmarkX[/mode]-impl, without "-procs".
  std::vector<double> ns_per_op;
  std::vector<double> cpus;               // CPU time / wall time.
  std::vector<double> kib_per_goroutine;  // Park.
  std::vector<double> steals_per_op;      // gort only.
  std::vector<double> stolen_per_op;      // gort only: goroutines moved.
  std::map<int, double> by_round;  // The row's metric, by round, for pairs.
  int runs = 0;
  int failures = 0;
  std::string first_failure;
};

struct Row {
  const Benchmark* bench;
  int procs;
  int variant;  // Index into bench->variants; the gort side of the row.
  Series* gort;
  Series* go;
};

std::string Scaled(double ns, const gort::bench::TimeScale& scale) {
  return scale.Format(ns);
}

std::string WithSpread(const std::string& value,
                       const gort::bench::MedianSummary& s) {
  return value + " \u00b1 " + s.SpreadText();
}

std::string FormatDouble(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

// The table for one GOMAXPROCS.
void PrintResults(const std::vector<Row>& rows, int procs,
                  std::vector<std::string>* notes) {
  std::vector<std::vector<std::string>> table;
  table.push_back({"GOMAXPROCS=" + std::to_string(procs), "gort", "Go",
                   "gort/Go", "paired", "target", "result", "U test"});
  for (const Row& row : rows) {
    if (row.procs != procs) continue;
    const Benchmark& b = *row.bench;
    const Variant& v = b.variants[row.variant];
    std::string name = b.name;
    if (v.mode != nullptr && b.nvariants > 1) name += std::string("/") + v.mode;
    const bool targeted = procs == 1 && v.goal != Goal::kNone;
    std::vector<std::string> cells(8);
    cells[0] = name;
    for (const Series* s : {row.gort, row.go}) {
      if (s->failures > 0) {
        notes->push_back(name + " (GOMAXPROCS=" + std::to_string(procs) + ", " +
                         s->label + "): " + std::to_string(s->failures) +
                         " of " + std::to_string(s->runs) +
                         " runs failed; first: " + s->first_failure);
      }
    }
    if (b.kind == Kind::kLoop || b.goroutines < 1'000'000) {
      const bool park = b.kind == Kind::kPark;
      const std::vector<double>& g =
          park ? row.gort->kib_per_goroutine : row.gort->ns_per_op;
      const std::vector<double>& o =
          park ? row.go->kib_per_goroutine : row.go->ns_per_op;
      if (park) cells[0] += " (KiB/goroutine)";
      const auto gs = gort::bench::SummarizeMedian(g);
      const auto os = gort::bench::SummarizeMedian(o);
      const auto scale = gort::bench::TimeScale::For(!o.empty()   ? os.median
                                                     : !g.empty() ? gs.median
                                                                  : 0);
      auto value = [&](const gort::bench::MedianSummary& s) {
        return park ? FormatDouble("%.2f", s.median) : Scaled(s.median, scale);
      };
      cells[1] = g.empty() ? "failed" : WithSpread(value(gs), gs);
      cells[2] = o.empty() ? "failed" : WithSpread(value(os), os);
      const bool both = !g.empty() && !o.empty();
      const double ratio = both && os.median > 0 ? gs.median / os.median : 0;
      if (both) cells[3] = FormatDouble("%.2f", ratio);
      // The median of the ratios of the gort and Go runs of each round,
      // which were measured seconds apart: robust to slow drift of the load.
      std::vector<double> pairs;
      for (const auto& [round, gv] : row.gort->by_round) {
        auto it = row.go->by_round.find(round);
        if (it != row.go->by_round.end() && it->second > 0) {
          pairs.push_back(gv / it->second);
        }
      }
      if (!pairs.empty()) {
        const auto ps = gort::bench::SummarizeMedian(pairs);
        cells[4] = WithSpread(FormatDouble("%.2f", ps.median), ps);
      }
      if (targeted) {
        if (v.goal == Goal::kRatio) {
          cells[5] = FormatDouble("\u2264 %.2f", v.target);
          cells[6] = !both ? "failed" : ratio <= v.target ? "met" : "MISSED";
        } else if (v.goal == Goal::kKiB) {
          cells[5] = FormatDouble("\u2264 %.0f KiB", v.target);
          cells[6] = g.empty()               ? "failed"
                     : gs.median <= v.target ? "met"
                                             : "MISSED";
        }
      }
      if (both) {
        const gort::bench::UTest t = gort::bench::MannWhitney(g, o);
        if (t.error != nullptr) {
          cells[7] = std::string("(") + t.error + ")";
        } else {
          char buf[64];
          std::snprintf(buf, sizeof(buf), "(p=%0.3f n=%zu+%zu)", t.p, g.size(),
                        o.size());
          cells[7] = buf;
        }
      }
    } else {
      // Park1M: does it start, and at what memory per goroutine.
      auto started = [](const Series* s) -> std::string {
        if (s->kib_per_goroutine.empty()) return "no";
        return FormatDouble("yes, %.2f KiB/g", s->kib_per_goroutine.back());
      };
      cells[0] += " (starts?)";
      cells[1] = started(row.gort);
      cells[2] = started(row.go);
      if (!row.gort->kib_per_goroutine.empty() &&
          !row.go->kib_per_goroutine.empty()) {
        cells[3] = FormatDouble("%.2f", row.gort->kib_per_goroutine.back() /
                                            row.go->kib_per_goroutine.back());
      }
      if (targeted) {
        cells[5] = "starts";
        cells[6] = row.gort->kib_per_goroutine.empty() ? "MISSED" : "met";
      }
    }
    table.push_back(std::move(cells));
  }
  gort::bench::PrintTable(std::move(table));
}

// FanOut's scaling from GOMAXPROCS 1 to 2: the evidence that stealing keeps
// both Ps busy.
void PrintScaling(const std::vector<Row>& rows) {
  const Row* at[2] = {nullptr, nullptr};
  for (const Row& row : rows) {
    if (std::string(row.bench->name) != "FanOut") continue;
    if (row.procs == 1) at[0] = &row;
    if (row.procs == 2) at[1] = &row;
  }
  if (at[0] == nullptr || at[1] == nullptr) return;
  std::vector<std::vector<std::string>> table;
  table.push_back({"FanOut scaling", "time/op @1", "time/op @2",
                   "speedup 1\u21922", "CPUs busy @2", "steals/op @2",
                   "stolen/op @2"});
  for (int impl = 0; impl < 2; ++impl) {
    const Series* s1 = impl == 0 ? at[0]->gort : at[0]->go;
    const Series* s2 = impl == 0 ? at[1]->gort : at[1]->go;
    if (s1->ns_per_op.empty() || s2->ns_per_op.empty()) continue;
    const auto m1 = gort::bench::SummarizeMedian(s1->ns_per_op);
    const auto m2 = gort::bench::SummarizeMedian(s2->ns_per_op);
    const auto c2 = gort::bench::SummarizeMedian(s2->cpus);
    const auto scale = gort::bench::TimeScale::For(m1.median);
    std::string steals;
    std::string stolen;
    if (impl == 0 && !s2->steals_per_op.empty()) {
      steals = FormatDouble(
          "%.1f", gort::bench::SummarizeMedian(s2->steals_per_op).median);
      stolen =
          FormatDouble("%.0f",
                       gort::bench::SummarizeMedian(s2->stolen_per_op).median) +
          " of " + std::to_string(gort::bench::kFanOutGoroutines);
    }
    table.push_back({impl == 0 ? "gort" : "Go", scale.Format(m1.median),
                     scale.Format(m2.median),
                     FormatDouble("%.2fx", m1.median / m2.median),
                     FormatDouble("%.2f", c2.median), steals, stolen});
  }
  if (table.size() > 1) gort::bench::PrintTable(std::move(table));
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
  localtime_r(&t, &tm);
  std::strftime(buf, sizeof(buf), "%a %b %e %H:%M:%S %Z %Y", &tm);
  return buf;
}

int RunParent(const Config& config) {
  std::vector<const Benchmark*> benches;
  try {
    const std::regex re(config.bench);
    for (const Benchmark& b : kBenchmarks) {
      const std::string full = std::string("Benchmark") + b.name;
      if (config.smoke && b.kind == Kind::kPark && b.goroutines >= 1'000'000) {
        continue;  // Park1M takes seconds and gigabytes: not for CI.
      }
      if (std::regex_search(full, re) || std::regex_search(b.name, re)) {
        benches.push_back(&b);
      }
    }
  } catch (const std::regex_error&) {
    UsageError("bad --bench regular expression: " + config.bench);
  }
  if (config.list) {
    for (const Benchmark* b : benches) std::printf("Benchmark%s\n", b->name);
    return 0;
  }
  if (benches.empty()) {
    std::fprintf(stderr, "gort-compare: no benchmark matches --bench=%s\n",
                 config.bench.c_str());
    return 1;
  }
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

  // Series storage: [procs][bench][variant...] then Go; stable addresses.
  std::vector<Row> rows;
  std::vector<std::unique_ptr<Series>> storage;
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
  std::printf("date: %s\n", Now().c_str());
  std::printf("loadavg: %s\n", LoadAverage().c_str());
  std::printf("go-version: %s\n",
              go_version.empty() ? "?" : go_version.c_str());
  std::printf("gort-usleep: %s (ChanToSyscallPing: lowres and highres)\n",
              config.usleep.c_str());
  if (config.smoke) {
    std::printf("smoke: N=%" PRId64 ", Park %" PRId64
                " goroutines, one run each\n",
                config.benchtime.fixed_n, config.goroutines);
  } else {
    std::printf("benchtime: %s\ncount: %d\n", config.benchtime.text.c_str(),
                config.count);
  }
  std::fflush(stdout);

  std::size_t name_width = 0;
  for (const Benchmark* b : benches) {
    for (int v = 0; v < b->nvariants; ++v) {
      std::size_t w = std::strlen("Benchmark") + std::strlen(b->name) +
                      std::strlen("-gort-99");
      if (b->nvariants > 1) w += 1 + std::strlen(b->variants[v].mode);
      name_width = std::max(name_width, w);
    }
  }

  const auto start = std::chrono::steady_clock::now();
  int failures = 0;
  int measurements = 0;
  for (int procs : config.procs) {
    for (const Benchmark* b : benches) {
      Series* go_series =
          new_series("go", std::string("Benchmark") + b->name + "-go");
      std::vector<Series*> gort_series;
      for (int v = 0; v < b->nvariants; ++v) {
        std::string label = "gort";
        std::string line = std::string("Benchmark") + b->name;
        if (b->nvariants > 1) {
          label += std::string("-") + b->variants[v].mode;
          line += std::string("/") + b->variants[v].mode;
        }
        gort_series.push_back(new_series(label, line + "-gort"));
        rows.push_back({b, procs, v, gort_series.back(), go_series});
      }
      const int rounds =
          b->rounds > 0 ? std::min(b->rounds, config.count) : config.count;
      for (int round = 0; round < rounds; ++round) {
        for (int v = 0; v <= b->nvariants; ++v) {
          const bool is_go = v == b->nvariants;
          Series* series = is_go ? go_series : gort_series[v];
          std::vector<std::string> argv;
          if (is_go) {
            argv = {go_binary, std::string("-bench=") + b->name,
                    "-benchtime=" + config.benchtime.text,
                    "-procs=" + std::to_string(procs)};
            if (config.goroutines > 0) {
              argv.push_back("-goroutines=" +
                             std::to_string(config.goroutines));
            }
          } else {
            const char* mode = b->variants[v].mode != nullptr
                                   ? b->variants[v].mode
                                   : config.usleep.c_str();
            argv = {self,
                    "--child",
                    std::string("--bench=") + b->name,
                    "--benchtime=" + config.benchtime.text,
                    "--procs=" + std::to_string(procs),
                    std::string("--usleep=") + mode};
            if (config.goroutines > 0) {
              argv.push_back("--goroutines=" +
                             std::to_string(config.goroutines));
            }
          }
          ChildOutcome o = RunMeasurement(argv, procs, config.timeout_s);
          ++measurements;
          ++series->runs;
          const std::string name =
              series->line_name + "-" + std::to_string(procs);
          if (!o.ok) {
            ++failures;
            ++series->failures;
            if (series->first_failure.empty()) {
              series->first_failure = o.failure;
            }
            std::string repro;
            for (const std::string& a : argv) repro += " " + a;
            std::printf(
                "--- FAIL: %s (round %d of %d)\n    %s\n    repro: "
                "GOMAXPROCS=%d%s\n",
                name.c_str(), round + 1, rounds, o.failure.c_str(), procs,
                repro.c_str());
            std::fflush(stdout);
            continue;
          }
          if (!o.stderr_text.empty()) {
            std::fprintf(stderr, "%s: child stderr:\n%s", name.c_str(),
                         o.stderr_text.c_str());
          }
          if (!is_go && b->nvariants > 1) {
            const std::string in_effect = o.Str("usleep");
            if (in_effect != b->variants[v].mode) {
              std::fprintf(stderr,
                           "gort-compare: warning: %s asked for usleep mode "
                           "%s, the runtime reports %s\n",
                           name.c_str(), b->variants[v].mode,
                           in_effect.c_str());
            }
          }
          const std::int64_t n = std::max<std::int64_t>(o.Int("n"), 1);
          const std::int64_t ns = o.Int("ns");
          const double ns_per_op = static_cast<double>(ns) / n;
          const double cpus =
              ns > 0 ? static_cast<double>(o.Int("cpu-ns")) / ns : 0;
          series->ns_per_op.push_back(ns_per_op);
          series->by_round[round] = ns_per_op;
          series->cpus.push_back(cpus);
          std::string line = name;
          if (line.size() < name_width) {
            line.append(name_width - line.size(), ' ');
          }
          char count_field[32];
          std::snprintf(count_field, sizeof(count_field), "\t%8" PRId64, n);
          line += count_field;
          line += gort::bench::FormatGoValue(ns_per_op, "ns/op");
          if (b->kind == Kind::kPark) {
            const double bytes =
                static_cast<double>(o.Int("rss-parked") - o.Int("rss-before")) /
                n;
            series->kib_per_goroutine.push_back(bytes / 1024);
            series->by_round[round] = bytes / 1024;
            line += gort::bench::FormatGoValue(bytes, "rss-B/goroutine");
          } else {
            line += gort::bench::FormatGoValue(cpus, "cpus");
            if (!is_go) {
              series->steals_per_op.push_back(
                  static_cast<double>(o.Int("steals")) / n);
              series->stolen_per_op.push_back(
                  static_cast<double>(o.Int("stolen")) / n);
            }
            if (!is_go && config.stats) {
              line += gort::bench::FormatGoValue(
                  static_cast<double>(o.Int("handoffs")) / n, "handoffs/op");
              line += gort::bench::FormatGoValue(
                  static_cast<double>(o.Int("sysmon-wakes")) / n,
                  "sysmon-wakes/op");
              line += gort::bench::FormatGoValue(
                  static_cast<double>(o.Int("steals")) / n, "steals/op");
              line += gort::bench::FormatGoValue(
                  static_cast<double>(o.Int("stolen")) / n, "stolen/op");
            }
          }
          std::printf("%s\n", line.c_str());
          std::fflush(stdout);
        }
      }
    }
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (failures == 0) {
    std::printf("PASS\nok  \tgort-compare\t%.3fs\n", elapsed);
  } else {
    std::printf(
        "FAIL (%d of %d measurements failed)\nFAIL\tgort-compare\t%.3fs\n",
        failures, measurements, elapsed);
  }
  const int exit_code = failures == 0 ? 0 : 1;
  if (config.smoke) return exit_code;

  std::printf("loadavg at end: %s\n", LoadAverage().c_str());
  std::vector<std::string> notes;
  for (int procs : config.procs) {
    std::printf("\n");
    PrintResults(rows, procs, &notes);
  }
  std::printf(
      "\ngort/Go: ratio of the medians, what the targets (GOMAXPROCS 1) "
      "judge;\npaired: median of the per-round ratios (gort and Go measured "
      "seconds apart);\n\u00b1: 95%% confidence interval of the median, as "
      "benchstat (\u221e below 6 runs);\nU test: Mann-Whitney, gort against "
      "Go. Park rows: resident KiB per parked goroutine.\n\n");
  PrintScaling(rows);
  if (!notes.empty()) {
    std::printf("\nnotes:\n");
    for (const std::string& n : notes) std::printf("  %s\n", n.c_str());
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  const Config config = ParseFlags(argc, argv);
  if (config.child) return RunChild(config);
  return RunParent(config);
}
