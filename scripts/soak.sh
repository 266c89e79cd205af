#!/usr/bin/env bash
# A churn soak of examples/http.cc: for SECONDS (default 60) Debian's wrk
# keeps 32 well-behaved keep-alive connections busy while gort-churn
# (tools/churn.cc) opens and drops connections, resets them mid-request and
# mid-response (SO_LINGER 0), half-closes, sends oversized and malformed
# headers and stalls (slowloris, which the server's 2 s read deadline must
# cut off). It checks that
#   - the server never dies (no SIGPIPE, no crash) and shuts down on SIGTERM;
#   - wrk sees no error and no non-2xx answer, and gort-churn every answer
#     it expects (431, 400, 200 after a half-close, slowloris cut off);
#   - afterwards the server's descriptors (/proc/PID/fd) and goroutines
#     (its /debug page) return to their baseline, and its RSS to within
#     16 MB of it.
#
#   scripts/soak.sh            # 60 s, as CI runs it
#   scripts/soak.sh 36000      # ten hours
#   GOMAXPROCS=1 scripts/soak.sh 300
#
# Uses build/default (scripts/test.sh builds it; only the two targets are
# brought up to date here). GOMAXPROCS defaults to 2.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

secs=${1:-60}
if ! [[ $secs =~ ^[0-9]+$ ]] || [ "$secs" -eq 0 ]; then die "usage: $0 [seconds]"; fi
scripts/deps.sh wrk
preset_build default gort-example-http gort-churn >/dev/null
server=build/default/examples/gort-example-http
churn=build/default/tools/gort-churn

work=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
failed=0
fail() {
  say "FAIL: $*"
  failed=1
}

: >"$work/server.out" # before the server: the sed below reads it at once
GOMAXPROCS=${GOMAXPROCS:-2} "$server" --addr=127.0.0.1:0 \
  --read-timeout-ms=2000 >"$work/server.out" 2>&1 &
spid=$!
pids+=("$spid")
addr=""
for _ in $(seq 100); do
  addr=$(sed -n 's/.*listening on \(.*\)$/\1/p' "$work/server.out")
  [ -n "$addr" ] && break
  sleep 0.05
done
[ -n "$addr" ] || die "the server did not start: $(cat "$work/server.out")"

# debug FIELD: the server's /debug count of FIELD (goroutines, connections).
debug() {
  local reply
  exec 3<>"/dev/tcp/${addr%:*}/${addr##*:}"
  printf 'GET /debug HTTP/1.0\r\n\r\n' >&3
  reply=$(cat <&3)
  exec 3>&-
  awk -v f="$1" '$1 == f {print $2}' <<<"$reply"
}
fds() { find "/proc/$spid/fd" -mindepth 1 -maxdepth 1 | wc -l; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$spid/status"; }
alive() { kill -0 "$spid" 2>/dev/null; }

# The baseline, once the /debug connection itself has gone.
goroutines0=$(debug goroutines)
sleep 0.2
fds0=$(fds)
rss0=$(rss_kib)
say "server $addr (pid $spid): $goroutines0 goroutines, $fds0 descriptors, \
RSS $((rss0 / 1024)) MB; soaking for ${secs} s"

t0=$(now)
wrk -t1 -c32 -d"${secs}s" --timeout 10s --latency "http://$addr/" \
  >"$work/wrk.out" 2>&1 &
wpid=$!
pids+=("$wpid")
"$churn" --addr="$addr" --seconds="$secs" --workers=4 --cutoff-ms=6000 \
  >"$work/churn.out" 2>&1 &
cpid=$!
pids+=("$cpid")
peak=$rss0
while kill -0 "$wpid" 2>/dev/null || kill -0 "$cpid" 2>/dev/null; do
  alive || break
  r=$(rss_kib)
  [ "$r" -gt "$peak" ] && peak=$r
  sleep 1
done
wait "$wpid" || fail "wrk exited with status $?"
churn_rc=0
wait "$cpid" || churn_rc=$?
cat "$work/churn.out"
[ "$churn_rc" -eq 0 ] || fail "gort-churn: a wrong answer (status $churn_rc)"
alive || fail "the server died: $(tail -5 "$work/server.out")"

sed -n 's/^/  wrk: /p' "$work/wrk.out" | grep -E 'requests in|Requests/sec|99%|Non-2xx|Socket errors' || true
grep -q 'requests in' "$work/wrk.out" || fail "wrk did not run"
if grep -qE 'Non-2xx|Socket errors' "$work/wrk.out"; then
  fail "well-behaved requests failed"
fi

# Back to the baseline: the read deadline closes what the churn left open.
if alive; then
  for _ in $(seq 30); do
    g=$(debug goroutines)
    sleep 0.2
    f=$(fds)
    r=$(rss_kib)
    if [ "$g" = "$goroutines0" ] && [ "$f" = "$fds0" ] &&
      [ "$r" -le $((rss0 + 16 * 1024)) ]; then
      break
    fi
    sleep 0.5
  done
  say "after: $g goroutines (baseline $goroutines0), $f descriptors \
($fds0), RSS $((r / 1024)) MB ($((rss0 / 1024)) MB; peak $((peak / 1024)) MB)"
  [ "$g" = "$goroutines0" ] || fail "goroutines did not return to the baseline"
  [ "$f" = "$fds0" ] || fail "descriptors did not return to the baseline"
  [ "$r" -le $((rss0 + 16 * 1024)) ] || fail "RSS stayed over baseline + 16 MB"
  kill -TERM "$spid"
  for _ in $(seq 100); do
    alive || break
    sleep 0.1
  done
  if alive; then
    fail "the server ignored SIGTERM for 10 s"
  else
    wait "$spid" || fail "the server exited with status $? on SIGTERM"
  fi
fi
[ "$failed" -eq 0 ] || die "failed after $(elapsed "$t0")"
say "passed in $(elapsed "$t0")"
