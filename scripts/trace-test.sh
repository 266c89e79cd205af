#!/usr/bin/env bash
# The execution trace as a person sees it: records a trace of Go's
# ChanToSyscallPing benchmark (gort-compare --ping at GOMAXPROCS 1,
# high-resolution usleep, with GORT_TRACE, which its measuring child
# obeys), turns it into gort-trace's HTML timeline and summary, and has
# Debian's headless Chromium load the page (playwright-core from npm,
# tools/trace-ui-test; no browser download): a screenshot goes to
# build/default/trace-ui/, and the lanes and events are checked in the DOM.
# Then the same in Go's format, as Go's own tools see it: traces of
# ChanToSyscallPing, of a program blocking in every way Go's trace names
# (gort-trace-known kinds) and of the echo example under load are opened by
# `go tool trace -pprof=net|sync|sched|syscall` (exit 0, and the profiles
# `go tool pprof -top` prints name gort's functions); `go tool trace` serves
# the ping's trace on loopback, /goroutines must list it, and its timeline
# (/trace) is loaded in the same Chromium (check-go.mjs: screenshot, lanes).
# `go tool pprof -top` reads the goroutine, threadcreate, block and mutex
# profiles
# gort::pprof::WriteProfile writes (gort-trace-known pprof), and the CPU
# profile StartCPUProfile writes (its samples labelled, `-tags`); then, from
# gort::pprof::ListenAndServe (gort-trace-known serve), `go tool pprof -top`
# fetches /debug/pprof/profile?seconds=1 and `go tool trace` reads
# /debug/pprof/trace?seconds=1, as for a Go program (a few seconds).
# Installs chromium and runs `npm ci` itself. About a minute once built.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
scripts/deps.sh chromium fonts-dejavu-core
# Node.js and npm come with the machine; Debian's packages only if absent
# (its npm package would clash with a nodejs that bundles npm).
command -v npm >/dev/null || scripts/deps.sh nodejs npm
[ -x /usr/bin/chromium ] || die "/usr/bin/chromium missing"

echo "== build gort-compare and gort-trace =="
preset_build default gort-compare gort-trace \
  gort-trace-known gort-example-echo

out=build/default/trace-ui
mkdir -p "$out"
echo "== trace ChanToSyscallPing =="
GORT_TRACE="$out/ping.json" GORT_TRACE_FORMAT=json build/default/benchmarks/gort-compare --ping \
  --bench='^ChanToSyscallPing$' --benchtime=200x --count=1 --usleep=highres
build/default/tools/gort-trace summary "$out/ping.json" | tee "$out/summary.txt"
build/default/tools/gort-trace html "$out/ping.json" -o "$out/ping.html"

echo "== headless chromium =="
(cd tools/trace-ui-test && npm ci --no-audit --no-fund --loglevel=error)
node tools/trace-ui-test/check.mjs "$out/ping.html" "$out/ping.png"

echo "== Go's format: go tool trace -pprof =="
GORT_TRACE="$out/ping.gotrace" build/default/benchmarks/gort-compare --ping \
  --bench='^ChanToSyscallPing$' --benchtime=200x --count=1 --usleep=highres \
  >/dev/null
GORT_TRACE="$out/kinds.gotrace" build/default/tests/gort-trace-known kinds
GORT_TRACE="$out/echo.gotrace" build/default/examples/gort-example-echo 50 200
# profiles TRACE KIND...: every profile opens; those named must name gort's
# functions (a kind a program does not exercise may be empty).
profiles() {
  local trace=$1 kind
  shift
  for kind in net sync sched syscall; do
    go tool trace -pprof="$kind" "$out/$trace.gotrace" >"$out/$trace.$kind.pb" ||
      die "go tool trace -pprof=$kind $trace failed"
  done
  for kind in "$@"; do
    go tool pprof -top "$out/$trace.$kind.pb" 2>/dev/null >"$out/$trace.$kind.txt"
    grep -q 'gort::' "$out/$trace.$kind.txt" ||
      die "$trace's $kind profile names no gort function"
    echo "$trace -pprof=$kind: $(grep -c 'gort::' "$out/$trace.$kind.txt") gort frames"
  done
}
profiles ping sync sched syscall
profiles kinds net sync sched syscall
profiles echo net sched

echo "== pprof profiles: go tool pprof -top =="
build/default/tests/gort-trace-known pprof "$out"
go tool pprof -top "$out/goroutine.pb.gz" >"$out/goroutine.txt" 2>/dev/null ||
  die "go tool pprof cannot read the goroutine profile"
grep -q 'Type: goroutine' "$out/goroutine.txt" && grep -q 'ParkedForProfile' "$out/goroutine.txt" ||
  die "the goroutine profile does not name ParkedForProfile"
go tool pprof -top "$out/threadcreate.pb.gz" 2>/dev/null | grep -q 'Type: threadcreate' ||
  die "go tool pprof cannot read the threadcreate profile"
go tool pprof -top -nodefraction=0 "$out/block.pb.gz" >"$out/block.txt" 2>/dev/null ||
  die "go tool pprof cannot read the block profile"
for f in BlockingKinds chanrecv 'Mutex::Lock' 'Cond::Wait' 'WaitGroup::Wait' selectgo; do
  grep -q "$f" "$out/block.txt" || die "the block profile does not name $f"
done
# (the releaser's stack: Unlock's slow path tail-calls the semaphore, so
# BlockingKinds, which unlocks, is the frame to find)
go tool pprof -top -nodefraction=0 "$out/mutex.pb.gz" 2>/dev/null | grep -q 'BlockingKinds' ||
  die "the mutex profile does not name BlockingKinds"
go tool pprof -top "$out/cpu.pb.gz" 2>/dev/null | grep -q 'BurnForProfile' ||
  die "the CPU profile does not name BurnForProfile"
go tool pprof -tags "$out/cpu.pb.gz" 2>/dev/null | grep -q 'profiled: Total' ||
  die "the CPU profile's samples carry no label"
echo "goroutine, threadcreate, block, mutex and CPU profiles open in go tool pprof"

echo "== /debug/pprof: go tool pprof and go tool trace over HTTP =="
coproc SERVE { exec build/default/tests/gort-trace-known serve; }
# shellcheck disable=SC2153 # SERVE_PID: set by coproc
serve_pid=$SERVE_PID
read -r -t 10 addr <&"${SERVE[0]}" || die "gort-trace-known serve printed no address"
PPROF_TMPDIR="$out" go tool pprof -top "http://$addr/debug/pprof/profile?seconds=1" \
  >"$out/http-cpu.txt" 2>&1 || die "go tool pprof cannot fetch /debug/pprof/profile: $(cat "$out/http-cpu.txt")"
grep -q 'BurnForProfile' "$out/http-cpu.txt" ||
  die "/debug/pprof/profile does not name BurnForProfile: $(cat "$out/http-cpu.txt")"
curl -fsS -o "$out/http.gotrace" "http://$addr/debug/pprof/trace?seconds=1" ||
  die "curl /debug/pprof/trace failed"
go tool trace -pprof=sched "$out/http.gotrace" >"$out/http.sched.pb" ||
  die "go tool trace cannot read /debug/pprof/trace"
curl -sS -o /dev/null -w '%{http_code}' "http://$addr/debug/pprof/nosuch" | grep -q 404 ||
  die "/debug/pprof/nosuch is not 404"
kill "$serve_pid" 2>/dev/null || true
wait "$serve_pid" 2>/dev/null || true
echo "/debug/pprof/profile and /debug/pprof/trace open in go tool pprof and go tool trace"

echo "== Go's format: go tool trace on loopback, in headless chromium =="
go tool trace -http=127.0.0.1:0 "$out/ping.gotrace" >"$out/go-trace.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
url=
for _ in $(seq 300); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*' "$out/go-trace.log" || true)
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || die "go tool trace exited: $(cat "$out/go-trace.log")"
  sleep 0.1
done
[ -n "$url" ] || die "go tool trace did not start"
curl -fsS "$url/goroutines" >"$out/goroutines.html"
grep -q 'ChanToSyscallPing' "$out/goroutines.html" ||
  die "/goroutines does not list ChanToSyscallPing"
echo "/goroutines lists ChanToSyscallPing"
node tools/trace-ui-test/check-go.mjs "$url" "$out/ping-go.png" ChanToSyscallPing
