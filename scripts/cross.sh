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
#   GORT_CROSS_RUN           how the tests run: "binary" (default: each test
#                            binary once, all its tests in one process, then
#                            ctest for the other tests; lib.sh's
#                            run_binaries says why) or "ctest" (one process
#                            per test).
#   GORT_CROSS_ONLY          one test binary (e.g. windows_trampoline_test):
#                            build only it in each Linux target and run only
#                            its tests; for checking one test quickly, not CI.
#
# Installs what is missing (root only), idempotently: Debian's cross toolchains
# (crossbuild-essential-*), qemu-user-static, and the targets' libraries from
# Debian multiarch. Each Linux target is the CMake preset cross-<target>
# (CMakePresets.json: configure, build and test presets with
# cmake/toolchains/linux-<target>.cmake, building in build/cross-<target>);
# once installed, `cmake --workflow --preset cross-<target>` does the same
# without this script's checks and logs. Prints a per-target summary and
# exits non-zero if any target failed.
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

all_targets=(386 armhf arm64 windows-arm)
if [ $# -gt 0 ]; then targets=("$@"); else targets=("${all_targets[@]}"); fi
for t in "${targets[@]}"; do
  case $t in
    386 | armhf | arm64 | windows-arm) ;;
    *)
      say "unknown target $t (want: ${all_targets[*]})"
      exit 2
      ;;
  esac
done
export GORT_TEST_SCALE=${GORT_TEST_SCALE:-1}
jobs=$(nproc 2>/dev/null || echo 2)

started=$(now)

# ---- installation -----------------------------------------------------------

# Debian architecture of each Linux target, and its packages.
declare -A debarch=([386]=i386 [armhf]=armhf [arm64]=arm64)
libs_for() {
  echo "libboost-context-dev:$1 libabsl-dev:$1 libgtest-dev:$1"
}

install_deps() {
  local need_linux=() t
  for t in "${targets[@]}"; do
    [ -n "${debarch[$t]:-}" ] && need_linux+=("$t")
  done
  # Host tools: the native build's packages (clang, cmake, ninja, ...) plus
  # llvm-objdump and python3 for the Windows checks.
  local host=(llvm-14 python3)
  # qemu-user-static, unless scripts/windows.sh already installed qemu-user
  # 10 (its qemu-i386 runs Wine), whose emulators serve as well and whose
  # qemu-user-binfmt the static package would have to remove.
  if [ ${#need_linux[@]} -gt 0 ] && ! installed qemu-user; then
    host+=(qemu-user-static)
  fi
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
  if ! can_install GORT_CROSS_NO_INSTALL; then
    say "missing: architectures [${missing_archs[*]}]," \
      "packages [${todo[*]}]; run as root to install them"
    return 1
  fi
  for a in "${missing_archs[@]}"; do
    say "dpkg --add-architecture $a"
    dpkg --add-architecture "$a" || return 1
    apt_updated=0 # the new architecture's package lists are needed
  done
  local line
  for line in "${todo[@]}"; do
    # shellcheck disable=SC2086
    apt_install $line || return 1
  done
}

echo "== cross: dependencies =="
t0=$(now)
scripts/deps.sh || die "scripts/deps.sh failed"
install_deps || die "installing the cross toolchains failed"
install_time=$(elapsed "$t0")
echo "dependencies ready ($install_time)"

# ---- the targets --------------------------------------------------------------

failed=0

# Machine name readelf reports for each target's binaries.
declare -A machine=([386]="Intel 80386" [armhf]="ARM" [arm64]="AArch64")

# run_linux T: the preset cross-T configured, built and checked for the
# target's machine, then its tests under qemu.
run_linux() {
  local t=$1 p=cross-$1 dir=build/cross-$1 t0 log
  t0=$(now)
  log=$dir.log
  mkdir -p "$(dirname "$log")"
  : >"$log"
  echo "== cross: linux/$t: configure + build (preset $p, $dir) =="
  cmake_configure "$log" --preset "$p" ||
    target_fail "$t" "$t0" "configure failed (see $log)" || return 1
  local only=${GORT_CROSS_ONLY:-} build_args=() test_args=()
  local check_bin=tests/arch/arch_test
  if [ -n "$only" ]; then
    build_args=(--target "$only")
    test_args=(-R "^$only\\.")
  fi
  cmake_build "$log" --preset "$p" -j "$jobs" "${build_args[@]}" ||
    target_fail "$t" "$t0" "build failed (see $log)" || return 1
  [ -n "$only" ] && check_bin=$(cd "$dir" &&
    find tests -name "$only" -type f | head -1)
  check_bin=${check_bin:-tests/arch/arch_test}
  local built
  built=$(readelf -h "$dir/$check_bin" 2>/dev/null | sed -n 's/^ *Machine: *//p')
  if [ "$built" != "${machine[$t]}" ]; then
    target_fail "$t" "$t0" "$check_bin is '$built', want '${machine[$t]}'"
    return 1
  fi
  local build_time
  build_time=$(elapsed "$t0")
  echo "built in $build_time ($built)"

  local how=${GORT_CROSS_RUN:-binary}
  [ -n "$only" ] && how=ctest
  echo "== cross: linux/$t: tests under qemu, per $how (GORT_TEST_SCALE=$GORT_TEST_SCALE) =="
  local t1 out rc
  t1=$(now)
  if [ "$how" = binary ]; then
    out=$dir/tests.log
    run_binaries "$dir" --preset "$p" -j "$jobs" >"$out" 2>&1
    rc=$?
    cat "$out"
  else
    out=$dir/ctest.log
    ctest_logged "$out" --preset "$p" -j "$jobs" "${test_args[@]}"
    rc=$?
  fi
  took[$t]="build $build_time, test $(elapsed "$t1")"
  target_tested "$t" "$rc" "$out"
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

# shellcheck disable=SC2317 # called by print_summary
target_name() {
  case $1 in
    windows-arm) echo "windows/arm+arm64 (assembled, objdump-checked)" ;;
    armhf) echo "linux/arm (armhf, qemu-arm-static)" ;;
    386) echo "linux/386 (qemu-i386-static)" ;;
    arm64) echo "linux/arm64 (qemu-aarch64-static)" ;;
  esac
}
print_summary cross "dependencies $install_time, total $(elapsed "$started")" \
  target_name "${targets[@]}" || failed=1
exit $failed
