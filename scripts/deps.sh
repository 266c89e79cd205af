#!/usr/bin/env bash
# Installs the Debian packages gort's build, tests and benchmarks need, if
# any is missing. Safe to run again: does nothing when all are present.
# Usage: scripts/deps.sh [extra-package ...]
# GORT_DEPS_NO_INSTALL=1: only check, failing if something is missing.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

pkgs=(
  build-essential cmake ninja-build pkg-config
  libboost-context-dev   # goroutine stacks and switches (fcontext)
  libabsl-dev            # thread-safety annotations inside the runtime
  python3                # tools/check_go_mapping.py, tests/arch checks
  libdw-dev              # goroutine dumps: function names and source lines (elfutils)
  zlib1g-dev             # gzipped pprof profiles (pkg/pprof)
  libgtest-dev           # tests
  libbenchmark-dev       # benchmarks' helpers
  clang                  # the thread-safety analysis preset
  clang-format           # scripts/format-check.sh
  llvm-14                # llvm-objdump, for the Windows ARM trampoline checks
  golang-go              # Go 1.19: reference runtime source and the Go side of benchmarks
  valgrind linux-perf    # profiling (callgrind, perf record): docs/performance.md
  ccache                 # every build (cmake/gort_ccache.cmake)
  # tests/hooks_libs_test runs Debian's unmodified client libraries on
  # goroutines against a real server (docs/hooks.md)
  redis-server libhiredis-dev libcurl4-openssl-dev
  "$@"
)

missing=$(missing_of "${pkgs[@]}") || exit 0
can_install GORT_DEPS_NO_INSTALL ||
  die "missing packages: $missing; run as root (or install them)"
# shellcheck disable=SC2086
apt_install --no-install-recommends $missing
