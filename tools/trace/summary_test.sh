#!/bin/sh
# The gort-trace summary test (ctest gort_trace.summary): traces
# gort-trace-known (tests/trace_known.h: counts known in advance), then
# checks gort-trace's summary and HTML of it.
# Usage: summary_test.sh GORT_TRACE_KNOWN GORT_TRACE OUT_PREFIX
set -eu
known=$1 tool=$2 out=$3
GORT_TRACE="$out.json" GORT_TRACE_FORMAT=json "$known"
"$tool" summary "$out.json" >"$out.txt"
cat "$out.txt"
check() {
  grep -Eq "$1" "$out.txt" || { echo "summary lacks: $1" >&2; exit 1; }
}
check '^goroutines: 10 seen, 10 created, 10 ended'
check '^trace: .* 1 Ps, .* GOMAXPROCS changes: 1$'
check '^syscalls: 1 \(0 blocking\)'
check '^sysmon: 1 syscall handoffs'
check '^usleep: [1-9][0-9]* calls'
# Every block has its unblock: "blocked: N blocks, N unblocks".
grep -Eq '^blocked: ([0-9]+) blocks, \1 unblocks$' "$out.txt" ||
  { echo "blocks and unblocks differ" >&2; exit 1; }
"$tool" html "$out.json" -o "$out.html"
grep -q 'data-track="P0"' "$out.html"
grep -q 'data-cat="ProcRetake"' "$out.html"
if grep -Eq '(src|href)="https?:' "$out.html"; then
  echo "HTML fetches from the network" >&2
  exit 1
fi
echo "PASS"
