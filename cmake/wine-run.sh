#!/bin/sh
# cmake/wine-run.sh WINE PROGRAM [ARG...]: runs a Windows program under Wine
# (the CMAKE_CROSSCOMPILING_EMULATOR of cmake/toolchains/windows-*.cmake,
# and scripts/windows.sh's other Wine runs).
# The Wine prefix is private to the build tree (GORT_WINEPREFIX, set by the
# toolchain file) and Wine's debug channels are off (GORT_WINEDEBUG, if set,
# is used instead, e.g. err+all to see why Wine gave up), so a test's stderr
# is the program's own. scripts/windows.sh starts the prefix's wineserver
# persistently and boots the prefix once before ctest; without that, the
# first program of each wineserver boots it and waits for Wine's services.
#
# wine64 runs with address-space randomization off (setarch -R). Debian's
# wine64 has no preloader to reserve Wine's fixed areas before anything else
# is mapped, and is linked at 0x7d000000; recent kernels (6.18 here) start a
# 64-bit program's heap (brk) anywhere in the 1 GiB after it (32 MiB on
# older ones), so once in some thousands of starts the heap covers the
# shared user data page, 0x7ffe0000. Wine then exits with status 1 before
# the program runs, printing nothing ("failed to map the shared user data"
# is an err: message, hidden by WINEDEBUG=-all). Unrandomized, the heap
# starts right after wine64 and never gets there. The 32-bit wine runs
# under qemu-user, whose guest heap the kernel does not place.
#
# When the program fails, one line on stderr says how (Wine's exit status:
# a Windows exit code or NTSTATUS keeps only its low byte), so that a test
# that printed nothing still says something in ctest's output.
#
# The program's output goes to two files (opened to append: the hang
# watcher below writes to the same one) that tail copies to this script's
# stdout and stderr as it is written, until wine64 exits; the program never
# writes to them directly. A Windows process Wine starts on the program's
# behalf inherits the program's Unix stderr (stdout too if it inherits the
# handles): above all wineboot and the services it starts (services.exe,
# winedevice.exe, plugplay.exe, svchost.exe, rpcss.exe, explorer.exe) when
# the program is the first of a wineserver, and those live as long as the
# wineserver. Had they inherited ctest's pipe, ctest would wait for it to
# close long after the program exited and time out a test that passed
# (docs/targets.md, Wine).
#
# A program still running after GORT_WINE_DUMP_AFTER seconds (default 100,
# below ctest's 120 s timeout; 0: never) gets its threads described once on
# stderr: each one's state and kernel wait channel, and with gdb installed
# its backtrace (Wine's Unix side only: Windows frames have no symbols), so
# that a test ctest times out says whether it was blocked or busy, and where.
set -u
if [ $# -lt 2 ]; then
  echo "usage: wine-run.sh WINE PROGRAM [ARG...]" >&2
  exit 2
fi
wine=$1
shift
export WINEPREFIX="${GORT_WINEPREFIX:?GORT_WINEPREFIX is not set}"
export WINEDEBUG="${GORT_WINEDEBUG:--all}"
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree,mshtml=}"
norandom=
case $wine in
  *64) norandom="setarch $(uname -m) -R" ;;
esac
# describe PID: PID's threads, for a program that seems hung.
describe() {
  echo "wine-run.sh: $1 still running after $dump_after s; its threads:"
  for t in /proc/"$1"/task/*; do
    echo "  tid ${t##*/} $(cat "$t/comm") state" \
      "$(sed 's/.*) //' "$t/stat" | cut -d' ' -f1) wchan $(cat "$t/wchan")"
  done
  command -v gdb >/dev/null || return 0
  timeout 60 gdb -p "$1" -batch -ex 'thread apply all bt 20' 2>&1 |
    grep -E '^(Thread|#)'
}
dump_after=${GORT_WINE_DUMP_AFTER:-100}
out=$(mktemp "${TMPDIR:-/tmp}/wine-run.XXXXXX") || exit 125
err=$out.err
trap 'rm -f "$out" "$err"' EXIT
: >"$err"
start=$(date +%s%N)
# An asynchronous command's stdin would be /dev/null; 3 keeps the caller's
# (none: /dev/null).
if (exec 3<&0) 2>/dev/null; then exec 3<&0; else exec 3</dev/null; fi
# shellcheck disable=SC2086 # norandom is a command prefix, split on purpose
$norandom "$wine" "$@" <&3 >>"$out" 2>>"$err" 3<&- &
pid=$!
exec 3<&-
# The watcher writes where the program does, never to this script's own
# stdout or stderr, and takes its sleep with it when it is stopped.
watcher=
if [ "$dump_after" -gt 0 ]; then
  (
    trap 'kill $nap 2>/dev/null; exit 0' TERM
    sleep "$dump_after" &
    nap=$!
    wait $nap && describe $pid
  ) </dev/null >>"$err" 2>&1 &
  watcher=$!
fi
# tail polls every 10 ms: with inotify, each tail's exit costs another 20 ms
# or so (closing an inotify instance waits for the kernel), per test.
tail ---disable-inotify -c +1 -s 0.01 --pid=$pid -f "$out" &
tail ---disable-inotify -c +1 -s 0.01 --pid=$pid -f "$err" >&2 &
wait $pid
rc=$?
[ -n "$watcher" ] && kill "$watcher" 2>/dev/null
wait
if [ $rc -ne 0 ]; then
  ms=$((($(date +%s%N) - start) / 1000000))
  echo "wine-run.sh: $wine $1 exited with status $rc after $ms ms" \
    "(WINEDEBUG=$WINEDEBUG)" >&2
fi
exit $rc
