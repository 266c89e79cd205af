#!/usr/bin/env bash
# hiredis (Debian's, unmodified) against Debian's redis-server, three ways:
# goroutines with gort::hooks (GOMAXPROCS 1 and 2), the same goroutine
# program without the hooks (GOMAXPROCS 1), and the same SET+GET pairs on
# 64 plain threads (tools/hooks_redis.cc; each run starts its own
# redis-server on a unix socket). Then, with one more client waiting in a
# 200 ms BLPOP throughout, the 5 ms ticker goroutine's worst lateness and
# the process's thread count, with and without the hooks: what the hooks
# buy. Also gort-hooks-cost: a libc call's cost with the hooks idle. Prints
# a markdown table (medians over the rounds) and, by default, writes both,
# with the commit, machine and date, to a generated file rewritten whole,
# docs/results/load-test-hooks-<cpu>.md (scripts/results.sh; docs/hooks.md
# links to it).
# scripts/load-test.sh (the example servers) is the other half of the load
# tests, and runs this one after its own points.
#
#   scripts/load-test-hooks.sh                 # 3 rounds, about 2 minutes
#   scripts/load-test-hooks.sh --rounds=5 --clients=1000 --ops=100
#   scripts/load-test-hooks.sh --quick         # 1 round, 100 clients, no file
#
# The clients, redis-server and the runtime share the machine's CPUs; the
# numbers move with its load.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/results.sh
. "$(dirname "$0")/results.sh"

args=("$@")
rounds=3
clients=1000
ops=100
markdown=$(results_file load-test-hooks)
for arg in "$@"; do
  case $arg in
  --quick)
    rounds=1
    clients=100
    markdown=""
    ;;
  --rounds=*) rounds=${arg#*=} ;;
  --clients=*) clients=${arg#*=} ;;
  --ops=*) ops=${arg#*=} ;;
  --no-markdown) markdown="" ;;
  -h | --help)
    sed -n '2,/^set -e/p' "$0" | sed -n 's/^# \{0,1\}//p'
    exit 0
    ;;
  *) die "unknown argument $arg (see --help)" ;;
  esac
done

scripts/deps.sh redis-server libhiredis-dev
release_build gort-hooks-redis gort-hooks-redis-nohooks gort-hooks-cost
with=$build_dir/tools/gort-hooks-redis
without=$build_dir/tools/gort-hooks-redis-nohooks
common=(--clients="$clients" --ops="$ops")

# field NAME LINE: the value of NAME=... in one output line.
field() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# median: of the numbers on stdin.
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

declare -A rate late threads
# measure KEY ENV CMD...: one run; appends its numbers to KEY's samples.
measure() {
  local key=$1 procs=$2 line
  shift 2
  line=$(GOMAXPROCS=$procs "$@") || die "$key: $* failed"
  echo "  $key: $line"
  [ "$(field correct "$line")" = "$(field pairs "$line")" ] ||
    die "$key: wrong replies: $line"
  rate[$key]+="$(field pairs_per_sec "$line") "
  late[$key]+="$(field max_tick_late_ms "$line") "
  threads[$key]+="$(field max_threads "$line") "
}

echo "== the cost of a call the hooks have nothing to do for =="
cost=$("$build_dir/tools/gort-hooks-cost")
printf '%s\n' "$cost"

for r in $(seq "$rounds"); do
  echo "== round $r of $rounds =="
  measure hooks1 1 "$with" "${common[@]}"
  measure hooks2 2 "$with" "${common[@]}"
  measure nohooks1 1 "$without" "${common[@]}"
  measure threads64 "" "$with" --mode=threads --threads=64 "${common[@]}"
  measure hooks1-blpop 1 "$with" "${common[@]}" --blpop-ms=200
  measure nohooks1-blpop 1 "$without" "${common[@]}" --blpop-ms=200
done

med() {  # med "SAMPLES": their median, or - if there are none
  local v
  v=$(tr ' ' '\n' <<<"$1" | grep . || true)
  if [ -z "$v" ]; then echo -; else median <<<"$v"; fi
}
row() {  # row LABEL KEY
  local t l
  t=$(med "${threads[$2]}")
  l=$(med "${late[$2]}")
  printf '| %s | %.0f | %s | %s |\n' "$1" "$(med "${rate[$2]}")" "$t" "$l"
}
cpu=$(cpu_model)
table=$(
  echo "$clients clients x $ops SET+GET pairs each; medians of $rounds rounds;"
  echo "$(date -u +%Y-%m-%d), $cpu, $(nproc) CPUs, shared and noisy machine."
  echo
  echo "| hiredis client | pairs/s | max OS threads | worst ticker lateness (ms) |"
  echo "|---|---|---|---|"
  row "goroutines, gort::hooks, GOMAXPROCS 1" hooks1
  row "goroutines, gort::hooks, GOMAXPROCS 2" hooks2
  row "goroutines, no hooks, GOMAXPROCS 1" nohooks1
  row "64 plain threads (no gort)" threads64
  row "goroutines + one 200 ms BLPOP, gort::hooks, GOMAXPROCS 1" hooks1-blpop
  row "goroutines + one 200 ms BLPOP, no hooks, GOMAXPROCS 1" nohooks1-blpop
)
echo
printf '%s\n' "$table"
cost_md=$(
  echo "$(date -u +%Y-%m-%d), $cpu, shared and noisy machine (medians of 9 rounds):"
  echo
  echo '```'
  printf '%s\n' "$cost"
  echo '```'
)
if [ -n "$markdown" ]; then
  {
    echo "## hiredis on goroutines, with and without gort::hooks (written by \`scripts/load-test-hooks.sh\`)"
    echo
    echo "- gort commit: \`$(results_commit)\`"
    echo "- machine: $(uname -sr) $(uname -m), $(nproc) CPUs ($cpu)"
    echo "- date: $(date -u); load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
    echo "- command: \`scripts/load-test-hooks.sh${args[*]+ $(shell_join "${args[@]}")}\`"
    echo
    echo "### A call the hooks have nothing to do for (gort-hooks-cost)"
    echo
    printf '%s\n' "$cost_md"
    echo
    echo "### hiredis against redis-server"
    echo
    printf '%s\n' "$table"
  } >"$markdown"
  echo "load-test-hooks: tables written to $markdown"
fi
