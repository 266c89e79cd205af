#!/usr/bin/env bash
# scripts/trace-side-by-side.sh: ChanToSyscallPing traced in Go and in gort,
# opened by the same tool. Go 1.19 runs it through gortbench-go -trace (its
# runtime/trace around the timed run), gort through gort-compare's measuring
# child with GORT_TRACE, at GOMAXPROCS 1 in each usleep mode; each trace goes
# through `go tool trace -pprof=sched` (the scheduler-latency profile: time
# from runnable to running) and `go tool pprof -top`. The outputs, with the
# machine, the commit and each run's ns/op, are written into docs/trace.md
# between its side-by-side markers; the traces stay in
# build/default/side-by-side/ for `go tool trace` to open. A few seconds once
# built (reuses build/default).
#
# Usage: scripts/trace-side-by-side.sh [--benchtime=200x] [--note=TEXT]
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

benchtime=200x
note="The machine is shared and was not idle: the numbers are noisy."
for arg in "$@"; do
  case $arg in
    --benchtime=*) benchtime=${arg#--benchtime=} ;;
    --note=*) note=${arg#--note=} ;;
    *) die "unknown argument $arg" ;;
  esac
done
command -v go >/dev/null || die "go (Debian's golang-go) is needed"

cmake --preset default >/dev/null
cmake --build --preset default --target gort-compare >/dev/null
bin=build/default/benchmarks
out=build/default/side-by-side
mkdir -p "$out"

echo "== trace ChanToSyscallPing: Go, gort lowres, gort highres =="
"$bin/gortbench-go" -bench=ChanToSyscallPing -benchtime="$benchtime" -procs=1 \
  -trace="$out/go.trace" >"$out/go.result"
for mode in lowres highres; do
  GORT_TRACE="$out/gort-$mode.trace" "$bin/gort-compare" --child \
    --bench=ChanToSyscallPing --procs=1 --benchtime="$benchtime" \
    --usleep="$mode" >"$out/gort-$mode.result"
done

md="$out/section.md"
{
  echo "<!-- side-by-side:begin (written by scripts/trace-side-by-side.sh; do not edit by hand) -->"
  echo
  echo "ChanToSyscallPing at GOMAXPROCS 1, \`-benchtime=$benchtime\`, traced on"
  echo "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') ($(nproc) CPUs),"
  echo "$(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD). $note"
  echo "Each block is \`go tool trace -pprof=sched TRACE > sched.pb &&"
  echo "go tool pprof -top -nodecount=8 sched.pb\`: the time goroutines spent"
  echo "runnable before they ran, by where they were readied."
  for t in go gort-lowres gort-highres; do
    go tool trace -pprof=sched "$out/$t.trace" >"$out/$t.sched.pb" ||
      die "go tool trace -pprof=sched $t.trace failed"
    go tool pprof -top -nodecount=8 "$out/$t.sched.pb" 2>/dev/null |
      grep -v '^Main binary' >"$out/$t.sched.txt"
    nsop=$(grep -o 'ns-per-op=[^ ]*' "$out/$t.result" | cut -d= -f2)
    case $t in
      go) title="Go 1.19 (gortbench-go)" ;;
      *) title="gort, usleep ${t#gort-}" ;;
    esac
    echo
    echo "**$title**: $nsop ns/op"
    echo
    echo '```'
    cat "$out/$t.sched.txt"
    echo '```'
  done
  echo
  echo "<!-- side-by-side:end -->"
} >"$md"

doc=docs/trace.md
grep -q '^<!-- side-by-side:begin' "$doc" || die "$doc has no side-by-side markers"
awk -v f="$md" '
  /^<!-- side-by-side:begin/ { while ((getline l < f) > 0) print l; skip = 1; next }
  /^<!-- side-by-side:end/ { skip = 0; next }
  !skip { print }
' "$doc" >"$doc.new" && mv "$doc.new" "$doc"
echo "wrote the side-by-side section of $doc; traces in $out"
