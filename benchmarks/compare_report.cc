// benchmarks/compare_report.cc: what gort-compare prints and writes: the
// table per GOMAXPROCS, FanOut's scaling with its bootstrap verdicts, the
// --ping table, the machine, load, date and commit, and the results block
// of the markdown file (--markdown).

#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/compare.h"
#include "benchmarks/harness.h"

namespace gort_compare {

using gort::bench::WithSpread;

std::string Interval(const gort::bench::MedianSummary& s) {
  if (s.n == 0) return "";
  if (!s.Finite()) return "[-\u221e, \u221e]";
  return FormatDouble("[%.2f, ", s.lo) + FormatDouble("%.2f]", s.hi);
}

namespace {

// A megabyte figure from KiB.
std::string Mebibytes(double kib) { return FormatDouble("%.0fMB", kib / 1024); }

// The line under a row's C loop verdict: the CPU time per op of gort and of
// the C loop (medians), their paired ratio and its 95% interval, for
// reading only: on a loaded machine it moves far less than wall time.
std::vector<std::string> CpuTimeLine(const Row& row, const std::string& name,
                                     const gort::bench::TimeScale& scale) {
  std::vector<std::string> cells(10);
  const auto gs =
      gort::bench::SummarizeMedian(row.gort->Values(Metric::kCpuTime));
  const auto cs = gort::bench::SummarizeMedian(row.c->Values(Metric::kCpuTime));
  const auto ratio = gort::bench::SummarizeMedian(
      PairedRatios(*row.gort, *row.c, Metric::kCpuTime));
  cells[0] = "  (" + name + ") CPU/op";
  if (gs.n > 0) cells[1] = WithSpread(scale.Format(gs.median), gs);
  if (cs.n > 0) cells[2] = "C " + WithSpread(scale.Format(cs.median), cs);
  if (ratio.n > 0) cells[4] = FormatDouble("%.2f", ratio.median);
  cells[6] = "(not judged)";
  cells[7] = Interval(ratio);
  return cells;
}

}  // namespace

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
    for (const Series* s : {row.gort, row.go, row.slack, row.c}) {
      if (s != nullptr && s->failures > 0) {
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
    const auto scale = gort::bench::TimeScale::For(os.n > 0   ? os.median
                                                   : gs.n > 0 ? gs.median
                                                              : 0);
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
    cells[0] = name + (starts ? " (starts?)" : park ? " (KiB/goroutine)" : "");
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
    // Further time targets (ChanToSyscallPing/highres against Go as
    // shipped; the TCP rows against the C loop, whose median it shows).
    for (std::size_t i = next; i < checks.size(); ++i) {
      if (checks[i].what.rfind("time", 0) != 0) continue;
      std::vector<std::string> extra(10);
      extra[0] = "  (" + name + ")";
      const bool vs_c = row.c != nullptr && checks[i].what == "time vs C";
      if (vs_c) {
        const auto cs = gort::bench::SummarizeMedian(row.c->Values(metric));
        extra[0] = "  (" + name + ") C loop";
        extra[1] = value(cs);
        extra[4] = paired(row.c);
      }
      fill(&extra, checks[i]);
      table.push_back(std::move(extra));
      if (vs_c) table.push_back(CpuTimeLine(row, name, scale));
    }
  }
  return gort::bench::FormatTable(std::move(table));
}

namespace {

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

}  // namespace

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
      line.push_back(
          FormatDouble("%.1f", gort::bench::SummarizeMedian(steals).median));
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
      verdicts->push_back(
          {"FanOut speedup 1\u2192" + std::to_string(p), std::to_string(p),
           std::string("speedup vs ") + RefName(ref), "\u2265 1.00", interval,
           VerdictText(v), std::to_string(gp.size())});
    }
  }
  return text;
}

std::string FormatPing(const std::vector<Group>& groups, int procs) {
  std::vector<std::string> heads = {"GOMAXPROCS=" + std::to_string(procs)};
  std::vector<gort::bench::ComparedRow> rows;
  for (const Group& g : groups) {
    if (g.procs != procs) continue;
    if (heads.size() == 1) {
      for (const Series* s : g.series) heads.push_back(s->mode);
    }
    gort::bench::ComparedRow row{g.bench->name, {}};
    for (const Series* s : g.series) {
      row.columns.push_back(s->Values(Metric::kTime));
    }
    rows.push_back(std::move(row));
  }
  return gort::bench::FormatVsBase(heads, rows);
}

std::string FormatMarkdown(
    const Config& config, const RunRecord& run, const std::vector<Row>& rows,
    const std::vector<std::vector<std::string>>& scaling_verdicts,
    const std::string& report) {
  const std::string go_version =
      run.go_version.empty() ? std::string("Go ?") : run.go_version;
  std::string md = "## Results on " + CpuModelOrUnknown() +
                   " (written by `gort-compare --markdown`)\n\n";
  md += "- gort commit: `" + run.commit + "`; " + go_version + "\n";
  md += "- machine: " + MachineText() + "\n";
  md += "- date: " + run.started_at + "; " +
        FormatDouble("%.0f", run.elapsed_s) + " s, " +
        std::to_string(run.measurements) + " measurements, " +
        std::to_string(run.failures) + " failed\n";
  md += "- load average (1, 5, 15 min): " + run.load_start + " at the start, " +
        run.load_end + " at the end\n";
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
  return md;
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

// The CPU model a results file is headed by.
std::string CpuModelOrUnknown() {
  std::string cpu = gort::bench::CpuModel();
  return cpu.empty() ? std::string("an unknown CPU") : cpu;
}

// CpuModel() as a file name: lower-case ASCII letters and digits, each run
// of other bytes one '-' ("AMD EPYC" -> "amd-epyc"), "unknown-cpu" when
// there is no model. scripts/results.sh's cpu_slug spells it the same.
std::string CpuSlug() {
  std::string slug;
  for (char c : gort::bench::CpuModel()) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      slug += c;
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
  }
  if (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug.empty() ? std::string("unknown-cpu") : slug;
}

// Writes block as the whole of path: a results file is generated, and each
// run replaces it (docs/results/, one file per topic and CPU model).
bool WriteMarkdown(const std::string& path, const std::string& block) {
  std::FILE* f = std::fopen(path.c_str(), "we");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(block.data(), 1, block.size(), f) == block.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace gort_compare
