#!/usr/bin/env bash
# Builds gort and runs every test: the GoogleTest suite through ctest, the
# benchmarks' smoke run, and the clang thread-safety analysis of the runtime.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
# redis-server, hiredis and libcurl: tests/hooks_libs_test runs the
# unmodified Debian client libraries on goroutines (docs/hooks.md).
scripts/deps.sh redis-server libhiredis-dev libcurl4-openssl-dev

echo "== build (RelWithDebInfo) =="
preset_build default

echo "== thread-safety analysis (clang -Wthread-safety -Werror) =="
preset_build clang-tsa gort

echo "== benchmarks smoke run =="
build/default/benchmarks/gort-compare --smoke
build/default/benchmarks/gort-compare --ping --smoke

echo "== mutants: every anchor still in the tree =="
scripts/mutants.sh --check-anchors

echo "== tests =="
ctest --preset default

echo "== exercises (docs/exercises.md) =="
scripts/exercises.sh
