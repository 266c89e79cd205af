#!/usr/bin/env bash
# Builds gort and runs every test: the GoogleTest suite through ctest, the
# benchmarks' smoke run, and the clang thread-safety analysis of the runtime.
# Each step prints its time.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
started=$(now)
timed "packages (scripts/deps.sh)" scripts/deps.sh
timed "build (RelWithDebInfo)" preset_build default
timed "thread-safety analysis (clang -Wthread-safety -Werror)" \
  preset_build clang-tsa gort
smoke() {
  build/default/benchmarks/gort-compare --smoke
  build/default/benchmarks/gort-compare --ping --smoke
}
timed "benchmarks smoke run" smoke
timed "mutants: every anchor still in the tree" scripts/mutants.sh --check-anchors
timed "tests" ctest --preset default
timed "exercises (docs/exercises.md)" scripts/exercises.sh
echo "test.sh: passed in $(elapsed "$started")"
