// benchmarks/harness.h: what gort's benchmark drivers (gort-compare, and
// gort-ping on Windows) share: flag values in Go's syntax, go test's growth
// of the iteration count N, Go's benchmark-line number format, and the
// statistics and table layout of benchstat.
//
// One statistics method, the current golang.org/x/perf benchstat's: each
// column's median ± its 95% confidence interval from order statistics, and
// a change between two columns reported only when a two-sided Mann-Whitney
// U test gives p < 0.05.
//
// Header-only: a driver includes it and links nothing more.
#ifndef GORT_BENCHMARKS_HARNESS_H_
#define GORT_BENCHMARKS_HARNESS_H_

#if !defined(_WIN32)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gort::bench {

// ---------------------------------------------------------------------------
// Flags and the iteration count.

// Go's cap on b.N.
inline constexpr std::int64_t kMaxN = 1'000'000'000;

// Parses Go's duration syntax restricted to one number and one unit
// ("1s", "1.5s", "500ms", "250us", "2m"); returns nanoseconds.
inline std::optional<std::int64_t> ParseDuration(const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(value > 0)) return std::nullopt;
  std::string_view unit(end);
  double scale;
  if (unit == "ns") {
    scale = 1;
  } else if (unit == "us" || unit == "\u00b5s") {
    scale = 1e3;
  } else if (unit == "ms") {
    scale = 1e6;
  } else if (unit == "s") {
    scale = 1e9;
  } else if (unit == "m") {
    scale = 60e9;
  } else {
    return std::nullopt;
  }
  double ns = value * scale;
  if (ns < 1 || ns > 1e15) return std::nullopt;
  return static_cast<std::int64_t>(ns);
}

// FlagReader walks argv as the tools' flags: -name or --name, each with an
// optional =value or, for flags that need one, the next argument. Errors go
// to the tool's usage_error, which does not return.
class FlagReader {
 public:
  FlagReader(int argc, char** argv,
             void (*usage_error)(const std::string& message))
      : argc_(argc), argv_(argv), usage_error_(usage_error) {}

  // Moves to the next flag; false when argv is used up.
  bool Next() {
    if (++i_ >= argc_) return false;
    std::string arg = argv_[i_];
    if (arg.size() < 2 || arg[0] != '-') usage_error_("unexpected " + arg);
    arg.erase(0, arg[1] == '-' ? 2 : 1);  // Accept -flag and --flag.
    name_ = arg;
    value_.reset();
    if (auto eq = arg.find('='); eq != std::string::npos) {
      name_ = arg.substr(0, eq);
      value_ = arg.substr(eq + 1);
    }
    return true;
  }
  // The current flag's name, without dashes or value.
  const std::string& name() const { return name_; }
  // Whether the current flag was written with '=value'.
  bool HasValue() const { return value_.has_value(); }
  // The current flag's value: after '=', else the next argument.
  std::string Value() {
    if (value_) return *value_;
    if (i_ + 1 >= argc_) usage_error_("flag --" + name_ + " needs a value");
    return argv_[++i_];
  }
  // Reports a bad flag to the tool's usage_error, which does not return.
  void Fail(const std::string& message) { usage_error_(message); }
  // A boolean flag: --flag, --flag=true|1 or --flag=false|0.
  bool Bool() {
    if (!value_ || *value_ == "true" || *value_ == "1") return true;
    if (*value_ == "false" || *value_ == "0") return false;
    usage_error_("flag --" + name_ + " wants true or false");
    return false;
  }

 private:
  int argc_;
  char** argv_;
  void (*usage_error_)(const std::string&);
  int i_ = 0;
  std::string name_;
  std::optional<std::string> value_;
};

// Parses a decimal integer > 0.
inline std::optional<std::int64_t> ParsePositiveInt(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v <= 0) return std::nullopt;
  return v;
}

// A parsed --benchtime: a target duration ("1s") or a fixed count ("100x").
struct Benchtime {
  std::int64_t ns = 0;       // Target time of the last timed run, if > 0.
  std::int64_t fixed_n = 0;  // Exactly this many iterations, if > 0.
  std::string text;          // As the user wrote it.

  static std::optional<Benchtime> Parse(const std::string& v) {
    Benchtime b;
    b.text = v;
    if (!v.empty() && v.back() == 'x') {
      auto n = ParsePositiveInt(v.substr(0, v.size() - 1));
      if (!n || *n > kMaxN) return std::nullopt;
      b.fixed_n = *n;
    } else {
      auto ns = ParseDuration(v);
      if (!ns) return std::nullopt;
      b.ns = *ns;
    }
    return b;
  }
};

// PositiveIntFlag: the current flag's value, an integer from 1 to max.
inline std::int64_t PositiveIntFlag(FlagReader& flags, std::int64_t max) {
  auto n = ParsePositiveInt(flags.Value());
  if (!n || *n > max) flags.Fail("bad --" + flags.name());
  return n.value_or(1);
}

// SecondsFlag: the current flag's value, a number of seconds above zero.
inline double SecondsFlag(FlagReader& flags) {
  const std::string v = flags.Value();
  char* end = nullptr;
  double s = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !(s > 0)) {
    flags.Fail("bad --" + flags.name() + " " + v);
  }
  return s;
}

// CommonFlags: the flags every driver takes; each driver's Config derives
// from it with its own defaults.
struct CommonFlags {
  CommonFlags(int count, const char* benchtime, double timeout_s)
      : count(count),
        benchtime(*Benchtime::Parse(benchtime)),
        timeout_s(timeout_s) {}

  std::string bench = ".";
  int count;
  Benchtime benchtime;
  double timeout_s;
  bool timeout_set = false;
  bool smoke = false;
  bool stats = false;
  bool list = false;

  // Reads the flag flags is at if it is one of these (--help and -h print
  // the usage to stdout and exit 0); false for any other flag.
  bool Parse(FlagReader& flags, void (*print_usage)(FILE*)) {
    const std::string& name = flags.name();
    if (name == "help" || name == "h") {
      print_usage(stdout);
      std::exit(0);
    } else if (name == "smoke") {
      smoke = flags.Bool();
    } else if (name == "stats") {
      stats = flags.Bool();
    } else if (name == "list") {
      list = flags.Bool();
    } else if (name == "bench") {
      bench = flags.Value();
    } else if (name == "count") {
      count = static_cast<int>(PositiveIntFlag(flags, 1000));
    } else if (name == "benchtime") {
      std::string v = flags.Value();
      auto b = Benchtime::Parse(v);
      if (!b) flags.Fail("bad --benchtime " + v);
      benchtime = *b;
    } else if (name == "timeout") {
      timeout_s = SecondsFlag(flags);
      timeout_set = true;
    } else {
      return false;
    }
    return true;
  }

  // --smoke: every selected loop once with n iterations, a 30 s timeout
  // unless --timeout says otherwise.
  void ApplySmoke(std::int64_t n) {
    count = 1;
    benchtime = *Benchtime::Parse(std::to_string(n) + "x");
    if (!timeout_set) timeout_s = 30;
  }
};

// SelectBenchmarks: the entries of table (anything with a name, Go's
// without its "Benchmark" prefix) that --bench's regular expression matches,
// with or without the prefix, leaving out those skip(entry) refuses. --list
// prints them and exits 0; a bad expression is a usage error; none selected
// prints "<tool>: no benchmark matches" and exits 1.
template <class B, std::size_t N, class Skip>
std::vector<const B*> SelectBenchmarks(const B (&table)[N],
                                       const CommonFlags& flags,
                                       const char* tool,
                                       void (*usage_error)(const std::string&),
                                       Skip skip) {
  std::vector<const B*> benches;
  try {
    const std::regex re(flags.bench);
    for (const B& b : table) {
      const std::string full = std::string("Benchmark") + b.name;
      if (skip(b)) continue;
      if (std::regex_search(full, re) || std::regex_search(b.name, re)) {
        benches.push_back(&b);
      }
    }
  } catch (const std::regex_error&) {
    usage_error("bad --bench regular expression: " + flags.bench);
  }
  if (flags.list) {
    for (const B* b : benches) std::printf("Benchmark%s\n", b->name);
    std::exit(0);
  }
  if (benches.empty()) {
    std::fprintf(stderr, "%s: no benchmark matches --bench=%s\n", tool,
                 flags.bench.c_str());
    std::exit(1);
  }
  return benches;
}

// PrintResultTrailer prints the closing lines of a go test run for tool:
// "PASS" and "ok", or "FAIL" with how many of the measurements failed,
// and the time since start, which it returns in seconds.
inline double PrintResultTrailer(const char* tool, int failures,
                                 int measurements,
                                 std::chrono::steady_clock::time_point start) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (failures == 0) {
    std::printf("PASS\nok  \t%s\t%.3fs\n", tool, elapsed);
  } else {
    std::printf("FAIL (%d of %d measurements failed)\nFAIL\t%s\t%.3fs\n",
                failures, measurements, tool, elapsed);
  }
  return elapsed;
}

// Go's predictN (testing/benchmark.go): aim for goal_ns with 20% headroom,
// grow at most 100x and at least by one.
inline std::int64_t PredictN(std::int64_t goal_ns, std::int64_t prev_n,
                             std::int64_t prev_ns) {
  if (prev_ns <= 0) prev_ns = 1;
  double n = static_cast<double>(goal_ns) * prev_n / prev_ns;
  n += n / 5;
  n = std::min(n, 100.0 * prev_n);
  n = std::max(n, prev_n + 1.0);
  n = std::min(n, static_cast<double>(kMaxN));
  return static_cast<std::int64_t>(n);
}

// GrowN runs timed_run(n), which returns the run's nanoseconds, as go test
// runs a benchmark: once with benchtime's fixed count, else with N from 1
// growing (PredictN) until one run lasts benchtime.
template <class TimedRun>
void GrowN(const Benchtime& benchtime, TimedRun timed_run) {
  if (benchtime.fixed_n > 0) {
    timed_run(benchtime.fixed_n);
    return;
  }
  std::int64_t n = 1;
  std::int64_t ns = timed_run(n);
  while (ns < benchtime.ns && n < kMaxN) {
    n = PredictN(benchtime.ns, n, ns);
    ns = timed_run(n);
  }
}

// ---------------------------------------------------------------------------
// Output in Go's benchmark format.

// Formats x the way package testing does: fewer decimals for bigger values,
// right-aligned so that the decimal points line up; starts with a tab.
inline std::string FormatGoValue(double x, const char* unit) {
  const double y = std::fabs(x);
  int decimals = 0;
  double limit = 999.95;
  while (decimals < 7 && y != 0 && y < limit) {
    ++decimals;
    limit /= 10;
  }
  const int width = decimals == 0 ? 10 : 11 + decimals;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "\t%*.*f %s", width, decimals, x, unit);
  return buf;
}

// The "model name" of /proc/cpuinfo's first CPU, or "".
inline std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto start = line.find_first_not_of(" \t", colon + 1);
        if (start != std::string::npos) return line.substr(start);
      }
    }
  }
  return "";
}

#if !defined(_WIN32)
// WriteAllOrExit writes n bytes from p to fd, retrying short writes and
// EINTR; a child that cannot report to its parent exits with status 120.
inline void WriteAllOrExit(int fd, const void* p, std::size_t n) {
  const char* next = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t r = write(fd, next, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) _exit(120);
    next += r;
    n -= static_cast<std::size_t>(r);
  }
}

// MillisLeftOrKill: the parent's watch over a measuring child; the
// milliseconds left until deadline, or -1 once it has passed, the child pid
// then killed (SIGKILL).
inline int MillisLeftOrKill(std::chrono::steady_clock::time_point deadline,
                            pid_t pid) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  if (left.count() > 0) return static_cast<int>(left.count());
  kill(pid, SIGKILL);
  return -1;
}

// "exit status 2", "killed by signal 9 (Killed)", ... for a wait status.
inline std::string DescribeStatus(int status) {
  char buf[128];
  if (WIFEXITED(status)) {
    std::snprintf(buf, sizeof(buf), "exit status %d", WEXITSTATUS(status));
  } else if (WIFSIGNALED(status)) {
    std::snprintf(buf, sizeof(buf), "killed by signal %d (%s)",
                  WTERMSIG(status), strsignal(WTERMSIG(status)));
  } else {
    std::snprintf(buf, sizeof(buf), "wait status %#x", status);
  }
  return buf;
}
#endif

// ---------------------------------------------------------------------------
// Statistics, following benchstat.

// Quantile p of sorted xs, Hyndman & Fan's definition 8 (what benchstat's
// Sample.Percentile uses).
inline double Quantile(const std::vector<double>& sorted, double p) {
  const std::size_t n = sorted.size();
  if (p <= 0) return sorted.front();
  if (p >= 1) return sorted.back();
  const double h = (n + 1.0 / 3.0) * p + 1.0 / 3.0;  // 1-based position.
  const double lower = std::floor(h);
  if (lower < 1) return sorted.front();
  if (lower >= n) return sorted.back();
  const std::size_t k = static_cast<std::size_t>(lower);
  return sorted[k - 1] + (h - lower) * (sorted[k] - sorted[k - 1]);
}

// The current benchstat's summary: the sample median and a distribution-
// free confidence interval for the population median, [x(lo), x(hi)] with
// order statistics chosen from the Binomial(n, 1/2) distribution (what
// golang.org/x/perf/benchmath's AssumeNothing reports). With too few values
// for the requested confidence the interval is infinite (benchstat's "±∞";
// 95% needs at least 6 values).
struct MedianSummary {
  std::size_t n = 0;
  double median = 0;
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  double confidence = 0;  // The interval's actual coverage.

  bool Finite() const { return std::isfinite(lo) && std::isfinite(hi); }

  // benchstat's PctRangeString: the larger side of the interval relative to
  // the median, "∞" when the interval is infinite.
  std::string SpreadText() const {
    if (!Finite()) return "\u221e";
    if (median == 0) return "0%";
    const double v = std::max(hi / median - 1, 1 - lo / median);
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.0f%%", 100 * v);
    return buf;
  }
};

inline MedianSummary SummarizeMedian(std::vector<double> values,
                                     double confidence = 0.95) {
  MedianSummary s;
  s.n = values.size();
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  s.median =
      n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  // P(B = k) for B ~ Binomial(n, 1/2), in logs to stay exact for big n.
  std::vector<double> pmf(n + 1);
  for (std::size_t k = 0; k <= n; ++k) {
    pmf[k] = std::exp(std::lgamma(n + 1.0) - std::lgamma(k + 1.0) -
                      std::lgamma(n - k + 1.0) - n * std::log(2.0));
  }
  // [x(l), x(n+1-l)] (1-based) covers the median with probability
  // P(l <= B <= n-l) = 1 - 2 P(B < l). Take the narrowest such interval
  // whose coverage reaches the confidence.
  for (std::size_t l = n / 2; l >= 1; --l) {
    double tail = 0;
    for (std::size_t k = 0; k < l; ++k) tail += pmf[k];
    const double coverage = 1 - 2 * tail;
    if (l <= n + 1 - l && coverage >= confidence) {
      s.lo = values[l - 1];
      s.hi = values[n - l];
      s.confidence = coverage;
      break;
    }
  }
  return s;
}

// The result of a Mann-Whitney U test.
struct UTest {
  double p = 1;
  const char* error = nullptr;  // Set when no p-value can be given.
};

// Two-sided Mann-Whitney U test of a against b. Exact (the permutation
// distribution of the rank sum, with mid-ranks for ties) for up to 100
// values in all, else the normal approximation with tie correction.
inline UTest MannWhitney(const std::vector<double>& a,
                         const std::vector<double>& b) {
  UTest result;
  const std::size_t n1 = a.size();
  const std::size_t n2 = b.size();
  if (n1 == 0 || n2 == 0) {
    result.error = "too few samples";
    return result;
  }
  const std::size_t n = n1 + n2;
  std::vector<std::pair<double, bool>> all;  // (value, from a)
  for (double v : a) all.push_back({v, true});
  for (double v : b) all.push_back({v, false});
  std::sort(all.begin(), all.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });

  // Doubled mid-ranks keep every rank an integer.
  std::vector<int> rank2(n);
  std::vector<std::size_t> tie_sizes;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && all[j + 1].first == all[i].first) ++j;
    for (std::size_t k = i; k <= j; ++k) {
      rank2[k] = static_cast<int>((i + 1) + (j + 1));
    }
    tie_sizes.push_back(j - i + 1);
    i = j + 1;
  }
  if (tie_sizes.size() == 1) {
    result.error = "all equal";
    return result;
  }
  long observed = 0;  // Doubled rank sum of a.
  for (std::size_t k = 0; k < n; ++k) {
    if (all[k].second) observed += rank2[k];
  }

  if (n <= 100) {
    // ways[k][s]: subsets of k values whose doubled ranks sum to s.
    const std::size_t max_sum = n * (n + 1);
    std::vector<std::vector<double>> ways(n1 + 1,
                                          std::vector<double>(max_sum + 1));
    ways[0][0] = 1;
    for (std::size_t item = 0; item < n; ++item) {
      const std::size_t r = rank2[item];
      for (std::size_t k = std::min(item + 1, n1); k >= 1; --k) {
        auto& to = ways[k];
        const auto& from = ways[k - 1];
        for (std::size_t s = max_sum; s >= r; --s) to[s] += from[s - r];
      }
    }
    double total = 0;
    double low = 0;
    double high = 0;
    for (std::size_t s = 0; s <= max_sum; ++s) {
      const double w = ways[n1][s];
      total += w;
      if (static_cast<long>(s) <= observed) low += w;
      if (static_cast<long>(s) >= observed) high += w;
    }
    result.p = std::min(1.0, 2 * std::min(low, high) / total);
    return result;
  }

  const double u = observed / 2.0 - n1 * (n1 + 1) / 2.0;
  const double mean = n1 * n2 / 2.0;
  double ties = 0;
  for (std::size_t t : tie_sizes) {
    ties += static_cast<double>(t) * t * t - t;
  }
  const double variance =
      n1 * n2 / 12.0 * ((n + 1.0) - ties / (static_cast<double>(n) * (n - 1)));
  if (variance <= 0) {
    result.error = "zero variance";
    return result;
  }
  const double z =
      std::max(0.0, std::fabs(u - mean) - 0.5) / std::sqrt(variance);
  result.p = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return result;
}

// ---------------------------------------------------------------------------
// Tables, laid out as benchstat does.

// benchstat's time scaler: the unit and precision are chosen once per row,
// from the baseline's value, and used for every column of the row.
struct TimeScale {
  const char* unit;
  double per_ns;
  int decimals;

  static TimeScale For(double ns) {
    struct Unit {
      const char* name;
      double per_ns;
    };
    static constexpr Unit kUnits[] = {
        {"s", 1e-9}, {"ms", 1e-6}, {"\u00b5s", 1e-3}, {"ns", 1}};
    for (const Unit& u : kUnits) {
      const double v = ns * u.per_ns;
      if (v >= 0.995 || u.per_ns == 1) {
        int decimals = v >= 99.5 ? 0 : v >= 9.95 ? 1 : 2;
        return {u.name, u.per_ns, decimals};
      }
    }
    return {"ns", 1, 2};
  }

  std::string Format(double ns) const {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*f%s", decimals, ns * per_ns, unit);
    return buf;
  }
};

// value followed by " ± " and s's spread, as benchstat prints a median.
inline std::string WithSpread(const std::string& value,
                              const MedianSummary& s) {
  return value + " \u00b1 " + s.SpreadText();
}

// Display width of UTF-8 text (µ is one column, two bytes).
inline std::size_t Width(const std::string& s) {
  std::size_t w = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++w;
  }
  return w;
}

// s padded with spaces to width columns, on the right if left_align.
inline std::string Pad(const std::string& s, std::size_t width,
                       bool left_align) {
  const std::size_t w = Width(s);
  if (w >= width) return s;
  const std::string fill(width - w, ' ');
  return left_align ? s + fill : fill + s;
}

// Lays out rows (the first is the heading) as benchstat does: the name column
// left-aligned, the others right-aligned. Trailing empty cells are dropped.
inline std::string FormatTable(std::vector<std::vector<std::string>> rows) {
  for (auto& row : rows) {
    while (!row.empty() && row.back().empty()) row.pop_back();
  }
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size());
    for (std::size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], Width(row[i]));
    }
  }
  std::string text;
  const auto& heading = rows[0];
  for (std::size_t i = 0; i < heading.size(); ++i) {
    if (i == 0) {
      text += Pad(heading[i], widths[i], true);
    } else if (i + 1 == heading.size()) {
      text += "  " + heading[i];
    } else {
      text += "  " + Pad(heading[i], widths[i], true);
    }
  }
  text += "\n";
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i == 0) {
        text += Pad(row[i], widths[i], true);
      } else {
        text += "  " + Pad(row[i], widths[i], false);
      }
    }
    text += "\n";
  }
  return text;
}

// A benchmark's ns/op values in each column of a comparison; the first
// column is the base.
struct ComparedRow {
  std::string name;
  std::vector<std::vector<double>> columns;
};

// The comparison table of the current benchstat for time per op: under
// heads (the first names the benchmark column, then one per column of
// values), each column's median ± the larger side of its 95% confidence
// interval, and after each column but the base "vs base": the change of the
// median, or "~" unless a Mann-Whitney U test against the base gives
// p < 0.05, with the test's p and the sample sizes. Rows with no values at
// all are left out.
inline std::string FormatVsBase(const std::vector<std::string>& heads,
                                const std::vector<ComparedRow>& rows) {
  std::vector<std::vector<std::string>> table = {{heads[0]}};
  for (std::size_t c = 1; c < heads.size(); ++c) {
    table[0].push_back(heads[c] + " time/op");
    if (c > 1) table[0].push_back("vs base");
  }
  for (const ComparedRow& row : rows) {
    std::vector<MedianSummary> sums;
    for (const auto& values : row.columns) {
      sums.push_back(SummarizeMedian(values));
    }
    if (std::all_of(sums.begin(), sums.end(),
                    [](const MedianSummary& s) { return s.n == 0; })) {
      continue;
    }
    const TimeScale scale =
        TimeScale::For(sums[0].n > 0 ? sums[0].median : sums.back().median);
    std::vector<std::string> cells = {row.name};
    for (std::size_t c = 0; c < sums.size(); ++c) {
      cells.push_back(sums[c].n == 0
                          ? "failed"
                          : WithSpread(scale.Format(sums[c].median), sums[c]));
      if (c == 0) continue;
      const UTest test = MannWhitney(row.columns[0], row.columns[c]);
      char buf[96];
      if (test.error != nullptr) {
        std::snprintf(buf, sizeof(buf), "~ (%s)", test.error);
      } else {
        char delta[32] = "~";
        if (test.p < 0.05) {
          std::snprintf(delta, sizeof(delta), "%+.2f%%",
                        (sums[c].median / sums[0].median - 1) * 100);
        }
        char n[32];
        if (sums[0].n == sums[c].n) {
          std::snprintf(n, sizeof(n), "%zu", sums[0].n);
        } else {
          std::snprintf(n, sizeof(n), "%zu+%zu", sums[0].n, sums[c].n);
        }
        std::snprintf(buf, sizeof(buf), "%s (p=%.3f n=%s)", delta, test.p, n);
      }
      cells.push_back(buf);
    }
    table.push_back(std::move(cells));
  }
  return FormatTable(std::move(table));
}

}  // namespace gort::bench

#endif  // GORT_BENCHMARKS_HARNESS_H_
