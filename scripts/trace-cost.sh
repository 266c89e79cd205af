#!/usr/bin/env bash
# scripts/trace-cost.sh: what tracing costs ChanToSyscallPing (the target:
# at most 10 % for a traced run). Each round runs the benchmark (GOMAXPROCS
# 1, USLEEP's mode, one fresh process each) untraced, traced as
# JSON and traced in Go's format, in a random order; prints each mode's
# median ns/op and the median of the per-round ratios traced/untraced with
# its distribution-free 95 % confidence interval, and the CPU model. It also
# prints sysmon's wake-ups per op and the time per wake-up: each round trip
# waits for sysmon to retake the P, so an op takes a whole number of sysmon
# rounds, and the two columns say whether a mode costs more per round (work
# on the path) or more rounds per op (docs/trace.md, "Cost";
# docs/notes/trace-cost.md has the runs); and sysmon's
# preemption requests per 1000 ops, each of which starts a fresh time slice
# and so 10 ms of two-round ops. Where gortbench-go was built beside it, each
# round also runs Go 1.19's own benchmark untraced and under its own tracer
# (runtime/trace), the same ratio for Go as the reference.
#
# Usage: scripts/trace-cost.sh [ROUNDS] [BENCHTIME] [USLEEP]
#        (default 10 20000x highres; USLEEP lowres: Linux's timer slack, as Go)
# Needs build/default/benchmarks/gort-compare (scripts/test.sh builds it);
# GORT_COMPARE=path measures another build of it (an A/B of two trees).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
rounds=${1:-10}
benchtime=${2:-20000x}
usleep=${3:-highres}
case $usleep in highres | lowres) ;; *) die "USLEEP is highres or lowres" ;; esac
bin=${GORT_COMPARE:-$root/build/default/benchmarks/gort-compare}
[ -x "$bin" ] || die "build gort-compare first (scripts/test.sh)"
gobin=$(dirname "$bin")/gortbench-go
modes=(off json go)
[ -x "$gobin" ] && modes+=(go119 go119-trace)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# ping MODE: one measurement; prints its time/op, sysmon wakes and ops
# (Go's benchmark counts neither wakes nor requests: nan).
ping() {
  local env=() cmd=("$bin" --child --usleep="$usleep")
  case $1 in
    json) env=(GORT_TRACE="$out/t.json" GORT_TRACE_FORMAT=json) ;;
    go) env=(GORT_TRACE="$out/t.out") ;;
    go119) cmd=("$gobin") ;;
    go119-trace) cmd=("$gobin" --trace="$out/go.out") ;;
  esac
  env "${env[@]}" "${cmd[@]}" --bench=ChanToSyscallPing --procs=1 \
    --benchtime="$benchtime" 2>&1 |
    awk '$1 == "result" {
      for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      w = v["sysmon-wakes"] == "" ? "nan" : v["sysmon-wakes"]
      p = v["preempt-requests"] == "" ? "nan" : v["preempt-requests"]
      print v["ns-per-op"], w, v["n"], p
      exit }'
}

for r in $(seq "$rounds"); do
  for mode in $(printf '%s\n' "${modes[@]}" | shuf); do
    echo "$r $mode $(ping "$mode")"
  done
done >"$out/runs"

python3 - "$out/runs" "$usleep" <<'PY'
import math, statistics, sys
runs = {}  # mode -> round -> (ns/op, sysmon wakes/op, preempts/1000 ops)
usleep = sys.argv[2]
for line in open(sys.argv[1]):
    r, mode, ns, wakes, n, preempts = line.split()
    runs.setdefault(mode, {})[int(r)] = (float(ns), float(wakes) / float(n),
                                         float(preempts) * 1000 / float(n))
def ci(xs):
    # Ranks of a distribution-free 95 % interval for the median.
    xs = sorted(xs); n = len(xs)
    k = max(0, int(math.floor(n / 2 - 1.96 * math.sqrt(n) / 2)))
    return xs[k], xs[n - 1 - k]
def med(mode, i=0):
    # The median over the rounds of one column (0 ns/op, 1 wakes, 2 requests).
    return statistics.median(v[i] for v in runs[mode].values())
def ratio(mode, f, width, base="off"):
    rs = [f(runs[mode][r]) / f(runs[base][r]) for r in runs[mode] if r in runs[base]]
    lo, hi = ci(rs)
    return f"{statistics.median(rs):{width}.3f}   [{lo:.3f}, {hi:.3f}]"
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
            if l.startswith("model name")), "?")
load = open("/proc/loadavg").read().split()[:3]
print(f"ChanToSyscallPing, GOMAXPROCS 1, {usleep}; {len(runs.get('off', {}))} rounds; "
      f"{cpu}; load average at end {' '.join(load)}")
print(f"{'mode':6} {'median ns/op':>13} {'ratio to off':>13} {'95% CI':>17}"
      f" {'wakes/op':>9} {'ns/wake ratio':>14} {'95% CI':>17}"
      f" {'preempts/1k ops':>16}")
per_wake = lambda x: x[0] / x[1]
for mode in ("off", "json", "go"):
    m, w, p = med(mode), med(mode, 1), med(mode, 2)
    if mode == "off":
        print(f"{mode:6} {m:13.0f} {'':31} {w:9.2f} {'':32} {p:16.2f}")
        continue
    print(f"{mode:6} {m:13.0f} {ratio(mode, lambda x: x[0], 13)} {w:9.2f}"
          f" {ratio(mode, per_wake, 14)} {p:16.2f}")
if "go119" in runs and "go119-trace" in runs:
    print(f"Go 1.19's own tracer (gortbench-go, runtime/trace; Go's usleep):"
          f" off {med('go119'):.0f} ns/op, traced {med('go119-trace'):.0f},"
          f" ratio {ratio('go119-trace', lambda x: x[0], 0, 'go119')}")
PY
