// benchmarks/compare_verdict.cc: gort-compare's statistics and verdicts: a
// sample's numbers by metric, the per-round (paired) ratios gort/Go, and
// each row's targets judged on the 95% confidence interval of the median
// ratio (met, missed, inconclusive or failed).

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/compare.h"
#include "benchmarks/harness.h"

namespace gort_compare {

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
    case Metric::kCpuTime:
      return s.ns_per_op * s.cpus;
  }
  return 0;
}

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

// Judge for a target that is a floor: met when the whole interval is at or
// above it, missed when all of it is below.
Verdict JudgeAtLeast(const gort::bench::MedianSummary& s, double target) {
  if (s.n == 0) return Verdict::kFailed;
  if (!s.Finite()) return Verdict::kInconclusive;
  if (s.lo >= target) return Verdict::kMet;
  if (s.hi < target) return Verdict::kMissed;
  return Verdict::kInconclusive;
}

std::string FormatDouble(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

// The reference column's short name.
const char* RefName(const Series* s) {
  return s->c ? "C" : s->slack1 ? "Go+1ns" : "Go";
}

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
      if (row.c != nullptr) {
        ratio_check(row.c, Metric::kTime, "time", b.c_target);
      }
      break;
    case Goal::kKiB: {
      Check c;
      c.what = "KiB per parked goroutine";
      c.target = FormatDouble("\u2264 %.1f KiB", v.target);
      c.summary = gort::bench::SummarizeMedian(row.gort->Values(Metric::kKiB));
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

}  // namespace gort_compare
