#!/usr/bin/env bash
# scripts/windows.sh: builds gort for windows/amd64 and windows/386 with
# mingw-w64 and runs its whole test suite under Wine. docs/targets.md has the
# target matrix; docs/usleep.md what Wine shows for the usleep probe
# (scripts/usleep-results.sh --wine writes this script's probe and ping logs
# to docs/results/usleep-wine-<cpu>.md).
#
# Usage: scripts/windows.sh [TARGET...]
#   TARGET: amd64, 386; default both.
# Environment:
#   GORT_WINDOWS_NO_INSTALL=1  do not install anything (fail if something
#                              is missing).
#   GORT_TEST_SCALE            divides heavy tests' sizes; default 4 here:
#                              under Wine every fibre stack is a Linux
#                              mapping or three, and 100 000 goroutines
#                              alive at once exceed vm.max_map_count (65530).
#                              Real Windows has no such limit.
#   GORT_WINDOWS_BENCH=1       also build and run gort-usleep-probe and
#                              gort-ping under Wine (not in CI).
#   GORT_WINDOWS_RUN           how the tests run: "binary" (the default:
#                              each test binary once, every test in one
#                              process, as cross.sh does; lib.sh's
#                              run_binaries says why) or "ctest" (one
#                              process per test). Per binary, amd64 then
#                              runs the tree's other tests with ctest; 386
#                              does not, as ctest would first list every
#                              binary's tests under Wine on qemu (about a
#                              second each), and those tests (the launcher's
#                              own, the docs checks) run on amd64 and
#                              natively.
#
# Installs what is missing (root only), idempotently:
#   - mingw-w64 with the posix thread model (g++-mingw-w64-{x86-64,i686}-posix;
#     the win32 model has no std::mutex), wine64, and for 386 wine32:i386;
#   - for 386: qemu-user 10 from bookworm-backports (this kernel cannot run
#     i386 programs, Wine's 32-bit loader included; qemu 7.2 fails with
#     "failed to map the shared user data") registered with binfmt_misc
#     (mounted first if needed; the mask ignores the ELF OSABI byte).
# GoogleTest is built from Debian's /usr/src/googletest with the cross
# compiler into each build tree (build/windows-<arch>/googletest, where the
# preset's CMAKE_PREFIX_PATH points). Each target is the CMake preset
# windows-<arch> (CMakePresets.json: configure, build and test presets with
# cmake/toolchains/windows-<arch>.cmake, building in build/windows-<arch>);
# once this script has run, `cmake --workflow --preset windows-<arch>` does
# the same by hand (with GORT_TEST_SCALE=4). The Wine prefix lives in the
# build tree, its wineserver is started persistently (-p) and the prefix
# booted once before ctest. Prints a per-target summary; exits non-zero if
# any target failed.
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

all_targets=(amd64 386)
if [ $# -gt 0 ]; then targets=("$@"); else targets=("${all_targets[@]}"); fi
for t in "${targets[@]}"; do
  case $t in
    amd64 | 386) ;;
    *)
      say "unknown target $t (want: ${all_targets[*]})"
      exit 2
      ;;
  esac
done
export GORT_TEST_SCALE=${GORT_TEST_SCALE:-4}
jobs=2

started=$(now)

# ---- installation -----------------------------------------------------------

declare -A triple=([amd64]=x86_64-w64-mingw32 [386]=i686-w64-mingw32)
declare -A wine=([amd64]=/usr/lib/wine/wine64 [386]=/usr/lib/wine/wine)
backports_list=/etc/apt/sources.list.d/gort-bookworm-backports.list
binfmt=/proc/sys/fs/binfmt_misc

# qemu_ok: qemu-user 10 or later is installed (Debian's 7.2 cannot run Wine).
qemu_ok() {
  local v
  v=$(dpkg-query -W -f='${Version}' qemu-user 2>/dev/null) || return 1
  dpkg --compare-versions "$v" ge 1:10
}

install_deps() {
  # wine: the /usr/bin/wineserver wrapper (only recommended by wine64).
  local want=(g++-mingw-w64-x86-64-posix wine64 wine)
  local t need386=0
  for t in "${targets[@]}"; do [ "$t" = 386 ] && need386=1; done
  [ $need386 = 1 ] && want+=(g++-mingw-w64-i686-posix wine32:i386)
  local missing=() p
  for p in "${want[@]}"; do installed "$p" || missing+=("$p"); done
  local arch_missing=0
  if [ $need386 = 1 ] && ! dpkg --print-foreign-architectures | grep -qx i386; then
    arch_missing=1
  fi
  local qemu_missing=0
  [ $need386 = 1 ] && ! qemu_ok && qemu_missing=1
  if [ ${#missing[@]} -gt 0 ] || [ $arch_missing = 1 ] || [ $qemu_missing = 1 ]; then
    if ! can_install GORT_WINDOWS_NO_INSTALL; then
      say "missing: [${missing[*]}] i386-arch=$arch_missing" \
        "qemu10=$qemu_missing; run as root to install them"
      return 1
    fi
    if [ $arch_missing = 1 ]; then
      dpkg --add-architecture i386 || return 1
      apt_updated=0
    fi
    if [ $qemu_missing = 1 ] && [ ! -f "$backports_list" ]; then
      echo "deb http://deb.debian.org/debian bookworm-backports main" \
        >"$backports_list"
      apt_updated=0
    fi
    if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}" || return 1; fi
    if [ $qemu_missing = 1 ]; then
      apt_install -t bookworm-backports qemu-user || return 1
    fi
  fi
  [ $need386 = 1 ] && { register_binfmt || return 1; }
  return 0
}

# register_binfmt: lets the kernel start i386 ELF programs (Wine's 32-bit
# loader and wineserver32) under qemu-i386. Debian's qemu-user registers no
# i386 handler on an amd64 host, so this one is written by hand; F keeps the
# interpreter open, so it also works in other mount namespaces.
register_binfmt() {
  [ -e "$binfmt/qemu-i386" ] && return 0
  if ! can_install GORT_WINDOWS_NO_INSTALL; then
    say "i386 binfmt_misc handler missing; run as root"
    return 1
  fi
  [ -e "$binfmt/register" ] || mount -t binfmt_misc binfmt_misc "$binfmt" ||
    return 1
  local magic='\x7fELF\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x03\x00'
  # The same as magic's, except byte 7 (EI_OSABI: 0 or 3 for Linux, both
  # fine) and the low bit of e_type's byte (executables and PIEs).
  local mask='\xff\xff\xff\xff\xff\xfe\xfe\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
  printf '%s' ":qemu-i386:M::$magic:$mask:/usr/bin/qemu-i386:F" \
    >"$binfmt/register"
}

echo "== windows: dependencies =="
t0=$(now)
install_deps || die "installing the Windows toolchains failed"
install_time=$(elapsed "$t0")
echo "dependencies ready ($install_time)"

# ---- the targets --------------------------------------------------------------

failed=0

# build_gtest T DIR: GoogleTest for the target, once per build tree.
build_gtest() {
  local t=$1 dir=$2
  [ -f "$dir/googletest/lib/cmake/GTest/GTestConfig.cmake" ] && return 0
  # shellcheck disable=SC2046 # ccache_flags prints separate words
  cmake -S /usr/src/googletest -B "$dir/googletest-build" -G Ninja \
    -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/windows-$t.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_GMOCK=OFF $(ccache_flags) \
    -DCMAKE_INSTALL_PREFIX="$root/$dir/googletest" &&
    cmake --build "$dir/googletest-build" -j "$jobs" &&
    cmake --install "$dir/googletest-build"
}

# wine_up T DIR: the build tree's Wine prefix, booted, with its wineserver
# kept running so that each test does not wait for Wine's services. Every
# Wine program here runs through cmake/wine-run.sh, as ctest's do (it says
# why wine64 needs address-space randomization off).
wine_up() {
  local t=$1 dir=$2
  export WINEPREFIX=$root/$dir/wineprefix WINEDEBUG=-all
  export GORT_WINEPREFIX=$WINEPREFIX
  export WINEDLLOVERRIDES="mscoree,mshtml="
  mkdir -p "$WINEPREFIX"
  wineserver -p
  wine_run "$t" wineboot -i >/dev/null 2>&1
}
# wine_run T PROGRAM [ARG...]: PROGRAM under T's Wine, in the prefix wine_up
# set up.
wine_run() {
  local t=$1
  shift
  sh "$root/cmake/wine-run.sh" "${wine[$t]}" "$@"
}
wine_down() { wineserver -k 2>/dev/null; wineserver -w 2>/dev/null; }

# check_cpu_profile T DIR: the CPU profile a Wine run of gort-trace-known
# writes (StartCPUProfile's sampling thread, names from the program's COFF
# symbols), read by the host's `go tool pprof` without the binary: it names
# BurnForProfile, carries the label profiled=yes, and its samples are whole
# stacks (a stack through BurnForProfile names its caller WriteCPUProfile;
# a profile of the pc alone, as windows/386's was, fails here).
check_cpu_profile() {
  local t=$1 dir=$2 out=$root/$2/cpuprof
  echo "== windows/$t: go tool pprof reads a CPU profile written under Wine =="
  if ! command -v go >/dev/null; then
    echo "skipped: no go on the host (golang-go)"
    return 0
  fi
  rm -rf "$out" && mkdir -p "$out"
  # (a Unix path: Wine's Z: drive, the current one, maps /)
  wine_run "$t" "$dir/tests/gort-trace-known.exe" cpuprof "$out" >"$out/run.log" 2>&1 ||
    { echo "gort-trace-known cpuprof failed:" && cat "$out/run.log" && return 1; }
  go tool pprof -top "$out/cpu.pb.gz" >"$out/top.txt" 2>&1 &&
    grep -q BurnForProfile "$out/top.txt" ||
    { echo "the CPU profile does not name BurnForProfile:" && cat "$out/top.txt" && return 1; }
  go tool pprof -tags "$out/cpu.pb.gz" 2>/dev/null | grep -q 'profiled: Total' ||
    { echo "the CPU profile's samples carry no label" && return 1; }
  go tool pprof -traces -focus=BurnForProfile "$out/cpu.pb.gz" \
    >"$out/traces.txt" 2>&1
  if ! grep -q WriteCPUProfile "$out/traces.txt"; then
    echo "no stack through BurnForProfile names its caller WriteCPUProfile:"
    head -60 "$out/traces.txt"
    return 1
  fi
  echo "go tool pprof names BurnForProfile, called from WriteCPUProfile," \
    "labelled profiled=yes: ok"
}

# run_target T: GoogleTest for T, the preset windows-T configured and built,
# then its tests under Wine, per ctest or per binary.
run_target() {
  local t=$1 p=windows-$1 dir=build/windows-$1 t0 log
  t0=$(now)
  log=$dir.log
  mkdir -p "$dir"
  : >"$log"
  echo "== windows/$t: GoogleTest + configure + build (preset $p, $dir) =="
  if ! build_gtest "$t" "$dir" >>"$log" 2>&1; then
    tail -30 "$log"
    target_fail "$t" "$t0" "GoogleTest build failed (see $log)"
    return 1
  fi
  local how=${GORT_WINDOWS_RUN:-binary}
  # Listing each binary's tests under Wine at build time is needed where
  # ctest runs; on 386 per binary, it is left to ctest's start (PRE_TEST),
  # never reached.
  local discovery=POST_BUILD
  [ "$how" = binary ] && [ "$t" = 386 ] && discovery=PRE_TEST
  local bench=OFF
  [ "${GORT_WINDOWS_BENCH:-0}" = 1 ] && bench=ON
  cmake_configure "$log" --preset "$p" -DGORT_BUILD_BENCHMARKS=$bench \
    -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=$discovery ||
    target_fail "$t" "$t0" "configure failed (see $log)" || return 1
  # gtest_discover_tests lists each test binary under Wine at build time.
  wine_up "$t" "$dir"
  if ! cmake_build "$log" --preset "$p" -j "$jobs"; then
    wine_down
    target_fail "$t" "$t0" "build failed (see $log)"
    return 1
  fi
  local build_time
  build_time=$(elapsed "$t0")
  echo "built in $build_time"

  echo "== windows/$t: tests under Wine, per $how (GORT_TEST_SCALE=$GORT_TEST_SCALE) =="
  local t1 out rc
  t1=$(now)
  if [ "$how" = binary ]; then
    out=$dir/tests.log
    local rest=()
    [ "$t" = 386 ] || rest=(--preset "$p" -j "$jobs")
    # A whole binary may take minutes: threads described only near the limit.
    GORT_WINE_DUMP_AFTER=840 run_binaries "$dir" "${rest[@]}" >"$out" 2>&1
    rc=$?
    cat "$out"
  else
    out=$dir/ctest.log
    ctest_logged "$out" --preset "$p" -j "$jobs"
    rc=$?
  fi
  check_cpu_profile "$t" "$dir" || rc=1
  if [ "$bench" = ON ]; then
    echo "== windows/$t: gort-usleep-probe and gort-ping under Wine =="
    wine_run "$t" "$dir/tools/gort-usleep-probe.exe" 2>&1 | tee "$dir/probe.log"
    wine_run "$t" "$dir/benchmarks/gort-ping.exe" 2>&1 | tee "$dir/ping.log"
  fi
  wine_down
  took[$t]="build $build_time, test $(elapsed "$t1")"
  target_tested "$t" "$rc" "$out"
}

for t in "${targets[@]}"; do
  run_target "$t" || failed=1
done

# ---- summary -----------------------------------------------------------------

# shellcheck disable=SC2317 # called by print_summary
target_name() {
  case $1 in
    amd64) echo "windows/amd64 (mingw-w64, wine64)" ;;
    386) echo "windows/386 (mingw-w64, wine32 on qemu-i386)" ;;
  esac
}
print_summary windows "dependencies $install_time, total $(elapsed "$started")" \
  target_name "${targets[@]}" || failed=1
exit $failed
