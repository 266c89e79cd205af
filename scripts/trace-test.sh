#!/usr/bin/env bash
# The execution trace as a person sees it: records a trace of Go's
# ChanToSyscallPing benchmark (gort-compare --ping at GOMAXPROCS 1,
# high-resolution usleep, with GORT_TRACE, which its measuring child
# obeys), turns it into gort-trace's HTML timeline and summary, and has
# Debian's headless Chromium load the page (playwright-core from npm,
# tools/trace-ui-test; no browser download): a screenshot goes to
# build/default/trace-ui/, and the lanes and events are checked in the DOM.
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
cmake --preset default >/dev/null
cmake --build --preset default --target gort-compare gort-trace

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
