#!/usr/bin/env bash
# scripts/trace-side-by-side.sh: ChanToSyscallPing traced in Go and in gort,
# opened by the same tool. Go 1.19 runs it through gortbench-go -trace (its
# runtime/trace around the timed run), gort through gort-compare's measuring
# child with GORT_TRACE, at GOMAXPROCS 1 in each usleep mode; each trace goes
# through `go tool trace -pprof=sched` (the scheduler-latency profile: time
# from runnable to running) and `go tool pprof -top`. The outputs, with the
# machine, the commit and each run's ns/op, go to a generated file,
# docs/results/trace-side-by-side-<cpu>.md (scripts/results.sh), rewritten
# whole; the traces stay in build/default/side-by-side/ for `go tool trace`
# to open. Then scripts/trace-side-by-side-shots.sh traces a short run
# (--shot-benchtime) of each and screenshots `go tool trace`'s timeline of
# it, zoomed onto --round-trips round trips, in headless Chromium
# (docs/results/images/trace-side-by-side-<cpu>-*.png); the file shows the
# pictures and what the short traces' round trips say of sysmon's retake.
# docs/trace.md links to it. 15-25 s once built (reuses build/default); not
# in CI.
#
# Usage: scripts/trace-side-by-side.sh [--benchtime=200x] [--shot-benchtime=10x]
#          [--round-trips=3] [--note=TEXT]
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/results.sh
. "$(dirname "$0")/results.sh"

t0=$(now)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
benchtime=200x
shot_benchtime=10x
roundtrips=3
note="The machine is shared and was not idle: the numbers are noisy."
for arg in "$@"; do
  case $arg in
    --benchtime=*) benchtime=${arg#--benchtime=} ;;
    --shot-benchtime=*) shot_benchtime=${arg#--shot-benchtime=} ;;
    --round-trips=*) roundtrips=${arg#--round-trips=} ;;
    --note=*) note=${arg#--note=} ;;
    *) die "unknown argument $arg" ;;
  esac
done
command -v go >/dev/null || die "go (Debian's golang-go) is needed"

preset_build default gort-compare >/dev/null
bin=build/default/benchmarks
out=build/default/side-by-side
mkdir -p "$out"

echo "== trace ChanToSyscallPing: Go, gort lowres, gort highres =="
trace_ping "$bin" "$out" "$benchtime" ""

scripts/trace-side-by-side-shots.sh "$shot_benchtime" "$roundtrips"

# shots_table: a row per short trace of what shot-go.mjs found in it.
shots_table() {
  local t title trips retaken byexit moved hmed hmin hmax omed omin omax span shown nsop
  echo "| trace | ns/op | waiter's runs | ended by sysmon's retake | ended by a syscall's return | retakes after which P0 started on another thread | held in the syscall until the retake, µs: median (min–max) | retake to the next goroutine's start, µs: median (min–max) | picture: µs, waiter's runs |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for t in go gort-lowres gort-highres; do
    read -r trips retaken byexit moved hmed hmin hmax omed omin omax span shown <"$out/$t.shot.tsv"
    nsop=$(grep -o 'ns-per-op=[^ ]*' "$out/$t-short.result" | cut -d= -f2)
    case $t in
      go) title="Go 1.19" ;;
      *) title="gort ${t#gort-}" ;;
    esac
    echo "| $title | $nsop | $trips | $retaken | $byexit | $moved | $hmed ($hmin–$hmax) | $omed ($omin–$omax) | $span, $shown |"
  done
}

md=$(results_file trace-side-by-side)
img=images/trace-side-by-side-$(cpu_slug) # beside $md, in docs/results/
{
  echo "## ChanToSyscallPing in Go and in gort, side by side (written by \`scripts/trace-side-by-side.sh\`)"
  echo
  echo "ChanToSyscallPing at GOMAXPROCS 1, \`-benchtime=$benchtime\`, traced on"
  echo "$(cpu_model) ($(nproc) CPUs),"
  echo "$(date -u +%Y-%m-%d), commit $(results_commit). $note"
  echo "Load average (1, 5, 15 min) at the start: $load0; at the end:"
  echo "$(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "**In \`go tool trace\`.** A short run, \`-benchtime=$shot_benchtime\`, of each;"
  echo "its timeline (\`/trace\`), served on loopback and opened in headless"
  echo "Chromium, zoomed onto $roundtrips round trips from the middle of the run"
  echo "(\`scripts/trace-side-by-side-shots.sh\`, \`tools/trace-ui-test/shot-go.mjs\`)."
  echo
  echo "![Go 1.19: ChanToSyscallPing's round trips on Proc 0 in go tool trace]($img-go.png)"
  echo
  echo "![gort, usleep lowres: the same round trips in go tool trace]($img-gort-lowres.png)"
  echo
  echo "![gort, usleep highres: the same round trips in go tool trace]($img-gort-highres.png)"
  echo
  echo "What the whole short traces show, read from the viewer's model by"
  echo "\`shot-go.mjs\`: the runs of the waiter (the goroutine blocking in the"
  echo "eventfd read) on Proc 0; those that ended inside its syscall (the P"
  echo "taken from it, \`GoSysBlock\`), split by who took the P — a goroutine"
  echo "(the waiter itself or the other) returning from a syscall it had"
  echo "stopped in (\`exitsyscall\` takes its old P back from a syscall), else"
  echo "sysmon's retake; for the retakes, how many were followed by P0's"
  echo "\`proc start\` on another thread (its ThreadID) than the waiter's, how"
  echo "long after the waiter's \`syscall\` event the retake came, and how long"
  echo "after it the P's next goroutine started."
  echo
  shots_table
  echo
  echo "**Scheduler latency.** The \`-benchtime=$benchtime\` runs."
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
  echo "(The script took $(elapsed "$t0") here, built.)"
} >"$md"
echo "wrote $md; traces in $out"

