// benchmarks/compare_samples.cc: gort-compare --samples, the statistics of
// measurements taken by other programs (scripts/load-test.sh: wrk and
// redis-benchmark against the example servers and their Go twins). Each
// point's gort and Go samples are paired by round, as gort-compare pairs its
// own, and judged the same way: the 95% confidence interval of the median
// paired ratio against the target.

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/compare.h"
#include "benchmarks/harness.h"

namespace gort_compare {

namespace {

// One load-generator result.
struct LoadSample {
  double rps = 0;
  double p99_ms = 0;
};

// One point (server, GOMAXPROCS, connections, test): samples by round.
struct Point {
  std::string name;
  std::map<int, LoadSample> gort, go;
};

// Reads the samples file; false (with a message) on a malformed line.
bool ReadSamples(const std::string& path, std::vector<Point>* points) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "gort-compare: cannot read %s\n", path.c_str());
    return false;
  }
  std::map<std::string, std::size_t> index;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, impl;
    int round = 0;
    LoadSample s;
    if (!(fields >> name >> impl >> round >> s.rps >> s.p99_ms) ||
        (impl != "gort" && impl != "go")) {
      std::fprintf(stderr,
                   "gort-compare: %s:%d: want \"point gort|go round "
                   "rps p99-ms\"\n",
                   path.c_str(), lineno);
      return false;
    }
    auto [it, fresh] = index.emplace(name, points->size());
    if (fresh) points->push_back(Point{name, {}, {}});
    Point& p = (*points)[it->second];
    (impl == "gort" ? p.gort : p.go)[round] = s;
  }
  return true;
}

// The per-round ratios gort/Go of the number get picks.
std::vector<double> Ratios(const Point& p, double (*get)(const LoadSample&)) {
  std::vector<double> r;
  for (const auto& [round, g] : p.gort) {
    auto it = p.go.find(round);
    if (it != p.go.end() && get(it->second) > 0) {
      r.push_back(get(g) / get(it->second));
    }
  }
  return r;
}

// The median of one side's values of get.
double Median(const std::map<int, LoadSample>& side,
              double (*get)(const LoadSample&)) {
  std::vector<double> v;
  for (const auto& [round, s] : side) v.push_back(get(s));
  return gort::bench::SummarizeMedian(v).median;
}

double Rps(const LoadSample& s) { return s.rps; }
double P99(const LoadSample& s) { return s.p99_ms; }

// The table of every point, and the tally of verdicts.
std::string FormatPoints(const std::vector<Point>& points, int* met,
                         int* missed, int* other) {
  std::vector<std::vector<std::string>> t;
  t.push_back({"point", "gort req/s", "Go req/s", "req/s gort/Go", "95% CI",
               "\u2265 1.00", "gort p99", "Go p99", "p99 gort/Go", "95% CI",
               "\u2264 1.00", "rounds"});
  auto tally = [&](Verdict v) {
    (v == Verdict::kMet ? *met : v == Verdict::kMissed ? *missed : *other)++;
    return std::string(VerdictText(v));
  };
  for (const Point& p : points) {
    const auto rps = gort::bench::SummarizeMedian(Ratios(p, Rps));
    const auto p99 = gort::bench::SummarizeMedian(Ratios(p, P99));
    t.push_back({p.name, FormatDouble("%.0f", Median(p.gort, Rps)),
                 FormatDouble("%.0f", Median(p.go, Rps)),
                 FormatDouble("%.2f", rps.median), Interval(rps),
                 tally(JudgeAtLeast(rps, 1.0)),
                 FormatDouble("%.3fms", Median(p.gort, P99)),
                 FormatDouble("%.3fms", Median(p.go, P99)),
                 FormatDouble("%.2f", p99.median), Interval(p99),
                 tally(Judge(p99, 1.0)), std::to_string(rps.n)});
  }
  return gort::bench::FormatTable(t);
}

// The file --markdown writes (docs/results/load-test-<cpu>.md by default).
std::string FormatLoadMarkdown(const Config& config, const std::string& table,
                               int met, int missed, int other) {
  std::string md =
      "## Servers under load generators (written by `scripts/load-test.sh`)"
      "\n\n";
  md += "- gort commit: `" + CommitText(".") + "`\n";
  md += "- machine: " + MachineText() + "\n";
  md += "- date: " + Now() +
        "; load average (1, 5, 15 min) at the end: " + LoadAverage() + "\n";
  const char* script = std::getenv("GORT_COMPARE_COMMAND");
  if (script != nullptr && *script != '\0') {
    md += "- command: `" + std::string(script) + "`\n";
  }
  if (!config.note.empty()) md += "- note: " + config.note + "\n";
  md += '\n';
  md += std::to_string(met) + " met, " + std::to_string(missed) + " missed, " +
        std::to_string(other) + " inconclusive or failed.\n\n```\n" + table +
        "```\n";
  return md;
}

}  // namespace

int RunSamples(const Config& config) {
  std::vector<Point> points;
  if (!ReadSamples(config.samples, &points)) return 2;
  int met = 0, missed = 0, other = 0;
  const std::string table = FormatPoints(points, &met, &missed, &other);
  std::fputs(table.c_str(), stdout);
  std::printf("%d met, %d missed, %d inconclusive or failed\n", met, missed,
              other);
  if (config.markdown.empty()) return 0;
  if (!WriteMarkdown(config.markdown,
                     FormatLoadMarkdown(config, table, met, missed, other))) {
    std::fprintf(stderr, "gort-compare: cannot write %s\n",
                 config.markdown.c_str());
    return 1;
  }
  std::printf("wrote %s\n", config.markdown.c_str());
  return 0;
}

}  // namespace gort_compare
