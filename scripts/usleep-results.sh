#!/usr/bin/env bash
# scripts/usleep-results.sh: the figures of docs/usleep.md, measured on this
# machine and written whole to docs/results/usleep-<cpu>.md
# (scripts/results.sh), with the CPU model, the date, the commit and the
# command:
#   - gort-usleep-probe (tools/usleep_probe.cc): the median length of the
#     runtime's usleep(d) and of gort::Sleep(d), with no descriptor
#     registered and with the network poller in use, for d = 1000, 100, 10
#     and 1 µs, in each usleep mode;
#   - go-sleep-probe (tools/go_sleep_probe, built here with `go build`): Go
#     1.19's time.Sleep(d) at GOMAXPROCS 1, the same medians;
#   - gort-compare --ping, the main job's comparison (scripts/main-job.sh):
#     Go's ping benchmarks at GOMAXPROCS 1 in low- against high-resolution
#     mode, interleaved, each measurement in a fresh process, and its
#     benchstat table.
# About a minute on 2 CPUs once built, with the defaults.
#
# With --wine it also runs `GORT_WINDOWS_BENCH=1 scripts/windows.sh amd64`
# (the whole windows/amd64 suite under Wine, then gort-usleep-probe.exe and
# gort-ping.exe) and writes their logs (build/windows-amd64/probe.log and
# ping.log) to docs/results/usleep-wine-<cpu>.md; --wine-only does only that.
#
# Usage: scripts/usleep-results.sh [--samples=N] [--count=N] [--benchtime=D]
#          [--note=TEXT] [--wine | --wine-only]
#   --samples=N    the probes' calls per delay (a fifth for 1000 µs); default
#                  $GORT_USLEEP_SAMPLES or 1000
#   --count=N      gort-compare --ping's rounds; default $GORT_USLEEP_COUNT
#                  or 10 (a Mann-Whitney U test needs n >= 5 a side to find
#                  p < 0.05; 10 gives medians a confidence interval)
#   --benchtime=D  each measurement's timed run, as go test; default
#                  $GORT_USLEEP_BENCHTIME or 200ms
#   --note=TEXT    a sentence for the file (e.g. what else ran)
# Builds in Release (lib.sh's preset_build release); needs scripts/deps.sh
# run once (Go 1.19 for go-sleep-probe).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/results.sh
. "$(dirname "$0")/results.sh"

samples=${GORT_USLEEP_SAMPLES:-1000}
count=${GORT_USLEEP_COUNT:-10}
benchtime=${GORT_USLEEP_BENCHTIME:-200ms}
note="" linux=1 wine=0 shown=()
for a in "$@"; do
  [[ $a == --note=* ]] || shown+=("$a") # the note has its own line
  case $a in
    --samples=*) samples=${a#--samples=} ;;
    --count=*) count=${a#--count=} ;;
    --benchtime=*) benchtime=${a#--benchtime=} ;;
    --note=*) note=${a#--note=} ;;
    --wine) wine=1 ;;
    --wine-only) wine=1 linux=0 ;;
    *) die "unknown argument $a (see the header of $0)" ;;
  esac
done
[[ $samples =~ ^[0-9]+$ && $samples -ge 5 ]] || die "--samples wants 5 or more, got '$samples'"
[[ $count =~ ^[0-9]+$ && $count -ge 1 ]] || die "--count wants a positive count, got '$count'"

t0=$(now)
cpu=$(cpu_model)
command="scripts/usleep-results.sh${shown[*]+ $(shell_join "${shown[@]}")}"

# header TITLE: the generated file's first lines: what wrote it, where, when.
header() {
  echo "## $1 (written by \`scripts/usleep-results.sh\`)"
  echo
  echo "- gort commit: \`$(results_commit)\`"
  echo "- machine: $(uname -sr) $(uname -m), $(nproc) CPUs (${cpu:-unknown CPU})"
  echo "- date: $(date -u); load average (1, 5, 15 min) $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  echo "- command: \`$command\`"
  [ -z "$note" ] || echo "- note: $note"
}

# fenced FILE: FILE's text in a fenced block.
fenced() {
  echo '```'
  cat "$1"
  echo '```'
}

# ---- Linux: the probes and the ping comparison ---------------------------------

# usleep_table PROBE-OUTPUT: requested | lowres | highres, from the probe's
# "delay is" lines.
usleep_table() {
  awk '
    /^mode: / { mode = $2 }
    /^delay is / { v[$3, mode] = $8; if (!($3 in seen)) { seen[$3] = 1; order[++n] = $3 } }
    END {
      print "| requested | low resolution (Go'"'"'s) | high resolution |"
      print "|---:|---:|---:|"
      for (i = 1; i <= n; i++)
        printf "| %s µs | %s µs | %s µs |\n", order[i], v[order[i], "lowres"], v[order[i], "highres"]
    }' "$1"
}

# sleep_table PROBE-OUTPUT GO-OUTPUT: Sleep(d) beside Go's time.Sleep(d).
sleep_table() {
  awk '
    /^mode: / { mode = $2 }
    /^sleep \(/ {
      where = $0 ~ /poller in use/ ? "poller" : $0 ~ /go1\.19/ ? "go" : "none"
      d = $0; sub(/.*delay is /, "", d); split(d, w, " ")
      key = where == "go" ? "go" : mode "-" where
      v[w[1], key] = w[6]
      if (!(w[1] in seen)) { seen[w[1]] = 1; order[++n] = w[1] }
    }
    END {
      print "| requested | Go 1.19 `time.Sleep` | gort low-res, no poller | gort low-res, poller | gort high-res, no poller | gort high-res, poller |"
      print "|---:|---:|---:|---:|---:|---:|"
      for (i = 1; i <= n; i++) {
        d = order[i]
        printf "| %s µs | %s µs | %s µs | %s µs | %s µs | %s µs |\n", d, v[d, "go"],
          v[d, "lowres-none"], v[d, "lowres-poller"], v[d, "highres-none"], v[d, "highres-poller"]
      }
    }' "$1" "$2"
}

linux_results() {
  command -v go >/dev/null || die "go (Debian's golang-go, scripts/deps.sh) is needed"
  preset_build release gort-usleep-probe gort-compare >/dev/null
  local bin=build/release out
  out=$(mktemp -d)
  # shellcheck disable=SC2064 # $out is fixed now
  trap "rm -rf '$out'" EXIT
  say "building go-sleep-probe (tools/go_sleep_probe)"
  (cd tools/go_sleep_probe &&
    GOCACHE=$root/$bin/go-cache GOPATH=$root/$bin/go-path \
      go build -o "$root/$bin/tools/go-sleep-probe" .)

  load0=$(cut -d' ' -f1-3 /proc/loadavg)
  say "gort-usleep-probe --samples=$samples"
  "$bin/tools/gort-usleep-probe" --samples="$samples" >"$out/probe"
  say "go-sleep-probe -samples=$samples (GOMAXPROCS 1)"
  GOMAXPROCS=1 "$bin/tools/go-sleep-probe" -samples="$samples" >"$out/go"
  say "gort-compare --ping --count=$count --benchtime=$benchtime"
  "$bin/benchmarks/gort-compare" --ping --count="$count" --benchtime="$benchtime" \
    >"$out/ping"
  # gort-compare's output: the header, the measurements up to "loadavg at
  # end", then the table and its legend.
  sed -n '1,/^loadavg at end/p' "$out/ping" >"$out/ping-lines"
  sed '1,/^loadavg at end/d' "$out/ping" | sed '/./,$!d' >"$out/ping-table"

  local md
  md=$(results_file usleep)
  {
    header "usleep's resolution and what it does to ChanToSyscallPing"
    echo
    echo "### usleep(d), in each mode"
    echo
    echo "Medians of $samples calls of \`gort::debug::Usleep(d)\` per delay"
    echo "($((samples / 5)) for 1000 µs) on a goroutine, GOMAXPROCS 1:"
    echo
    usleep_table "$out/probe"
    echo
    echo "### Sleep(d), with and without the network poller, beside Go"
    echo
    echo "Medians of \`gort::Sleep(d)\` with no descriptor registered and while"
    echo "a goroutine is parked reading an eventfd (the idle M waits in the"
    echo "poller), and of Go 1.19's \`time.Sleep(d)\`, the same counts,"
    echo "GOMAXPROCS 1:"
    echo
    sleep_table "$out/probe" "$out/go"
    echo
    echo "The poller's way below a millisecond on this kernel, as the probe read"
    echo "it from \`ReadStats().netpoll_highres\` (used in high-resolution mode;"
    echo "low-resolution mode waits in whole milliseconds, as Go): $(awk '/^mode: / { m = $2 }
      /^poller.s timed waits: / { sub(/^poller.s timed waits: /, ""); printf "%s%s %s", s, m, $0; s = "; " }' "$out/probe")."
    echo
    echo "\`build/release/tools/gort-usleep-probe --samples=$samples\`, as it printed:"
    echo
    fenced "$out/probe"
    echo
    echo "\`GOMAXPROCS=1 go-sleep-probe -samples=$samples\` (tools/go_sleep_probe, $(go version | cut -d' ' -f3)), as it printed:"
    echo
    fenced "$out/go"
    echo
    echo "### Go's ping benchmarks, low- against high-resolution usleep"
    echo
    echo "\`build/release/benchmarks/gort-compare --ping --count=$count --benchtime=$benchtime\`:"
    echo "each benchmark at GOMAXPROCS 1 in each mode, the modes in random order"
    echo "within each of $count rounds, each measurement a fresh process; its"
    echo "benchstat table (base: lowres, Go's behaviour):"
    echo
    fenced "$out/ping-table"
    echo
    echo "<details><summary>The measurements, as gort-compare printed them</summary>"
    echo
    fenced "$out/ping-lines"
    echo
    echo "</details>"
    echo
    echo "(The script took $(elapsed "$t0") here, the build included.)"
  } >"$md"
  say "wrote $md"
}

# ---- Wine: scripts/windows.sh's probe and ping logs ------------------------------

wine_results() {
  local dir=build/windows-amd64 rc=0 t1 md
  t1=$(now)
  load0=$(cut -d' ' -f1-3 /proc/loadavg)
  say "GORT_WINDOWS_BENCH=1 scripts/windows.sh amd64 (the suite, then the probe and gort-ping)"
  GORT_WINDOWS_BENCH=1 scripts/windows.sh amd64 || rc=$?
  local f
  for f in probe ping; do
    if [ ! -s "$dir/$f.log" ] || [ "$(stat -c %Y "$dir/$f.log")" -lt "$t1" ]; then
      die "scripts/windows.sh left no fresh $dir/$f.log (exit status $rc)"
    fi
  done
  md=$(results_file usleep-wine)
  {
    header "usleep under Wine, windows/amd64"
    echo "- Wine: $(/usr/lib/wine/wine64 --version 2>/dev/null || echo unknown)"
    [ "$rc" -eq 0 ] || echo "- scripts/windows.sh exited $rc (its tests; the logs below are this run's)"
    echo
    echo "\`GORT_WINDOWS_BENCH=1 scripts/windows.sh amd64\` builds windows/amd64 with"
    echo "mingw-w64 and runs its suite under Wine, then these two programs with"
    echo "their defaults. Wine's timers wait on the wineserver, so these show how"
    echo "gort behaves under Wine, not what real Windows' timers do."
    echo
    echo "\`gort-usleep-probe.exe\` (medians; then the four raw waitable timers):"
    echo
    fenced "$dir/probe.log"
    echo
    echo "\`gort-ping.exe\` (benchmarks/ping_windows.cc: Go's events in gort::Syscall, GOMAXPROCS 1, lowres against highres, in one process):"
    echo
    fenced "$dir/ping.log"
    echo
    echo "(This part took $(elapsed "$t1") here, the suite included.)"
  } >"$md"
  say "wrote $md"
}

[ "$linux" -eq 0 ] || linux_results
[ "$wine" -eq 0 ] || wine_results
say "done in $(elapsed "$t0")"
