// benchmarks/compare.h: gort-compare's internal declarations, shared by its
// files: compare.cc (the benchmark table, the flags, the parent's loop and
// main), compare_child.cc (the measuring child), compare_run.cc (running
// children), compare_verdict.cc (statistics and verdicts) and
// compare_report.cc (tables, markdown, machine and commit text). Not
// installed, not for other programs; benchmarks/compare.cc describes the
// tool.
#ifndef GORT_BENCHMARKS_COMPARE_H_
#define GORT_BENCHMARKS_COMPARE_H_

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "benchmarks/harness.h"
#include "gort/runtime.h"

namespace gort_compare {

// ---------------------------------------------------------------------------
// What to run (compare.cc).

// What a benchmark measures.
enum class Kind {
  kLoop,  // A loop run N times; the result is time per op.
  kPark,  // Park a fixed number of goroutines; the result is memory.
};

// What a benchmark's target asks of gort.
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

// The most gort variants a benchmark has.
constexpr int kMaxVariants = 2;

// A row of the benchmark table (kBenchmarks, compare.cc).
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
  bool go_twin = true;    // false: gort only, run with --ping alone.
  // > 0: also judged at GOMAXPROCS 1 against its C twin, the floor
  // (gort-tcp-floor-c, benchmarks/c): paired time ratio at most this.
  double c_target = 0;
};

// The benchmark named name, with or without Go's "Benchmark" prefix, or
// nullptr.
const Benchmark* FindBenchmark(const std::string& name);

// The number of CPUs this process may run on.
int CpuCount();

// 1, 2, ..., the CPU count: the default --procs sweep.
std::vector<int> ProcsSweep();

// The flags' values. CommonFlags (benchmarks/harness.h): bench, benchtime,
// count, timeout, smoke, stats, list.
struct Config : gort::bench::CommonFlags {
  Config();  // The defaults (compare.cc): --count, --benchtime, --timeout.
  // Parent and child.
  std::string usleep;  // For the benchmarks with one variant; --ping: a list.
  std::int64_t goroutines = 0;  // Park and sized-loop override.
  // Parent.
  int max_count = 0;       // 0: kDefaultMaxCountFactor x count.
  std::vector<int> procs;  // Default: 1 with --ping, else ProcsSweep().
  std::string go_binary;   // Default: gortbench-go next to this executable.
  std::string c_binary;    // Default: gort-tcp-floor-c next to it.
  std::uint64_t seed = 0;
  bool seed_set = false;
  std::string markdown;  // Non-empty: write the results into this file.
  std::string note;      // A sentence for the markdown's header.
  std::string command;   // The full command, for the record.
  bool ping = false;     // gort in each --usleep mode, no Go: the main job.
  std::string samples;   // --samples: judge these instead of running.
  // Child.
  bool child = false;
  int child_procs = 1;
};

// ---------------------------------------------------------------------------
// The gort child (compare_child.cc).

// Runs one measurement of --bench in this process and reports it on stdout
// in the line protocol (--child); returns the exit status.
int RunChild(const Config& config);

// ---------------------------------------------------------------------------
// The parent: running children (compare_run.cc).

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

// Runs one child (argv) at GOMAXPROCS procs, killing it when a step makes no
// progress for timeout_s, with 1 ns timer slack if slack1.
ChildOutcome RunMeasurement(const std::vector<std::string>& argv, int procs,
                            double timeout_s, bool slack1);

// The directory of this executable, with a trailing slash.
std::string SelfDir();

// The path of this executable.
std::string SelfPath();

// The first line a command prints, or "".
std::string CommandOutput(const std::vector<std::string>& argv);

// ---------------------------------------------------------------------------
// Collecting results: statistics and verdicts (compare_verdict.cc).

// One measurement's numbers.
struct Sample {
  double ns_per_op = 0;
  double cpus = 0;               // CPU time / wall time.
  double kib_per_goroutine = 0;  // Park.
  double peak_rss_kib = 0;       // The whole process's peak (wait4).
  double steals_per_op = 0;      // gort only.
  double stolen_per_op = 0;      // gort only: goroutines moved.
};

// Which number of a Sample a statistic is about; kCpuTime is the process's
// CPU time per op (ns_per_op x cpus), which time spent waiting for a CPU on
// a loaded machine does not inflate.
enum class Metric { kTime, kKiB, kRss, kCpus, kCpuTime };

// The number of s that m names.
double Get(const Sample& s, Metric m);

// One implementation's measurements of one benchmark at one GOMAXPROCS: a
// gort variant, Go as shipped, Go with 1 ns timer slack, or the C floor.
struct Series {
  std::string label;      // "gort", "gort-lowres", "go", "go-slack1ns", "c".
  std::string line_name;  // BenchmarkX[/mode]-impl, without "-procs".
  bool go = false;        // Go (gortbench-go), not gort.
  bool slack1 = false;    // Go run with 1 ns timer slack.
  bool c = false;         // The C floor (gort-tcp-floor-c), not gort.
  std::string mode;       // gort: the usleep mode asked for.
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
std::vector<double> PairedRatios(const Series& a, const Series& b, Metric m);

// One benchmark at one GOMAXPROCS: the series measured in each round, gort's
// first (in --usleep's order with --ping).
struct Group {
  const Benchmark* bench;
  int procs;
  std::vector<Series*> series;
};

// A row of the results: one gort variant of a benchmark at one GOMAXPROCS,
// with the two Go columns it is compared with, and the C floor where the
// benchmark has one (c_target) and GOMAXPROCS is 1.
struct Row {
  const Benchmark* bench;
  int procs;
  int variant;  // Index into bench->variants; the gort side of the row.
  Series* gort;
  Series* go;           // As shipped.
  Series* slack;        // With 1 ns timer slack.
  Series* c = nullptr;  // The C floor, or nullptr.

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

// How a target fared.
enum class Verdict { kMet, kMissed, kInconclusive, kFailed };

// A verdict as the tables print it ("met", "MISSED", ...).
const char* VerdictText(Verdict v);

// A ceiling's verdict: met when the whole 95% confidence interval of s is at
// or below target, missed when all of it is above, else inconclusive.
Verdict Judge(const gort::bench::MedianSummary& s, double target);

// A floor's verdict: met when the whole interval is at or above target,
// missed when all of it is below.
Verdict JudgeAtLeast(const gort::bench::MedianSummary& s, double target);

// One target of a row and how it fared.
struct Check {
  std::string what;    // "time vs Go+1ns slack", "peak RSS vs Go", ...
  std::string target;  // "≤ 0.60"
  gort::bench::MedianSummary summary;  // Of the judged quantity.
  Verdict verdict = Verdict::kFailed;
};

// v formatted with printf's format.
std::string FormatDouble(const char* format, double v);

// The reference column's short name.
const char* RefName(const Series* s);

// The targets that apply to a row, judged on what has been measured so far.
std::vector<Check> Checks(const Row& row);

// Whether a target of rows[first..] is still inconclusive.
bool AnyInconclusive(const std::vector<Row>& rows, std::size_t first);

// ---------------------------------------------------------------------------
// Reporting: tables, markdown, machine and commit (compare_report.cc).

// A check's 95% confidence interval, "[lo, hi]" ("" when nothing ran).
std::string Interval(const gort::bench::MedianSummary& s);

// The table for one GOMAXPROCS; failed runs are noted in *notes.
std::string FormatResults(const std::vector<Row>& rows, int procs,
                          std::vector<std::string>* notes);

// FanOut's scaling over the GOMAXPROCS sweep, with its verdicts, which are
// also appended to *verdicts (as markdown rows) unless it is null.
std::string FormatScaling(const std::vector<Row>& rows,
                          const std::vector<int>& procs_list,
                          std::uint64_t seed,
                          std::vector<std::vector<std::string>>* verdicts);

// The --ping table for one GOMAXPROCS: each series of a group a column, the
// first the base.
std::string FormatPing(const std::vector<Group>& groups, int procs);

// What the markdown records of a run besides its tables.
struct RunRecord {
  std::string commit;      // CommitText.
  std::string go_version;  // gortbench-go -version.
  std::string started_at;  // Now() at the start.
  std::string load_start;  // LoadAverage() at the start and at the end.
  std::string load_end;
  double elapsed_s = 0;
  int measurements = 0;
  int failures = 0;
};

// The results block --markdown writes: the run, the verdicts of rows and
// scaling_verdicts, and report (the tables as printed).
std::string FormatMarkdown(
    const Config& config, const RunRecord& run, const std::vector<Row>& rows,
    const std::vector<std::vector<std::string>>& scaling_verdicts,
    const std::string& report);

// /proc/loadavg's three load averages, or "?".
std::string LoadAverage();

// The date and time, UTC, as date(1) prints it.
std::string Now();

// The machine: OS, CPUs, RAM.
std::string MachineText();

// The commit of the git work tree around dir ("+dirty" if it differs).
std::string CommitText(const std::string& dir);

// Writes block as the whole file path (a generated results file).
bool WriteMarkdown(const std::string& path, const std::string& block);

// This machine's CPU model, or "an unknown CPU".
std::string CpuModelOrUnknown();

// This machine's CPU model as a file name ("amd-epyc"; "unknown-cpu"): the
// default --markdown file is docs/results/<topic>-<this>.md.
std::string CpuSlug();

// ---------------------------------------------------------------------------
// Samples measured elsewhere (compare_samples.cc).

// --samples=FILE: reads "point impl round requests/s p99-ms" lines (the
// load generators' results, scripts/load-test.sh), prints per point the
// medians and the paired gort/Go ratios with their 95% confidence intervals
// and verdicts (requests/s at least 1.0x Go's, p99 at most 1.0x), and with
// --markdown writes them to that file, whole; the exit status.
int RunSamples(const Config& config);

}  // namespace gort_compare

#endif  // GORT_BENCHMARKS_COMPARE_H_
