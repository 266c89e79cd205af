#!/usr/bin/env bash
# Builds gort and its tests under AddressSanitizer + UndefinedBehaviorSanitizer
# and under ThreadSanitizer (the asan and tsan presets), and runs the whole
# suite under each. Goroutine switches are announced to both (runtime/race.h).
# Usage: scripts/sanitize.sh [asan] [tsan]   (default: both)
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
scripts/deps.sh
presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=(asan tsan)
for p in "${presets[@]}"; do
  echo "== $p: build =="
  # The tsan preset's TSAN_OPTIONS (CMakePresets.json) reach the build,
  # which lists each test binary's tests, and the tests.
  preset_build "$p"
  echo "== $p: tests =="
  # ThreadSanitizer counts every goroutine's fiber as a thread (8128 at
  # most) and is slow to make them: heavy tests run a tenth of their size.
  if [ "$p" = tsan ]; then export GORT_TEST_SCALE=10; else unset GORT_TEST_SCALE; fi
  ctest --preset "$p"
done
