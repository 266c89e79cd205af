#!/usr/bin/env bash
# The system calls one TCP round trip costs: TCPPingPong and
# TCPPingPong100 at GOMAXPROCS 1 in gort (gort-compare --child), Go 1.19
# (gortbench-go) and the C floor (gort-tcp-floor-c: one thread, one epoll
# loop), each counted by `strace -f -c` over all its threads.
#
# Each is run at two fixed iteration counts N1 < N2 and the counts are
# differenced, (calls(N2) - calls(N1)) / (N2 - N1), so that the process's
# start and exit and the benchmark's Listen/Dial/Accept cancel and what is
# left is the steady-state cost of one round trip. "failed" is how many of
# them returned an error (for read, EAGAIN: a read that found nothing and
# parked). strace stops the process at every syscall, so a round trip takes
# far longer traced than not: calls a clock drives (sysmon's sleeps, futex
# wake-ups of timed waits) are over-counted per round trip against an
# untraced run; the I/O calls and the poller's are what the loop does.
#
# Usage: scripts/tcp-syscalls.sh [--markdown[=PATH]] [--note=TEXT] [N1 N2]
#   N1 N2       the two iteration counts (default 2000 12000)
#   --markdown  also write the tables, with the commit, machine and date, to
#               PATH, replacing the whole file (default
#               docs/results/tcp-syscalls-<cpu>.md, scripts/results.sh)
# Builds gort-compare (with gortbench-go and gort-tcp-floor-c) in Release,
# as scripts/compare.sh does; installs strace through scripts/deps.sh.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/results.sh
. "$(dirname "$0")/results.sh"

markdown="" note="" counts=() shown=()
for a in "$@"; do
  [[ $a == --note=* ]] || shown+=("$a") # the note has its own line
  case $a in
  --markdown) markdown=$(results_file tcp-syscalls) ;;
  --markdown=*) markdown=${a#--markdown=} ;;
  --note=*) note=${a#--note=} ;;
  -*) die "unknown flag $a (usage: $0 [--markdown[=PATH]] [--note=TEXT] [N1 N2])" ;;
  *) counts+=("$a") ;;
  esac
done
n1=${counts[0]:-2000} n2=${counts[1]:-12000}
[[ $n1 =~ ^[0-9]+$ && $n2 =~ ^[0-9]+$ && $n2 -gt $n1 ]] ||
  die "want N1 < N2, got '$n1' '$n2'"

scripts/deps.sh strace
release_build gort-compare gort-tcp-floor-c >/dev/null
bin=$build_dir/benchmarks
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# trace IMPL BENCH N: strace -f -c of one run, its summary in
# $out/IMPL-BENCH-N (columns: name, calls, errors).
trace() {
  local impl=$1 bench=$2 n=$3 cmd
  case $impl in
  gort) cmd=("$bin/gort-compare" --child --bench="$bench" --procs=1 --benchtime="${n}x") ;;
  go) cmd=("$bin/gortbench-go" -bench="$bench" -procs=1 -benchtime="${n}x") ;;
  c) cmd=("$bin/gort-tcp-floor-c" -protocol -bench="$bench" -benchtime="${n}x") ;;
  esac
  GOMAXPROCS=1 strace -f -c -U name,calls,errors -o "$out/$impl-$bench-$n" \
    "${cmd[@]}" >/dev/null || die "$impl $bench N=$n failed under strace"
}

# per_round_trip IMPL BENCH: "name calls errors" per round trip, differenced.
per_round_trip() {
  awk -v d=$((n2 - n1)) '
    $1 ~ /^-/ || $1 == "syscall" || $1 == "total" || NF < 2 { next }
    FNR == NR { c1[$1] = $2; e1[$1] = $3 + 0; next }
    { c2[$1] = $2; e2[$1] = $3 + 0 }
    END {
      for (k in c2) printf "%s %.3f %.3f\n", k, (c2[k] - c1[k]) / d, (e2[k] - e1[k]) / d
      for (k in c1) if (!(k in c2)) printf "%s %.3f %.3f\n", k, -c1[k] / d, -e1[k] / d
    }' "$out/$1-$2-$n1" "$out/$1-$2-$n2"
}

# table BENCH: a markdown table of BENCH's syscalls per round trip, one
# column per implementation, the busiest syscalls first; calls below 0.005
# per round trip in every column are left out.
table() {
  local bench=$1
  for impl in gort go c; do per_round_trip "$impl" "$bench" | sed "s/^/$impl /"; done |
    awk -v bench="$bench" '
      { calls[$2, $1] = $3; errs[$2, $1] = $4; names[$2] = 1
        total[$1] += $3; terr[$1] += $4
        if ($3 > most[$2]) most[$2] = $3 }
      function cell(n, i,   c, e) {
        c = calls[n, i] + 0; e = errs[n, i] + 0
        if (c < 0.005 && c > -0.005) return "0"
        return e >= 0.005 ? sprintf("%.2f (%.2f failed)", c, e) : sprintf("%.2f", c)
      }
      END {
        printf "| %s, per round trip | gort | Go 1.19 | C (epoll loop) |\n|---|---|---|---|\n", bench
        n = 0
        for (k in names) if (most[k] >= 0.005) order[++n] = k
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
          if (most[order[j]] > most[order[i]] || (most[order[j]] == most[order[i]] && order[j] < order[i])) {
            t = order[i]; order[i] = order[j]; order[j] = t }
        for (i = 1; i <= n; i++)
          printf "| %s | %s | %s | %s |\n", order[i], cell(order[i], "gort"), cell(order[i], "go"), cell(order[i], "c")
        printf "| **all** | **%.2f** (%.2f failed) | **%.2f** (%.2f failed) | **%.2f** (%.2f failed) |\n",
          total["gort"], terr["gort"], total["go"], terr["go"], total["c"], terr["c"]
      }'
}

t0=$(now)
for bench in TCPPingPong TCPPingPong100; do
  for impl in gort go c; do
    for n in "$n1" "$n2"; do
      say "strace -f -c: $impl $bench N=$n"
      trace "$impl" "$bench" "$n"
    done
  done
done

commit=$(results_commit)
cpu=$(cpu_model)
block="## Syscalls per TCP round trip (written by \`scripts/tcp-syscalls.sh\`)

- gort commit: \`$commit\`; $("$bin/gortbench-go" -version); $(strace -V | head -1)
- machine: $(uname -sr) $(uname -m), $(nproc) CPUs ($cpu)
- date: $(date -u); load average $(cut -d' ' -f1-3 /proc/loadavg) at the end
- command: \`scripts/tcp-syscalls.sh${shown[*]+ $(shell_join "${shown[@]}")}\`; each row
  (calls(N=$n2) - calls(N=$n1)) / $((n2 - n1)), GOMAXPROCS 1, all threads
${note:+- note: $note
}
$(table TCPPingPong)

$(table TCPPingPong100)
"
printf '%s\n' "$block"
say "done in $(elapsed "$t0")"
[ -n "$markdown" ] || exit 0

printf '%s\n' "$block" >"$markdown"
say "wrote the tables to $markdown"
