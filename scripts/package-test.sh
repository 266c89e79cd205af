#!/usr/bin/env bash
# Checks gort as an installed package: builds gort in Release (no tests or
# benchmarks), installs it to a temporary prefix, then
#   - checks that no installed header includes Abseil (the public headers
#     need only the standard library);
#   - builds examples/consumer against it with find_package(gort), checks
#     its compile lines carry no Abseil, and runs the three examples (exit 0,
#     non-empty output);
#   - compiles examples/hello.cc with `g++ $(pkg-config --cflags --libs gort)`
#     and runs it;
#   - on Linux, the same for gort::hooks (find_package's gort::hooks and
#     pkg-config's gort-hooks): examples/hooks.cc built both ways, its hooks
#     exported from the executable, run;
#   - runs the worker pool under GODEBUG=schedtrace=1000 and looks for Go's
#     SCHED lines.
# Usage: scripts/package-test.sh [build-dir]   (default: build/pkg)
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
scripts/deps.sh

out=${1:-build/pkg}
mkdir -p "$out"
out=$(cd "$out" && pwd)
prefix=$out/install
rm -rf "$prefix" "$out/consumer" "$out/pc"

fail() { die "FAIL: $*"; }
step() { echo "== $*"; }

step "build and install gort to $prefix"
cmake -S . -B "$out/gort" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGORT_BUILD_TESTS=OFF -DGORT_BUILD_BENCHMARKS=OFF -DGORT_BUILD_EXAMPLES=OFF \
  -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
cmake --build "$out/gort"
cmake --install "$out/gort" >/dev/null
for f in include/gort/gort.h include/gort/internal/chan_impl.h; do
  [ -f "$prefix/$f" ] || fail "$f not installed"
done
ls "$prefix"/lib*/libgort.a >/dev/null || fail "libgort.a not installed"
ls "$prefix"/lib*/cmake/gort/gortConfig.cmake >/dev/null || fail "gortConfig.cmake not installed"
ls "$prefix"/lib*/pkgconfig/gort.pc >/dev/null || fail "gort.pc not installed"

step "the installed headers need only the standard library"
# Each header on its own, listing every file it includes: none may be
# Abseil's (it lives in /usr/include, so an -I flag is not the test).
for h in "$prefix"/include/gort/*.h "$prefix"/include/gort/internal/*.h; do
  deps=$(echo "#include \"${h#"$prefix"/include/}\"" |
    g++ -std=c++20 -M -x c++ -I"$prefix/include" -) ||
    fail "${h#"$prefix"/} does not compile on its own"
  if printf '%s\n' "$deps" | grep -q '/absl/'; then
    fail "${h#"$prefix"/} includes Abseil"
  fi
done

step "build examples/consumer with find_package(gort)"
# shellcheck disable=SC2046 # ccache_flags prints separate words
cmake -S examples/consumer -B "$out/consumer" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" $(ccache_flags)
cmake --build "$out/consumer"
# The consumer's compile lines carry no Abseil and no forced includes.
cmds=$(ninja -C "$out/consumer" -t commands)
if printf '%s\n' "$cmds" | grep -Eq 'absl|-include'; then
  fail "the consumer's compile lines mention Abseil or -include"
fi

run() {  # run name cmd...: exit 0 and some output on stdout
  local name=$1; shift
  local text
  text=$("$@") || fail "$name exited with $?"
  [ -n "$text" ] || fail "$name printed nothing"
  printf '%s\n' "$text" | sed "s/^/  $name: /"
}
for e in hello pipeline workerpool errgroup; do
  run "$e" "$out/consumer/$e"
done

step "compile examples/hello.cc with pkg-config"
pcdir=$(echo "$prefix"/lib*/pkgconfig)
export PKG_CONFIG_PATH="$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
mkdir -p "$out/pc"
# pkg-config's output is split into words on purpose.
# shellcheck disable=SC2046
g++ -std=c++20 -O2 examples/hello.cc -o "$out/pc/hello" \
  $(pkg-config --cflags --libs gort)
run hello-pc "$out/pc/hello"

if [ "$(uname -s)" = Linux ]; then
  step "gort::hooks: find_package and pkg-config"
  ls "$prefix"/lib*/libgort-hooks.a >/dev/null || fail "libgort-hooks.a not installed"
  ls "$prefix"/lib*/pkgconfig/gort-hooks.pc >/dev/null || fail "gort-hooks.pc not installed"
  [ -x "$out/consumer/hooks" ] || fail "find_package(gort) gave no gort::hooks"
  # shellcheck disable=SC2046
  g++ -std=c++20 -O2 examples/hooks.cc -o "$out/pc/hooks" \
    $(pkg-config --cflags --libs gort-hooks)
  for exe in "$out/consumer/hooks" "$out/pc/hooks"; do
    # Exported, so shared libraries bind to the hooks, not to libc's.
    for sym in read poll nanosleep; do
      nm -D --defined-only "$exe" | grep -qw "$sym" ||
        fail "${exe#"$out"/}: $sym is not exported from the executable"
    done
  done
  run hooks "$out/consumer/hooks"
  run hooks-pc "$out/pc/hooks"
fi

step "GODEBUG=schedtrace=1000 on the worker pool (1.5 s)"
trace=$(GODEBUG=schedtrace=1000 "$out/consumer/workerpool" 1500 2>&1) ||
  fail "workerpool under schedtrace exited with $?"
printf '%s\n' "$trace" | sed 's/^/  /'
printf '%s\n' "$trace" | grep -Eq '^SCHED [0-9]+ms: gomaxprocs=' ||
  fail "no SCHED lines from GODEBUG=schedtrace=1000"

echo "package-test: PASS"
