#!/usr/bin/env bash
# scripts/cross.sh: builds gort and runs its whole test suite for linux/386,
# linux/arm (armhf) and linux/arm64 under qemu-user, then assembles and checks
# the Windows arm and arm64 trampolines. docs/targets.md has the target matrix.
#
# Usage: scripts/cross.sh [TARGET...]
#   TARGET: 386, armhf, arm64, windows-arm (both Windows objects); default all.
# Environment:
#   GORT_CROSS_NO_INSTALL=1  do not install anything (fail if something is
#                            missing).
#   GORT_TEST_SCALE          divides heavy tests' sizes (default 1; see
#                            docs/targets.md: iteration-heavy tests may scale
#                            their loop counts by it, never their assertions).
#   GORT_CROSS_ONLY          one test binary (e.g. windows_trampoline_test):
#                            build only it in each Linux target and run only
#                            its tests; for checking one test quickly, not CI.
#
# Installs what is missing (root only), idempotently: Debian's cross toolchains
# (crossbuild-essential-*), qemu-user-static, and the targets' libraries from
# Debian multiarch. Each target builds in build/cross-<target> with
# cmake/toolchains/linux-<target>.cmake. Prints a per-target summary and exits
# non-zero if any target failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD

all_targets=(386 armhf arm64 windows-arm)
if [ $# -gt 0 ]; then targets=("$@"); else targets=("${all_targets[@]}"); fi
for t in "${targets[@]}"; do
  case $t in
    386 | armhf | arm64 | windows-arm) ;;
    *) echo "cross.sh: unknown target $t (want: ${all_targets[*]})" >&2; exit 2 ;;
  esac
done
export GORT_TEST_SCALE=${GORT_TEST_SCALE:-1}
jobs=$(nproc 2>/dev/null || echo 2)

now() { date +%s; }
elapsed() { local s=$(($(now) - $1)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
started=$(now)

# ---- installation -----------------------------------------------------------

# Debian architecture of each Linux target, and its packages.
declare -A debarch=([386]=i386 [armhf]=armhf [arm64]=arm64)
libs_for() {
  echo "libboost-context-dev:$1 libabsl-dev:$1 libgtest-dev:$1"
}

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# apt-get install of the given packages, refusing to remove anything. This
# machine's image has packages that apt would otherwise drop while resolving
# the multiarch installs (gfortran, gnat, gnucobol3): they are named in the
# same command so that apt keeps them.
keep=()
for p in gfortran gnat gnucobol3; do installed "$p" && keep+=("$p"); done
updated=0
apt_install() {
  if [ "$updated" -eq 0 ]; then
    echo "cross.sh: apt-get update" >&2
    apt-get update -qq || return 1
    updated=1
  fi
  echo "cross.sh: installing $*" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-remove \
    "$@" "${keep[@]}" >/dev/null
}

# missing_of PKG...: prints the packages not installed; fails if none is.
missing_of() {
  local p out=()
  for p in "$@"; do installed "$p" || out+=("$p"); done
  [ ${#out[@]} -gt 0 ] || return 1
  echo "${out[*]}"
}

install_deps() {
  local need_linux=() t
  for t in "${targets[@]}"; do
    [ -n "${debarch[$t]:-}" ] && need_linux+=("$t")
  done
  # Host tools: the native build's packages (clang, cmake, ninja, ...) plus
  # llvm-objdump and python3 for the Windows checks.
  local host=(llvm-14 python3)
  [ ${#need_linux[@]} -gt 0 ] && host+=(qemu-user-static)
  # Groups installed by separate apt-get commands: the arm64 cross toolchain
  # and the arm64 libraries cannot be resolved in one command (nor with the
  # others) on this image.
  local g1=() g2=() g3=()
  for t in "${need_linux[@]}"; do
    local a=${debarch[$t]}
    if [ "$a" = arm64 ]; then
      g2+=(crossbuild-essential-arm64)
      # shellcheck disable=SC2207
      g3+=($(libs_for arm64))
    else
      # shellcheck disable=SC2207
      g1+=("crossbuild-essential-$a" $(libs_for "$a"))
    fi
  done
  local missing_archs=() a
  local foreign
  foreign=$(dpkg --print-foreign-architectures)
  for t in "${need_linux[@]}"; do
    a=${debarch[$t]}
    grep -qx "$a" <<<"$foreign" || missing_archs+=("$a")
  done
  # One apt-get command per group, with only the group's missing packages.
  local -a todo=()
  local m
  m=$(missing_of "${host[@]}") && todo+=("$m")
  m=$(missing_of "${g1[@]}") && todo+=("$m")
  m=$(missing_of "${g2[@]}") && todo+=("$m")
  m=$(missing_of "${g3[@]}") && todo+=("$m")
  if [ ${#missing_archs[@]} -eq 0 ] && [ ${#todo[@]} -eq 0 ]; then
    return 0
  fi
  if [ "${GORT_CROSS_NO_INSTALL:-0}" = 1 ] || [ "$(id -u)" -ne 0 ]; then
    echo "cross.sh: missing: architectures [${missing_archs[*]}]," \
      "packages [${todo[*]}]; run as root to install them" >&2
    return 1
  fi
  for a in "${missing_archs[@]}"; do
    echo "cross.sh: dpkg --add-architecture $a" >&2
    dpkg --add-architecture "$a" || return 1
    updated=0  # the new architecture's package lists are needed
  done
  local line
  for line in "${todo[@]}"; do
    # shellcheck disable=SC2086
    apt_install $line || return 1
  done
}

echo "== cross: dependencies =="
t0=$(now)
scripts/deps.sh || { echo "cross.sh: scripts/deps.sh failed" >&2; exit 1; }
if ! install_deps; then
  echo "cross.sh: installing the cross toolchains failed" >&2
  exit 1
fi
install_time=$(elapsed "$t0")
echo "dependencies ready ($install_time)"

# ---- the targets --------------------------------------------------------------

declare -A result detail took
failed=0

# Machine name readelf reports for each target's binaries.
declare -A machine=([386]="Intel 80386" [armhf]="ARM" [arm64]="AArch64")

run_linux() {
  local t=$1 dir=build/cross-$1 t0 log
  t0=$(now)
  log=$dir.log
  mkdir -p "$(dirname "$log")"
  : >"$log"
  echo "== cross: linux/$t: configure + build ($dir) =="
  if ! cmake -S . -B "$dir" -G Ninja \
      -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/linux-$t.cmake" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DGORT_BUILD_TESTS=ON -DGORT_BUILD_BENCHMARKS=OFF >>"$log" 2>&1; then
    tail -30 "$log"
    result[$t]=FAIL detail[$t]="configure failed (see $log)"
    took[$t]=$(elapsed "$t0")
    return 1
  fi
  local only=${GORT_CROSS_ONLY:-} build_args=() test_args=()
  local check_bin=tests/arch/arch_test
  if [ -n "$only" ]; then
    build_args=(--target "$only")
    test_args=(-R "^$only\\.")
  fi
  if ! cmake --build "$dir" -j "$jobs" "${build_args[@]}" >>"$log" 2>&1; then
    grep -E "error|FAILED" "$log" | head -30
    result[$t]=FAIL detail[$t]="build failed (see $log)"
    took[$t]=$(elapsed "$t0")
    return 1
  fi
  [ -n "$only" ] && check_bin=$(cd "$dir" &&
    find tests -name "$only" -type f | head -1)
  local built
  built=$(readelf -h "$dir/${check_bin:-tests/arch/arch_test}" 2>/dev/null |
    sed -n 's/^ *Machine: *//p')
  if [ "$built" != "${machine[$t]}" ]; then
    result[$t]=FAIL
    detail[$t]="${check_bin:-tests/arch/arch_test} is '$built', want '${machine[$t]}'"
    took[$t]=$(elapsed "$t0")
    return 1
  fi
  local build_time
  build_time=$(elapsed "$t0")
  echo "built in $build_time ($built)"

  echo "== cross: linux/$t: ctest under qemu (GORT_TEST_SCALE=$GORT_TEST_SCALE) =="
  local t1 out rc
  t1=$(now)
  out=$dir/ctest.log
  ctest --test-dir "$dir" -j "$jobs" --timeout 300 --output-on-failure --no-tests=error \
    "${test_args[@]}" >"$out" 2>&1
  rc=$?
  # ctest's closing lines, and the failures if any.
  sed -n '/tests passed/,$p' "$out"
  local summary
  summary=$(grep -E "tests passed" "$out" | tail -1)
  took[$t]="build $build_time, test $(elapsed "$t1")"
  if [ $rc -ne 0 ] || [ -z "$summary" ]; then
    echo "-- the end of $out (failed tests' output included):"
    tail -n 300 "$out"
    result[$t]=FAIL detail[$t]="${summary:-ctest did not run} (see $out)"
    return 1
  fi
  result[$t]=ok detail[$t]=$summary
}

run_windows() {
  local t0 out rc
  t0=$(now)
  out=build/cross-windows-arm
  mkdir -p "$out"
  echo "== cross: windows/arm + windows/arm64: assemble + check =="
  python3 tests/arch/check_windows_arm.py --out "$out" | tee "$out/check.log"
  rc=${PIPESTATUS[0]}
  took[windows-arm]=$(elapsed "$t0")
  if [ "$rc" -ne 0 ]; then
    result[windows-arm]=FAIL
    detail[windows-arm]="$(grep -E '^FAIL' "$out/check.log" | tr '\n' ' ')"
    return 1
  fi
  result[windows-arm]=ok
  detail[windows-arm]="$(grep -cE '^ok' "$out/check.log") objects checked"
}

for t in "${targets[@]}"; do
  case $t in
    windows-arm) run_windows || failed=1 ;;
    *) run_linux "$t" || failed=1 ;;
  esac
done

# ---- summary -----------------------------------------------------------------

echo
echo "== cross: summary (dependencies $install_time, total $(elapsed "$started")) =="
npass=0 nfail=0
for t in "${targets[@]}"; do
  case $t in
    windows-arm) name="windows/arm+arm64 (assembled, objdump-checked)" ;;
    armhf) name="linux/arm (armhf, qemu-arm-static)" ;;
    386) name="linux/386 (qemu-i386-static)" ;;
    arm64) name="linux/arm64 (qemu-aarch64-static)" ;;
  esac
  printf '%-4s %-48s %s [%s]\n' "${result[$t]:-FAIL}" "$name" \
    "${detail[$t]:-not run}" "${took[$t]:-}"
  if [ "${result[$t]:-FAIL}" = ok ]; then
    npass=$((npass + 1))
  else
    nfail=$((nfail + 1))
  fi
done
echo "cross: $npass passed, $nfail failed"
exit $failed
