#!/usr/bin/env bash
# Installs the Debian packages gort's build, tests and benchmarks need, if
# any is missing. Safe to run again: does nothing when all are present.
# Usage: scripts/deps.sh [extra-package ...]
set -euo pipefail

pkgs=(
  build-essential cmake ninja-build pkg-config
  libboost-context-dev   # goroutine stacks and switches (fcontext)
  libabsl-dev            # thread-safety annotations inside the runtime
  python3                # tools/check_go_mapping.py, tests/arch checks
  libdw-dev              # goroutine dumps: function names and source lines (elfutils)
  libgtest-dev           # tests
  libbenchmark-dev       # benchmarks' helpers
  clang                  # the thread-safety analysis preset
  clang-format           # scripts/format-check.sh
  llvm-14                # llvm-objdump, for the Windows ARM trampoline checks
  golang-go              # Go 1.19: reference runtime source and the Go side of benchmarks
  valgrind linux-perf    # profiling (callgrind, perf record): docs/performance.md
  "$@"
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "deps.sh: missing packages: ${missing[*]}; run as root (or install them)" >&2
  exit 1
fi
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
