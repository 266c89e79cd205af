#!/usr/bin/env bash
# scripts/mutants.sh: proves that the test suite catches a broken runtime.
#
# Each mutant is one deliberate fault (scripts/mutants.tsv): a unique search
# string in runtime/ or pkg/ (its anchor) and its replacement. The script
# copies the source tree to build/mutants/src (build/mutants/N/src for each
# of two workers), builds the unmutated runtime and the test
# binaries the mutants need (no benchmarks, examples or install rules;
# ccache if installed), checks that those tests pass, and then for each
# mutant: finds the one runtime file containing the search string (by
# content, not by path, so renamed files do not break it), applies the
# replacement to the copy, rebuilds that test binary, runs the tests meant
# to catch it under a timeout, and restores the file. A mutant is caught
# when its tests fail or time out. Prints a table mutant -> what caught it
# and exits non-zero unless every mutant was caught; a mutant whose tests
# all skip on this machine (GTEST_SKIP, with its reason) is not run and is
# named, with the reason, on the last lines.
#
# Before anything is built, every selected mutant's anchor must occur exactly
# once in the tree: a mutant whose anchor a rename or a reformat removed
# fails at once, by name, with the text it looked for (--check-anchors does
# only this, in a second; scripts/test.sh runs it).
#
# Usage: scripts/mutants.sh [--check-anchors] [NAME...]   (default: every mutant)
# Environment:
#   GORT_MUTANTS_DIR      work directory (default build/mutants)
#   GORT_MUTANT_TIMEOUT   seconds one mutant's test run may take (default 60)
#   GORT_MUTANTS_DRY=1    list the selected mutants and exit (no build)
#   GORT_MUTANTS_JOBS     workers running mutants side by side (default 2,
#                         1 on a one-CPU machine; see "workers" below)
# Linux only: several mutants and their tests are about Linux's OS layer.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
work=${GORT_MUTANTS_DIR:-$root/build/mutants}
src=$work/src
bld=$work/build
limit=${GORT_MUTANT_TIMEOUT:-60}
started=$(now)

# ---- the mutants --------------------------------------------------------------
# scripts/mutants.tsv: NAME BINARY GTEST_FILTER SEARCH REPLACEMENT, tab-separated.
names=() bins=() filters=() searches=() replacements=()
while IFS=$'\t' read -r name bin filter search replacement; do
  case $name in '' | '#'*) continue ;; esac
  names+=("$name") bins+=("$bin") filters+=("$filter")
  searches+=("$search") replacements+=("$replacement")
done <scripts/mutants.tsv

# ---- selection ------------------------------------------------------------------
check_only=0
if [ "${1:-}" = --check-anchors ]; then
  check_only=1
  shift
fi
selected=()
if [ $# -gt 0 ]; then
  for want in "$@"; do
    found=0
    for i in "${!names[@]}"; do
      [ "${names[$i]}" = "$want" ] && selected+=("$i") && found=1
    done
    [ $found = 1 ] || {
      say "no mutant $want (have: ${names[*]})"
      exit 2
    }
  done
else
  selected=("${!names[@]}")
fi
# GORT_MUTANTS_DRY=1: only list the selected mutants (scripts/exercises.sh
# checks that docs/exercises.md names mutants that exist).
if [ "${GORT_MUTANTS_DRY:-0}" = 1 ]; then
  for i in "${selected[@]}"; do
    echo "${names[$i]}: ${bins[$i]} ${filters[$i]}"
  done
  exit 0
fi
targets=()
for i in "${selected[@]}"; do
  case " ${targets[*]} " in *" ${bins[$i]} "*) ;; *) targets+=("${bins[$i]}") ;; esac
done

# ---- anchors ----------------------------------------------------------------------
# anchor_files I DIR: the runtime/ and pkg/ files under DIR holding mutant I's
# search string.
anchor_files() {
  grep -rlF --include='*.cc' --include='*.h' -- "${searches[$1]}" "$2/runtime" "$2/pkg" || true
}
anchors_bad=0
for i in "${selected[@]}"; do
  mapfile -t files < <(anchor_files "$i" "$root")
  [ ${#files[@]} -eq 1 ] && [ "$(grep -cF -- "${searches[$i]}" "${files[0]}")" -eq 1 ] && continue
  say "mutant ${names[$i]}: its anchor is in ${#files[@]} files (want exactly one, once): ${searches[$i]}"
  anchors_bad=1
done
[ $anchors_bad -eq 0 ] || die "fix scripts/mutants.tsv: a mutant whose anchor is gone tests nothing"
if [ $check_only = 1 ]; then
  echo "mutants: ${#selected[@]} anchors found, each exactly once"
  exit 0
fi

# ---- workers ---------------------------------------------------------------------
# GORT_MUTANTS_JOBS workers (default 2, 1 on a one-CPU machine) share the
# mutants, each with its own copy and build under $work/N: a mutant's time
# is one file compiled and a test binary run, mostly single-threaded or
# waiting, so two workers take about half the time of one. The first
# worker's build fills ccache; the others start once it is done, so theirs
# are cache hits (each worker's CCACHE_BASEDIR is its own directory). Each
# worker's log is printed when all are done; any worker failing fails.
njobs=${GORT_MUTANTS_JOBS:-$(($(nproc 2>/dev/null || echo 1) >= 2 ? 2 : 1))}
if [ -z "${GORT_MUTANTS_WORKER:-}" ] && [ "$njobs" -gt 1 ] &&
  [ ${#selected[@]} -gt 1 ]; then
  mkdir -p "$work"
  pids=()
  for ((w = 1; w <= njobs; w++)); do
    mine=()
    for k in "${!selected[@]}"; do
      [ $((k % njobs)) -eq $((w - 1)) ] && mine+=("${names[${selected[$k]}]}")
    done
    built=$work/$w.built
    rm -f "$built"
    echo "== mutants: worker $w of $njobs: ${#mine[@]} mutants, in $work/$w =="
    GORT_MUTANTS_WORKER=$w GORT_MUTANTS_DIR=$work/$w GORT_MUTANTS_BUILT=$built \
      "$root/scripts/mutants.sh" "${mine[@]}" >"$work/$w.log" 2>&1 &
    pids+=($!)
    if [ "$w" -lt "$njobs" ]; then
      while [ ! -e "$built" ] && kill -0 "${pids[-1]}" 2>/dev/null; do sleep 1; done
    fi
  done
  rc=0
  for ((w = 1; w <= njobs; w++)); do
    wait "${pids[$((w - 1))]}" || rc=1
    echo "== mutants: worker $w's log ($work/$w.log) =="
    cat "$work/$w.log"
  done
  echo "mutants: $njobs workers, total $(elapsed "$started")"
  [ $rc -eq 0 ] || echo "mutants: NOT every mutant was caught (see the workers' logs above)"
  exit $rc
fi

# ---- a copy of the tree and its build -------------------------------------------
echo "== mutants: copy the tree to $src =="
mkdir -p "$src" "$bld"
# -m: every file is newer than the objects of an earlier run, whose last
# mutant may have been left in place (an interrupted run); ccache makes the
# rebuild of unchanged sources cheap.
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xmf - -C "$src"

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Paths relative to the worker's directory, and its build directory not
  # hashed (-g1 puts it in the objects): the workers' builds share entries.
  export CCACHE_BASEDIR=$work CCACHE_NOHASHDIR=true
fi
echo "== mutants: configure $bld =="
: >"$work/configure.log"
cmake_configure "$work/configure.log" -S "$src" -B "$bld" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DGORT_BUILD_TESTS=ON -DGORT_BUILD_BENCHMARKS=OFF \
  -DGORT_BUILD_EXAMPLES=OFF -DGORT_INSTALL=OFF "${launcher[@]}" || exit 1

t0=$(now)
echo "== mutants: build ${targets[*]} =="
: >"$work/build.log"
cmake_build "$work/build.log" "$bld" --target "${targets[@]}" || exit 1
echo "built in $(elapsed "$t0")"
[ -z "${GORT_MUTANTS_BUILT:-}" ] || touch "$GORT_MUTANTS_BUILT"

# run_tests I LOG: runs mutant I's tests under the timeout; returns their
# status (124 for a timeout).
run_tests() {
  local i=$1 log=$2 rc=0
  (cd "$bld/tests" && timeout -k 5 "$limit" "./${bins[$i]}" \
    --gtest_filter="${filters[$i]}" >"$log" 2>&1) || rc=$?
  return $rc
}

# Unmutated, every mutant's tests must pass, or catching proves nothing.
declare -A skipped=()
echo "== mutants: the tests pass on the unmutated runtime =="
t0=$(now)
for i in "${selected[@]}"; do
  log=$work/baseline-${names[$i]}.log
  if ! run_tests "$i" "$log"; then
    say "${bins[$i]} --gtest_filter='${filters[$i]}' fails without" \
      "a mutant (see $log):"
    grep -E "FAILED|Failure|watchdog" "$log" | head -20 >&2
    exit 1
  fi
  # Tests that all skip here (a kernel that completes connects to a full
  # backlog, ...) pass with or without the mutant: it is not run, and the
  # summary says why. A filter that ran no test at all is a broken line.
  if ! grep -q '^\[  PASSED  \] [1-9]' "$log"; then
    if grep -q '^\[  SKIPPED \] [1-9]' "$log"; then
      why=$(grep -m1 -A1 ': Skipped$' "$log" | tail -1 | head -c 120)
      skipped[${names[$i]}]="${why:-its tests skip on this machine}"
      continue
    fi
    say "mutant ${names[$i]}: ${bins[$i]} --gtest_filter='${filters[$i]}'" \
      "ran no test (see $log)"
    exit 1
  fi
done
echo "baseline passed in $(elapsed "$t0")"

# ---- each mutant ------------------------------------------------------------------
declare -A verdict caughtby took
failed=0
for i in "${selected[@]}"; do
  name=${names[$i]} search=${searches[$i]}
  if [ -n "${skipped[$name]:-}" ]; then
    verdict[$name]=skipped caughtby[$name]="not run: ${skipped[$name]}"
    echo "== mutant $name: not run, its tests skip here: ${skipped[$name]} =="
    continue
  fi
  t0=$(now)
  mapfile -t files < <(anchor_files "$i" "$src")
  if [ ${#files[@]} -ne 1 ]; then
    verdict[$name]=ERROR caughtby[$name]="search string in ${#files[@]} runtime/pkg files"
    failed=1
    continue
  fi
  file=${files[0]}
  cp -p "$file" "$work/original"
  if ! python3 - "$file" "$search" "${replacements[$i]}" <<'EOF'; then
import sys
path, search, replacement = sys.argv[1:]
text = open(path).read()
if text.count(search) != 1:
    sys.exit("search string occurs %d times in %s" % (text.count(search), path))
open(path, "w").write(text.replace(search, replacement))
EOF
    cp -p "$work/original" "$file"
    verdict[$name]=ERROR caughtby[$name]="could not apply"
    failed=1
    continue
  fi
  echo "== mutant $name (${file#"$src"/}) =="
  log=$work/mutant-$name.log
  if ! cmake --build "$bld" --target "${bins[$i]}" >"$log.build" 2>&1; then
    cp "$work/original" "$file"
    touch "$file"
    verdict[$name]=ERROR caughtby[$name]="does not compile (see $log.build)"
    failed=1
    continue
  fi
  rc=0
  run_tests "$i" "$log" || rc=$?
  # Back to the original, newer than the mutant's object so it rebuilds.
  cp "$work/original" "$file"
  touch "$file"
  took[$name]=$(elapsed "$t0")
  if [ $rc -eq 0 ]; then
    verdict[$name]=SURVIVED caughtby[$name]="${bins[$i]} --gtest_filter='${filters[$i]}' passed"
    failed=1
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    verdict[$name]=caught caughtby[$name]="${bins[$i]}: timed out after ${limit}s"
  else
    first=$(sed -n 's/^\[  FAILED  \] \([^ ,]*\).*/\1/p' "$log" | head -1)
    if [ -z "$first" ]; then
      # The binary died (a fatal error, the watchdog) inside a test.
      first=$(sed -n 's/^\[ RUN      \] \([^ ]*\).*/\1/p' "$log" | tail -1)
      first="${first:-?} (the binary exited with status $rc)"
    fi
    verdict[$name]=caught caughtby[$name]="${bins[$i]} $first"
  fi
  echo "${verdict[$name]}: ${caughtby[$name]} (${took[$name]})"
done

# A last build so the copy's objects are the unmutated runtime again.
cmake --build "$bld" --target "${targets[@]}" >>"$work/build.log" 2>&1 || true

echo
echo "== mutants: summary (total $(elapsed "$started")) =="
printf '%-30s %-9s %-6s %s\n' MUTANT VERDICT TIME "CAUGHT BY"
for i in "${selected[@]}"; do
  name=${names[$i]}
  printf '%-30s %-9s %-6s %s\n' "$name" "${verdict[$name]:-ERROR}" \
    "${took[$name]:--}" "${caughtby[$name]:-}"
done
if [ $failed -ne 0 ]; then
  # Last, so a log cut to its tail still names them.
  for i in "${selected[@]}"; do
    name=${names[$i]}
    case ${verdict[$name]:-ERROR} in caught | skipped) continue ;; esac
    echo "mutants: ${verdict[$name]:-ERROR}: $name: ${caughtby[$name]:-}"
  done
  echo "mutants: NOT every mutant was caught"
  exit 1
fi
nskipped=${#skipped[@]}
# (also in not-run.txt, which tools/ci_report.py lists at the end of CI)
: >"$work/not-run.txt"
if [ "$nskipped" -gt 0 ]; then
  for name in "${!skipped[@]}"; do
    echo "mutants: not run here (its tests skip): $name: ${skipped[$name]}"
    echo "$name: ${skipped[$name]}" >>"$work/not-run.txt"
  done
fi
echo "mutants: all $((${#selected[@]} - nskipped)) run were caught ($nskipped not run here)"
