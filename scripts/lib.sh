# scripts/lib.sh: the shell every script in scripts/ shares. Sourced, never
# run:   . "$(dirname "$0")/lib.sh"
# It moves to the checkout's root and sets
#   root     the checkout (also the current directory);
#   script   the calling script's name, which prefixes its messages.
# What it offers:
#   say / die                  messages on stderr, prefixed with $script
#   now / elapsed T0           timing, "3m05s"
#   timed TITLE CMD...         CMD under a heading, then its time
#   installed / missing_of     Debian package checks (dpkg-query)
#   can_install VAR            root, and $VAR (a *_NO_INSTALL switch) unset
#   apt_install [OPT] PKG...   apt-get install, never removing a package
#   preset_build PRESET [TARGET...]
#                              the one way scripts build gort: configures
#                              the CMake preset's tree (build/PRESET) and
#                              builds TARGETs (default: the preset's own);
#                              every compilation goes through ccache
#   ccache_flags               the launcher flags for a tree that is not
#                              gort's own (GoogleTest for mingw, a consumer)
#   release_build TARGET...    preset_build release (or $GORT_BUILD_DIR,
#                              configured in Release); sets build_dir
#   ci_event TEXT              notes a retried step for CI's summary
#   gtest_binaries / run_binaries  a tree's tests, one process per binary
#                              (cross.sh, windows.sh)
#   cmake_configure LOG ARG... cmake ARG..., its output in LOG
#   cmake_build LOG ARG...     cmake --build ARG..., its output in LOG
#   ctest_logged OUT ARG...    ctest ARG..., its output in OUT
#   target_* / print_summary   the per-target results table of cross.sh and
#                              windows.sh
# shellcheck shell=bash
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
# shellcheck disable=SC2034 # used by the scripts that source this
root=$PWD
script=$(basename "$0")

say() { echo "$script: $*" >&2; }
die() {
  say "$@"
  exit 1
}

now() { date +%s; }

# timed TITLE CMD...: prints "== TITLE ==", runs CMD, then how long it took.
timed() {
  local t0
  t0=$(now)
  echo "== $1 =="
  shift
  "$@"
  echo "-- $(elapsed "$t0")"
}

# ci_event TEXT: a step that did not go as planned and was retried or worked
# around (an apt-get update tried again, an install with pinned versions):
# said now, and appended to $GORT_CI_EVENTS, which .ci/run sets and lists at
# the end so a green run cannot hide it.
ci_event() {
  say "$*"
  [ -z "${GORT_CI_EVENTS:-}" ] || echo "$script: $*" >>"$GORT_CI_EVENTS"
}
# shell_join ARGS...: the arguments as one line the shell reads back the
# same (single-quoted where they hold anything but plain characters).
shell_join() {
  local words=() a q="'"
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./=:,+@%-]+$ ]]; then
      words+=("$a")
    else
      words+=("'${a//$q/$q\\$q$q}'")
    fi
  done
  printf '%s' "${words[*]}"
}
elapsed() {
  local s=$(($(now) - $1))
  printf '%dm%02ds' $((s / 60)) $((s % 60))
}

# ---- Debian packages ----------------------------------------------------------

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# missing_of PKG...: prints the packages not installed; fails if none is.
missing_of() {
  local p miss=()
  for p in "$@"; do installed "$p" || miss+=("$p"); done
  [ ${#miss[@]} -gt 0 ] || return 1
  echo "${miss[*]}"
}

# can_install VAR: installing is allowed: running as root, and the switch
# named VAR (e.g. GORT_CROSS_NO_INSTALL) is not 1.
can_install() {
  [ "${!1:-0}" != 1 ] && [ "$(id -u)" -eq 0 ]
}

# apt_install [APT-OPTION...] PKG...: apt-get install, refusing to remove
# anything; `apt-get update` first, once, or again after apt_updated=0 (a
# new architecture or source). A failed update (a Debian mirror caught
# mid-sync: "File has unexpected size") is tried three times, 20 s apart,
# and then the install goes on with the lists that did arrive: it fails by
# itself if a package it needs is not in them. This machine's image has
# packages that apt would otherwise drop while resolving multiarch installs
# (gfortran, gnat, gnucobol3): they are named in the same command so that
# apt keeps them.
apt_updated=0
apt_install() {
  if [ "$apt_updated" -eq 0 ]; then
    local try
    for try in 1 2 3; do
      say "apt-get update"
      apt-get update -qq && break
      if [ "$try" -eq 3 ]; then
        ci_event "apt-get update failed 3 times; installing from the lists it got"
      else
        ci_event "apt-get update failed (a mirror mid-sync?); again in 20 s"
        sleep 20
      fi
    done
    apt_updated=1
  fi
  local keep=() p
  for p in gfortran gnat gnucobol3; do installed "$p" && keep+=("$p"); done
  say "installing $*"
  apt_get_install "$@" "${keep[@]}" && return 0
  local pins
  pins=$(same_version_pins "$@")
  [ -n "$pins" ] || return 1
  # shellcheck disable=SC2086 # pins is a list of words
  pins="$pins $(sibling_pins $pins)"
  ci_event "again, with these Multi-Arch: same packages at one version on every" \
    "architecture (a foreign architecture's index is missing some): $pins"
  # shellcheck disable=SC2086 # pins is a list of words
  apt_get_install --allow-downgrades "$@" "${keep[@]}" $pins
}

apt_get_install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-remove \
    "$@" >/dev/null
}

# same_version_pins PKG...: for the packages of PKG... named with a foreign
# architecture (name:arch), prints name:arch=V for each Multi-Arch: same
# package of their dependencies that is installed natively, V being arch's
# candidate; where V is not the native copy's version, also name:a=V for the
# native copy and every other copy installed. dpkg installs such a package
# for several architectures only at one version. When a mirror's security
# index for arch fails to download, the native copy can be newer than any
# arch can get (a downgrade moves it to V); and even when the versions
# match, apt's resolver, drawn to the native copy's newer candidate, may
# give up with "held broken packages" unless each such package is named.
same_version_pins() {
  local native p a foreign=() deps
  native=$(dpkg --print-architecture)
  for p in "$@"; do
    case $p in
      -*) ;;
      *:*)
        a=${p##*:}
        [ "$a" = "$native" ] || [ "$a" = all ] || foreign+=("$p")
        ;;
    esac
  done
  [ ${#foreign[@]} -gt 0 ] || return 0
  # The foreign packages of the closure, then one query of each tool for all
  # of them (apt-cache policy takes about a second a call).
  mapfile -t deps < <(apt-cache depends --recurse --no-recommends \
    --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances \
    "${foreign[@]}" 2>/dev/null | grep -E '^[^ <]+:[a-z0-9]+$' |
    grep -v ":$native\$" | sort -u)
  [ ${#deps[@]} -gt 0 ] || return 0
  # The same packages for the native architecture, whose candidates matter
  # where they are not installed yet, and which of them are Multi-Arch: same.
  local natives=("${deps[@]%:*}")
  {
    dpkg-query -W -f='installed ${Package} ${Architecture} ${Multi-Arch} ${Version} ${db:Status-Abbrev}\n' 2>/dev/null
    apt-cache show --no-all-versions "${deps[@]}" 2>/dev/null |
      awk '/^Package: / { p = $2 } /^Architecture: / { a = $2 }
           /^Multi-Arch: same/ { print "same " p ":" a }'
    apt-cache policy "${deps[@]}" "${natives[@]}" 2>/dev/null
  } | awk -v native="$native" '
    $1 == "installed" && $4 == "same" && $6 ~ /^ii/ {
      have[$2, $3] = $5; archs[$2] = archs[$2] " " $3; next
    }
    $1 == "same" { same[$2] = 1; next }
    /^[^ ].*:$/ { dep = substr($0, 1, length($0) - 1); next }
    /^  Candidate: / && dep != "" {
      if (dep !~ /:/) { cand[dep] = $2; next }  # a native copy
      order[++n] = dep; fcand[dep] = $2
    }
    END {
      for (i = 1; i <= n; i++) {
        dep = order[i]; v = fcand[dep]
        name = dep; arch = dep; sub(/:[^:]*$/, "", name); sub(/^.*:/, "", arch)
        if (v == "(none)") continue
        if ((name, native) in have) {
          printf "%s=%s\n", dep, v
          if (v == have[name, native]) continue
          m = split(archs[name], as, " ")
          for (k = 1; k <= m; k++) if (as[k] != arch) printf "%s:%s=%s\n", name, as[k], v
        } else if (same[dep] && (name in cand) && cand[name] != "(none)" && cand[name] != v) {
          # Not installed natively, and its native candidate is another
          # version (a security update the foreign index lacks): if both
          # copies come with the install, as libwine needs for wine64 and
          # wine32, they must come at one version.
          printf "%s=%s\n%s:%s=%s\n", dep, v, name, native, v
        }
      }
    }' | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# sibling_pins PIN...: for each native pin name:arch=V of same_version_pins
# that moves an installed package to another version, name=V for the other
# installed packages built from its source at its installed version, where
# V is available for them. Such packages depend on each other at exactly
# one version (libssl-dev on libssl3): moving libssl3 alone would have apt
# remove libssl-dev and what needs it (seen when the security index of
# i386 and armhf failed to download while amd64's had arrived).
sibling_pins() {
  local native p name ver inst src sib installed
  native=$(dpkg --print-architecture)
  installed=$(dpkg-query -W -f='${Package} ${Architecture} ${source:Package} ${Version} ${db:Status-Abbrev}\n')
  for p in "$@"; do
    name=${p%%=*} ver=${p#*=}
    [ "${name##*:}" = "$native" ] || continue
    name=${name%:*}
    inst=$(dpkg-query -W -f='${Version}' "$name:$native" 2>/dev/null) || continue
    [ "$inst" != "$ver" ] || continue
    src=$(dpkg-query -W -f='${source:Package}' "$name:$native")
    awk -v s="$src" -v v="$inst" -v n="$name" -v a="$native" \
        '$3 == s && $4 == v && $1 != n && ($2 == a || $2 == "all") && $5 ~ /^ii/ { print $1 }' \
        <<<"$installed" |
      while read -r sib; do
        apt-cache madison "$sib" | awk -F' *[|] *' -v v="$ver" '$2 == v { f = 1 } END { exit !f }' &&
          echo "$sib=$ver"
      done
  done | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# ---- CMake and CTest, logged ----------------------------------------------------

# cmake_configure LOG ARG...: cmake ARG... appending to LOG; on failure
# prints LOG's last lines.
cmake_configure() {
  local log=$1
  shift
  cmake "$@" >>"$log" 2>&1 || {
    tail -30 "$log"
    return 1
  }
}

# cmake_build LOG ARG...: cmake --build ARG... appending to LOG; on failure
# prints LOG's error lines.
cmake_build() {
  local log=$1
  shift
  cmake --build "$@" >>"$log" 2>&1 || {
    grep -E "error|FAILED" "$log" | head -30
    return 1
  }
}

# ctest_logged OUT ARG...: ctest ARG... into OUT, then prints what each failed
# test printed (at most 60 lines each; the rest is in OUT) and ctest's
# closing lines (the summary and the failed tests); returns ctest's status.
ctest_logged() {
  local out=$1 rc
  shift
  ctest "$@" >"$out" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then
    # A failed result line opens a test's output (ctest's
    # --output-on-failure puts it right after; skips say ***Skipped too);
    # the next result or "Start" line closes it.
    awk '/^ *[0-9]+\/[0-9]+ Test +#/ { show = /\*\*\*|Failed/ && !/Skipped/; n = 0 }
         /^ +Start +[0-9]+: / || /tests passed/ { show = 0 }
         show && n++ < 60' "$out"
  fi
  sed -n '/tests passed/,$p' "$out"
  return $rc
}

# ---- per-target results (cross.sh, windows.sh) ------------------------------------

declare -gA result detail took

# target_fail T T0 DETAIL: target T failed (started at T0) with DETAIL.
target_fail() {
  result[$1]=FAIL detail[$1]=$3
  took[$1]=$(elapsed "$2")
  return 1
}

# target_tested T RC OUT: target T's tests ended with status RC and left
# their log in OUT (whose last "tests passed" line is the summary); on
# failure prints OUT's end, failed tests' output included.
target_tested() {
  local t=$1 rc=$2 out=$3 summary
  summary=$(grep -E "tests passed" "$out" | tail -1)
  if [ "$rc" -ne 0 ] || [ -z "$summary" ]; then
    echo "-- the end of $out (failed tests' output included):"
    tail -n 300 "$out"
    result[$t]=FAIL detail[$t]="${summary:-ctest did not run} (see $out)"
    return 1
  fi
  result[$t]=ok detail[$t]=$summary
}

# print_summary KIND NOTE NAMEFN T...: a "KIND: summary (NOTE)" heading, one
# line per target (NAMEFN T names it), then "KIND: N passed, M failed";
# fails if any target failed.
print_summary() {
  local kind=$1 note=$2 namefn=$3 t npass=0 nfail=0
  shift 3
  echo
  echo "== $kind: summary ($note) =="
  for t in "$@"; do
    printf '%-4s %-48s %s [%s]\n' "${result[$t]:-FAIL}" "$("$namefn" "$t")" \
      "${detail[$t]:-not run}" "${took[$t]:-}"
    if [ "${result[$t]:-FAIL}" = ok ]; then
      npass=$((npass + 1))
    else
      nfail=$((nfail + 1))
    fi
  done
  echo "$kind: $npass passed, $nfail failed"
  [ $nfail -eq 0 ]
}

# ---- a tree's tests, one process per test binary ----------------------------------

# Under qemu or Wine, starting a process costs more than most tests take
# (under qemu-i386 a one-test run takes 0.25 s of CPU, almost all of it
# translating the startup code anew): cross.sh and windows.sh run each
# GoogleTest binary once, all its tests in one process, as a program using
# gort would run Run after Run. ctest then runs the tree's other tests.

# gtest_binaries DIR: the tree's GoogleTest binaries, from the
# test-binaries.txt its configuration wrote (gort_gtest_discover): a line
# each, "name<TAB>file<TAB>working directory".
gtest_binaries() {
  grep -v '^$' "$1/test-binaries.txt"
}

# run_binaries DIR [CTEST_ARG...]: every GoogleTest binary of the tree DIR
# once, two at a time, through the tree's emulator (DIR/test-emulator.txt),
# each with all its tests (disabled ones too, as ctest runs them) under a
# 15-minute timeout, its output in BINARY.log beside it; then, with
# CTEST_ARGs, ctest CTEST_ARG... for the tests those binaries do not hold.
# Prints a line per binary and a "tests passed" summary; fails if any
# binary or test failed.
run_binaries() {
  local dir=$1 exe
  shift
  local list=()
  mapfile -t list < <(gtest_binaries "$dir")
  [ ${#list[@]} -gt 0 ] || {
    say "no test binaries in $dir/test-binaries.txt"
    return 1
  }
  local emu
  emu=$(tr ';' '\n' <"$dir/test-emulator.txt" | grep -v '^$' | tr '\n' ' ')
  # Each line: the binary's name, file and working directory (ctest's).
  printf '%s\n' "${list[@]}" | tr '\t' ' ' |
    GORT_EMULATOR=$emu xargs -P 2 -L 1 sh -c '
    name=$1 exe=$2 wd=$3 log=${2%.exe}.log t0=$(date +%s)
    cd "$wd" &&
      timeout -k 10 900 $GORT_EMULATOR "$exe" --gtest_color=no \
        --gtest_also_run_disabled_tests >"$log" 2>&1
    echo "rc=$? $(($(date +%s) - t0))s $name $exe"' _ >"$dir/binaries.rc"
  local total=0 passed=0 skipped=0 bad=0 rc secs name log n p sk names=()
  while read -r rc secs name exe; do
    rc=${rc#rc=}
    log=${exe%.exe}.log
    names+=("$name")
    n=$(sed -n 's/^\[==========\] \([0-9]*\) tests\{0,1\} from .* ran.*/\1/p' "$log")
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}.*/\1/p' "$log")
    n=${n:-0} p=${p:-0}
    total=$((total + n)) passed=$((passed + p))
    if [ "$rc" != 0 ] || [ "$n" = 0 ]; then
      bad=1
      echo "FAIL $name (exit $rc, $p of $n passed, $secs; $log):"
      grep -E '^\[  FAILED  \]|Failure|fatal error' "$log" | head -20
      tail -n 40 "$log"
    else
      sk=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\{0,1\},.*/\1/p' "$log")
      skipped=$((skipped + ${sk:-0}))
      echo "ok   $name ($p of $n passed, ${sk:-0} skipped, $secs)"
    fi
  done < <(sort -k3,3 "$dir/binaries.rc")
  local rest=""
  if [ $# -gt 0 ]; then
    local re
    re="^($(IFS='|'; echo "${names[*]}"))\\."
    if ctest_logged "$dir/ctest-rest.log" "$@" -E "$re"; then
      rest=", and the other tests: $(grep -E 'tests passed' "$dir/ctest-rest.log" | tail -1)"
    else
      bad=1
      rest=", and the other tests FAILED (see $dir/ctest-rest.log)"
    fi
  fi
  echo "tests passed: $passed, skipped: $skipped, failed:" \
    "$((total - passed - skipped)) of $total (one process per binary)$rest"
  return $bad
}

# ---- building: one way, through presets and ccache --------------------------------

# Every build shares one compiler cache (cmake/gort_ccache.cmake puts ccache
# in front of gort's own trees). These make a clean clone in another folder
# hit what an earlier clone left: paths under the checkout are hashed as
# relative ones and the build directory is left out of the hash. Exported,
# they also serve the trees that are not gort's (ccache_flags).
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true

# ccache_flags: prints CMake's launcher flags for ccache, if installed.
ccache_flags() {
  command -v ccache >/dev/null || return 0
  echo "-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
}

# preset_build PRESET [TARGET...]: configures build/PRESET from the preset
# (quietly; again each time, which is cheap, so a changed preset counts) and
# builds TARGETs, or the build preset's own targets when none is named.
preset_build() {
  local p=$1
  shift
  cmake --preset "$p" >/dev/null
  if [ $# -gt 0 ]; then
    cmake --build --preset "$p" --target "$@"
  else
    cmake --build --preset "$p"
  fi
}

# release_build TARGET...: the Release tree the measuring scripts share,
# build/release (the release preset) or $GORT_BUILD_DIR (configured with the
# project's defaults and no tests); builds TARGETs there and sets
# build_dir.
release_build() {
  build_dir=${GORT_BUILD_DIR:-build/release}
  if [ "$build_dir" = build/release ]; then
    preset_build release "$@"
    return
  fi
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DGORT_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build_dir" --target "$@"
}

# trace_ping BIN OUT BENCHTIME SUFFIX: ChanToSyscallPing at GOMAXPROCS 1
# traced by Go 1.19 (BIN/gortbench-go) and by gort in each usleep mode
# (BIN/gort-compare's child), into OUT/go$SUFFIX.trace,
# OUT/gort-lowres$SUFFIX.trace and OUT/gort-highres$SUFFIX.trace, each run's
# output beside it as .result (scripts/trace-side-by-side*.sh).
trace_ping() {
  local bin=$1 out=$2 benchtime=$3 suffix=$4 mode
  "$bin/gortbench-go" -bench=ChanToSyscallPing -benchtime="$benchtime" \
    -procs=1 -trace="$out/go$suffix.trace" >"$out/go$suffix.result"
  for mode in lowres highres; do
    GORT_TRACE="$out/gort-$mode$suffix.trace" "$bin/gort-compare" --child \
      --bench=ChanToSyscallPing --procs=1 --benchtime="$benchtime" \
      --usleep="$mode" >"$out/gort-$mode$suffix.result"
  done
}
