#!/usr/bin/env bash
# scripts/trace-side-by-side-shots.sh: the pictures of
# scripts/trace-side-by-side.sh, which calls it once gortbench-go and
# gort-compare are built. A short ChanToSyscallPing run (BENCHTIME, e.g.
# 10x) is traced in Go, gort lowres and gort highres at GOMAXPROCS 1; each
# trace is served by `go tool trace -http=127.0.0.1:0` and its timeline
# (/trace) opened in Debian's headless Chromium
# (tools/trace-ui-test/shot-go.mjs), zoomed onto ROUNDTRIPS round trips from
# the middle of the run; the screenshots go to
# docs/results/images/trace-side-by-side-<cpu>-{go,gort-lowres,gort-highres}.png
# (scripts/results.sh), and what the
# whole short trace shows of sysmon's retake (shot-go.mjs's summary line)
# to build/default/side-by-side/T.shot.tsv. Installs chromium and runs
# `npm ci` as scripts/trace-test.sh does.
#
# Usage: scripts/trace-side-by-side-shots.sh BENCHTIME ROUNDTRIPS
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/results.sh
. "$(dirname "$0")/results.sh"

[ $# -eq 2 ] || die "usage: $0 BENCHTIME ROUNDTRIPS"
benchtime=$1 roundtrips=$2
scripts/deps.sh chromium fonts-dejavu-core
command -v npm >/dev/null || scripts/deps.sh nodejs npm
[ -x /usr/bin/chromium ] || die "/usr/bin/chromium missing"
(cd tools/trace-ui-test && npm ci --no-audit --no-fund --loglevel=error)

bin=build/default/benchmarks
out=build/default/side-by-side
shots=docs/results/images
mkdir -p "$out" "$shots"

echo "== short traces ($benchtime): Go, gort lowres, gort highres =="
trace_ping "$bin" "$out" "$benchtime" -short

server=
stop_server() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  server=
}
trap stop_server EXIT

# shoot T NAME: serves T's short trace on loopback and has shot-go.mjs take
# its picture (NAME: the waiter goroutine's function, as the trace names it).
shoot() {
  local t=$1 name=$2 url='' log=$out/$1.serve.log png
  png=$shots/trace-side-by-side-$(cpu_slug)-$1.png
  go tool trace -http=127.0.0.1:0 "$out/$t-short.trace" >"$log" 2>&1 &
  server=$!
  for _ in $(seq 300); do
    url=$(grep -o 'http://127.0.0.1:[0-9]*' "$log" || true)
    [ -n "$url" ] && break
    kill -0 "$server" 2>/dev/null || die "go tool trace $t exited: $(cat "$log")"
    sleep 0.1
  done
  [ -n "$url" ] || die "go tool trace $t did not start"
  node tools/trace-ui-test/shot-go.mjs "$url" "$png" \
    "$name" "$roundtrips" "$out/$t.shot.tsv" >"$out/$t.shot.log" ||
    die "shot-go.mjs $t failed: $(grep FAIL "$out/$t.shot.log")"
  stop_server
  echo "$t: $png ($(stat -c %s "$png") bytes)"
}

echo "== go tool trace /trace in headless chromium =="
shoot go chanToSyscallPing
shoot gort-lowres ChanToSyscallPing
shoot gort-highres ChanToSyscallPing
