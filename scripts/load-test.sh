#!/usr/bin/env bash
# The example servers under real load generators, gort against Go: Debian's
# wrk against examples/http.cc and its Go twin (gortbench-go -serve=http),
# and Debian's redis-benchmark (-t ping,set,get, without and with -P 16
# pipelining) against examples/resp.cc and its twin (-serve=resp), at
# GOMAXPROCS 1 and 2 with 10 and 1000 connections. Each measurement starts
# a fresh server; gort and Go alternate in random order within each round.
# gort-compare --samples then pairs the rounds and prints, per point, the
# median requests/s and p99 of each side and the 95% confidence interval of
# the paired ratio gort/Go, judged against the targets (requests/s at least
# 1.0x Go's, p99 at most 1.0x); by default it writes that table, with the
# commit, machine and date, to a generated file rewritten whole,
# docs/results/load-test-<cpu>.md (scripts/results.sh; docs/performance.md
# links to it).
#
#   scripts/load-test.sh                 # 6 rounds, about 20 minutes on 2 CPUs
#   scripts/load-test.sh --rounds=10 --duration=5 --note='...'
#   scripts/load-test.sh --quick         # one point each, 1 s: a smoke run
#   scripts/load-test.sh --no-hooks      # without the hiredis half below
#
# Then the other half, scripts/load-test-hooks.sh: Debian's hiredis against
# redis-server on goroutines with and without gort::hooks and on 64 plain
# threads (docs/hooks.md; --quick and --no-markdown carry over).
#
# The load generator runs on the same machine as the server, so at
# GOMAXPROCS 2 on 2 CPUs they compete for the CPUs; say so next to numbers.
# Not in CI (too long). The samples are kept in $build_dir/load-test.txt.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/results.sh
. "$(dirname "$0")/results.sh"

rounds=6
duration=3
markdown=$(results_file load-test)
note=""
procs_list="1 2"
conns_list="10 1000"
hooks_args=()
with_hooks=1
for arg in "$@"; do
  case $arg in
  --quick)
    rounds=1
    duration=1
    markdown=""
    procs_list=1
    conns_list=10
    hooks_args+=(--quick)
    ;;
  --rounds=*) rounds=${arg#*=} ;;
  --duration=*) duration=${arg#*=} ;;
  --no-markdown)
    markdown=""
    hooks_args+=(--no-markdown)
    ;;
  --no-hooks) with_hooks=0 ;;
  --note=*) note=${arg#*=} ;;
  --procs=*) procs_list=${arg#*=} ;;
  --conns=*) conns_list=${arg#*=} ;;
  -h | --help)
    sed -n '2,/^set -e/p' "$0" | sed -n 's/^# \{0,1\}//p'
    exit 0
    ;;
  *) die "unknown argument $arg (see --help)" ;;
  esac
done

scripts/deps.sh wrk redis-tools
# gort-compare depends on gortbench_go, the Go twins' binary.
release_build gort-example-http gort-example-resp gort-compare
gort_http=$build_dir/examples/gort-example-http
gort_resp=$build_dir/examples/gort-example-resp
go_bin=$build_dir/benchmarks/gortbench-go
ulimit -n "$(ulimit -Hn)" # 1000 connections on each side of the loopback.

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill -KILL "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
samples=$build_dir/load-test.txt
: >"$samples"
failures=0

# start_server IMPL KIND PROCS: starts it on a free port; sets server_pid
# and addr.
start_server() {
  local cmd
  case $1/$2 in
  gort/http) cmd=("$gort_http" --addr=127.0.0.1:0) ;;
  gort/resp) cmd=("$gort_resp" --addr=127.0.0.1:0) ;;
  go/*) cmd=("$go_bin" -serve="$2" -addr=127.0.0.1:0) ;;
  esac
  : >"$work/server.out" # before the server: the sed below reads it at once
  GOMAXPROCS=$3 "${cmd[@]}" >"$work/server.out" 2>&1 &
  server_pid=$!
  addr=""
  for _ in $(seq 100); do
    addr=$(sed -n 's/.*listening on \(.*\)$/\1/p' "$work/server.out")
    [ -n "$addr" ] && return 0
    sleep 0.05
  done
  die "$1 $2 server did not start: $(cat "$work/server.out")"
}

# stop_server WHAT: SIGTERM; fails the run if the server died or hangs.
stop_server() {
  if ! kill -0 "$server_pid" 2>/dev/null; then
    say "$1: the server died: $(tail -3 "$work/server.out")"
    failures=$((failures + 1))
  fi
  kill -TERM "$server_pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$server_pid" 2>/dev/null; then
    say "$1: the server ignored SIGTERM for 10 s"
    kill -KILL "$server_pid"
    failures=$((failures + 1))
  fi
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

# to_ms VALUE: wrk's latency ("512.00us", "1.20ms", "2.01s") in ms.
to_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0
    if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0; else if (v ~ /s$/) n *= 1000
    printf "%.4f", n }'
}

# measure_http IMPL PROCS CONNS ROUND
measure_http() {
  local point="http/p$2/c$3" out rps p99
  start_server "$1" http "$2"
  out=$(timeout -k 5 $((duration + 60)) \
    wrk -t1 -c"$3" -d"${duration}s" --latency "http://$addr/" 2>&1) || true
  stop_server "$point $1"
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  if [ -z "$rps" ] || [ -z "$p99" ]; then
    say "$point $1: wrk failed: $out"
    failures=$((failures + 1))
    return
  fi
  if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
    say "$point $1: $(grep -E 'Non-2xx|Socket errors' <<<"$out" | tr '\n' ' ')"
  fi
  echo "$point $1 $4 $rps $(to_ms "$p99")" | tee -a "$samples"
}

# measure_resp IMPL PROCS CONNS PIPELINE ROUND
measure_resp() {
  local base="resp/p$2/c$3/P$4" n out
  n=$((duration * ($4 > 1 ? 600000 : 60000)))
  start_server "$1" resp "$2"
  # redis-benchmark has been seen to spin forever at -c 1000: a time limit.
  out=$(timeout -k 5 $((duration * 30 + 60)) redis-benchmark \
    -h "${addr%:*}" -p "${addr##*:}" -c "$3" -n "$n" -P "$4" \
    -t ping,set,get --csv 2>/dev/null) || true
  stop_server "$base $1"
  # "test","rps","avg_latency_ms","min","p50","p95","p99","max"
  local got
  got=$(awk -F'"' -v base="$base" -v impl="$1" -v round="$5" \
    'NR > 1 && $4 + 0 > 0 {print base "/" $2, impl, round, $4, $14}' <<<"$out")
  if [ "$(wc -l <<<"$got")" -ne 4 ]; then
    say "$base $1: redis-benchmark failed: $out"
    failures=$((failures + 1))
    return
  fi
  tee -a "$samples" <<<"$got"
}

# both KIND ARGS...: gort and Go in random order.
both() {
  local kind=$1 first=gort second=go
  shift
  if ((RANDOM % 2)); then first=go second=gort; fi
  "measure_$kind" "$first" "$@"
  "measure_$kind" "$second" "$@"
}

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
cpu=$(cpu_model)
t0=$(now)
say "$rounds rounds of ${duration} s measurements on $cpu; load $load_start"
for round in $(seq "$rounds"); do
  for p in $procs_list; do
    for c in $conns_list; do
      both http "$p" "$c" "$round"
      for pipeline in 1 16; do
        both resp "$p" "$c" "$pipeline" "$round"
      done
    done
  done
done
say "$(elapsed "$t0"), $failures failed"

report=("$build_dir/benchmarks/gort-compare" --samples="$samples")
if [ -n "$markdown" ]; then
  summary="CPU: $cpu. wrk -t1 and redis-benchmark run on the same machine as \
the server, $rounds rounds of ${duration} s per point; load average \
$load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end. \
$failures measurements failed.${note:+ $note}"
  report+=(--markdown="$markdown" --note="$summary")
fi
GORT_COMPARE_COMMAND="scripts/load-test.sh${1+ $(shell_join "$@")}" \
  "${report[@]}"
if [ "$with_hooks" = 1 ]; then
  scripts/load-test-hooks.sh ${hooks_args[@]+"${hooks_args[@]}"} ||
    failures=$((failures + 1))
fi
[ "$failures" -eq 0 ]
